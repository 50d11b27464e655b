"""Parameters and reported bounds of the reduction, Algorithm 2 (spec §4.2, §4.4, §4.5; A8).

  delta = eps; C' = C / (1 + delta); gamma = zeta = eps / 4; eps0 = eps / 2;
  M = ceil(ln(2 Delta D / zeta) / (2 gamma^2))                                  (Lemma F.1)
  mu = C' / d_max; 1 + delta' = (C - d_max) / C'; eta = exp(-delta'^2 mu / (2 + delta'))  (Lemma 4.3)
  B_switch = 4 Delta^2 eta / eps + zeta; B_evict = eps0 + gamma + B_switch             (Thm 4.1)
  capacity condition: C >= max(4 d_max / eps, 24 d_max ln(16 Delta^2 / (3 eps^2)) / eps^2).
eta = 1 when delta' <= 0 (no concentration). Every constant can be overridden.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlsched.online.sow.oracle import lemma_f1_samples


@dataclass(frozen=True)
class Reduction:
    capacity: int  # C
    d_max: int
    max_duration: int  # D
    delta_window: int  # Delta
    eps: float
    delta: float | None = None
    gamma: float | None = None
    zeta: float | None = None
    eps0: float | None = None

    @property
    def slack(self) -> float:
        return self.eps if self.delta is None else self.delta

    @property
    def relaxed_capacity(self) -> float:
        """C' = C / (1 + delta)."""
        return self.capacity / (1.0 + self.slack)

    @property
    def accuracy(self) -> float:
        return self.eps / 4 if self.gamma is None else self.gamma

    @property
    def confidence(self) -> float:
        return self.eps / 4 if self.zeta is None else self.zeta

    @property
    def threshold(self) -> float:
        return self.eps / 2 if self.eps0 is None else self.eps0

    @property
    def samples(self) -> int:
        return lemma_f1_samples(self.delta_window, self.max_duration, self.accuracy, self.confidence)

    @property
    def eta(self) -> float:
        cp = self.relaxed_capacity
        dp = (self.capacity - self.d_max) / cp - 1.0
        if dp <= 0:
            return 1.0
        return min(1.0, math.exp(-dp * dp * (cp / self.d_max) / (2.0 + dp)))

    @property
    def b_switch(self) -> float:
        return 4 * self.delta_window ** 2 * self.eta / self.eps + self.confidence

    @property
    def b_evict(self) -> float:
        return self.threshold + self.accuracy + self.b_switch

    @property
    def capacity_condition(self) -> bool:
        e, dm = self.eps, self.d_max
        need = max(4 * dm / e, 24 * dm * math.log(16 * self.delta_window ** 2 / (3 * e * e)) / (e * e))
        return self.capacity >= need
