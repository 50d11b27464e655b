"""Online schedules as MIP starts and the least available bound: OPT >= max ALG from the first
second, an upper bound whenever the LP can be solved, each labelled, and a start never changes a
proven optimum."""

from __future__ import annotations

from pathlib import Path

import pyomo.environ as pyo
import pytest
from model_rows import violated_rows

import mlsched.exact as exact_module
from mlsched import sim
from mlsched.errors import UsageError
from mlsched.exact import exact_oasis
from mlsched.formulations import oasis
from mlsched.instance import load
from mlsched.metrics import total_utility
from mlsched.solve import SolveReport, Status
from mlsched.study import _exact_hints, _ratio_columns, solve_exact, study
from mlsched.systems import get_system

ROOT = Path(__file__).resolve().parents[1]
FIG5 = ROOT / "instances" / "oasis" / "fig5-small-seed1.json"   # its LP bound (369.5) is above OPT (359.4)
ALGORITHMS = ("oasis", "oasis-ws", "fifo", "drf", "rrh")


@pytest.fixture(scope="module")
def runs():
    inst = load(FIG5)
    sysm = get_system(family=inst.family)
    return inst, {name: sysm.execute(inst, sysm.policy(name)).schedule for name in ALGORITHMS}


@pytest.mark.parametrize("variant", oasis.VARIANTS)
def test_every_schedule_is_a_feasible_solution_of_the_program(runs, variant):
    inst, schedules = runs
    for name, schedule in schedules.items():
        start = oasis.program_schedule(inst, schedule, variant)
        assert sim.check(inst, start) == [], name
        score = total_utility(inst, start)
        if variant == "paper":   # nothing is lost: the program scores the schedule as ALG does
            assert score == pytest.approx(total_utility(inst, schedule), rel=1e-12), name
        else:
            assert score <= total_utility(inst, schedule) + 1e-9, name
        built = oasis.build(inst, variant=variant)
        built.load_start(start)
        assert violated_rows(built.model) == [], name
        assert pyo.value(built.model.obj) == pytest.approx(score, rel=1e-9), name


def test_starts_never_change_a_proven_optimum(runs):
    inst, schedules = runs
    for variant in oasis.VARIANTS:
        report = exact_oasis(inst, variant=variant, verify=True, starts=list(schedules.values()))
        assert report.status is Status.OPTIMAL and report.verified
        assert report.objective == pytest.approx(inst.expected[f"opt_{variant}"], rel=1e-9)
        assert report.bound_source == "milp"


@pytest.fixture
def milp_stops(monkeypatch):
    """The MILP stops at its time limit with nothing found; the LP relaxation still solves.
    Gives the real ``solve``."""
    real_solve = exact_module.solve

    def stopped(built, **kwargs):
        if built.relaxed:
            return real_solve(built, **kwargs)
        return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 1.0, "highs", False,
                           message="stopped (time limit) without a solution")

    monkeypatch.setattr(exact_module, "solve", stopped)
    return real_solve


def test_a_stopped_solve_keeps_the_best_start_and_the_least_labelled_bound(runs, milp_stops):
    inst, schedules = runs
    real_solve = milp_stops
    best = max(schedules, key=lambda name: total_utility(inst, schedules[name]))
    lp = real_solve(oasis.build(inst, relax=True)).objective
    report = exact_oasis(inst, starts=list(schedules.values()), dual_bounds={"dual bound (x)": lp + 5})
    assert report.status is Status.FEASIBLE
    assert report.objective == pytest.approx(total_utility(inst, schedules[best]), rel=1e-12)
    assert report.schedule.algorithm == best and "incumbent: " in report.message
    assert report.bound == pytest.approx(lp) and report.bound_source == "lp relaxation"
    assert inst.expected["opt_paper"] <= report.bound + 1e-7
    tighter = exact_oasis(inst, starts=list(schedules.values()), dual_bounds={"dual bound (x)": lp - 1})
    assert tighter.bound == pytest.approx(lp - 1) and tighter.bound_source == "dual bound (x)"


def test_the_library_path_takes_starts(runs, milp_stops):
    inst, schedules = runs
    best = max(schedules, key=lambda name: total_utility(inst, schedules[name]))
    report = solve_exact(inst, starts=list(schedules.values()), time_limit=30)
    assert report.status is Status.FEASIBLE and report.schedule.algorithm == best
    assert report.objective == pytest.approx(total_utility(inst, schedules[best]), rel=1e-12)
    assert report.bound_source == "lp relaxation" and report.bound >= inst.expected["opt_paper"] - 1e-7
    alone = solve_exact(inst, time_limit=30)     # without starts the stopped MILP leaves no incumbent
    assert alone.objective is None and alone.bound == pytest.approx(report.bound)
    themis = load(ROOT / "instances" / "themis" / "o1-small.json")
    with pytest.raises(UsageError, match="takes no MIP starts"):
        solve_exact(themis, starts=[schedules[best]])


def test_study_hands_runs_to_the_exact_solve():
    inst = load(FIG5)
    sysm = get_system(family=inst.family)
    runs = []
    for name in ("oasis", "oasis-ws", "fifo"):
        policy = sysm.policy(name)
        runs.append((name, policy, sysm.execute(inst, policy)))
    paper = _exact_hints(sysm, runs, "paper")
    assert [s.algorithm for s in paper["starts"]] == [r.schedule.algorithm for _, _, r in runs]
    assert list(paper["dual_bounds"]) == ["dual bound (oasis-ws)"]        # the chunk DP's bound is OPT_chunk's
    assert list(_exact_hints(sysm, runs, "chunk")["dual_bounds"]) == ["dual bound (oasis)", "dual bound (oasis-ws)"]
    for name, value in paper["dual_bounds"].items():
        assert value >= inst.expected["opt_paper"] - 1e-7, name
    frame = study([inst], ["oasis", "oasis-ws", "fifo"], progress=False)
    assert (frame["opt_status"] == "optimal").all() and (frame["opt_bound_source"] == "milp").all()
    assert (frame["ratio"] >= 1 - 1e-9).all()


def test_a_stopped_incumbent_is_scored_by_its_schedule_never_above_it(runs, monkeypatch):
    """A time-limited incumbent may declare a completion slot after the job's last worker and so
    claim less than its schedule scores: the checked score stands. Claiming more is an error."""
    inst, _ = runs
    real_solve = exact_module.solve
    proven = real_solve(oasis.build(inst), verify=False)
    truth = inst.expected["opt_paper"]

    def claiming(value):
        def stopped(built, **kwargs):
            return SolveReport(Status.FEASIBLE, value, truth + 50, None, 0.0, 1.0, "highs", False,
                               schedule=proven.schedule, message="stopped (time limit)")
        return stopped

    monkeypatch.setattr(exact_module, "solve", claiming(truth - 30))
    report = exact_oasis(inst)
    assert report.status is Status.FEASIBLE
    assert report.objective == pytest.approx(total_utility(inst, proven.schedule), rel=1e-12)
    assert report.objective == pytest.approx(truth, rel=1e-9)
    monkeypatch.setattr(exact_module, "solve", claiming(truth + 30))
    assert exact_oasis(inst).status is Status.ERROR


def test_one_time_limit_covers_highs_and_its_verifier(runs, monkeypatch):
    import mlsched.solve as solve_module

    inst, _ = runs
    given = {}
    real_highs, real_verifier = solve_module._WatchedHighs, solve_module.solve_lp_file

    class RecordingHighs(real_highs):
        def solve(self, model, **kwargs):
            given["highs"] = kwargs["time_limit"]
            return super().solve(model, **kwargs)

    def recording_verifier(path, time_limit):
        given["verifier"] = time_limit
        return real_verifier(path, time_limit)

    monkeypatch.setattr(solve_module, "_WatchedHighs", RecordingHighs)
    monkeypatch.setattr(solve_module, "solve_lp_file", recording_verifier)
    report = solve_module.solve(oasis.build(inst), time_limit=8.0, verify=True)
    assert report.status is Status.OPTIMAL and report.verified
    assert given["highs"] == pytest.approx(8.0 * solve_module.HIGHS_SHARE_WHEN_VERIFYING)
    assert solve_module.MIN_VERIFY_SECONDS <= given["verifier"] <= 8.0
    exact_oasis(inst, time_limit=8.0, verify=True)
    assert given["highs"] <= 8.0 * exact_module.MILP_SHARE * solve_module.HIGHS_SHARE_WHEN_VERIFYING


SHIPPED = sorted((ROOT / "instances" / "oasis").glob("*.json"))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_job_wise_bound_is_above_the_lp_relaxation(path):
    """OPT <= LP <= sum_i f_i(t_i^min - a_i): the LP's u_i(t) start at t_i^min and sum to at most 1."""
    inst = load(path)
    bound = oasis.jobwise_bound(inst)
    assert inst.expected["opt_paper"] <= inst.expected["lp_bound"] * (1 + 1e-9)
    assert inst.expected["lp_bound"] <= bound * (1 + 1e-9)
    chunk = oasis.jobwise_bound(inst, "chunk")
    assert inst.expected["opt_chunk"] <= chunk * (1 + 1e-9) and chunk <= bound * (1 + 1e-9)


def test_the_job_wise_bound_stands_when_no_solver_gives_one(runs, monkeypatch):
    inst, schedules = runs

    def nothing(model, **kwargs):   # neither the MILP nor the LP relaxation finishes
        return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 1.0, "highs", False,
                           message="stopped (time limit) without a solution")

    monkeypatch.setattr(exact_module, "solve", nothing)
    monkeypatch.setattr(exact_module, "solve_arrays", nothing)
    report = exact_oasis(inst, starts=list(schedules.values()))
    assert report.status is Status.FEASIBLE and report.bound_source == "job-wise bound"
    assert report.bound == pytest.approx(oasis.jobwise_bound(inst), rel=1e-12)
    for name, schedule in schedules.items():
        score = total_utility(inst, schedule)
        columns = _ratio_columns(report, score)
        assert report.objective / score == pytest.approx(columns["ratio_low"]), name
        assert columns["ratio_high"] == pytest.approx(report.bound / score), name


def test_a_tiny_time_limit_is_shared_among_the_logged_steps():
    """A program beyond certification under a 2 s limit: the build, the LP relaxation (or the
    Lagrangian bound when the LP is not solved), the list schedule's search, the starts, the MILP and the checks are logged; the seconds handed to solvers
    add up to the limit plus at most MIN_VERIFY_SECONDS per solver step (the stated slack), and
    the interval still holds the best start and a labelled bound."""
    from mlsched.instance.generators import generate_oasis
    from mlsched.solve import MIN_VERIFY_SECONDS, VERIFY_MAX_INTEGERS

    inst = generate_oasis(jobs=30, horizon=30, seed=0, profile="feasible")
    assert oasis.build(inst).size["integer_variables"] > VERIFY_MAX_INTEGERS
    sysm = get_system(family=inst.family)
    starts = [sysm.execute(inst, sysm.policy(name)).schedule for name in ("fifo", "rrh")]
    limit = 2.0
    report = exact_oasis(inst, time_limit=limit, starts=starts)
    names = [step.name for step in report.steps]
    assert names[:2] == ["build", "lp relaxation"] and {"list schedule", "starts", "milp"} <= set(names)
    solver_steps = [step for step in report.steps if step.granted is not None]
    assert {step.name for step in solver_steps} <= {"lp relaxation", "lagrangian", "list schedule", "milp",
                                                     "workload windows"}
    assert all(step.granted >= MIN_VERIFY_SECONDS for step in solver_steps)
    assert sum(step.granted for step in solver_steps) <= limit + MIN_VERIFY_SECONDS * len(solver_steps)
    assert report.status in (Status.OPTIMAL, Status.FEASIBLE) and report.bound_source is not None
    assert report.objective >= max(total_utility(inst, s) for s in starts) - 1e-9
    assert report.objective <= report.bound + 1e-9 and report.bound <= oasis.jobwise_bound(inst) + 1e-9


def test_a_large_milp_runs_in_a_child_process_with_the_same_optimum(runs, monkeypatch):
    """Above LARGE_COLUMNS the MILP runs in a child process ended after its limit and a grace:
    on a small program made "large" it returns the optimum the in-process solve proves."""
    inst, schedules = runs
    in_process = exact_oasis(inst, verify=False, time_limit=60)
    monkeypatch.setattr(exact_module, "LARGE_COLUMNS", 0)
    child = exact_oasis(inst, verify=False, time_limit=60, starts=list(schedules.values()))
    assert in_process.status is child.status is Status.OPTIMAL
    assert child.objective == pytest.approx(in_process.objective, rel=1e-9)
    assert child.objective == pytest.approx(inst.expected["opt_paper"], rel=1e-7)


def test_a_solve_past_its_deadline_is_ended_without_a_solution(runs):
    """The child is ended when it has not answered by the limit plus the grace (here less than
    its own start-up takes): no incumbent, no bound, a message that says so."""
    from mlsched.formulations.oasis_arrays import build_arrays
    from mlsched.solve import solve_arrays_by_deadline

    inst, _ = runs
    report = solve_arrays_by_deadline(build_arrays(inst).program, time_limit=1e-3, grace=0.0)
    assert report.status is Status.NO_SOLUTION and report.objective is None and report.bound is None
    assert "was ended" in report.message


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_workload_window_bound_is_above_opt_and_within_the_job_wise_bound(path):
    """The window LP relaxes OPT (each completed job's workload fits in the pools' capacity since
    the earliest arrival it counts with): OPT <= it <= the job-wise bound, both variants."""
    from mlsched.formulations.oasis_window_bound import window_program
    from mlsched.solve import solve_arrays

    inst = load(path)
    for variant in oasis.VARIANTS:
        report = solve_arrays(window_program(inst, variant))
        assert report.status is Status.OPTIMAL
        assert inst.expected[f"opt_{variant}"] <= report.objective * (1 + 1e-9) + 1e-9, variant
        assert report.objective <= oasis.jobwise_bound(inst, variant) * (1 + 1e-9) + 1e-9, variant


def test_the_workload_window_bound_binds_where_capacity_is_short():
    """Two identical jobs, each needing the one worker server's whole capacity for two slots: both
    cannot finish by slot 2, so the window bound lies below the job-wise bound (both early) and
    above OPT (one job in slots 1-2, the other in 3-4)."""
    from builders import cluster, job

    from mlsched.formulations.oasis_window_bound import window_program
    from mlsched.solve import solve_arrays

    inst = cluster([job("a", epochs=2), job("b", epochs=2)], horizon=4, workers=[{"cpu": 1}], ps=[{"cpu": 1}])
    assert list(oasis.earliest_completion(inst, *oasis.server_bounds(inst))) == [2, 2]
    bound = solve_arrays(window_program(inst)).objective
    opt = exact_oasis(inst, verify=False).objective
    assert opt == pytest.approx(inst.utility_of(0, 2) + inst.utility_of(1, 4))
    assert opt - 1e-9 <= bound < oasis.jobwise_bound(inst) - 1e-6
