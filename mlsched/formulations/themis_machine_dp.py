r"""Exact dynamic program over machine capacities for small PA auctions (Themis spec §2.3 speed
guidance; decision A8c).

(P-PF) (see :mod:`mlsched.formulations.themis`) picks one bid row b_i per bidder i, maximising
sum_i phi_{i b_i}, subject to the capacity rows k (one per machine in canonical mode, one per GPU
in exhaustive mode): sum_i a_{k, i b_i} <= C_k. Over the capacity vectors u (units used of every
row k), with a_ib the vector of row b of bidder i:

    F_0 = {0: 0},       F_{i+1}(u) = max_{b, u' : u' + a_ib = u <= C} F_i(u') + phi_ib
    B_n = {0: 0},       B_i(v)     = max_{b, v' : a_ib + v' = v <= C} phi_ib + B_{i+1}(v')

F_i(u): the best welfare of bidders 0..i-1 using exactly u; B_i(v): of bidders i..n-1 using
exactly v; each is kept only on its reachable vectors (at most prod_k (C_k + 1), and at most the
number of partial allocations: a two-bidder auction over 27 machines has under 30 states per
stage). Then Phi* = max_{b : a_0b <= C} phi_0b + max_{v <= C - a_0b} B_1(v), and leaving bidder
i out,

    Phi*_{-i} = max_{u in F_i, v in B_{i+1}, u + v <= C} F_i(u) + B_{i+1}(v)              (DP-i)

since an allocation of the others splits into the bidders before i using exactly some u and the
bidders after i using exactly some v; two DPs give every Phi*_{-i}. Each stage is vectorised
(numpy) over states x rows; the DP declines beyond :data:`STATE_CAP` states per stage or
:data:`PAIR_CAP` compatible-pair tests in (DP-i) (and before building a stage of more than
:data:`STATE_CAP` x :data:`ROWS_PER_STATE` candidates, so that large auctions cost it little).

The fewest-GPU allocation (A8) is HiGHS's re-solve: minimize sum |b| y over the allocations with
welfare >= T, T = tie_threshold(Phi*) <= Phi* - 1e-9 max(1, |Phi*|), and among allocations tied
in welfare and GPU count the one HiGHS returns decides the run records. The DP answers only when
that choice is forced. Let W be the allocations with welfare >= Phi* - 1e-6 max(1, |Phi*|)
(enumerated depth first with the exact bound max_{v <= room} B_{i+1}(v), all rows of a bidder at
once: a partial allocation is
extended only while its welfare plus that bound reaches the floor, so every node leads to a
member of W). The DP's answer is the allocation x* when W has exactly one allocation with the
fewest GPUs and x*'s welfare is >= Phi* - 1e-12 max(1, |Phi*|). Then HiGHS's re-solve returns x*:
  (i) x* is feasible for the re-solve: its welfare exceeds T by more than (1e-9 - 1e-12)
      max(1, |Phi*|), far above rounding in HiGHS's row activity;
  (ii) every allocation the re-solve can return lies in W: it meets the welfare row up to HiGHS's
      primal feasibility tolerance 1e-7, so its welfare is >= T - 1e-7 >= Phi* - (1e-9 + 2^-34 +
      1e-7) max(1, |Phi*|) > Phi* - 1e-6 max(1, |Phi*|) (HiGHS's Phi* is the optimum: zero MIP
      gaps; the welfare of a 0/1 solution is a sum of phi, its GPU count an integer);
  (iii) the re-solve runs with zero gaps, so it returns an allocation with at most |x*| GPUs (x* is
      feasible), in W by (ii); x* is the only allocation of W with that few.
Otherwise (ties in W at the fewest GPUs, or more than :data:`ENUMERATION_CAP` members of W) the DP
still gives Phi* and every Phi*_{-i}, and only the fewest-GPU allocation is HiGHS's re-solve, on the
same program and with the threshold T of the DP's Phi*; a DP beyond the caps declines and the auction
takes the HiGHS path whole.

Sums are taken in a fixed order (F from bidder 0, B from the last bidder, W's members in bidder
order); the auction reports the chosen rows' phi summed in bidder order, as on the HiGHS path.
Phi*_{-i} may differ from HiGHS's objective in the last bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

STATE_CAP = 2048          # most reachable capacity vectors per stage
ROWS_PER_STATE = 32       # candidates (states x rows) built per stage: at most STATE_CAP x this
PAIR_CAP = 200_000        # most (F_i state, B_{i+1} state) pairs tested in (DP-i), all i together
ENUMERATION_CAP = 64      # members of W enumerated before declining
WINDOW = 1e-6             # relative width of W (wider than the re-solve's 1e-9 + 2^-34 + 1e-7)
MAXIMUM_SLACK = 1e-12     # the forced allocation's welfare is the maximum up to this (relative)


class BeyondCaps(Exception):
    """The DP would exceed one of its caps (:data:`STATE_CAP`, :data:`ROWS_PER_STATE`, :data:`PAIR_CAP`)."""


@dataclass
class MachineDpAnswer:
    phi_star: float              # Phi*
    rows: list[int] | None       # the forced fewest-GPU allocation, one row per bidder; None: not forced
    phi_without: list[float]     # Phi*_{-i} for every bidder (DP-i)


@dataclass
class Stage:
    """The reachable capacity vectors of one DP stage (one array row each) and the best welfare of each."""

    used: np.ndarray     # states x capacity rows, int
    value: np.ndarray    # states

    def extend(self, units: np.ndarray, phi: np.ndarray, capacity: np.ndarray, forward: bool,
               state_cap: int) -> Stage:
        """The next stage: every state plus every row that fits; ``forward`` adds phi to the
        stage's value (F), otherwise the value to phi (B); the best value per vector. Raises
        :class:`BeyondCaps` before building more than ``state_cap`` x :data:`ROWS_PER_STATE`
        candidates or when more than ``state_cap`` vectors are reachable."""
        if len(self.used) * len(units) > state_cap * ROWS_PER_STATE:
            raise BeyondCaps
        used = (self.used[:, None, :] + units[None, :, :]).reshape(len(self.used) * len(units), len(capacity))
        value = (self.value[:, None] + phi[None, :] if forward else phi[None, :] + self.value[:, None]).ravel()
        fits = (used <= capacity).all(axis=1)
        used, value = used[fits], value[fits]
        if not len(used):
            return Stage(used, value)
        # equal vectors become neighbours (lexsort: exact, no packing into one key); no rows: all equal
        order = np.lexsort(used.T) if used.shape[1] else np.arange(len(used))
        used, value = used[order], value[order]
        first = np.flatnonzero(np.concatenate([[True], (used[1:] != used[:-1]).any(axis=1)]))
        if len(first) > state_cap:
            raise BeyondCaps
        return Stage(used[first], np.maximum.reduceat(value, first))


class MachineDp:
    """The forward DP up to F_{n-1} and the backward DP down to B_1 of one auction (n >= 1
    bidders): Phi* and every Phi*_{-i} by (DP-i), and the members of W. ``units[i]``: one array
    row per bid row of bidder i, the units it takes of each capacity row (one column each, as
    :func:`mlsched.formulations.themis.usage_matrices` gives them); ``capacity``: C_k in the same
    column order. Raises :class:`BeyondCaps` past the caps."""

    def __init__(self, phi: Sequence[Sequence[float]], units: Sequence[np.ndarray], capacity: np.ndarray, *,
                 state_cap: int = STATE_CAP, pair_cap: int = PAIR_CAP) -> None:
        self.capacity = np.asarray(capacity, dtype=np.int64)
        self.units = [np.asarray(use, dtype=np.int64).reshape(len(use), len(self.capacity)) for use in units]
        self.phi = [np.asarray(values, dtype=float) for values in phi]
        self.gpus = [units.sum(axis=1) for units in self.units]
        start = Stage(np.zeros((1, len(self.capacity)), dtype=np.int64), np.zeros(1))
        forward = [start]                        # F_0 .. F_{n-1}
        largest_later = _largest_later(self.units[:-1])
        for i, (units, values) in enumerate(zip(self.units[:-1], self.phi[:-1])):
            if len(forward[-1].used) * largest_later[i] > state_cap * ROWS_PER_STATE:
                raise BeyondCaps   # a later stage would build too many candidates (:func:`_largest_later`)
            forward.append(forward[-1].extend(units, values, self.capacity, True, state_cap))
        backward = [start]                       # B_n .. B_1
        for units, values in zip(self.units[:0:-1], self.phi[:0:-1]):
            backward.append(backward[-1].extend(units, values, self.capacity, False, state_cap))
        self.after = backward[::-1]              # self.after[i] = B_{i+1}
        if sum(len(f.value) * len(b.value) for f, b in zip(forward, self.after)) > pair_cap:
            raise BeyondCaps
        self._first = self._fitting(0, self.capacity)   # bidder 0's rows that fit, their rests and bounds
        fitting, _, bound = self._first
        self.phi_star = float(np.max(self.phi[0][fitting] + bound, initial=-np.inf))
        self.phi_without = [self._best_pair(f, b) for f, b in zip(forward, self.after)]

    def _best_pair(self, before: Stage, after: Stage) -> float:
        """(DP-i): max F_i(u) + B_{i+1}(v) over u + v <= C."""
        fits = (before.used[:, None, :] + after.used[None, :, :] <= self.capacity).all(axis=2)
        return float(np.max(np.where(fits, before.value[:, None] + after.value[None, :], -np.inf), initial=-np.inf))

    def _completions(self, i: int, rests: np.ndarray) -> np.ndarray:
        """The best welfare of the bidders after i within each residual vector of ``rests``:
        max_{v <= rest} B_{i+1}(v) (-inf when no vector fits); 0 for the last bidder (B_n holds
        only the zero vector, worth 0, and every rest is >= 0)."""
        if i + 1 == len(self.phi):
            return np.zeros(len(rests))
        stage = self.after[i]
        fits = (stage.used[None, :, :] <= rests[:, None, :]).all(axis=2)
        return np.max(np.where(fits, stage.value[None, :], -np.inf), axis=1, initial=-np.inf)

    def _fitting(self, i: int, room: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bidder i's rows that fit in ``room`` (indices), the room each leaves (all rows) and
        :meth:`_completions` of those rests."""
        rests = room - self.units[i]
        fitting = np.flatnonzero((rests >= 0).all(axis=1))
        return fitting, rests, self._completions(i, rests[fitting])

    def near_optimal(self) -> list[tuple[int, float, list[int]]] | None:
        """(GPUs, welfare, rows) of every allocation in W (welfare >= Phi* - WINDOW max(1, |Phi*|)),
        welfare summed in bidder order; None when W has more than :data:`ENUMERATION_CAP` members."""
        floor = self.phi_star - WINDOW * max(1.0, abs(self.phi_star))
        members: list[tuple[int, float, list[int]]] = []

        def extend(i: int, room: np.ndarray, welfare: float, taken: int, rows: list[int]) -> bool:
            """Members of W below this partial allocation (bidders 0..i-1 placed, i < n); False once
            more than ENUMERATION_CAP."""
            fitting, rests, bound = self._first if i == 0 else self._fitting(i, room)
            for b, rest_bound in zip(fitting.tolist(), bound.tolist()):
                value = float(self.phi[i][b])
                if welfare + value + rest_bound < floor:
                    continue
                if i + 1 == len(self.phi):
                    members.append((taken + int(self.gpus[i][b]), welfare + value, [*rows, b]))
                    if len(members) > ENUMERATION_CAP:
                        return False
                elif not extend(i + 1, rests[b], welfare + value, taken + int(self.gpus[i][b]), [*rows, b]):
                    return False
            return True

        return members if extend(0, self.capacity, 0.0, 0, []) else None

    def forced_rows(self) -> list[int] | None:
        """The only allocation with the fewest GPUs in W, when there is one and its welfare is the
        maximum up to :data:`MAXIMUM_SLACK`; None otherwise (module docstring)."""
        members = self.near_optimal() if math.isfinite(self.phi_star) else None
        if not members:
            return None
        fewest = min(g for g, _, _ in members)
        at_fewest = [(welfare, rows) for g, welfare, rows in members if g == fewest]
        if len(at_fewest) != 1 or at_fewest[0][0] < self.phi_star - MAXIMUM_SLACK * max(1.0, abs(self.phi_star)):
            return None
        return at_fewest[0][1]


def _largest_later(units: Sequence[np.ndarray]) -> list[int]:
    """For each forward stage i, the most rows of any bidder j >= i whose stage is built while the
    states only grow: the suffix maximum of the row counts, stopped at the first bidder without a
    row that uses nothing (0 from there on). With such a row in every table up to j, each state of
    F_i is also a state of F_j (the bidders between take it), so |F_j| x rows_j >= |F_i| x rows_j
    and the DP declines at stage j at the latest once |F_i| x rows_j exceeds the candidate cap:
    it can decline at once, with the same answer (None) and none of the work."""
    growing = len(units)
    for i, use in enumerate(units):
        if not (~use.any(axis=1)).any():
            growing = i
            break
    largest, best = [0] * len(units), 0
    for i in range(growing - 1, -1, -1):
        best = max(best, len(units[i]))
        largest[i] = best
    return largest


def machine_dp(phi: Sequence[Sequence[float]], units: Sequence[np.ndarray], capacity: np.ndarray, *,
               state_cap: int = STATE_CAP, pair_cap: int = PAIR_CAP) -> MachineDpAnswer | None:
    """Phi*, every Phi*_{-i} and, when it is forced, the fewest-GPU allocation (module docstring);
    None when the DP would exceed its caps."""
    try:
        dp = MachineDp(phi, units, capacity, state_cap=state_cap, pair_cap=pair_cap)
    except BeyondCaps:
        return None
    return MachineDpAnswer(dp.phi_star, dp.forced_rows(), dp.phi_without)
