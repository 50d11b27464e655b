r"""Cuts of the PA auction's program (P-PF): cliques of its conflict graph and rounded capacity
rows (Themis spec §2.3 speed guidance).

Two columns of (P-PF) *conflict* when no allocation takes both: they are rows of the same bidder
(sum_b y_ib = 1), or their bundles together use more of some capacity row k than it holds
(a_kb + a_kc > C_k). For a set K of pairwise conflicting columns (a clique of the conflict graph)
and for any capacity row k and multiplier lam in (0, 1), every allocation satisfies

    sum_{b in K} y_b <= 1                                                    (clique cut)
    sum_b floor(lam a_kb) y_b <= floor(lam C_k)                              (rounding cut)

(the second is the Chvatal-Gomory cut of row k: its left side is at most lam sum_b a_kb y_b <=
lam C_k and an integer), and so does every allocation without bidder i (its columns at 0): the
cuts found for one auction are valid in Phi* and in every Phi*_{-i}. They remove fractional points
of the LP relaxation that the capacity rows allow. A clique: a bidder at 1/2 on each of two whole
4-GPU machines while another bidder's bundle takes 4 GPUs of a third machine and 2 of the first;
on the first machine 4 x 1/2 + 2 = 4 fits, but the two bundles cannot both be taken (4 + 2 > 4),
and y_a + y_b <= 1 is violated (1/2 + 1). A rounding cut: on a 5-GPU machine, bundles of 2 GPUs
of many bidders at 1/15 each beside one of 4 GPUs at 13/15: the row holds (5), but with lam = 1/2
each 2-GPU bundle counts 1 and the 4-GPU one 2, at most 2 in all, and the point counts 2.5.

On the benchmark auctions of `benchmarks/themis_speed.py` (20 bidders, 21 programs each) the
cliques alone close the LP relaxation's gap in 382 of 420 testbed64 programs; on 64 GPUs scattered
over `sim_256` (machines of 1-5 free GPUs) the rounding cuts take the programs left to an integer
program from 218 to 138 of 420.

Separation, on the support of an LP solution x (any clique and any lam give a valid cut, so the
choices below only affect the cuts' strength, never exactness):
- cliques, greedily: from each fractional support column, the support columns in decreasing order
  of x join the clique when they conflict with every member (a violated clique has a fractional
  member: two members at 1 would break a capacity or one-row constraint); a clique of weight above
  1 + CUT_VIOLATION is lifted to a maximal one over all columns (candidates in decreasing order of
  phi);
- rounding cuts, exactly per row: floor(lam a) and floor(lam C) for integers a, C <= C_k change
  only at the fractions j / a (a <= C_k), so those multipliers give every distinct cut of row k;
  the most violated one (by more than CUT_VIOLATION) of each row is returned.
Odd-cycle cuts of the conflict graph, separated exactly on the support, were measured and not
adopted: with the cliques alone they left 34 instead of 35 of the 420 testbed64 programs to the
integer program; added after the cliques and rounding cuts, on 20 sim_256 auctions, they left 130
of 420 as before and made HiGHS's programs slower (welfare 6.3 against 4.9 CPU s).

Conflicts are computed on the distinct usage vectors (the canonical tables of one auction share
about 100 bundles among about 1,100 columns).
"""

from __future__ import annotations

from fractions import Fraction
from functools import cache
from typing import NamedTuple

import numpy as np

CUT_VIOLATION = 1e-6   # a cut is added when the LP solution exceeds its right-hand side by more than this
SUPPORT = 1e-9         # columns of an LP solution above this value are its support
ROUNDING = 1e-9        # slack of floor() against the rounding of lam x a for the integers a and C


class Cut(NamedTuple):
    """A cut sum_j values_j y_{columns_j} <= rhs of (P-PF)."""

    columns: np.ndarray   # sorted column indices
    values: np.ndarray
    rhs: float


def rounding_cuts(x: np.ndarray, usage: np.ndarray, capacity: np.ndarray) -> list[Cut]:
    """For each capacity row k, the Chvatal-Gomory cut of that row alone that ``x`` violates most
    (by more than CUT_VIOLATION), if any: sum_b floor(lam a_kb) y_b <= floor(lam C_k) (module
    docstring), lam over the breakpoints j / a of the floors (1 <= j < a <= C_k); ``usage``: each
    column's units of every capacity row."""
    support = np.flatnonzero(x > SUPPORT)
    weights, units = x[support], usage[support]
    best = np.full(len(capacity), CUT_VIOLATION)
    chosen: list[float | None] = [None] * len(capacity)
    for lam in _breakpoints(int(capacity.max(initial=0))):
        lhs = weights @ np.floor(lam * units + ROUNDING)
        violation = lhs - np.floor(lam * capacity + ROUNDING)
        better = violation > best
        best[better] = violation[better]
        for k in np.flatnonzero(better):
            chosen[k] = lam
    cuts = []
    for k, lam in enumerate(chosen):
        if lam is not None:
            values = np.floor(lam * usage[:, k] + ROUNDING)
            columns = np.flatnonzero(values)
            cuts.append(Cut(columns, values[columns], float(np.floor(lam * capacity[k] + ROUNDING))))
    return cuts


@cache
def _breakpoints(largest: int) -> tuple[float, ...]:
    """The distinct fractions j / a in (0, 1) with a <= ``largest``, in increasing order (one
    tuple per capacity, kept: every LP round of every auction asks for it)."""
    return tuple(float(f) for f in sorted({Fraction(j, a) for a in range(2, largest + 1) for j in range(1, a)}))


class ConflictGraph:
    """The conflict graph of (P-PF)'s columns: ``usage`` (one row of units per column, one column
    per capacity row), ``capacity`` (units of each capacity row), ``owner`` (bidder of each column)."""

    def __init__(self, usage: np.ndarray, capacity: np.ndarray, owner: np.ndarray) -> None:
        rows = np.ascontiguousarray(usage)
        _, first, kind = np.unique(rows.view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel(),
                                   return_index=True, return_inverse=True)
        kinds = rows[first]
        self.kind = kind.ravel()
        self.owner = owner
        # over[p, q]: distinct bundles p and q together exceed some capacity row
        self.over = (kinds[:, None, :] + kinds[None, :, :] > capacity).any(axis=2)

    def among(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """conflict[r, c]: column ``rows[r]`` conflicts with column ``columns[c]`` (never with itself)."""
        same_bidder = self.owner[rows][:, None] == self.owner[columns]
        conflict = self.over[np.ix_(self.kind[rows], self.kind[columns])] | same_bidder
        conflict[rows[:, None] == columns[None, :]] = False
        return conflict

    def violated_cliques(self, x: np.ndarray, phi: np.ndarray) -> list[np.ndarray]:
        """Maximal cliques whose columns sum above 1 + CUT_VIOLATION in ``x`` (module docstring),
        each as its sorted column indices, without repeats."""
        support = np.flatnonzero(x > SUPPORT)
        order = support[np.argsort(-x[support], kind="stable")]
        conflict = self.among(order, order)
        found: dict[tuple[int, ...], np.ndarray] = {}
        for first in np.flatnonzero(x[order] < 1 - SUPPORT):   # a violated clique has a fractional member
            members = [int(first)]
            open_ = conflict[first].copy()   # conflicts with every member so far (the relation is symmetric)
            while open_.any():
                other = int(np.argmax(open_))   # the first such column in the order
                members.append(other)
                open_[:other + 1] = False
                open_ &= conflict[other]
            if x[order[members]].sum() > 1 + CUT_VIOLATION:
                clique = self._lifted(order[members], phi)
                found.setdefault(tuple(clique.tolist()), clique)
        return list(found.values())

    def _lifted(self, clique: np.ndarray, phi: np.ndarray) -> np.ndarray:
        """``clique`` extended to a maximal clique: every column that conflicts with all its
        members is a candidate, taken in decreasing order of phi when it conflicts with every
        candidate taken before it."""
        everyone = np.arange(len(self.kind))
        candidates = everyone[self.among(clique, everyone).all(axis=0)]
        candidates = candidates[np.argsort(-phi[candidates], kind="stable")]
        conflict = self.among(candidates, candidates)
        taken: list[int] = []
        open_ = np.ones(len(candidates), dtype=bool)   # conflicts with every candidate taken so far
        for position in range(len(candidates)):
            if open_[position]:
                taken.append(position)
                open_ &= conflict[position]
        return np.sort(np.concatenate([clique, candidates[taken]]))
