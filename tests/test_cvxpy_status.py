"""Statuses of the convex solves (cvxpy/Clarabel) and of the OgaSched optima built on them: an
inaccurate solve is solved again, and what stays unproven is a status, never an optimum."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from mlsched import load
from mlsched.exact import exact_ogasched
from mlsched.formulations import ogasched
from mlsched.solve import CLARABEL_RETRY, SolveReport, Status, solve_cvxpy


class _Scripted:
    """A stand-in for a cvxpy problem whose solves end with the given statuses in turn."""

    def __init__(self, *statuses: str) -> None:
        self.statuses, self.calls = list(statuses), []
        self.status, self.value = None, None

    def solve(self, **options):
        self.calls.append(options)
        self.status = self.statuses.pop(0)
        self.value = 1.5
        if self.status == cp.OPTIMAL_INACCURATE:
            warnings.warn("Solution may be inaccurate. Try another solver.", UserWarning, stacklevel=2)


def test_an_inaccurate_clarabel_solve_is_solved_again_with_stricter_refinement():
    problem = _Scripted(cp.OPTIMAL_INACCURATE, cp.OPTIMAL)
    report = solve_cvxpy(problem)
    assert report.status is Status.OPTIMAL and report.bound == 1.5 and report.gap == 0.0
    assert len(problem.calls) == 2 and problem.calls[1].items() >= CLARABEL_RETRY.items()


def test_a_solve_still_inaccurate_is_feasible_without_a_bound_and_without_the_warning():
    problem = _Scripted(cp.OPTIMAL_INACCURATE, cp.OPTIMAL_INACCURATE)
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # cvxpy's warning would raise here
        report = solve_cvxpy(problem)
    assert report.status is Status.FEASIBLE and report.objective == 1.5
    assert report.bound is None and report.gap is None and report.message == cp.OPTIMAL_INACCURATE


def test_other_solvers_are_not_solved_again():
    problem = _Scripted(cp.OPTIMAL_INACCURATE)
    assert solve_cvxpy(problem, solver="SCS").status is Status.FEASIBLE and len(problem.calls) == 1


def test_a_per_slot_program_that_clarabel_first_left_inaccurate_is_now_proven():
    """Slot pattern 28 of the shipped fig7-log instance ended "optimal_inaccurate" at Clarabel's
    defaults; its value is 828.95442 (both retry settings tried agree to 2e-10)."""
    inst = load("ogasched/fig7-log-t200-seed1")
    patterns = np.unique(inst.arrivals().astype(np.int8), axis=0)
    report = ogasched.hindsight_cvxpy(inst, patterns[28].astype(float))
    assert report.objective == pytest.approx(828.95442, rel=1e-7)
    assert report.status is Status.OPTIMAL or (report.status is Status.FEASIBLE and report.bound is None)


def _one_slot_unproven(monkeypatch, objective):
    """hindsight_cvxpy with its first per-slot program's report made unproven (``objective`` None:
    unsolved)."""
    solve = ogasched.hindsight_cvxpy
    seen = []

    def scripted(instance, counts):
        report = solve(instance, counts)
        seen.append(report)
        if len(seen) == 1:
            return SolveReport(Status.FEASIBLE if objective else Status.NO_SOLUTION, objective, None, None, 0.0, 0.0,
                               "clarabel", relaxed=True, message="optimal_inaccurate" if objective else "solver_error")
        return report
    monkeypatch.setattr(ogasched, "hindsight_cvxpy", scripted)


def test_the_per_slot_optimum_is_feasible_when_a_slot_is_unproven(monkeypatch):
    inst = load("ogasched/default-t200-seed0")
    proven = exact_ogasched(inst, variant="per_slot")
    assert proven.status is Status.OPTIMAL and proven.bound == proven.objective
    _one_slot_unproven(monkeypatch, 1.0)
    report = exact_ogasched(inst, variant="per_slot")
    assert report.status is Status.FEASIBLE and report.bound is None and report.gap is None
    assert report.message.startswith("1 of ") and "1 optimal_inaccurate" in report.message
    assert report.objective < proven.objective


def test_the_per_slot_optimum_has_no_value_when_a_slot_is_unsolved(monkeypatch):
    inst = load("ogasched/default-t200-seed0")
    _one_slot_unproven(monkeypatch, None)
    report = exact_ogasched(inst, variant="per_slot")
    assert report.status is Status.NO_SOLUTION and report.objective is None and "solver_error" in report.message


def test_an_unproven_hindsight_solve_gets_no_bound(monkeypatch):
    inst = load("ogasched/default-t200-seed0")
    solve = ogasched.hindsight_cvxpy

    def inaccurate(instance, counts):
        report = solve(instance, counts)
        report.status, report.bound, report.gap, report.message = Status.FEASIBLE, None, None, "optimal_inaccurate"
        return report
    monkeypatch.setattr(ogasched, "hindsight_cvxpy", inaccurate)
    report = exact_ogasched(inst, verify=False)
    assert report.status is Status.FEASIBLE and report.bound is None and report.gap is None


def test_regret_needs_a_proven_hindsight_optimum(monkeypatch):
    from dataclasses import replace

    from mlsched.study import study

    inst = load("ogasched/default-t200-seed0")
    solve = ogasched.hindsight_cvxpy
    frame = study([inst], ["ogasched"], progress=False)
    assert frame["regret"].notna().all()
    monkeypatch.setattr(ogasched, "hindsight_cvxpy", lambda instance, counts: replace(
        solve(instance, counts), status=Status.FEASIBLE, bound=None, gap=None, message="optimal_inaccurate"))
    frame = study([inst], ["ogasched"], progress=False)
    assert "regret" not in frame or frame["regret"].isna().all()
    assert "hindsight_opt" not in frame or frame["hindsight_opt"].isna().all()


def test_a_stopped_lp_has_no_bound_and_no_infeasible_point():
    """HiGHS stopped inside an LP: its dual simplex has no feasible point (NO_SOLUTION), its primal
    simplex a feasible one without a bound (FEASIBLE); the objective is never taken as a bound."""
    import scipy.sparse as sp

    from mlsched.solve import ArrayProgram, solve_arrays

    rng = np.random.default_rng(0)
    a = sp.random(300, 400, density=0.05, random_state=1, format="csc")
    a.data = rng.uniform(0.1, 1, a.nnz)
    program = ArrayProgram(cost=rng.uniform(0, 1, 400), col_lower=np.zeros(400), col_upper=np.full(400, 10.0),
                           row_lower=np.full(300, -np.inf), row_upper=rng.uniform(1, 5, 300), a_start=a.indptr,
                           a_index=a.indices, a_value=a.data, integer=False, sense="max")
    optimum = solve_arrays(program)
    assert optimum.status is Status.OPTIMAL and optimum.bound == optimum.objective
    for strategy in (1, 4):   # dual, primal simplex
        report = solve_arrays(program, simplex_iteration_limit=5, simplex_strategy=strategy)
        assert report.status in (Status.NO_SOLUTION, Status.FEASIBLE) and report.bound is None
        if report.schedule is not None:
            assert (a @ report.schedule <= program.row_upper + 1e-7).all()
            assert report.objective <= optimum.objective + 1e-9


def test_a_cross_check_without_an_answer_is_no_disagreement(monkeypatch):
    import mlsched.exact as exact

    inst = load("ogasched/default-t200-seed0")
    checked = exact_ogasched(inst)
    assert checked.status is Status.OPTIMAL and checked.verified is True
    monkeypatch.setattr(exact, "solve", lambda built, **options: SolveReport(
        Status.NO_SOLUTION, None, None, None, 0.0, 0.0, "highs", False, message="scripted"))
    report = exact_ogasched(inst)
    assert report.status is Status.OPTIMAL and report.verified is None
    assert report.objective == checked.objective and "not cross-certified: highs ended no_solution" in report.message


@pytest.mark.parametrize("integer", [False, True])
def test_array_programs_without_a_finite_optimum_or_without_columns(integer):
    from dataclasses import replace

    from mlsched.solve import ArrayProgram, solve_arrays

    free = ArrayProgram(cost=np.array([1.0]), col_lower=np.zeros(1), col_upper=np.full(1, np.inf),
                        row_lower=np.array([-np.inf]), row_upper=np.array([np.inf]), a_start=np.array([0, 1]),
                        a_index=np.array([0]), a_value=np.array([1.0]), integer=integer, sense="max")
    assert solve_arrays(free).status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)
    empty = replace(free, cost=np.zeros(0), col_lower=np.zeros(0), col_upper=np.zeros(0), a_start=np.array([0]),
                    a_index=np.zeros(0, dtype=np.int64), a_value=np.zeros(0), row_lower=np.array([-1.0]),
                    row_upper=np.array([2.0]))
    report = solve_arrays(empty)
    assert report.status is Status.OPTIMAL and report.objective == 0.0 == report.bound
    assert solve_arrays(replace(empty, row_lower=np.array([1.0]))).status is Status.INFEASIBLE


@pytest.mark.parametrize("status", [cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE])
def test_a_suspected_infeasible_or_unbounded_program_is_not_proven_so(status):
    report = solve_cvxpy(_Scripted(status, status), solver="SCS")
    assert report.status is Status.NO_SOLUTION and report.message == status


def test_the_differential_tool_takes_an_unproven_benchmark_as_no_value():
    import math

    from mlsched.differential import _value

    assert _value(SolveReport(Status.OPTIMAL, 2.0, 2.0, 0.0, 0.0, 0.0, "highs", True)) == 2.0
    for status, objective in ((Status.FEASIBLE, 2.0), (Status.NO_SOLUTION, None), (Status.ERROR, None)):
        assert math.isnan(_value(SolveReport(status, objective, None, None, 0.0, 0.0, "highs", True)))


def test_an_auction_whose_lp_is_not_solved_reports_no_lp_bound(monkeypatch):
    import math

    from mlsched.formulations import themis

    tables = [[(frozenset(), 1.0), (frozenset({0}), 0.5), (frozenset({0, 1}), 0.4)],
              [(frozenset(), 1.0), (frozenset({1}), 0.25)]]
    assert not math.isnan(themis.pa_auction(tables, [0, 1]).lp_bound)
    solve = themis.solve_arrays
    monkeypatch.setattr(themis, "solve_arrays", lambda program, **options: solve(program, **options) if program.is_mip
                        else SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 0.0, "highs", True))
    assert math.isnan(themis.pa_auction(tables, [0, 1]).lp_bound)
