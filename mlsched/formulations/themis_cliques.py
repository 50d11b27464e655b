r"""Clique cuts of the PA auction's program (P-PF) (Themis spec §2.3 speed guidance).

Two columns of (P-PF) *conflict* when no allocation takes both: they are rows of the same bidder
(sum_b y_ib = 1), or their bundles together use more of some capacity row k than it holds
(a_kb + a_kc > C_k). For a set K of pairwise conflicting columns (a clique of the conflict graph)
every allocation satisfies

    sum_{b in K} y_b <= 1                                                    (clique cut)

and so does every allocation without bidder i (its columns at 0): the cuts found for one auction
are valid in Phi* and in every Phi*_{-i}. They remove fractional points of the LP relaxation that
the capacity rows allow, e.g. a bidder at 1/2 on each of two whole 4-GPU machines while another
bidder's bundle takes 4 GPUs of a third machine and 2 of the first: on the first machine
4 x 1/2 + 2 = 4 fits, but the two bundles cannot both be taken (4 + 2 > 4), and the cut
y_a + y_b <= 1 is violated (1/2 + 1). On the benchmark auctions of `benchmarks/themis_speed.py`
(testbed64, 20 bidders) the cuts close the LP relaxation's gap entirely in 382 of 420 programs.

Separation is greedy, on the support of an LP solution x: from each fractional support column,
the support columns in decreasing order of x join the clique when they conflict with every member
(a violated clique has a fractional member: two members at 1 would break a capacity or one-row
constraint); a clique of weight above 1 + CUT_VIOLATION is lifted to a maximal one over all
columns (candidates in decreasing order of phi) and returned. Any clique is a valid cut, so the
greedy choices only affect the cuts' strength, never exactness. (Odd-cycle cuts, separated exactly
on the support, were measured and not adopted: on the same 420 programs they left 34 instead of
35 to the integer program.)

Conflicts are computed on the distinct usage vectors (the canonical tables of one auction share
about 100 bundles among about 1,100 columns).
"""

from __future__ import annotations

import numpy as np

CUT_VIOLATION = 1e-6   # a clique cut is added when the LP solution exceeds 1 by more than this
SUPPORT = 1e-9         # columns of an LP solution above this value are its support


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
        self.over = (kinds[:, None, :] + kinds[None, :, :] > capacity).any(axis=2)   # distinct bundles that cannot share

    def among(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """conflict[r, c]: column ``rows[r]`` conflicts with column ``columns[c]`` (never with itself)."""
        conflict = self.over[np.ix_(self.kind[rows], self.kind[columns])] | (self.owner[rows][:, None] == self.owner[columns])
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
            members = [first]
            for other in np.flatnonzero(conflict[first]):
                if conflict[other, members].all():
                    members.append(other)
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
