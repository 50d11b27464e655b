"""Fractional unit allocations and bundle prices (spec §6.2-§6.3, Lemma E.3; A10, A11).

A FUA is given by bundle multiplicities n[k, t] and outcomes (bundle k, first round, last round, m_o)
with width-weight m_o = x_o w_o d_o. Conditions:
  (F1) sum_{o in O_k : t in I_o} m_o <= n_k(t);  (F2) W_k = sum_{o in O_k} m_o <= d_max;
  (F3) n_k(t) > 0 implies n_k(t) >= d_max;      and sum_k n_k(t) <= C_E.
Bundle price per unit width rho_k = V_k / (2 W_k) (or V_k / (2 d_max)); bundles with W_k = 0 dropped.
Menu: p(s, d, l) = d * min{rho_k : n_k(t) > 0 on [s, s + l - 1] and f_k < d_max}, inf if none;
a purchase of width w * d is charged to the cheapest feasible bundle (ties: smallest k).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

TOL = 1e-9
FuaOutcome = tuple[int, int, int, float]  # (bundle, first round, last round, m_o)


def fua_violations(n: npt.NDArray[np.float64], outcomes: Sequence[FuaOutcome], d_max: int,
                   supply: float) -> list[str]:
    """Every violated condition, one line each; empty when the FUA is valid."""
    problems = []
    use = np.zeros_like(n, dtype=float)
    weight = np.zeros(n.shape[0])
    for k, first, last, m in outcomes:
        use[k, first:last + 1] += m
        weight[k] += m
    for k, t in zip(*np.nonzero(use > n + TOL), strict=True):
        problems.append(f"F1: bundle {k} round {t}: usage {use[k, t]:.12g} > n {n[k, t]:.12g}")
    for k in np.nonzero(weight > d_max + TOL)[0]:
        problems.append(f"F2: bundle {k}: weight {weight[k]:.12g} > d_max {d_max}")
    for k, t in zip(*np.nonzero((n > TOL) & (n < d_max - TOL)), strict=True):
        problems.append(f"F3: bundle {k} round {t}: 0 < n {n[k, t]:.12g} < d_max {d_max}")
    for t in np.nonzero(n.sum(axis=0) > supply + TOL)[0]:
        problems.append(f"supply: round {t}: {n[:, t].sum():.12g} > {supply:.12g}")
    return problems


@dataclass
class BundleMenu:
    """Online bundle prices and fills; ``present[k, t]`` is n_k(t) > 0."""

    present: npt.NDArray[np.bool_]
    rho: npt.NDArray[np.float64]
    d_max: int
    fill: npt.NDArray[np.float64] = field(init=False)

    def __post_init__(self) -> None:
        self.fill = np.zeros(self.rho.shape[0])

    @classmethod
    def from_fua(cls, n: npt.NDArray[np.float64], values: npt.ArrayLike, weights: npt.ArrayLike, d_max: int,
                 by_weight: bool = True) -> BundleMenu:
        """rho_k = V_k / (2 W_k) (``by_weight``) or V_k / (2 d_max); bundles with W_k = 0 dropped."""
        v, w = np.asarray(values, dtype=float), np.asarray(weights, dtype=float)
        keep = w > 0
        rho = v[keep] / (2 * (w[keep] if by_weight else float(d_max)))
        return cls(present=np.asarray(n)[keep] > TOL, rho=rho, d_max=d_max)

    def cheapest(self, first: int, last: int) -> int | None:
        """Index of the cheapest bundle feasible for [first, last] now (ties: smallest), or None."""
        # f_k < d_max up to TOL: fills are sums of outcome probabilities w * d, and ten purchases at
        # w = 0.1 sum to 0.9999999999999999, which must close a bundle with d_max = 1 as 1 does
        has_room = self.fill < self.d_max - TOL
        ok = self.present[:, first:last + 1].all(axis=1) & has_room & (last < self.present.shape[1])
        if not ok.any():
            return None
        return int(np.argmin(np.where(ok, self.rho, np.inf)))

    def price(self, first: int, width: int, duration: int) -> float:
        k = self.cheapest(first, first + duration - 1)
        return np.inf if k is None else width * float(self.rho[k])

    def charge(self, purchases: Sequence[tuple[int, int, float]]) -> list[int]:
        """Charge (first, last, w * d) purchases of one job against the fills as of before the job."""
        ks = [self.cheapest(first, last) for first, last, _ in purchases]
        if any(k is None for k in ks):
            raise ValueError("purchase of an interval with no feasible bundle")
        for k, (_, _, amount) in zip(ks, purchases, strict=True):
            self.fill[k] += amount
        return [int(k) for k in ks if k is not None]
