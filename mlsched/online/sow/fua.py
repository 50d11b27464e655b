"""FUA-Dyadic: a fractional unit allocation from an LP-E solution (truthful SoW spec §6.2, A9).

The paper gives no construction (Theorem E.2 is cited from Chawla et al.); this one is ours, as the
spec prescribes, and its loss V(FUA) / LP-E(C_E) is reported. Each outcome o (an interval [s, e] of
length len with width-weight m_o = x_o w_o d_o and value x_o w_o v_o) goes to the dyadic class
c = floor(log2 len) and block beta = floor((s - 1) / 2^c); every interval of (c, beta) contains round
(beta + 1) 2^c. Per (c, beta) in ascending order, outcomes sorted by (s, e, id) fill groups one after
another; a group closes when its weight reaches d_max, the outcome crossing d_max being split into two
copies (value in proportion to mass). Each group becomes a bundle with n(t) = d_max on the union of
its intervals (contiguous) and 0 elsewhere, so (F1)-(F3) hold by construction; the FUA is accepted
when sum_k n_k(t) <= C_E in every round. :func:`dyadic_kappas` lists the supply scalings tried.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from mlsched.online.sow.bundles import FuaOutcome

MIN_KAPPA = 1.0 / 64


@dataclass(frozen=True)
class Piece:
    """An LP-E outcome with positive mass: rounds first..last, width-weight and value."""

    first: int
    last: int
    mass: float
    value: float


@dataclass
class Fua:
    n: npt.NDArray[np.float64]          # [bundle, round] multiplicities
    outcomes: list[FuaOutcome]          # (bundle, first, last, m_o)
    values: npt.NDArray[np.float64]     # V_k
    weights: npt.NDArray[np.float64]    # W_k

    @property
    def value(self) -> float:
        """V(FUA) = sum_k V_k."""
        return float(self.values.sum())


def dyadic_kappas() -> list[float]:
    """1, 2^(-1/2), 1/2, ... down to 1/64: the supply scalings of the kappa fallback."""
    return [2.0 ** (-i / 2) for i in range(int(2 * math.log2(1 / MIN_KAPPA)) + 1)]


def fua_dyadic(pieces: Sequence[Piece], d_max: int, supply: float, rounds: int) -> Fua | None:
    """The dyadic FUA of ``pieces``, or None when its bundles need more than ``supply`` in some round."""
    classes: dict[tuple[int, int], list[int]] = defaultdict(list)
    for i, p in enumerate(pieces):
        c = int(math.floor(math.log2(p.last - p.first + 1)))
        classes[(c, (p.first - 1) // 2 ** c)].append(i)
    groups: list[list[tuple[int, float, float]]] = []      # per group: (piece, mass, value)
    for key in sorted(classes):
        order = sorted(classes[key], key=lambda i: (pieces[i].first, pieces[i].last, i))
        current: list[tuple[int, float, float]] = []
        weight = 0.0
        for i in order:
            mass, density = pieces[i].mass, pieces[i].value / pieces[i].mass
            while mass > 1e-15:
                take = min(mass, d_max - weight)
                current.append((i, take, take * density))
                weight += take
                mass -= take
                if weight >= d_max - 1e-12:
                    groups.append(current)
                    current, weight = [], 0.0
        if current:
            groups.append(current)
    n = np.zeros((len(groups), rounds))
    outcomes: list[FuaOutcome] = []
    values, weights = np.zeros(len(groups)), np.zeros(len(groups))
    for k, group in enumerate(groups):
        first = min(pieces[i].first for i, _, _ in group)
        last = max(pieces[i].last for i, _, _ in group)
        n[k, first:last + 1] = d_max
        for i, mass, value in group:
            outcomes.append((k, pieces[i].first, pieces[i].last, mass))
            values[k] += value
            weights[k] += mass
    if np.any(n.sum(axis=0) > supply + 1e-9):
        return None
    return Fua(n=n, outcomes=outcomes, values=values, weights=weights)
