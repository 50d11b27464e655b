"""Algorithm 3: exponential posted prices over relaxed usage (spec §5, ambiguity A4, A5).

Per-node price in round t at relaxed usage u (eq. 7):  p(u) = L * mu^(u / C'),
with L = 1 / (2 d_max D) and mu = 4 V d_max D (both overridable), so p(0) = L and p(C') = 2V.
Guard (A4): p_t = inf when u[t] > C' - d_max.  Menu: p(s, d, l) = d * sum_{t=s}^{s+l-1} p_t.
Robust ratio (Thm 5.1): alpha_3 = 2 + 4 ln mu, valid when C' >= d_max log2 mu.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mlsched import libm


@dataclass(frozen=True)
class ExpPrices:
    """Parameters of eq. (7); ``low`` and ``mu`` default to the reconstructed L and mu."""

    capacity: float  # C'
    d_max: int
    max_duration: int  # D
    max_value: float  # V
    low: float | None = None
    mu: float | None = None

    @property
    def L(self) -> float:  # noqa: N802 - the paper's symbol
        return self.low if self.low is not None else 1.0 / (2 * self.d_max * self.max_duration)

    @property
    def base(self) -> float:
        return self.mu if self.mu is not None else 4.0 * self.max_value * self.d_max * self.max_duration

    @property
    def alpha(self) -> float:
        """alpha_3 = 2 + 4 ln mu."""
        return 2.0 + 4.0 * math.log(self.base)

    @property
    def capacity_condition(self) -> bool:
        """C' >= d_max log2 mu (Thm 5.1)."""
        return self.capacity >= self.d_max * math.log2(self.base) - 1e-12

    def unit(self, usage: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Per-node prices p_t = p(u[t]), infinite where u[t] > C' - d_max (A4 guard)."""
        u = np.asarray(usage, dtype=float)
        p = self.L * libm.power(self.base, u / self.capacity)
        return np.where(u > self.capacity - self.d_max + 1e-12, np.inf, p)


def interval_prices(unit: npt.ArrayLike, width: int, max_duration: int) -> npt.NDArray[np.float64]:
    """Table P[s, l - 1] = width * sum_{t=s}^{s+l-1} unit[t]; inf for intervals past the array's end
    or covering an infinite unit price."""
    u = np.asarray(unit, dtype=float)
    n = u.shape[0]
    blocked = np.isinf(u)
    sums = np.concatenate([[0.0], np.cumsum(np.where(blocked, 0.0, u))])
    infs = np.concatenate([[0], np.cumsum(blocked)])
    starts = np.arange(n)[:, None]
    ends = starts + np.arange(1, max_duration + 1)[None, :]          # s + l
    inside = ends <= n
    ends = np.minimum(ends, n)
    table = width * (sums[ends] - sums[starts])
    return np.where(inside & (infs[ends] == infs[starts]), table, np.inf)
