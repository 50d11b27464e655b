"""Exact programs of each system, solved, checked and scored: what studies and the CLI call.

Every function returns a :class:`mlsched.solve.SolveReport` whose objective is the score of a
solution that passed the independent checker.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any, TypeVar

import numpy as np

from mlsched import list_schedule, oasis_lagrangian, sim
from mlsched.errors import UsageError
from mlsched.formulations import astraea, oasis, oasis_arrays, ogasched, sow, themis_offline
from mlsched.formulations.oasis_window_bound import window_program
from mlsched.instance import (
    ClusterJobsInstance, MultiServerInstance, MultiTenantInstance, SowInstance, ThemisInstance)
from mlsched.metrics import total_utility
from mlsched.multiserver import LINEAR, ChannelModel
from mlsched.pool_schedule import pool_guided_schedule
from mlsched.sim import multi_tenant_check, sow_run
from mlsched.sim.multi_tenant_check import TenantSchedule
from mlsched.sim.schedule import ClusterSchedule
from mlsched.sim.tenant_slots import SlotRun
from mlsched.solve import (
    EXACT_REL_GAP,
    HARD_STOP_GRACE,
    HIGHS_PROBING_RULE,
    Built,
    VERIFY_MAX_INTEGERS,
    SolveReport,
    Status,
    TimeBudget,
    relative_gap,
    solve,
    solve_arrays,
    solve_arrays_by_deadline,
)

Schedule = TypeVar("Schedule")

RESCORE_TOLERANCE = 1e-6
MILP_SHARE = 0.8   # of a time limit left after the build: the MILP and its verification; the LP bound gets the rest
LIST_SHARE = 0.15  # of a time limit: the LP relaxation of programs too large to certify (bound and list order)
LAGRANGIAN_SHARE = 0.35   # of what is left after it when that LP is not solved: the pooled Lagrangian bound
SEARCH_SHARE = 0.15   # of what is left then: the guided list schedule's local search
LAGRANGIAN_ITERATIONS = 200   # at most, within its time share
# Below this many columns HiGHS's MILP finds good incumbents and bounds within a minute and keeps the
# time (30 x 30 seed 2 with the Lagrangian bound instead: [825.53, 1,027.52] after 60 s)
LAGRANGIAN_COLUMNS = 100_000
WINDOW_SHARE = 0.5   # of what is left after the MILP: the workload-window bound (1 s at 100 x 100); the LP the rest
CROSS_CHECK_TOLERANCE = 1e-6
# HiGHS stops on its time limit between steps, and some steps run long without looking at the
# clock. Measured on the 100-job, 100-slot program (415,247 columns, 2.9 million nonzeros): the
# LP's presolve ran 8 s of a 1 s limit (and removes 0.1% of the rows), so LP relaxations of
# programs beyond certification run without presolve; the MILP's probing ran 27 s of a 20 s
# limit, its presolve passes 10-14 s each without a look at the clock (with or without a MIP
# start, up to 20 s past the limit), so MILPs above LARGE_COLUMNS columns run without probing, in a
# child process ended HARD_STOP_GRACE seconds after their limit.
LARGE_COLUMNS = 100_000


def exact_oasis(instance: ClusterJobsInstance, *, variant: str = "paper", relax: bool = False,
                time_limit: float | None = None, verify: bool | str = "auto",
                starts: Sequence[ClusterSchedule] = (), dual_bounds: Mapping[str, float] | None = None) -> SolveReport:
    """OPT_paper / OPT_chunk (or the LP relaxation) of OASiS.

    ``verify="auto"`` cross-certifies when the model has at most ``mlsched.solve.VERIFY_MAX_INTEGERS`` integers.
    The objective is the exact utility of the extracted schedule, which must pass the checker
    and match the solver's value to RESCORE_TOLERANCE (else ERROR).

    ``starts`` are checked schedules (the online algorithms' and baselines'); programs too large to
    certify add the guided list schedule (:mod:`mlsched.list_schedule`), its orders from the
    jobs' utility density and the LP relaxation (LIST_SHARE of the time limit, its value reused
    as a bound) or, when that LP is not solved on a program above LAGRANGIAN_COLUMNS columns,
    the pooled Lagrangian bound
    (:mod:`mlsched.oasis_lagrangian`, labelled ``lagrangian``). The best start, read as a
    solution of the program (:func:`mlsched.formulations.oasis.program_schedule`), is HiGHS's MIP
    start and a floor on the incumbent, so OPT >= max ALG from the first second. When the MILP
    is not proven optimal, the bound is the least of the MILP's own bound, the LP relaxation, the
    Lagrangian bound, the workload-window bound, the ``dual_bounds`` given (name -> value, each valid for this variant) and the job-wise bound
    (never missing), with ``bound_source`` naming it.

    ``time_limit`` covers the whole call: the program is built once (as arrays), the MILP and its
    verification share MILP_SHARE of what is left after the build and the starts (HiGHS half of
    that when verifying), the LP bound the rest; each solver call gets at least
    MIN_VERIFY_SECONDS. The report's ``steps`` log every step with the seconds it was granted
    and took.
    """
    budget = TimeBudget(time_limit)
    report = _exact_oasis(instance, variant, relax, verify, starts, dual_bounds or {}, budget)
    return replace(report, steps=budget.log)


def _exact_oasis(instance: ClusterJobsInstance, variant: str, relax: bool, verify: bool | str,
                 starts: Sequence[ClusterSchedule], dual_bounds: Mapping[str, float], budget: TimeBudget) -> SolveReport:
    with budget.step("build"):
        arrays = oasis_arrays.build_arrays(instance, variant=variant, relax=relax)
    small = arrays.num_columns <= VERIFY_MAX_INTEGERS
    found: dict[str, float] = {}
    guided = not relax and verify is not True and not small
    if guided:
        found, starts = _with_guided_start(instance, arrays, starts, budget)
    with budget.step("starts"):
        start = None if relax else _best_start(starts, partial(_oasis_start, instance, variant))
    certify = not relax and (verify is True or (verify == "auto" and small))
    with budget.step("milp" + (" and verification" if certify else ""), MILP_SHARE) as seconds:
        report = _solve_oasis(instance, arrays, certify=certify, time_limit=seconds,
                              start=None if start is None else start[1])
    if report.schedule is not None and report.objective is not None:
        with budget.step("check"):
            problems = sim.check(instance, report.schedule)
            rescored = total_utility(instance, report.schedule)
        tolerance = RESCORE_TOLERANCE * max(1.0, abs(report.objective))
        # an incumbent may declare completion after its last worker (u_i(t) late): it then scores
        # more than the solver says, never less
        below = rescored < report.objective - tolerance
        above = rescored > report.objective + tolerance and report.status is Status.OPTIMAL
        if problems or below or above:
            rejected = (f"the solver's schedule fails the checker or rescoring "
                        f"({rescored:.10g} vs {report.objective:.10g}): {'; '.join(problems[:3])}")
            if start is None or report.status is not Status.FEASIBLE:
                report.status, report.message = Status.ERROR, rejected
                return report
            # a time-limited incumbent that fails the checker is dropped; the start stands in
            report = replace(report, objective=None, schedule=None, message=rejected)
        else:
            # the objective is the exact score of the checked schedule, not the solver's float sum
            report.objective = rescored
            if report.status is Status.OPTIMAL:
                report.bound = rescored if report.bound is None else max(report.bound, rescored)
            report.gap = relative_gap(rescored, report.bound)
    if relax or report.status in (Status.OPTIMAL, Status.ERROR, Status.DISAGREE, Status.INFEASIBLE):
        return report
    if start is not None:
        report = _floor_at_start(report, *start)
    return _least_bound(instance, arrays, report, budget=budget, dual_bounds={**dual_bounds, **found},
                        lp_tried=guided, presolve=small)


def _with_guided_start(instance: ClusterJobsInstance, arrays: oasis_arrays.OasisArrays,
                       starts: Sequence[ClusterSchedule], budget: TimeBudget) -> tuple[dict[str, float], list[ClusterSchedule]]:
    """The bounds found on the way and ``starts`` plus the guided list schedule
    (:mod:`mlsched.list_schedule`): the LP relaxation (LIST_SHARE of the time limit) gives a
    bound and an order; when it is not solved and the program has more than LAGRANGIAN_COLUMNS
    columns, the pooled Lagrangian bound (:mod:`mlsched.oasis_lagrangian`, LAGRANGIAN_SHARE of
    what is left, Polyak's target the density-ordered list schedule) gives a bound and an order
    instead. The search from the best
    order gets SEARCH_SHARE of what is left."""
    variant, bounds = arrays.variant, {}
    values = [list_schedule.density_values(instance)]
    with budget.step("lp relaxation", LIST_SHARE) as share:
        lp, lp_values = list_schedule.lp_job_values(instance, variant, time_limit=share, arrays=arrays, presolve=False)
    if lp_values is not None and lp.objective is not None:
        bounds["lp relaxation"] = lp.objective
        values.append(lp_values)
    elif arrays.num_columns > LAGRANGIAN_COLUMNS:
        with budget.step("lagrangian", LAGRANGIAN_SHARE) as share:
            target, _ = list_schedule.list_schedule(instance, list_schedule.value_order(values[0]), variant)
            lagrangian = oasis_lagrangian.lagrangian_bound(
                instance, variant, pooled=True, target=target, iterations=LAGRANGIAN_ITERATIONS,
                deadline=None if share is None else time.perf_counter() + share)
        bounds["lagrangian"] = lagrangian.bound
        values.append(lagrangian.payoff)
    with budget.step("list schedule", SEARCH_SHARE) as share:
        schedule = list_schedule.guided_schedule(instance, values, variant=variant,
                                                 deadline=None if share is None else time.perf_counter() + share)
    return bounds, [*starts, schedule]


def _solve_oasis(instance: ClusterJobsInstance, arrays: oasis_arrays.OasisArrays, *, certify: bool,
                 time_limit: float | None, start: ClusterSchedule | None) -> SolveReport:
    """Solve one OASiS program. Programs that will not be cross-certified are handed to HiGHS as
    the arrays (same columns, rows and optimum as the Pyomo model, at a fraction of its build
    time; above LARGE_COLUMNS without probing and by a hard deadline); the others are built as
    the Pyomo model and go through the verify path."""
    relax = not arrays.program.integer
    if certify:
        built = oasis.build(instance, variant=arrays.variant, relax=relax)
        if start is not None:
            assert built.load_start is not None
            built.load_start(start)
        return solve(built, time_limit=time_limit, verify=True, warm_start=start is not None)
    values = None if start is None else arrays.start(start)
    if arrays.num_columns > LARGE_COLUMNS and arrays.program.integer and time_limit is not None:
        report = solve_arrays_by_deadline(arrays.program, time_limit=time_limit, grace=HARD_STOP_GRACE, start=values,
                                          presolve_rule_off=HIGHS_PROBING_RULE)
    else:
        report = solve_arrays(arrays.program, time_limit=time_limit, start=values)
    schedule = arrays.extract(report.schedule) if report.schedule is not None and not relax else None
    return replace(report, build_seconds=arrays.build_seconds, schedule=schedule)


def _best_start(starts: Sequence[Schedule],
                read: Callable[[Schedule], tuple[float, Schedule] | None]) -> tuple[float, Schedule] | None:
    """The best of ``starts`` read as solutions of a program, with its score; ``read`` gives a
    schedule's reading and score, None when it is not a feasible solution (fails the checker)."""
    best = None
    for schedule in starts:
        scored = read(schedule)
        if scored is not None and (best is None or scored[0] > best[0]):
            best = scored
    return best


def _oasis_start(instance: ClusterJobsInstance, variant: str,
                 schedule: ClusterSchedule) -> tuple[float, ClusterSchedule] | None:
    """A schedule as OASiS's program reads it (:func:`mlsched.formulations.oasis.program_schedule`)
    and its utility, if the reading passes the checker."""
    candidate = oasis.program_schedule(instance, schedule, variant)
    if sim.check(instance, candidate):
        return None
    return total_utility(instance, candidate), candidate


def _floor_at_start(report: SolveReport, score: float, schedule: Any) -> SolveReport:
    """The start (a checked schedule with an ``algorithm`` name) is a feasible solution: no
    incumbent below it."""
    if report.objective is not None and report.objective >= score:
        return report
    name = schedule.algorithm or "a given schedule"
    return replace(report, status=Status.FEASIBLE, objective=score, schedule=schedule,
                   gap=relative_gap(score, report.bound),
                   message=f"{report.message}; incumbent: {name}'s schedule".lstrip("; "))


def _least_bound(instance: ClusterJobsInstance, arrays: oasis_arrays.OasisArrays, report: SolveReport, *,
                 budget: TimeBudget, dual_bounds: Mapping[str, float], lp_tried: bool = False,
                 presolve: bool = True) -> SolveReport:
    """Tighten a report that is not proven optimal with the workload-window bound
    (:mod:`mlsched.formulations.oasis_window_bound`, a small LP), the LP relaxation of ``arrays``
    (solved here with ``presolve`` or without unless ``lp_tried``: then it is among
    ``dual_bounds`` when it was solved), the given bounds (name -> value: the runs' dual bounds,
    the LP relaxation's or the Lagrangian bound found before the MILP) and the job-wise bound
    (:func:`mlsched.formulations.oasis.jobwise_bound`), so there is always a bound."""
    candidates = dict(dual_bounds)
    if report.bound is not None:
        candidates[report.bound_source or "milp"] = report.bound
    with budget.step("workload windows", WINDOW_SHARE) as seconds:
        windows = solve_arrays(window_program(instance, arrays.variant), time_limit=seconds)
    if not lp_tried:
        with budget.step("lp relaxation", 1.0) as seconds:
            lp = solve_arrays(replace(arrays.program, integer=False), time_limit=seconds, presolve=presolve)
        if lp.status is Status.OPTIMAL and lp.objective is not None:
            candidates["lp relaxation"] = lp.objective
    if windows.status is Status.OPTIMAL and windows.objective is not None:   # after the LP: ties name the LP
        candidates["workload windows"] = windows.objective
    candidates["job-wise bound"] = oasis.jobwise_bound(instance, arrays.variant)
    return _with_least_bound(report, candidates)


def _with_least_bound(report: SolveReport, candidates: Mapping[str, float]) -> SolveReport:
    """The report with the least of the named ``candidates`` as its bound (and ``bound_source``),
    proven optimal when that bound is within EXACT_REL_GAP of the incumbent."""
    source, bound = min(candidates.items(), key=lambda item: item[1])
    gap = relative_gap(report.objective, bound)
    proven = report.objective is not None and gap is not None and gap <= EXACT_REL_GAP
    return replace(report, bound=bound, bound_source=source, gap=gap,
                   status=Status.OPTIMAL if proven else report.status)


OGASCHED_VARIANTS = ("hindsight", "per_slot")


def exact_ogasched(instance: MultiServerInstance, *, variant: str = "hindsight", relax: bool = False,
                   time_limit: float | None = None, verify: bool | str = "auto") -> SolveReport:
    """Q(y*) of the best fixed allocation in hindsight (cvxpy/Clarabel), or sum_t OPT_t.

    With linear utilities the hindsight program is also solved as a Pyomo LP by HiGHS
    (``verify``); values further apart than CROSS_CHECK_TOLERANCE give status DISAGREE. The
    objective is Q re-evaluated at the returned allocation after the checker passed it.
    """
    if variant not in OGASCHED_VARIANTS:
        raise UsageError(f"unknown OgaSched variant {variant!r}; choose one of {', '.join(OGASCHED_VARIANTS)}")
    arrivals = instance.arrivals()
    if variant == "per_slot":
        return _per_slot(instance, arrivals)
    counts = arrivals.sum(axis=0)
    report = ogasched.hindsight_cvxpy(instance, counts)
    if report.schedule is None:
        return report
    problems = sim.check_allocation(instance, report.schedule, tol=1e-7)
    if problems:
        report.status, report.message = Status.ERROR, "; ".join(problems)
        return report
    model = ChannelModel(instance)
    report.objective = float(counts @ _port_rewards(model, report.schedule))
    if report.status is Status.OPTIMAL:
        report.bound = max(report.bound or report.objective, report.objective)
        report.gap = relative_gap(report.objective, report.bound)
    linear = bool(np.all(instance.utility_kind == LINEAR))
    if verify and linear:
        other = solve(ogasched.build_linear(instance, counts))
        report.verifier, report.verifier_objective, report.verifier_bound = "highs", other.objective, other.bound
        if other.status is not Status.OPTIMAL or other.objective is None:   # no answer to hold Clarabel's to
            report.message = f"{report.message}; not cross-certified: highs ended {other.status.value}".lstrip("; ")
            return report
        close = abs(other.objective - report.objective) <= CROSS_CHECK_TOLERANCE * max(1.0, abs(report.objective))
        report.verified = close
        if not close:
            report.status = Status.DISAGREE
            report.message = f"solvers disagree: clarabel says {report.objective:.10g}, highs says {other.objective}"
            report.bound = max(b for b in (report.bound, other.bound) if b is not None)
            report.gap = relative_gap(report.objective, report.bound)
    return report


def _per_slot(instance: MultiServerInstance, arrivals: np.ndarray) -> SolveReport:
    """sum_t OPT_t, optimal only when every slot's program is (``schedule``: the OPT_t): with a
    program left inaccurate the sum is FEASIBLE with no bound, with one unsolved NO_SOLUTION."""
    tick = time.perf_counter()
    values, reports = ogasched.per_slot_solutions(instance, arrivals)
    seconds = time.perf_counter() - tick
    unproven = Counter(r.message or r.status.value for r in reports if r.status is not Status.OPTIMAL)
    if not unproven:
        total = float(values.sum())
        return SolveReport(Status.OPTIMAL, total, total, 0.0, 0.0, seconds, "clarabel", relaxed=True, schedule=values)
    message = (f"{sum(unproven.values())} of {len(reports)} per-slot programs not proven optimal ("
               + ", ".join(f"{count} {what}" for what, count in sorted(unproven.items())) + ")")
    if np.isnan(values).any():
        return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, seconds, "clarabel", relaxed=True, message=message)
    return SolveReport(Status.FEASIBLE, float(values.sum()), None, None, 0.0, seconds, "clarabel", relaxed=True,
                       message=message, schedule=values)


def _port_rewards(model: ChannelModel, y: np.ndarray) -> np.ndarray:
    """q_l(e_l, y) for every port l: its gain minus its dominant overhead."""
    gain = model.port_matrix @ model.utility(y).sum(axis=1)
    return gain - model.port_loads(y).max(axis=1)


THEMIS_VARIANTS = ("o1",)
THEMIS_SLOT = 600.0   # O1's slot = the default lease (spec §5.6)


def exact_themis(instance: ThemisInstance, *, variant: str = "o1", relax: bool = False,
                 time_limit: float | None = None, verify: bool | str = "auto") -> SolveReport:
    """O1 (spec §5.6): the least max rho over slotted schedules, with FIFO's T_id as the fixed
    denominators (A27) and slots of one default lease; or its LP relaxation (a lower bound).
    Apps must have one job (O1 has one pool of work per app)."""
    if variant not in THEMIS_VARIANTS:
        raise UsageError(f"unknown Themis variant {variant!r}; choose one of {', '.join(THEMIS_VARIANTS)}")
    result = themis_offline.solve_offline(instance, t_id=themis_offline.fifo_t_id(instance, slot=THEMIS_SLOT),
                                          slot=THEMIS_SLOT, relax=relax, time_limit=time_limit, verify=verify)
    first = result.reports[0]
    objective = result.bound if relax else result.max_rho
    return SolveReport(result.status, objective, result.bound, result.gap, first.build_seconds,
                       sum(r.solve_seconds for r in result.reports), first.solver, relaxed=relax,
                       message=result.message, verified=first.verified, verifier=first.verifier,
                       verifier_objective=first.verifier_objective, verifier_bound=first.verifier_bound,
                       bound_source=result.bound_source if result.bound is not None else None, steps=result.steps,
                       schedule=result)


ASTRAEA_VARIANTS = ("admission", "all-jobs", "ub-pool")


def exact_astraea(instance: MultiTenantInstance, *, variant: str = "admission", relax: bool = False,
                  time_limit: float | None = None, verify: bool | str = "auto",
                  starts: Sequence[TenantSchedule | SlotRun] = ()) -> SolveReport:
    """Astraea's P-OFF (admission or all-jobs variant), its LP relaxation, or UB-POOL (spec §2.5).

    The objective is the realized utility of the extracted schedule, which must pass the
    independent checker (FEAS, §4.2) and score at least what the solver claims (a distributed
    configuration the solver placed on one server runs faster than it assumed, never slower).

    ``starts`` are the runs' schedules: non-preemptive ones as they are, preemptive runs by their
    unbroken jobs (:meth:`mlsched.sim.tenant_slots.SlotRun.unbroken`); each is read as a point of P-OFF
    (:func:`mlsched.formulations.astraea.program_schedule`), kept if the reading passes the checker
    within P-OFF's horizon (and runs every job under "all-jobs"), and scored by its realized
    utility, which is P-OFF's objective at that point. The best is HiGHS's MIP start and a floor on
    the incumbent, so OPT >= max ALG whatever the time limit; P-OFF's horizon reaches the latest
    completion of these schedules (spec §2.5: T = max(ALG makespan, ...)) unless the instance gives
    its own or the exact affine rule sets it, and the message then names it.

    ``time_limit`` covers the whole call: the MILP (and its verification) gets MILP_SHARE of what
    is left after the build. When it is not proven optimal, the bound is the least of the MILP's
    own bound, UB-POOL (WINDOW_SHARE of what is left), P-OFF's LP relaxation (the rest) and the
    job-wise bound (never missing), with ``bound_source`` naming it; a bound within
    EXACT_REL_GAP of the incumbent proves it optimal. The report's ``steps`` log every step."""
    if variant not in ASTRAEA_VARIANTS:
        raise UsageError(f"unknown Astraea variant {variant!r}; choose one of {', '.join(ASTRAEA_VARIANTS)}")
    budget = TimeBudget(time_limit)
    schedules = [run.unbroken(instance) if isinstance(run, SlotRun) else run for run in starts]
    covering = _horizon_covering(instance, variant, schedules)
    report = _exact_astraea(covering, variant, relax, verify, schedules, budget)
    if covering is not instance:
        report = replace(report, message=f"{report.message}; horizon {covering.horizon} slots, the runs' latest "
                                         f"completion".lstrip("; "))
    return replace(report, steps=budget.log)


def _horizon_covering(instance: MultiTenantInstance, variant: str,
                      schedules: Sequence[TenantSchedule]) -> MultiTenantInstance:
    """``instance`` with P-OFF's horizon lengthened to the latest completion of the runs'
    ``schedules`` when that is later than the horizon rule's (spec §2.5: T = max(ALG
    makespan, max_j r_j + sum_j min_k d_jk)), so that every run is a point of P-OFF and OPT >= max
    ALG; unchanged when the instance gives its horizon or the rule is exact
    (:func:`mlsched.formulations.astraea.exact_horizon`: a later completion is worth less than
    nothing, and the reading drops that job)."""
    if instance.horizon is not None or astraea.exact_horizon(instance, variant):
        return instance
    latest = max((int(schedule.completions(instance)[schedule.start > 0].max(initial=0)) for schedule in schedules),
                 default=0)
    return instance if latest <= astraea.offline_horizon(instance, variant) else replace(instance, horizon=latest)


def _exact_astraea(instance: MultiTenantInstance, variant: str, relax: bool, verify: bool | str,
                   starts: Sequence[TenantSchedule], budget: TimeBudget) -> SolveReport:
    relaxed = relax or variant == "ub-pool"
    columns = astraea.column_count(instance, variant)
    if columns == 0 and ((relaxed and variant != "all-jobs") or instance.num_jobs == 0):
        # no job can finish within the horizon: nothing to solve (P-OFF itself still goes to the
        # solvers, which certify 0, or infeasible under all-jobs)
        return SolveReport(Status.OPTIMAL, 0.0, 0.0, 0.0, 0.0, 0.0, "none", relaxed=relaxed,
                           message="no job can finish within the horizon",
                           schedule=None if relaxed else TenantSchedule.empty(instance, "p-off"))
    if relaxed:
        with budget.step("build"):
            built = astraea.build(instance, variant=variant, relax=relax)
        with budget.step("lp", 1.0) as seconds:
            return solve(built, time_limit=seconds)
    pool, guided = _pool_and_guided_schedule(instance, variant, budget)
    with budget.step("starts"):
        start = _best_start([*starts, *guided], partial(_astraea_start, instance, variant))
    certify = verify is True or (
        verify == "auto" and astraea.integer_count(instance, variant, columns) <= VERIFY_MAX_INTEGERS)
    gap = None if start is None else relative_gap(start[0], pool)
    if not certify and start is not None and gap is not None and gap <= EXACT_REL_GAP:
        return SolveReport(Status.OPTIMAL, start[0], pool, gap, 0.0, 0.0, "highs", False,
                           message=f"{start[1].algorithm or 'a given schedule'}'s schedule meets UB-POOL",
                           bound_source="ub-pool", schedule=start[1])
    with budget.step("build"):
        built = astraea.build(instance, variant=variant)
    if start is not None:
        assert built.load_start is not None
        built.load_start(start[1])
    with budget.step("milp", MILP_SHARE) as seconds:
        report = _checked_astraea_milp(instance, variant, built, seconds, verify, warm_start=start is not None)
    if report.status is Status.ERROR and start is not None:
        # HiGHS 1.16 with a MIP start and presolve has claimed a value no schedule of it scores
        # (docs/reliability.md): the program is solved again without the start
        with budget.step("milp without the start", 1.0) as seconds:
            retry = _checked_astraea_milp(instance, variant, built, seconds, verify, warm_start=False)
        report = replace(retry, message=f"{retry.message}; with the MIP start: {report.message}".lstrip("; "))
    if report.status not in (Status.FEASIBLE, Status.NO_SOLUTION):
        return report
    if start is not None:
        report = _floor_at_start(report, *start)
    return _least_astraea_bound(instance, variant, report, budget, pool)


def _checked_astraea_milp(instance: MultiTenantInstance, variant: str, built: Built, seconds: float | None,
                          verify: bool | str, *, warm_start: bool) -> SolveReport:
    """P-OFF solved, its schedule checked and rescored: status ERROR when it fails the checker or
    scores less than the solver claims."""
    report = solve(built, time_limit=seconds, verify=verify, warm_start=warm_start)
    if report.schedule is None or report.objective is None:
        return report
    problems = multi_tenant_check.check(instance, report.schedule, astraea.offline_horizon(instance, variant))
    rescored = float(multi_tenant_check.realized_utilities(instance, report.schedule).sum())
    if problems or rescored < report.objective - RESCORE_TOLERANCE * max(1.0, abs(report.objective)):
        return replace(report, status=Status.ERROR,
                       message=f"the solver's schedule fails the checker or rescoring ({rescored:.10g} vs "
                               f"{report.objective:.10g}): {'; '.join(problems[:3])}")
    bound = report.bound if report.bound is None else max(report.bound, rescored)
    return replace(report, objective=rescored, bound=bound, gap=relative_gap(rescored, bound))


def _pool_and_guided_schedule(instance: MultiTenantInstance, variant: str,
                              budget: TimeBudget) -> tuple[float | None, list[TenantSchedule]]:
    """UB-POOL's value (None if not solved within LIST_SHARE of the time limit) and the schedule
    it guides (:mod:`mlsched.pool_schedule`), a start like the runs'."""
    with budget.step("ub-pool", LIST_SHARE) as seconds:
        built = astraea.build(instance, variant="ub-pool")
        if not len(built.model.x):
            return 0.0, []
        report = solve(built, time_limit=seconds)
    if report.status is not Status.OPTIMAL or report.objective is None:
        return None, []
    values = {key: var.value or 0.0 for key, var in built.model.x.items()}
    with budget.step("ub-pool-guided schedule"):
        guided = pool_guided_schedule(instance, astraea.offline_horizon(instance, variant), values, variant)
    return report.objective, [guided]


def _least_astraea_bound(instance: MultiTenantInstance, variant: str, report: SolveReport,
                         budget: TimeBudget, pool: float | None) -> SolveReport:
    """Tighten a P-OFF report that is not proven optimal with UB-POOL (``pool``, already solved),
    the LP relaxation of ``variant`` and the job-wise bound
    (:func:`mlsched.formulations.astraea.jobwise_bound`), so there is always a bound; the least
    one is kept and named."""
    candidates: dict[str, float] = {}
    if report.bound is not None:
        candidates[report.bound_source or "milp"] = report.bound
    if pool is not None:
        candidates["ub-pool"] = pool
    with budget.step("lp relaxation", 1.0) as seconds:
        relaxed = exact_astraea(instance, variant=variant, relax=True, time_limit=seconds)
    if relaxed.status is Status.OPTIMAL and relaxed.objective is not None:
        candidates["lp relaxation"] = relaxed.objective
    candidates["job-wise bound"] = astraea.jobwise_bound(instance, variant)
    return _with_least_bound(report, candidates)


def _astraea_start(instance: MultiTenantInstance, variant: str,
                   schedule: TenantSchedule) -> tuple[float, TenantSchedule] | None:
    """A run's schedule as P-OFF reads it and its realized utility, if the schedule passes the
    checker and the reading is a point of the ``variant`` program."""
    if multi_tenant_check.check(instance, schedule, online=True):
        return None
    candidate = astraea.program_schedule(instance, schedule, variant)
    if multi_tenant_check.check(instance, candidate, astraea.offline_horizon(instance, variant)):
        return None
    if variant == "all-jobs" and not candidate.start.all():
        return None
    return float(multi_tenant_check.realized_utilities(instance, candidate).sum()), candidate


VERIFY_REALIZATIONS = 50   # verify="auto": cross-certify ILP H on each realization up to this many distinct ones


def exact_sow(instance: SowInstance, *, variant: str = "hindsight", relax: bool = False,
              time_limit: float | None = None, verify: bool | str = "auto", samples: int = sow_run.DEFAULT_SAMPLES,
              seed: int = 0, supply: float | None = None, exact_limit: int = sow_run.EXACT_LIMIT) -> SolveReport:
    """The SoW benchmarks (spec §2.3, §2.5): OPT(I) = E[H] over the realizations a run uses
    (enumerated up to ``exact_limit`` points, else ``samples`` paired draws: the message gives the
    95% confidence interval), or
    LP-R / LP-RP / LP-E at ``supply`` (default C). ``relax`` averages H's LP relaxation instead.

    Each ILP H solve runs HiGHS with presolve off; its solution is checked against the packing's
    rows and rescored; with ``verify`` each distinct realization's model is also solved through
    :func:`mlsched.solve.solve` with a second solver. The report's ``schedule`` holds H per realization."""
    if variant not in sow.SOW_VARIANTS:
        raise UsageError(f"unknown SoW variant {variant!r}; choose one of {', '.join(sow.SOW_VARIANTS)}")
    if variant != "hindsight":
        pack = sow.relaxed_packing(instance, variant, supply)
        if pack.size == 0:
            return SolveReport(Status.OPTIMAL, 0.0, 0.0, 0.0, 0.0, 0.0, "none", relaxed=True, message="no columns")
        return solve(sow.build(instance, variant=variant, supply=supply), time_limit=time_limit)
    reals = sow_run.realizations(instance, samples=samples, seed=seed, exact_limit=exact_limit)
    distinct: dict[tuple, list[int]] = {}
    for m in range(len(reals)):
        key = (tuple(reals.arrival[m]), tuple(reals.duration[m]), tuple(reals.sow_index[m]))
        distinct.setdefault(key, []).append(m)
    verify_each = not relax and (verify is True or (verify == "auto" and len(distinct) <= VERIFY_REALIZATIONS))
    budget, tick = TimeBudget(time_limit), time.perf_counter()
    values, bounds = np.zeros(len(reals)), np.zeros(len(reals))
    proven, certified, notes = True, True, []
    for members in distinct.values():
        real = reals.row(members[0])
        pack = sow.hindsight(instance.concrete(real.sow_index), real, supply)
        value, bound, ok, note, checked = _solve_packing(pack, relax, budget, verify_each, instance.name)
        values[members], bounds[members] = value, bound
        proven &= ok
        certified &= checked is True
        if note:
            notes.append(f"realization {members[0]}: {note}")
    w = reals.weights
    mean, upper = float(w @ values), float(w @ bounds)
    message = f"E[H] over {len(reals)} {'enumerated' if reals.exact else 'sampled'} realizations"
    if not reals.exact:
        half = 1.96 * float(np.sqrt(max(w @ (values - mean) ** 2, 0.0) / len(w)))
        message += f", 95% CI [{mean - half:.10g}, {mean + half:.10g}]"
    disagree = any("disagree" in n for n in notes)
    status = Status.DISAGREE if disagree else (Status.OPTIMAL if proven else Status.FEASIBLE)
    verified = (False if disagree else True if certified else None) if verify_each else None
    return SolveReport(status, mean, upper, relative_gap(mean, upper), 0.0, time.perf_counter() - tick,
                       "highs(presolve off)", relaxed=relax, message="; ".join([message, *notes[:3]]),
                       verified=verified, verifier="scip" if verify_each else None,
                       bound_source="milp", schedule=values)


def _solve_packing(pack: sow.Packing, relax: bool, budget: TimeBudget, verify: bool,
                   name: str) -> tuple[float, float, bool, str, bool | None]:
    """(value, bound, proven, note, certified) of one ILP H (or its relaxation); the solution is
    checked. ``certified`` (with ``verify``): True when the second solve proves the same optimum,
    False when the two contradict each other (a solution better than a proven optimum), None when
    the second solve ends unproven without a contradiction (e.g. at its time limit) or was not
    asked for."""
    if pack.size == 0:
        return 0.0, 0.0, True, "", True if verify else None
    trivial = float(sum(max(v for v, g in zip(pack.values, pack.groups) if g == group)
                        for group in set(pack.groups)))
    left = budget.left()
    if left is not None and left <= 0:
        return 0.0, trivial, False, "time limit reached before its solve", None
    report = solve_arrays(pack.arrays(integer=not relax), time_limit=left, presolve=False)
    if report.objective is None or report.schedule is None:
        return 0.0, trivial if report.bound is None else report.bound, False, report.message, None
    y = np.asarray(report.schedule)
    problems = _packing_problems(pack, y, integer=not relax)
    if problems:
        return 0.0, trivial, False, f"HiGHS's solution fails its rows: {problems[0]}", None
    value = float(np.dot(pack.values, y))
    bound = max(value, report.bound if report.bound is not None else trivial)
    proven = report.status is Status.OPTIMAL
    if not verify:
        return value, bound, proven, "", None
    other = solve(Built(model=pack.model(name, integer=True), name=name, sense="max", relaxed=False,
                        build_seconds=0.0), time_limit=budget.share(), verify=True)
    tolerance = CROSS_CHECK_TOLERANCE * max(1.0, abs(value))
    other_proven = other.status is Status.OPTIMAL and other.objective is not None
    if other.objective is not None and ((proven and other.objective > value + tolerance)   # beats a proven optimum
                                        or (other_proven and other.objective < value - tolerance)):   # below a solution
        return value, max(bound, other.bound or bound), False, (
            f"solvers disagree: HiGHS (presolve off) {value:.10g}, cross-certified {other.objective}"), False
    if not other_proven:
        return value, bound, proven, f"not cross-certified: the second solve ended {other.status.value}", None
    return value, bound, proven, "", True


def _packing_problems(pack: sow.Packing, y: np.ndarray, *, integer: bool, tol: float = 1e-6) -> list[str]:
    """Rows a packing solution violates: group choices above 1, round usage above the supply."""
    problems = []
    if integer and np.any(np.abs(y - np.round(y)) > tol):
        problems.append("a binary variable is fractional")
    chosen: dict[tuple, float] = {}
    used: dict[int, float] = {}
    for c in range(pack.size):
        chosen[pack.groups[c]] = chosen.get(pack.groups[c], 0.0) + y[c]
        for t, u in pack.usage[c].items():
            used[t] = used.get(t, 0.0) + u * y[c]
    problems += [f"group {g} chosen {v:g} times" for g, v in chosen.items() if v > 1 + tol]
    problems += [f"round {t} uses {v:g} > {pack.supply:g}" for t, v in used.items() if v > pack.supply + tol]
    return problems
