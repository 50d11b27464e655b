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
    or covering an infinite unit price.

    Each interval's sum is accumulated from its own first round, left to right, so intervals with
    the same unit prices have bitwise the same price and ties between starts stay ties (the launch
    plan takes the earliest maximiser, spec §3.2). Differences of one cumulative sum over all rounds
    round each interval differently: three rounds at 1/12 each came to 0.25, 0.24999999999999997 or
    0.25000000000000006 by start, and the later start won the tie."""
    u = np.asarray(unit, dtype=float)
    n = u.shape[0]
    table = np.full((n, max_duration), np.inf)
    running = np.zeros(n)
    for l in range(1, min(max_duration, n) + 1):   # running[s] = unit[s] + ... + unit[s + l - 1]
        running = running[:n - l + 1] + u[l - 1:]
        table[:n - l + 1, l - 1] = width * running
    return table
