r"""Themis partial-allocation (PA) auction: the Nash-social-welfare program and hidden payments
(Themis spec §2.1-2.4).

Each bidder i offers a bid table of bundles b (subsets of the offered GPUs R', the empty bundle
included) with value v_ib = 1 / rho_i(H_i U b); phi_ib = log v_ib, with rho = +inf replaced by
rho_cap = max(1e4, 10 x the largest finite rho of the round) (A5).

(P-PF)   maximize   sum_i sum_b phi_ib y_ib
         s.t.       sum_b y_ib = 1                      for every bidder i   (one row each)
                    sum_i sum_{b : g in b} y_ib <= 1     for every offered GPU g
                    y_ib in {0, 1}                       (relax=True: y_ib in [0, 1], (R1))

In canonical mode (§1.8, A7) a bundle stands for a machine-count vector: its GPUs are one
representative choice, and the GPU rows become one row per machine m,
sum_i sum_b |b ∩ m| y_ib <= free_m; concrete GPUs are assigned after the solve.

The auction solves the program through HiGHS's direct interface (:func:`pf_arrays`, spec §2.3
speed guidance); :func:`build_pf` is the same program in Pyomo, for inspection, model export and
the cross-check in the tests. By default (``solves="fixed"``) Phi* and each Phi*_{-i} come from
the LP relaxation of (P-PF) (without bidder i) strengthened by clique and rounding cuts
(:mod:`mlsched.formulations.themis_cuts`) when its bound proves a known allocation optimal, and
otherwise from (P-PF) with those cuts less the columns that reduced-cost fixing rules out against
the best allocation known (before HiGHS, the optima already found in the auction, each less i, or
for Phi* a dive on the LP, are tried as starts: the better the start, the more columns the fixing
drops);
``solves="persistent"`` takes them on one persistent HiGHS model per auction (bidder i left out by
its one-row constraint set to 0), and building and solving a fresh program for each
(``solves="fresh"``) is the original path, kept as the oracle.

Reduced-cost fixing (exact). Let I be the welfare of a known allocation without bidder i (the PF
allocation less i; for Phi*, with no bidder left out, a greedy allocation in order of the LP
relaxation's values; each improved by single-bidder moves to better rows that fit), u >= 0 one
multiplier per capacity row k with capacity C_k, a_kb the units row b uses of k, and
r_jb = phi_jb - sum_k u_k a_kb. Every allocation y without i satisfies
sum phi y = sum_{j != i} sum_b r_jb y_jb + sum_k u_k (sum a_k y) <= sum_{j != i} sum_b r_jb y_jb + u.C,
and as each bidder j takes exactly one row, <= U = u.C + sum_{j != i} M_j with M_j = max_b r_jb. So
an allocation that gives row b to bidder j is worth at most U - (M_j - r_jb); when that is below I,
no allocation worth at least I, and so no optimal one, uses row b, and dropping the column leaves
Phi*_{-i} unchanged. The test drops a column only below I - 1e-6 max(1, |I|) (rounding in u and
in the sums cannot drop a needed one) and always keeps the start's own columns. Any u >= 0 is
valid; u is the capacity rows' duals of the LP relaxation without bidder i (either sign
convention, clipped at 0; both give valid bounds, and a column either one rules out is dropped),
which makes U the LP bound for the right convention. Valid cuts (sum_b g_b y_b <= h for every
allocation) enter the same way as capacity rows of capacity h, their duals as further
multipliers. The bound U alone, with the multipliers of any relaxation already solved in the
auction, settles Phi*_{-i} when it meets the start within EXACT_REL_GAP (no LP solved for i).

The optimum Phi* maximises the Nash social welfare prod_i v_i. Among optimal allocations the one
with the fewest GPUs is taken by a second solve (minimize sum |b| y_ib with sum phi y >= Phi* -
1e-9 max(1, |Phi*|) rounded down to a multiple of 2^-34, so that values of Phi* from different
solves that differ in their last bits give the same re-solve and the same allocation among exact
ties), A8; on the default path (``tie_break="reduced"``) that re-solve runs on the columns
reduced-cost fixing against its threshold keeps, with the cuts (the same fewest GPUs; among exact
ties the pick of the smaller program), and ``tie_break="whole"`` runs it on all of (P-PF).
Hidden payment (§2.3): with Phi*_{-i} the optimum without bidder i,
log c_i = (Phi* - phi_i(G_i,pf)) - Phi*_{-i}, clamped to [0, 1]; a lone bidder pays nothing (c = 1,
A4); a bidder that wins the empty bundle has Phi*_{-i} = Phi* - phi_i(empty) without a re-solve.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cached_property
from typing import Any

import numpy as np
import pyomo.environ as pyo

from mlsched.errors import MlschedError, UsageError
from mlsched.formulations.themis_cuts import SUPPORT, ConflictGraph, Cut, rounding_cuts
from mlsched.formulations.themis_machine_dp import machine_dp
from mlsched.solve import EXACT_REL_GAP, ArrayProgram, Built, SolveReport, Status, load_arrays, solve_arrays

RHO_CAP_FLOOR = 1e4
AUCTION_SOLVES = ("fixed", "persistent", "fresh")
TIE_BREAKS = ("whole", "reduced")   # the program of A8's fewest-GPU re-solve (:func:`pa_auction`)
DEFAULT_TIE_BREAK = {"fixed": "reduced", "persistent": "whole", "fresh": "whole"}   # by ``solves`` (A8e)
TIE_GRID = 2.0 ** -34   # about 5.8e-11: the grid of the fewest-GPU re-solve's welfare threshold
FIXING_MARGIN = 1e-6   # relative slack of the reduced-cost test against rounding in the LP duals
MAX_CUT_ROUNDS = 20   # LP solves per program in the cut loop of the default path
MAX_DIVE_SOLVES = 30   # LP solves of one dive for a start (:meth:`_FixedWelfare._dive`)
RETRY_MIP_FEASIBILITY = 1e-9   # HiGHS's mip_feasibility_tolerance (default 1e-6) when an auction program is solved again


@dataclass(frozen=True)
class Bidder:
    name: str
    rho: Callable[[frozenset[int]], float]   # rho_i(H_i U bundle)
    unmet: int


BidTable = list[tuple[frozenset[int], float]]   # (bundle, rho)


def exhaustive_bids(bidder: Bidder, offered: Sequence[int]) -> BidTable:
    """Every subset of the offered GPUs up to the bidder's unmet demand (A7 exhaustive mode)."""
    top = min(bidder.unmet, len(offered))
    return [(frozenset(b), bidder.rho(frozenset(b))) for k in range(top + 1) for b in itertools.combinations(offered, k)]


def log_values(tables: Sequence[BidTable]) -> list[list[float]]:
    """phi_ib = -log rho_ib with +inf replaced by rho_cap (A5)."""
    return log_rho([[r for _, r in table] for table in tables])


def log_rho(rows: Sequence[Sequence[float]]) -> list[list[float]]:
    """:func:`log_values` of the bidders' rho values alone (one row per bidder)."""
    finite = [r for row in rows for r in row if math.isfinite(r)]
    cap = max(RHO_CAP_FLOOR, 10 * max(finite, default=0.0))
    return [[-math.log(r if math.isfinite(r) else cap) for r in row] for row in rows]


def _usage(bundle: frozenset[int], group_of: Mapping[int, int] | None) -> Counter[int]:
    """Units of each capacity row a bundle uses: its GPUs, or its GPUs per machine (canonical mode)."""
    return Counter(bundle if group_of is None else (group_of[g] for g in bundle))


Usage = list[list[Counter[int]]]   # the capacity units of each row of each bid table


def table_usage(tables: Sequence[BidTable], group_of: Mapping[int, int] | None) -> Usage:
    """:func:`_usage` of every row of every table, each distinct bundle counted once (the canonical
    tables of one auction share their representative bundles: about 1,100 rows, about 100 bundles)."""
    counted = {bundle: _usage(bundle, group_of) for bundle in {bundle for table in tables for bundle, _ in table}}
    return [[counted[bundle] for bundle, _ in table] for table in tables]


def build_pf(tables: Sequence[BidTable], phi: Sequence[Sequence[float]], offered: Sequence[int], *,
             relax: bool = False, group_of: Mapping[int, int] | None = None) -> Built:
    """(P-PF); ``group_of`` maps each offered GPU to its machine for per-machine capacity rows."""
    tick = time.perf_counter()
    m = pyo.ConcreteModel(name="themis_pf")
    rows = [(i, b) for i, table in enumerate(tables) for b in range(len(table))]
    m.y = pyo.Var(rows, domain=pyo.UnitInterval if relax else pyo.Binary)
    m.obj = pyo.Objective(expr=sum(phi[i][b] * m.y[i, b] for i, b in rows), sense=pyo.maximize)
    m.one = pyo.Constraint(range(len(tables)), rule=lambda _, i: sum(m.y[i, b] for b in range(len(tables[i]))) == 1)
    capacity = _usage(frozenset(offered), group_of)
    usage = {(i, b): _usage(tables[i][b][0], group_of) for i, b in rows}
    users = {key: [(ib, n) for ib, use in usage.items() for k, n in use.items() if k == key] for key in capacity}
    m.gpu = pyo.Constraint([k for k in capacity if users[k]],
                           rule=lambda _, k: sum(n * m.y[ib] for ib, n in users[k]) <= capacity[k])

    def extract() -> list[int]:
        return [max(range(len(table)), key=lambda b: m.y[i, b].value or 0.0) for i, table in enumerate(tables)]

    return Built(model=m, name="themis_pf", sense="max", relaxed=relax, build_seconds=time.perf_counter() - tick,
                 extract=None if relax else extract)


@dataclass
class AuctionResult:
    phi_star: float
    rows: list[int]                  # chosen bid row per bidder
    bundles: list[frozenset[int]]
    payments: list[float]            # c_i in [0, 1]
    phi_without: list[float]         # Phi*_{-i}
    lp_bound: float


def hidden_payments(phi_star: float, own: Sequence[float], won: Sequence[bool],
                    optimum_without: Callable[[int], float], *, tolerance: float = 1e-9) -> tuple[list[float], list[float]]:
    """c_i = exp((Phi* - phi_i) - Phi*_{-i}) clamped to [0, 1], and Phi*_{-i}, for every bidder (§2.3).

    A lone bidder pays nothing (A4); a bidder that won nothing has Phi*_{-i} = Phi* - phi_i(empty)
    without a re-solve; a payment above 1 (beyond ``tolerance`` in logs) means a solver error.
    """
    if len(own) == 1:
        return [1.0], [0.0]
    payments, without = [], []
    for i, (phi_i, has_gpus) in enumerate(zip(own, won)):
        rest = optimum_without(i) if has_gpus else phi_star - phi_i
        log_c = (phi_star - phi_i) - rest
        if log_c > tolerance:
            raise MlschedError(f"hidden payment above 1 for bidder {i}: log c = {log_c}")
        payments.append(min(1.0, math.exp(log_c)))
        without.append(rest)
    return payments, without


def pf_arrays(tables: Sequence[BidTable], phi: Sequence[Sequence[float]], offered: Sequence[int], *,
              group_of: Mapping[int, int] | None = None, relax: bool = False, usage: Usage | None = None) -> ArrayProgram:
    """(P-PF) as arrays for HiGHS's direct interface: the same rows as :func:`build_pf`; ``usage``:
    :func:`table_usage` of the tables, when known."""
    capacity = _usage(frozenset(offered), group_of)
    keys = {k: r for r, k in enumerate(capacity, start=len(tables))}
    start, index, value = [0], [], []
    entries: dict[int, tuple[list[int], list[float]]] = {}   # capacity rows and units of each distinct usage object
    for i, uses in enumerate(table_usage(tables, group_of) if usage is None else usage):
        for use in uses:
            rows_units = entries.get(id(use))
            if rows_units is None:
                rows_units = entries[id(use)] = ([keys[k] for k in use], [float(n) for n in use.values()])
            index.append(i)
            index += rows_units[0]
            value.append(1.0)
            value += rows_units[1]
            start.append(len(index))
    n = len(start) - 1
    return ArrayProgram(cost=np.array([v for row in phi for v in row]), col_lower=np.zeros(n), col_upper=np.ones(n),
                        row_lower=np.concatenate([np.ones(len(tables)), np.full(len(keys), -np.inf)]),
                        row_upper=np.concatenate([np.ones(len(tables)), [float(capacity[k]) for k in keys]]),
                        a_start=np.array(start), a_index=np.array(index), a_value=np.array(value),
                        integer=not relax, sense="max")


def _rows(sizes: Sequence[int], x: Sequence[float]) -> list[int]:
    """The chosen column of each bidder (``sizes``: its number of columns) in a 0/1 vector."""
    rows, col = [], 0
    for size in sizes:
        rows.append(int(np.argmax(x[col:col + size])))
        col += size
    return rows


def _indicator(sizes: Sequence[int], rows: Sequence[int], skip: int | None = None) -> np.ndarray:
    """The 0/1 column vector of one chosen row per bidder (none for bidder ``skip``)."""
    x = np.zeros(sum(sizes))
    offsets = np.cumsum([0, *sizes])[:-1]
    x[offsets + np.asarray(rows, dtype=np.int64)] = 1.0
    if skip is not None:
        x[offsets[skip]:offsets[skip] + sizes[skip]] = 0.0
    return x


class _WelfareModel:
    """Phi* and each Phi*_{-i} (values only) on one HiGHS model of the whole auction: bidder i is
    left out by setting its one-row constraint to sum_b y_ib = 0, so none of its columns can be
    chosen and the capacity rows are the full auction's. HiGHS runs without presolve and without
    its feasibility-jump heuristic (about 11 ms per solve with presolve off, and the known start
    already gives the search an incumbent). ``sizes``: the number of columns of each bidder."""

    def __init__(self, program: ArrayProgram, sizes: Sequence[int]) -> None:
        self.h = load_arrays(program, presolve=False, mip_heuristic_run_feasibility_jump=False)
        self.sizes = sizes

    def optimum(self, start: np.ndarray | None = None) -> tuple[float, list[int]]:
        """The optimum and the column chosen for each bidder (the left-out one: its first)."""
        import highspy

        if start is not None:
            initial = highspy.HighsSolution()
            initial.col_value = start.tolist()
            self.h.setSolution(initial)
        self.h.run()
        status = self.h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise MlschedError(f"PF auction program not solved: {self.h.modelStatusToString(status)}")
        return float(self.h.getInfo().objective_function_value), _rows(self.sizes, self.h.getSolution().col_value)

    def without(self, i: int, rows: Sequence[int]) -> tuple[float, list[int]]:
        """Phi*_{-i} and its columns, starting from the allocation ``rows`` without bidder i."""
        with _left_out(self.h, i):
            return self.optimum(_indicator(self.sizes, rows, skip=i))


@contextmanager
def _left_out(h: Any, bidder: int | None) -> Iterator[None]:
    """Bidder ``bidder`` left out of the HiGHS model ``h`` of (P-PF) for the block (its one-row
    sum_b y_b set to 0, then back to 1); nothing for None."""
    if bidder is None:
        yield
        return
    h.changeRowBounds(bidder, 0.0, 0.0)
    try:
        yield
    finally:
        h.changeRowBounds(bidder, 1.0, 1.0)


def capacity_usage(program: ArrayProgram, bidders: int) -> np.ndarray:
    """The units of each capacity row (after the ``bidders`` one-rows) per column, dense."""
    column = np.repeat(np.arange(len(program.cost)), np.diff(program.a_start))
    capacity_entry = program.a_index >= bidders
    usage = np.zeros((len(program.cost), len(program.row_lower) - bidders))
    usage[column[capacity_entry], program.a_index[capacity_entry] - bidders] = program.a_value[capacity_entry]
    return usage


def lagrangian_bound(phi: np.ndarray, usage: np.ndarray, capacity: np.ndarray, sizes: Sequence[int],
                     capacity_dual: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """The parts of the Lagrangian bound of the module docstring with multipliers ``capacity_dual``
    (one per capacity row, >= 0; ``usage``: each column's units of every capacity row, as from
    :func:`capacity_usage`; ``phi``: the columns' values): the reduced value r_j of every column,
    each bidder's best M_i = max_b r_ib and u.C. Without bidder i the bound is u.C + sum_{j != i} M_j."""
    reduced = phi - usage @ capacity_dual
    best = np.maximum.reduceat(reduced, np.cumsum([0, *sizes])[:-1])
    return reduced, best, float(capacity_dual @ capacity)


def lagrangian_keep(phi: np.ndarray, usage: np.ndarray, capacity: np.ndarray, sizes: Sequence[int],
                    capacity_dual: np.ndarray, incumbent: float, skip: int | None = None,
                    margin: float = FIXING_MARGIN) -> np.ndarray:
    """Columns of (P-PF) that can be in an allocation worth at least ``incumbent`` (bidder ``skip``
    left out), by :func:`lagrangian_bound` (its ``phi``, ``usage`` and ``capacity``): column j of
    bidder i is dropped when U - (M_i - r_j) < incumbent - margin max(1, |incumbent|)."""
    reduced, best, priced = lagrangian_bound(phi, usage, capacity, sizes, capacity_dual)
    offsets = np.cumsum([0, *sizes])
    if skip is not None:
        best[skip] = 0.0
    owner = np.repeat(np.arange(len(sizes)), sizes)
    keep = priced + best.sum() - (best[owner] - reduced) >= incumbent - margin * max(1.0, abs(incumbent))
    if skip is not None:
        keep[offsets[skip]:offsets[skip + 1]] = False
    return keep


def _columns(program: ArrayProgram, keep: np.ndarray) -> ArrayProgram:
    """``program`` restricted to the columns in ``keep``."""
    lengths = np.diff(program.a_start)
    entries = np.repeat(keep, lengths)
    return replace(program, cost=program.cost[keep], col_lower=program.col_lower[keep], col_upper=program.col_upper[keep],
                   a_start=np.concatenate([[0], np.cumsum(lengths[keep])]), a_index=program.a_index[entries],
                   a_value=program.a_value[entries])


def _meets(value: float, bound: float) -> bool:
    """Whether an allocation worth ``value`` meets the upper ``bound`` on its program's optimum
    within EXACT_REL_GAP (then it is optimal, by the standard of a proven optimum here)."""
    return value >= bound - EXACT_REL_GAP * max(1.0, abs(bound))


@dataclass
class _Relaxation:
    """The LP relaxation of (P-PF) with the auction's cuts, solved: its value, solution, the
    multipliers of its capacity and cut rows (both sign conventions of the duals, clipped at 0) and
    the solution as an allocation when it is one (:meth:`_FixedWelfare._allocation`)."""

    value: float
    x: np.ndarray
    multipliers: list[np.ndarray]
    allocation: np.ndarray | None


class _FixedWelfare:
    """Phi* and each Phi*_{-i} by the LP relaxation of (P-PF) strengthened with clique and rounding
    cuts (:mod:`mlsched.formulations.themis_cuts`), one persistent HiGHS LP per auction (bidder i
    left out by its one-row constraint set to 0; the cuts found for one program stay for the next,
    being valid in all). A known allocation (the PF allocation less i; for Phi*, a greedy
    allocation in order of the LP's values), improved by single-bidder moves, or the LP's own
    solution when it is an allocation, is optimal when it meets an upper bound within
    ``EXACT_REL_GAP`` (:func:`_meets`, the standard of a proven optimum here), and its value is
    then the optimum: first the Lagrangian bound with the multipliers of the relaxations already
    solved (:meth:`_bound_without`), then the LP bound. When the LP bound does not meet the start,
    a further start is tried before HiGHS and held against the LP bound: for Phi*_{-i} the best
    from the optimal allocations already found in the auction, each less i
    (:meth:`_from_optima`); for Phi* a dive on the LP (:meth:`_dive`). Otherwise the integer program
    with the cut rows, less the columns reduced-cost fixing rules out against the best start
    (module docstring), is solved from it by HiGHS (without presolve and feasibility jump, as
    :class:`_WelfareModel`). ``settled`` counts the values settled each way ("prices", "lp",
    "milp")."""

    def __init__(self, program: ArrayProgram, sizes: Sequence[int]) -> None:
        self.program, self.sizes = program, sizes
        self.lp = load_arrays(replace(program, integer=False), presolve=False)
        self.usage = capacity_usage(program, len(sizes))
        self.owner = np.repeat(np.arange(len(sizes)), sizes)
        self.offsets = np.cumsum([0, *sizes])[:-1]
        self.capacity = program.row_upper[len(sizes):]
        self.graph = ConflictGraph(self.usage, self.capacity, self.owner)
        self.cuts: list[Cut] = []   # the cut rows of the LP, after its capacity rows, in order
        self.units = self.usage     # each column's units of every capacity and cut row
        self.limits = self.capacity   # those rows' right-hand sides
        self.settled = Counter[str]()
        self.prices: list[tuple[np.ndarray, float]] = []   # (M_i per bidder, u.C) of each relaxation solved
        self.optima: dict[bytes, np.ndarray] = {}   # the optimal allocations found so far, 0/1 by column
        self.first_multipliers: list[np.ndarray] = []   # those of Phi*'s relaxation, for the reduced re-solve
        self._first_basis()

    def _first_basis(self) -> None:
        """The LP's first basis: the columns of a greedy allocation by value (:meth:`_lp_greedy`
        on phi) basic, one per bidder, and the capacity rows' slacks. Its matrix is nonsingular
        (each one-row holds one basic column, the slacks complete the capacity rows) and the point
        feasible; the first solve takes about half the simplex iterations of HiGHS's slack basis.
        Without such an allocation (a bidder with no row that fits) HiGHS starts on its own."""
        import highspy

        rows = self._lp_greedy(self.program.cost)
        if rows is None:
            return
        basis = highspy.HighsBasis()
        status = np.full(len(self.owner), highspy.HighsBasisStatus.kLower)
        status[self.offsets + np.asarray(rows)] = highspy.HighsBasisStatus.kBasic
        basis.col_status = status.tolist()
        basis.row_status = ([highspy.HighsBasisStatus.kUpper] * len(self.sizes)
                            + [highspy.HighsBasisStatus.kBasic] * len(self.capacity))
        basis.valid = True
        self.lp.setBasis(basis)

    def improve(self, rows: Sequence[int], skip: int | None = None) -> list[int]:
        """The allocation ``rows`` (bidder ``skip`` left out) improved by single-bidder moves, the
        best first, to a better row that fits the capacity left free: a feasible start at least as
        good, for the fixing test and the solver (compiled:
        :func:`mlsched.formulations.themis_auction_kernels.improve`)."""
        from mlsched.formulations import themis_auction_kernels

        moved = themis_auction_kernels.improve(self.program.cost, self.usage, self.capacity, self.owner, self.offsets,
                                               np.asarray(rows, dtype=np.int64), -1 if skip is None else skip)
        return moved.tolist()

    def _relaxation(self, skip: int | None, incumbent: float = -math.inf) -> _Relaxation | None:
        """The LP relaxation (bidder ``skip`` left out) with the cuts its solutions violate
        added, round after round (at most MAX_CUT_ROUNDS solves, fewer once its value proves an
        allocation worth ``incumbent`` optimal or its solution is an allocation, which no cut
        removes); None when the LP is not solved."""
        import highspy

        with _left_out(self.lp, skip):
            for round_ in range(MAX_CUT_ROUNDS):
                self.lp.run()
                if self.lp.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                    return None
                x = np.asarray(self.lp.getSolution().col_value)
                value = float(self.lp.getInfo().objective_function_value)
                allocation = self._allocation(x, skip)   # no cut is violated by an allocation: stop
                if allocation is not None or _meets(incumbent, value) or round_ == MAX_CUT_ROUNDS - 1:
                    break
                cliques = self.graph.violated_cliques(x, self.program.cost)
                cuts = [Cut(clique, np.ones(len(clique)), 1.0) for clique in cliques]
                cuts += rounding_cuts(x, self.usage, self.capacity)
                if not cuts:
                    break
                self._add(cuts)
            dual = np.asarray(self.lp.getSolution().row_dual)[len(self.sizes):]
            return _Relaxation(value, x, [np.maximum(dual, 0.0), np.maximum(-dual, 0.0)], allocation)

    def _add(self, cuts: list[Cut]) -> None:
        """``cuts`` as rows of the LP and columns of :attr:`units` (their right-hand sides in :attr:`limits`)."""
        import highspy

        for cut in cuts:
            self.lp.addRow(-highspy.kHighsInf, cut.rhs, len(cut.columns), cut.columns.astype(np.int32), cut.values)
        added = np.zeros((len(self.owner), len(cuts)))
        for column, cut in enumerate(cuts):
            added[cut.columns, column] = cut.values
        self.units = np.hstack([self.units, added])
        self.limits = np.concatenate([self.limits, [cut.rhs for cut in cuts]])
        self.cuts += cuts

    def _with_cuts(self, keep: np.ndarray) -> ArrayProgram:
        """(P-PF) with the cut rows after its capacity rows, on the columns in ``keep`` alone: the
        arrays of ``program.with_rows(cut rows)`` restricted to those columns (each column's
        entries by row), built from the kept columns only."""
        kept = _columns(self.program, keep)
        column = np.repeat(np.arange(int(keep.sum())), np.diff(kept.a_start))
        cut_units = self.units[keep, len(self.capacity):]
        cut_column, cut = np.nonzero(cut_units)
        columns = np.concatenate([column, cut_column])
        rows = np.concatenate([kept.a_index, len(self.program.row_lower) + cut])
        order = np.lexsort((rows, columns))
        return replace(kept, row_lower=np.concatenate([self.program.row_lower, np.full(len(self.cuts), -np.inf)]),
                       row_upper=np.concatenate([self.program.row_upper, self.limits[len(self.capacity):]]),
                       a_start=np.concatenate([[0], np.cumsum(np.bincount(columns, minlength=len(kept.cost)))]),
                       a_index=rows[order],
                       a_value=np.concatenate([kept.a_value, cut_units[cut_column, cut]])[order])

    @cached_property
    def _empty(self) -> list[int] | None:
        """Every bidder's first row that uses nothing, when each has one (found once per auction)."""
        empty = [np.flatnonzero(~self.usage[start:start + size].any(axis=1))
                 for start, size in zip(self.offsets, self.sizes)]
        return [int(e[0]) for e in empty] if all(len(e) for e in empty) else None

    def _lp_greedy(self, value: np.ndarray) -> list[int] | None:
        """An allocation guided by the LP solution ``value``: columns by decreasing LP value (ties:
        the higher phi), each taken when its bidder has no row yet and it fits the capacity left;
        None when some bidder is left without a row (it has none that fits, e.g. no row that uses
        nothing)."""
        free = self.capacity.copy()
        rows: list[int | None] = [None] * len(self.sizes)
        left = len(rows)
        for column in np.lexsort((-self.program.cost, -value)).tolist():
            j = int(self.owner[column])
            if rows[j] is None and np.all(self.usage[column] <= free):
                rows[j], left = column - int(self.offsets[j]), left - 1
                free -= self.usage[column]
                if not left:
                    return rows
        return None

    def _allocation(self, x: np.ndarray, skip: int | None) -> np.ndarray | None:
        """The LP solution ``x`` as an allocation (one column per bidder, none for ``skip``, every
        capacity kept), when it is one within SUPPORT."""
        y = np.round(x)
        if np.abs(x - y).max(initial=0.0) > SUPPORT:
            return None
        chosen = np.add.reduceat(y, self.offsets)
        wanted = np.ones(len(self.sizes))
        if skip is not None:
            wanted[skip] = 0.0
        if not np.array_equal(chosen, wanted) or np.any(self.usage.T @ y > self.capacity):
            return None
        return y

    def _bound_without(self, skip: int) -> float:
        """An upper bound on Phi*_{-skip} from the multipliers of every relaxation solved so far (no
        LP solve): u.C + sum_{j != skip} M_j (:func:`lagrangian_bound`), the least over them; +inf
        before any is solved."""
        return min((priced + best.sum() - best[skip] for best, priced in self.prices), default=math.inf)

    def optimum(self, rows: Sequence[int] | None = None, skip: int | None = None) -> float:
        """Phi* (``skip`` None) or Phi*_{-skip}, from the feasible allocation ``rows`` (default:
        :meth:`_lp_greedy` for Phi*; :attr:`_empty` without bidder ``skip`` or when the LP is not
        solved). Without bidder ``skip``, the start is first held against :meth:`_bound_without`."""
        start = None if rows is None else _indicator(self.sizes, self.improve(rows, skip), skip=skip)
        known = -math.inf if start is None else float(self.program.cost @ start)
        if skip is not None and _meets(known, self._bound_without(skip)):
            self.settled["prices"] += 1
            return self._optimal(start, known)
        relaxation = self._relaxation(skip, known)
        if relaxation is not None:
            self.prices += [lagrangian_bound(self.program.cost, self.units, self.limits, self.sizes, u)[1:]
                            for u in relaxation.multipliers]
            if skip is None:
                self.first_multipliers = relaxation.multipliers
        if start is None:
            rows = self._lp_greedy(relaxation.x) if relaxation is not None and skip is None else self._empty
            start = None if rows is None else _indicator(self.sizes, self.improve(rows, skip), skip=skip)
        solution = None if relaxation is None else relaxation.allocation
        if solution is not None and (start is None or self.program.cost @ solution > self.program.cost @ start):
            start = solution
        worth = -math.inf if start is None else float(self.program.cost @ start)   # the best known allocation's value
        if relaxation is not None:
            if start is None or not _meets(worth, relaxation.value):
                other = self._further_start(relaxation.x, skip)
                if other is not None and self.program.cost @ other > worth:
                    start, worth = other, float(self.program.cost @ other)
            if start is not None and _meets(worth, relaxation.value):
                self.settled["lp"] += 1
                return self._optimal(start, worth)
        keep = self.owner != skip
        if start is not None:
            for dual in [] if relaxation is None else relaxation.multipliers:
                keep &= lagrangian_keep(self.program.cost, self.units, self.limits, self.sizes, dual, worth, skip=skip)
            keep |= start > 0.5   # the start stays feasible whatever the rounding of the bound
        reduced = self._with_cuts(keep)
        if skip is not None:
            reduced.row_lower[skip] = reduced.row_upper[skip] = 0.0
        report = _proven(reduced, "PF auction program not solved", start=None if start is None else start[keep],
                         mip_heuristic_run_feasibility_jump=False)
        self.settled["milp"] += 1
        found = self._allocation(_expanded(keep, report.schedule), skip)
        return self._optimal(found, float(report.objective)) if found is not None else float(report.objective)

    def tie_break_columns(self, threshold: float) -> tuple[ArrayProgram, np.ndarray]:
        """(P-PF) with the auction's cut rows on the columns that can be in an allocation worth at
        least ``threshold``, and those columns (a mask): reduced-cost fixing (module docstring)
        against ``threshold`` with the multipliers of Phi*'s relaxation (every column when it was
        not solved). Every allocation that meets the threshold keeps all its columns and satisfies
        the cuts, so A8's re-solve on these columns has the same feasible allocations and the same
        fewest GPUs; among allocations tied exactly in welfare and GPU count, HiGHS's pick is that
        of the smaller program (``tie_break="reduced"``)."""
        keep = np.ones(len(self.owner), dtype=bool)
        for dual in self.first_multipliers:
            dual = np.pad(dual, (0, len(self.limits) - len(dual)))   # cut rows added since: multiplier 0
            keep &= lagrangian_keep(self.program.cost, self.units, self.limits, self.sizes, dual, threshold)
        return self._with_cuts(keep), keep

    def _further_start(self, x: np.ndarray, skip: int | None) -> np.ndarray | None:
        """The start tried before HiGHS: without bidder ``skip`` the best from the optima already
        found in the auction (:meth:`_from_optima`); for Phi*, which comes first, a dive on the LP
        from its solution ``x`` (:meth:`_dive`). A dive for Phi*_{-i} too cost about what it saved
        HiGHS (decisions A8d)."""
        return self._dive(x, skip) if skip is None else self._from_optima(skip)

    def _dive(self, x: np.ndarray, skip: int | None) -> np.ndarray | None:
        """An allocation (bidder ``skip`` left out) by diving on the LP relaxation with the cuts
        from its solution ``x``: the fractional column with the largest value fixed at 1, the LP
        solved again, until its solution is an allocation (returned) or the LP has none (None), at
        most MAX_DIVE_SOLVES solves. The LP's bounds and basis are restored afterwards."""
        import highspy

        basis = self.lp.getBasis()
        fixed: list[int] = []
        try:
            with _left_out(self.lp, skip):
                for _ in range(MAX_DIVE_SOLVES):
                    allocation = self._allocation(x, skip)
                    if allocation is not None:
                        return allocation
                    fractional = np.flatnonzero((x > SUPPORT) & (x < 1.0 - SUPPORT))
                    if not len(fractional):   # integral but not an allocation (rounding at the capacities)
                        return None
                    column = int(fractional[np.argmax(x[fractional])])
                    self.lp.changeColBounds(column, 1.0, 1.0)
                    fixed.append(column)
                    self.lp.run()
                    if self.lp.getModelStatus() != highspy.HighsModelStatus.kOptimal:
                        return None
                    x = np.asarray(self.lp.getSolution().col_value)
                return self._allocation(x, skip)
        finally:
            for column in fixed:
                self.lp.changeColBounds(column, 0.0, 1.0)
            self.lp.setBasis(basis)

    def _optimal(self, allocation: np.ndarray, value: float) -> float:
        """``value``, the optimum of a program, after keeping its optimal ``allocation`` (0/1 by
        column) among :attr:`optima`."""
        self.optima.setdefault(allocation.astype(bool).tobytes(), allocation)
        return value

    def _from_optima(self, skip: int) -> np.ndarray | None:
        """The best start without bidder ``skip`` from the optimal allocations of the programs
        already solved in the auction (:attr:`optima`): each less ``skip``, a bidder it left out
        given its first row that uses nothing, improved by single-bidder moves (:meth:`improve`).
        The optimum without ``skip`` often reallocates the same GPUs as the optimum without another
        bidder, while the PF allocation less ``skip`` would need many bidders to move at once.
        None without optima or when some bidder has no row that uses nothing."""
        empty = self._empty
        if empty is None or not self.optima:
            return None
        best, value = None, -math.inf
        seen: set[tuple[int, ...]] = set()
        for allocation in self.optima.values():
            rows = list(empty)
            for column in np.flatnonzero(allocation > 0.5).tolist():
                j = int(self.owner[column])
                rows[j] = column - int(self.offsets[j])
            rows[skip] = empty[skip]
            if tuple(rows) in seen:   # the same start as an earlier optimum's
                continue
            seen.add(tuple(rows))
            candidate = _indicator(self.sizes, self.improve(rows, skip), skip=skip)
            worth = float(self.program.cost @ candidate)
            if worth > value:
                best, value = candidate, worth
        return best


def _optimum(tables: Sequence[BidTable], phi: Sequence[Sequence[float]], offered: Sequence[int],
             group_of: Mapping[int, int] | None = None, start: Sequence[int] | None = None) -> tuple[float, ArrayProgram]:
    """Phi* by HiGHS without presolve (its presolve is where the wrong optima of
    tests/regressions came from, and it dominates the time of these small programs); ``start``
    (one row per bidder) is a known feasible allocation."""
    program = pf_arrays(tables, phi, offered, group_of=group_of)
    report = _proven(program, "PF auction program not solved",
                     start=None if start is None else _indicator([len(t) for t in tables], start))
    return float(report.objective), program


def _proven(program: ArrayProgram, failure: str, *, start: np.ndarray | None = None, **options: Any) -> SolveReport:
    """An auction program solved by HiGHS without presolve and proven optimal (relative gap at most
    ``mlsched.solve.EXACT_REL_GAP``). HiGHS may end one "optimal" with its incumbent and a bound
    further apart (its own tolerance; 2.7e-8 relative on an auction of Gavel's trace, whose
    incumbent was the optimum): such a program is solved again from the same start with
    ``mip_feasibility_tolerance`` at RETRY_MIP_FEASIBILITY. MlschedError (``failure`` and HiGHS's
    status) when that too is not proven."""
    report = solve_arrays(program, presolve=False, start=start, watched=False, **options)
    if report.status is Status.FEASIBLE:
        report = solve_arrays(program, presolve=False, start=start, watched=False, **options,
                              mip_feasibility_tolerance=RETRY_MIP_FEASIBILITY)
    if report.status is not Status.OPTIMAL:
        raise MlschedError(f"{failure}: {report.status.value} {report.message}")
    return report


def tie_threshold(phi_star: float) -> float:
    """Phi* - 1e-9 max(1, |Phi*|) rounded down to a multiple of TIE_GRID (A8): values of Phi* from
    different solves that differ in their last bits give the same re-solve, hence the same
    allocation among exact ties."""
    return math.floor((phi_star - 1e-9 * max(1.0, abs(phi_star))) / TIE_GRID) * TIE_GRID


def bundle_sizes(tables: Sequence[BidTable]) -> np.ndarray:
    """The GPUs of every column of (P-PF): each row's bundle size, table after table."""
    return np.array([float(len(bundle)) for table in tables for bundle, _ in table])


def fewest_gpu_program(program: ArrayProgram, gpus: np.ndarray, phi_star: float) -> ArrayProgram:
    """A8's re-solve of (P-PF) ``program``: the fewest GPUs (column j costs ``gpus[j]``, its
    bundle's size, :func:`bundle_sizes`) among allocations with welfare >= :func:`tie_threshold` of
    Phi* (the welfare row after the program's rows)."""
    n = len(program.cost)
    welfare_row = len(program.row_lower)
    index = np.insert(program.a_index, program.a_start[1:], welfare_row)
    value = np.insert(program.a_value, program.a_start[1:], program.cost)
    return ArrayProgram(
        cost=np.asarray(gpus, dtype=float), col_lower=program.col_lower, col_upper=program.col_upper,
        row_lower=np.append(program.row_lower, tie_threshold(phi_star)),
        row_upper=np.append(program.row_upper, np.inf),
        a_start=program.a_start + np.arange(n + 1), a_index=index, a_value=value, integer=True, sense="min")


def _expanded(keep: np.ndarray, values: Sequence[float]) -> np.ndarray:
    """A solution on the columns in ``keep`` as a vector over every column (0 elsewhere)."""
    solution = np.zeros(len(keep))
    solution[keep] = values
    return solution


def _fewest_gpus(program: ArrayProgram, tables: Sequence[BidTable], phi_star: float,
                 reduced: _FixedWelfare | None = None) -> list[int]:
    """Among allocations with welfare >= :func:`tie_threshold` of Phi*, one with the fewest GPUs
    (A8): HiGHS's pick when several tie in GPU count too. The re-solve runs on the whole program,
    or with ``reduced`` (``tie_break="reduced"``) on that auction's
    :meth:`_FixedWelfare.tie_break_columns`: the same fewest GPUs, HiGHS's pick among exact ties
    then that of the smaller program."""
    gpus = bundle_sizes(tables)
    keep = np.ones(len(gpus), dtype=bool)
    if reduced is not None:
        program, keep = reduced.tie_break_columns(tie_threshold(phi_star))
    report = _proven(fewest_gpu_program(program, gpus[keep], phi_star), "PF tie-break re-solve failed")
    return _rows([len(t) for t in tables], _expanded(keep, report.schedule))


def usage_matrices(tables: Sequence[BidTable], usage: Usage,
                   capacity: Mapping[int, int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Each table's rows' units of every capacity row, dense (one column per capacity row some row
    uses, in sorted order), from :func:`table_usage`, each distinct bundle's vector built once; and
    ``capacity`` (units per capacity row) in the same column order."""
    keys = sorted({k for uses in usage for use in uses for k in use})
    position = {k: c for c, k in enumerate(keys)}
    index: dict[frozenset[int], int] = {}
    vectors: list[np.ndarray] = []
    for table, uses in zip(tables, usage):
        for (bundle, _), use in zip(table, uses):
            if bundle not in index:
                index[bundle] = len(vectors)
                vector = np.zeros(len(keys), dtype=np.int64)
                vector[[position[k] for k in use]] = list(use.values())
                vectors.append(vector)
    dense = np.array(vectors, dtype=np.int64).reshape(len(vectors), len(keys))
    matrices = [dense[np.fromiter((index[bundle] for bundle, _ in table), dtype=np.int64, count=len(table))]
                for table in tables]
    return matrices, np.array([capacity[k] for k in keys], dtype=np.int64)


def undominated(uses: Sequence[np.ndarray], phis: Sequence[Sequence[float]]) -> list[list[int]]:
    """Rows of each bid table (``uses[t]``: its rows' units of every capacity row, from
    :func:`usage_matrices`; ``phis[t]``: their values) that no other row of the table dominates.
    Row a dominates row b when a uses no more of every capacity row and is worth at least as much
    (ties: the earlier row); dropping b changes no optimum, no Phi*_{-i} and no fewest-GPU choice,
    since swapping b for a keeps any solution feasible, at least as good and with no more GPUs.

    Rows are ranked by value (descending), then total units (ascending), then position: a row that
    dominates another always ranks before it (equal value and no more units anywhere means fewer
    units in total unless the usage is the same, and then the earlier row wins), and every row that
    ranks before b is worth at least as much as b, so b is dominated exactly when some row ranked
    before it uses no more of every capacity row. "a uses no more than b" is tested on the capacity
    rows a uses (a bundle uses few machines), the n-th of each row's for all rows at once. Tables of
    similar length (the same power of two) are compared together, padded after their ranked rows
    (a padded row ranks after every row, so it beats none)."""
    kept: list[list[int]] = [[] for _ in uses]
    buckets: dict[int, list[int]] = {}
    for t, use in enumerate(uses):
        buckets.setdefault(max(1, len(use) - 1).bit_length(), []).append(t)
    for tables in buckets.values():
        length = max(len(uses[t]) for t in tables)
        ranked = np.zeros((len(tables), length, uses[tables[0]].shape[1]), dtype=np.int64)
        ranks = []
        for slot, t in enumerate(tables):
            use = uses[t]
            rank = np.lexsort((np.arange(len(use)), use.sum(axis=1), -np.asarray(phis[t], dtype=float)))
            ranked[slot, :len(use)] = use[rank]
            ranks.append(rank)
        fewer = np.ones((len(tables), length, length), dtype=bool)   # fewer[., a, b]: ranked a uses <= ranked b
        table, row, column = np.nonzero(ranked)                      # by table, then row: each row's capacity rows
        if len(table):
            first = np.concatenate([[True], (table[1:] != table[:-1]) | (row[1:] != row[:-1])])
            nth = np.arange(len(table)) - np.maximum.accumulate(np.where(first, np.arange(len(table)), 0))
            enough = ranked[table, :, column] >= ranked[table, row, column][:, None]   # every b against one (a, k)
            for n in range(int(nth.max()) + 1):
                pick = nth == n
                fewer[table[pick], row[pick]] &= enough[pick]
        beaten = np.triu(fewer, 1).any(axis=1)                       # some row ranked before b
        for slot, (t, rank) in enumerate(zip(tables, ranks)):
            dominated = np.zeros(len(rank), dtype=bool)
            dominated[rank] = beaten[slot, :len(rank)]
            kept[t] = np.flatnonzero(~dominated).tolist()
    return kept


def _settled(tables: Sequence[BidTable], kept: Sequence[Sequence[int]], phi: Sequence[Sequence[float]],
             rows: Sequence[int], optimum_without: Callable[[int], float], program: ArrayProgram | None) -> AuctionResult:
    """The auction's result for the PF allocation ``rows`` (indices into the pruned tables; ``kept``
    maps them back): Phi* as the chosen rows' phi summed in bidder order, the hidden payments from
    ``optimum_without`` and, with ``program``, its LP bound."""
    own = [phi[i][b] for i, b in enumerate(rows)]
    payments, without = hidden_payments(sum(own), own, [bool(tables[i][b][0]) for i, b in enumerate(rows)],
                                        optimum_without)
    relaxation = None if program is None else solve_arrays(replace(program, integer=False), watched=False)
    lp = relaxation.objective if relaxation is not None and relaxation.status is Status.OPTIMAL else math.nan
    return AuctionResult(phi_star=sum(own), rows=[kept[i][b] for i, b in enumerate(rows)],
                         bundles=[tables[i][b][0] for i, b in enumerate(rows)],
                         payments=payments, phi_without=without, lp_bound=float(lp))


def _lone(table: BidTable, phi: Sequence[float]) -> AuctionResult:
    """A lone bidder's auction: its best row, the fewest GPUs among ties, the first of those (A4).
    Taken on the whole table: a row that dominates the best one (:func:`undominated`) is worth as
    much with the same usage and comes earlier, so the first best row is never pruned and pruning
    would not change the choice."""
    best = max(range(len(table)), key=lambda b: (phi[b], -len(table[b][0])))
    return AuctionResult(phi_star=phi[best], rows=[best], bundles=[table[best][0]], payments=[1.0],
                         phi_without=[0.0], lp_bound=phi[best])


def pa_auction(tables: Sequence[BidTable], offered: Sequence[int], *, group_of: Mapping[int, int] | None = None,
               lp_bound: bool = True, solves: str = "fixed", tie_break: str | None = None) -> AuctionResult:
    """The PF allocation with the fewest GPUs, hidden payments c_i and the LP bound (R1).

    With ``group_of`` (GPU -> machine) bundles are machine-count vectors (canonical mode); the
    returned bundles are then the representatives and must be mapped to concrete GPUs.

    ``solves`` (the values Phi* and Phi*_{-i}): ``fixed`` (default) on (P-PF) less the columns
    reduced-cost fixing rules out (:class:`_FixedWelfare`); ``persistent`` on one HiGHS model (:class:`_WelfareModel`);
    ``fresh`` builds and solves a new program for each, the original path, kept as the oracle.
    The fewest-GPU allocation is the same re-solve in all three. On the default path a small auction
    takes Phi* and every Phi*_{-i} from the machine DP, and its fewest-GPU allocation too when that
    is forced (no HiGHS solve); otherwise the re-solve picks it among the exact ties (A8c).

    ``tie_break`` (the re-solve's program, A8): ``reduced`` (with ``solves="fixed"`` only) on
    (P-PF) with the auction's cuts less the columns that reduced-cost fixing against the re-solve's
    threshold rules out, where the LP relaxation with cuts was solved (not in auctions the machine
    DP settles); ``whole`` on all of (P-PF). Both give the same fewest GPUs, Phi* and every
    Phi*_{-i}, but among allocations tied exactly in welfare and GPU count HiGHS picks from the
    program it is given, so the bundles and c_i may differ (decisions A8e). None (default): each
    path's own, ``reduced`` on the default path (1.5-1.9x faster per auction), ``whole`` on the
    other two, which have no cut rows."""
    if solves not in AUCTION_SOLVES:
        raise UsageError(f"unknown auction solves {solves!r}; choose one of {', '.join(AUCTION_SOLVES)}")
    if tie_break is None:
        tie_break = DEFAULT_TIE_BREAK[solves]
    if tie_break not in TIE_BREAKS:
        raise UsageError(f"unknown auction tie_break {tie_break!r}; choose one of {', '.join(TIE_BREAKS)}")
    if tie_break == "reduced" and solves != "fixed":
        raise UsageError(f"tie_break='reduced' takes the cuts of solves='fixed', not solves={solves!r}")
    phi = log_values(tables)   # the cap (A5) is set on the full tables, before pruning
    if len(tables) == 1:   # a lone bidder takes its best row (fewest GPUs among ties) and pays nothing (A4)
        return _lone(tables[0], phi[0])
    usage = table_usage(tables, group_of)
    capacity = _usage(frozenset(offered), group_of)
    dense, capacity_units = usage_matrices(tables, usage, capacity)
    kept = undominated(dense, phi)
    tables = [[table[b] for b in rows] for table, rows in zip(tables, kept)]
    phi = [[values[b] for b in rows] for values, rows in zip(phi, kept)]
    usage = [[uses[b] for b in rows] for uses, rows in zip(usage, kept)]
    dp = machine_dp(phi, [use[rows] for use, rows in zip(dense, kept)], capacity_units) if solves == "fixed" else None
    if dp is not None and dp.rows is not None:   # small lattice, fewest-GPU allocation forced: no HiGHS solve (A8c)
        return _settled(tables, kept, phi, dp.rows, dp.phi_without.__getitem__,
                        pf_arrays(tables, phi, offered, group_of=group_of, usage=usage) if lp_bound else None)
    program = pf_arrays(tables, phi, offered, group_of=group_of, usage=usage)
    if dp is not None:   # the DP's values; HiGHS's re-solve picks among the exact ties (A8c)
        return _settled(tables, kept, phi, _fewest_gpus(program, tables, dp.phi_star), dp.phi_without.__getitem__,
                        program if lp_bound else None)
    sizes = [len(t) for t in tables]
    if solves == "fresh":
        phi_star, _ = _optimum(tables, phi, offered, group_of)
    elif solves == "persistent":
        welfare = _WelfareModel(program, sizes)
        phi_star = welfare.optimum()[0]
    else:
        fixed = _FixedWelfare(program, sizes)
        phi_star = fixed.optimum()
    rows = _fewest_gpus(program, tables, phi_star, fixed if tie_break == "reduced" else None)

    def optimum_without(i: int) -> float:   # the PF allocation without i is a feasible start
        if solves == "fixed":
            return fixed.optimum(rows, skip=i)
        if solves == "persistent":
            return welfare.without(i, rows)[0]
        return _optimum([t for j, t in enumerate(tables) if j != i], [p for j, p in enumerate(phi) if j != i],
                        offered, group_of, start=[b for j, b in enumerate(rows) if j != i])[0]

    return _settled(tables, kept, phi, rows, optimum_without, program if lp_bound else None)


@dataclass
class CountAuctionResult:
    phi_star: float
    counts: list[int]
    payments: list[float]
    phi_without: list[float]


CountStage = tuple[list[float], list[int]]   # best welfare per GPUs used exactly, and the last bidder's count there


def _count_stage(best: Sequence[float], table: Sequence[float], gpus: int) -> CountStage:
    """One bidder added to a count-DP stage: every (GPUs used, k) in increasing order, a candidate
    replacing the best so far only when strictly better by 1e-12 (order-dependent near ties)."""
    nxt = [-math.inf] * (gpus + 1)
    pick = [0] * (gpus + 1)
    for used, welfare in enumerate(best):
        if welfare == -math.inf:
            continue
        for k, value in enumerate(table[: gpus - used + 1], start=used):
            total = welfare + value
            if total > nxt[k] + 1e-12:
                nxt[k], pick[k] = total, k - used
    return nxt, pick


def _count_stages(phi: Sequence[Sequence[float]], gpus: int,
                  first: Sequence[float] | None = None) -> list[CountStage]:
    """The stages of the exact DP over bidders and GPU counts for max sum_i phi_i(k_i) s.t. sum_i k_i
    <= gpus, k_i <= len(phi_i) - 1 (spec §2.3 speed guidance), the bidders of ``phi`` in order, from
    ``first`` (default: nothing used yet); :func:`_count_optimum` reads the optimum off them."""
    stages: list[CountStage] = []
    best = [0.0] + [-math.inf] * gpus if first is None else first
    for table in phi:
        stages.append(_count_stage(best, table, gpus))
        best = stages[-1][0]
    return stages


def _count_optimum(stages: Sequence[CountStage], gpus: int) -> tuple[float, list[int]]:
    """Phi* and the counts of the DP's optimum: among optima (welfare within 1e-9 max(1, |top|) of the
    top) the fewest GPUs, then smaller k for later bidders (each count read back through the stages)."""
    best = stages[-1][0] if stages else [0.0] + [-math.inf] * gpus
    top = max(best)
    used = min(g for g in range(gpus + 1) if best[g] >= top - 1e-9 * max(1.0, abs(top)))
    counts = []
    for _, pick in reversed(stages):
        counts.append(pick[used])
        used -= pick[used]
    return float(best[sum(counts)]), counts[::-1]


def count_dp_without(phi: Sequence[Sequence[float]], gpus: int, stages: Sequence[CountStage], i: int) -> float:
    """The count DP's optimum with bidder i left out: the stages of the bidders before i are those of
    the whole auction (``stages``, from :func:`_count_stages`), the same float operations as a DP
    over the others from scratch."""
    return _count_optimum([*stages[:i], *_count_stages(phi[i + 1:], gpus, stages[i - 1][0] if i else None)], gpus)[0]


def pa_count_auction(rho_by_count: Sequence[Sequence[float]], gpus: int) -> CountAuctionResult:
    """The PA auction when every bidder's rho depends on its GPU count only (S = 1 profiles):
    ``rho_by_count[i][k]`` for k = 0..unmet_i. Exact over all bundles; payments as in :func:`pa_auction`."""
    phi = log_rho(rho_by_count)
    stages = _count_stages(phi, gpus)
    phi_star, counts = _count_optimum(stages, gpus)
    own = [phi[i][k] for i, k in enumerate(counts)]
    payments, without = hidden_payments(phi_star, own, [k > 0 for k in counts],
                                        lambda i: count_dp_without(phi, gpus, stages, i))
    return CountAuctionResult(phi_star, counts, payments, without)


DIVISIBLE_TOLERANCE = 1e-6   # interior-point accuracy of the conic program (vs 1e-9 for the MILP)


@dataclass(frozen=True)
class DivisibleBidder:
    """Count-only valuation v(k) = T_id k / (E k + W') of spec §2.4 (R2): elapsed E, serial work
    W' already scaled by the best-level slowdown, held GPUs H, extra GPUs up to ``unmet``."""

    t_id: float
    elapsed: float
    work: float
    held: float
    unmet: float


@dataclass
class DivisibleResult:
    phi_star: float
    extra: list[float]
    payments: list[float]
    phi_without: list[float]


def _divisible_pf(bidders: Sequence[DivisibleBidder], gpus: float) -> tuple[float, list[float], list[float]]:
    """max sum_i log v_i(H_i + x_i) s.t. sum x_i <= gpus, 0 <= x_i <= unmet_i (cvxpy, exponential cone).

    Returns Phi*, the extra GPUs x_i and each bidder's log value at the optimum."""
    import cvxpy as cp

    from mlsched.solve import solve_cvxpy

    x = cp.Variable(len(bidders), nonneg=True)
    terms = []
    for i, b in enumerate(bidders):
        k = b.held + x[i]
        if b.elapsed > 0:   # log v = log(T_id / E) + log(1 - W' / (E k + W'))
            terms.append(math.log(b.t_id / b.elapsed) + cp.log(1 - b.work * cp.inv_pos(b.elapsed * k + b.work)))
        else:               # log v = log k + log(T_id / W')
            terms.append(cp.log(k) + math.log(b.t_id / b.work))
    problem = cp.Problem(cp.Maximize(cp.sum(cp.hstack(terms))),
                         [cp.sum(x) <= gpus, x <= [b.unmet for b in bidders]])
    report = solve_cvxpy(problem, extract=lambda: x.value, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if report.objective is None:
        raise MlschedError(f"divisible PF program not solved: {report.status.value} {report.message}")
    extra = [float(v) for v in report.schedule]
    own = [_log_value(b, b.held + e) for b, e in zip(bidders, extra)]
    return float(sum(own)), extra, own


def _log_value(b: DivisibleBidder, k: float) -> float:
    return math.log(b.t_id * k / (b.elapsed * k + b.work)) if k > 0 else -math.inf


def divisible_pa(bidders: Sequence[DivisibleBidder], gpus: float) -> DivisibleResult:
    """The divisible PA mechanism of Cole et al. on count-only valuations (R2): the PF split and the
    fractions c_i = prod_{j != i} v_j(PF) / prod_{j != i} v_j(PF without i)."""
    phi_star, extra, own = _divisible_pf(bidders, gpus)
    payments, without = hidden_payments(
        phi_star, own, [e > 1e-9 for e in extra],
        lambda i: _divisible_pf([b for j, b in enumerate(bidders) if j != i], gpus)[0],
        tolerance=DIVISIBLE_TOLERANCE)
    return DivisibleResult(phi_star, extra, payments, without)
