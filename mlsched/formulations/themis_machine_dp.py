r"""Exact dynamic program over residual capacities for small PA auctions (Themis spec §2.3 speed
guidance; decision A8c).

(P-PF) (see :mod:`mlsched.formulations.themis`) picks one bid row b_i per bidder i, maximising
sum_i phi_{i b_i}, with the capacity rows k (one per machine in canonical mode, one per GPU in
exhaustive mode): sum_i a_{k, i b_i} <= C_k. When the capacity lattice
S = prod_k {0, ..., C_k} is small, the program is a shortest path over it:

    F_0(u) = 0 if u = 0 else -inf,        F_{i+1}(u) = max_{b : a_ib <= u} F_i(u - a_ib) + phi_ib
    B_n(r) = 0,                           B_i(r)     = max_{b : a_ib <= r} phi_ib + B_{i+1}(r - a_ib)

F_i(u): the best welfare of bidders 0..i-1 using exactly u (forward, used capacity);
B_i(r): the best welfare of bidders i..n-1 within the residual capacity r (backward, at most r).
Then Phi* = B_0(C), and leaving bidder i out,

    Phi*_{-i} = max_{u in S} F_i(u) + B_{i+1}(C - u)                                    (DP-i)

since an allocation of the others splits into bidders before i using exactly some u and bidders
after i within C - u; two DPs give every Phi*_{-i}. Each table row is one shifted maximum over
the lattice (numpy), so the work is about (sum_i rows_i) x |S| (:data:`WORK_CAP`).

The fewest-GPU allocation (A8) is HiGHS's re-solve: minimize sum |b| y over the allocations with
welfare >= T, T = tie_threshold(Phi*) <= Phi* - 1e-9 max(1, |Phi*|), and among allocations tied
in welfare and GPU count the one HiGHS returns decides the run records. The DP answers only when
that choice is forced. Let W be the allocations with welfare >= Phi* - 1e-6 max(1, |Phi*|)
(enumerated depth first with the exact bound B: a partial allocation is extended only while its
welfare plus B of its residual reaches the floor, so every node leads to a member of W). The
DP's answer is the allocation x* when W has exactly one allocation with the fewest GPUs and x*'s
welfare is >= Phi* - 1e-12 max(1, |Phi*|). Then HiGHS's re-solve returns x*:
  (i) x* is feasible for the re-solve: its welfare exceeds T by more than 1e-9 - 1e-12 (relative),
      far above rounding in HiGHS's row activity;
  (ii) every allocation the re-solve can return lies in W: it meets the welfare row up to HiGHS's
      primal feasibility tolerance 1e-7, so its welfare is >= T - 1e-7 >= Phi* - (1e-9 + 2^-34 +
      1e-7) max(1, |Phi*|) > Phi* - 1e-6 max(1, |Phi*|) (HiGHS's Phi* equals the optimum: zero
      MIP gaps; GPU counts are integers, the welfare of a 0/1 solution is a sum of phi);
  (iii) the re-solve runs with zero gaps, so it returns an allocation with at most |x*| GPUs (x* is
      feasible), in W by (ii); x* is the only allocation of W with that few.
Otherwise (ties in W at the fewest GPUs, more than :data:`ENUMERATION_CAP` members of W, or a
lattice beyond the caps) the DP declines and the auction takes the HiGHS path whole.

Sums are taken in a fixed order (F bidder 0 first, B from the last bidder); the returned Phi* is
B_0(C); the auction reports the chosen rows' phi summed in bidder order, as on the HiGHS path.
Phi*_{-i} may differ from HiGHS's objective in the last bits.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

STATE_CAP = 4096          # largest capacity lattice prod_k (C_k + 1) the DP takes
WORK_CAP = 60_000         # largest (table rows, all bidders) x lattice states
ENUMERATION_CAP = 64      # members of W enumerated before declining
WINDOW = 1e-6             # relative width of W (wider than the re-solve's 1e-9 + 2^-34 + 1e-7)
MAXIMUM_SLACK = 1e-12     # the forced allocation's welfare is the maximum up to this (relative)


@dataclass
class MachineDpAnswer:
    phi_star: float              # B_0(C)
    rows: list[int]              # the forced fewest-GPU allocation: one row per bidder
    phi_without: list[float]     # Phi*_{-i} for every bidder (DP-i)


class CapacityLattice:
    """The capacity rows some bid uses, their capacities C_k and each row's units as a vector."""

    def __init__(self, usage: Sequence[Sequence[Counter[int]]], capacity: Counter[int]) -> None:
        keys = sorted({k for table in usage for row in table for k in row})
        self.capacity = np.array([capacity[k] for k in keys], dtype=np.int64)
        self.shape = tuple(int(c) + 1 for c in self.capacity)
        self.states = math.prod(self.shape)
        self.units = [[np.array([row.get(k, 0) for k in keys], dtype=np.int64) for row in table] for table in usage]

    def fits(self, units: np.ndarray, room: np.ndarray | None = None) -> bool:
        return bool(np.all(units <= (self.capacity if room is None else room)))

    def shifted_max(self, values: np.ndarray, phi: Sequence[float], units: Sequence[np.ndarray],
                    forward: bool) -> np.ndarray:
        """new(s) = max_b values(s - a_b) + phi_b over the rows b with a_b <= s (-inf if none);
        ``forward`` adds phi_b to the prefix value (F), otherwise the prefix to phi_b (B)."""
        out = np.full(self.shape, -np.inf)
        for value, a in zip(phi, units):
            if not self.fits(a):
                continue
            target = tuple(slice(int(n), None) for n in a)
            source = tuple(slice(0, c + 1 - int(n)) for c, n in zip(self.capacity, a))
            shifted = values[source] + value if forward else value + values[source]
            out[target] = np.maximum(out[target], shifted)
        return out


class MachineDp:
    """The forward and backward DPs of one auction over its capacity lattice: Phi* = B_0(C) and
    every Phi*_{-i} by (DP-i). ``usage[i][b]``: the units row b of bidder i takes of each capacity
    row; ``lattice``: their :class:`CapacityLattice`."""

    def __init__(self, phi: Sequence[Sequence[float]], usage: Sequence[Sequence[Counter[int]]],
                 lattice: CapacityLattice) -> None:
        self.phi, self.usage, self.lattice = phi, usage, lattice
        origin = np.full(lattice.shape, -np.inf)
        origin[(0,) * len(lattice.shape)] = 0.0
        forward = [origin]
        for values, units in zip(phi, lattice.units):
            forward.append(lattice.shifted_max(forward[-1], values, units, forward=True))
        backward = [np.zeros(lattice.shape)]
        for values, units in zip(reversed(phi), reversed(lattice.units)):
            backward.append(lattice.shifted_max(backward[-1], values, units, forward=False))
        self.backward = backward[::-1]           # self.backward[i] = B_i
        self.phi_star = float(self.backward[0][tuple(int(c) for c in lattice.capacity)])
        reversed_axes = (slice(None, None, -1),) * len(lattice.shape)
        self.phi_without = [float(np.max(forward[i] + self.backward[i + 1][reversed_axes])) for i in range(len(phi))]

    def near_optimal(self) -> list[tuple[int, float, list[int]]] | None:
        """(GPUs, welfare, rows) of every allocation in W (welfare >= Phi* - WINDOW max(1, |Phi*|)),
        welfare summed in bidder order; None when W has more than :data:`ENUMERATION_CAP` members."""
        floor = self.phi_star - WINDOW * max(1.0, abs(self.phi_star))
        gpus = [[sum(row.values()) for row in table] for table in self.usage]
        members: list[tuple[int, float, list[int]]] = []

        def extend(i: int, room: np.ndarray, welfare: float, taken: int, rows: list[int]) -> bool:
            """Members of W below this partial allocation; False once more than ENUMERATION_CAP."""
            if i == len(self.phi):
                members.append((taken, welfare, rows))
                return len(members) <= ENUMERATION_CAP
            for b, (value, a) in enumerate(zip(self.phi[i], self.lattice.units[i])):
                if not self.lattice.fits(a, room):
                    continue
                rest = room - a
                if welfare + value + float(self.backward[i + 1][tuple(int(r) for r in rest)]) < floor:
                    continue
                if not extend(i + 1, rest, welfare + value, taken + gpus[i][b], [*rows, b]):
                    return False
            return True

        return members if extend(0, self.lattice.capacity, 0.0, 0, []) else None

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


def machine_dp(phi: Sequence[Sequence[float]], usage: Sequence[Sequence[Counter[int]]], capacity: Counter[int], *,
               state_cap: int = STATE_CAP, work_cap: int = WORK_CAP) -> MachineDpAnswer | None:
    """Phi*, every Phi*_{-i} and the fewest-GPU allocation when the lattice is within the caps and
    that allocation is forced (module docstring); None otherwise."""
    lattice = CapacityLattice(usage, capacity)
    if lattice.states > state_cap or lattice.states * sum(map(len, phi)) > work_cap:
        return None
    dp = MachineDp(phi, usage, lattice)
    rows = dp.forced_rows()
    return None if rows is None else MachineDpAnswer(dp.phi_star, rows, dp.phi_without)
