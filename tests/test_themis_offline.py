"""Themis offline optimum O1 (spec §5.6): oracle T11, an exhaustive enumeration of slotted
schedules on tiny clusters, placement slowdowns, the LP bound, arrivals, infeasible horizons and
the FIFO-based denominators (A27)."""

from __future__ import annotations

import math
import random
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from mlsched.bruteforce import themis_o1
from mlsched.errors import UsageError
from mlsched.formulations.themis_offline import (
    build_offline,
    check_schedule,
    fifo_completions,
    fifo_t_id,
    o1_refusal,
    offline_data,
    slot_rounded_rho,
    solve_offline,
)
from mlsched.instance import load
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisApp, ThemisInstance, ThemisJob
from mlsched.solve import Status

INSTANCES = Path(__file__).resolve().parents[1] / "instances"


def make_app(name, arrival, work, cap, spread=1.0, cross=None):
    profile = (1.0, 1.0, float(spread), float(cross if cross is not None else max(spread, 1.0)))
    return ThemisApp(name, float(arrival), ((ThemisJob(float(work), 1.0, cap),),), profile)


def make_instance(machines, apps):
    """``machines``: [(rack, GPUs)], one slot per machine."""
    return ThemisInstance("o1-test", GpuTopology(tuple((r, (k,)) for r, k in machines)), tuple(apps))


# ---------------------------------------------------------------------------------------------
# T11


@pytest.mark.parametrize(("work", "cap", "slot", "t_id"), [
    (100.0, 2, 10.0, 50.0),     # ceil(100 / 20) = 5 slots
    (100.0, 3, 10.0, 40.0),     # ceil(100 / 30) = 4 slots
    (30.0, 4, 7.5, 12.0),       # exactly one slot
    (61.0, 1, 20.0, 70.0),      # ceil(61 / 20) = 4 slots
])
def test_t11_single_app_rho(work, cap, slot, t_id):
    inst = make_instance([(0, 4), (0, 4)], [make_app("a", 0, work, cap, spread=1.5)])
    result = solve_offline(inst, t_id=[t_id], slot=slot)
    assert result.status is Status.OPTIMAL
    expected = math.ceil(work / (cap * slot)) * slot / t_id
    assert result.max_rho == pytest.approx(expected, abs=1e-12)
    assert result.bound == pytest.approx(expected, abs=1e-9)
    assert not check_schedule(offline_data(inst, slot=slot), _as_schedule(result))


def _as_schedule(result):
    from mlsched.formulations.themis_offline import OfflineSchedule
    return OfflineSchedule(result.completion, result.schedule)


# ---------------------------------------------------------------------------------------------
# Exhaustive enumeration (mlsched.bruteforce.themis_o1), written without the MILP


CLUSTERS = [[(0, 2)], [(0, 2), (0, 2)], [(0, 2), (1, 2)]]
SLOWDOWNS = [(Fraction(1), Fraction(1)), (Fraction(3, 2), Fraction(3, 2)), (Fraction(3, 2), Fraction(3)),
             (Fraction(2), Fraction(2)), (Fraction(5, 4), Fraction(3, 2))]


def random_case(seed):
    """2-3 apps on one or two 2-GPU machines (one or two racks), 3-5 slots of 10 s."""
    rng = random.Random(seed)
    machines = CLUSTERS[seed % len(CLUSTERS)]
    n = 3 if len(machines) == 1 or seed % 4 == 1 else 2
    horizon = rng.randint(4, 5) if len(machines) == 1 else (3 if n == 3 else rng.randint(3, 4))
    apps = []
    for _ in range(n):
        s, s3 = rng.choice(SLOWDOWNS)
        apps.append((Fraction(rng.choice([0, 0, 0, 5, 10])), Fraction(5 * rng.randint(1, 8)), rng.randint(1, 4), s, s3))
    t_id = [Fraction(rng.randint(10, 60)) for _ in range(n)]
    if seed % 6 == 5:          # short horizons: some cases have no schedule at all
        horizon = 2
    return machines, apps, t_id, Fraction(10), horizon


BRUTE_SEEDS = range(20)


@pytest.mark.parametrize("seed", BRUTE_SEEDS)
def test_milp_matches_enumeration(seed):
    machines, apps, t_id, slot, horizon = random_case(seed)
    worst, total = themis_o1(machines, apps, t_id, slot, horizon)
    inst = make_instance(machines, [make_app(f"a{i}", a, w, d, s, s3) for i, (a, w, d, s, s3) in enumerate(apps)])
    result = solve_offline(inst, t_id=[float(v) for v in t_id], slot=float(slot), horizon=horizon)
    if worst == math.inf:
        assert result.status is Status.INFEASIBLE and result.max_rho is None
        return
    assert result.status is Status.OPTIMAL, result.message
    assert result.max_rho == pytest.approx(float(worst), abs=1e-9)
    assert result.reports[0].objective == pytest.approx(float(worst), abs=1e-9)
    assert float(result.completion.sum()) == pytest.approx(float(total), abs=1e-6)   # lexicographic tie-break
    assert not check_schedule(offline_data(inst, slot=float(slot)), _as_schedule(result))


def test_enumeration_covers_both_outcomes():
    """The random cases include infeasible horizons and multi-machine, multi-rack clusters."""
    outcomes = [themis_o1(*random_case(seed))[0] == math.inf for seed in BRUTE_SEEDS]
    assert any(outcomes) and not all(outcomes)
    assert {len(random_case(seed)[0]) for seed in BRUTE_SEEDS} == {1, 2}


# ---------------------------------------------------------------------------------------------
# Placement slowdown, racks, LP bound, arrivals, horizon, errors


@pytest.mark.parametrize(("spread", "slots", "spans"), [(1.5, 3, True), (2.5, 4, False)])
def test_spread_app_progresses_at_x_over_s(spread, slots, spans):
    """W = 80, d = 4 on two 2-GPU machines, Delta = 10: one machine gives 20 per slot (4 slots);
    spreading gives 40 / s per slot, which wins when s < 2 (s = 1.5: 26.7 per slot, 3 slots)."""
    inst = make_instance([(0, 2), (0, 2)], [make_app("a", 0, 80, 4, spread)])
    result = solve_offline(inst, t_id=[10.0], slot=10.0)
    assert result.status is Status.OPTIMAL
    assert result.completion[0] == pytest.approx(10.0 * slots)
    used = (result.schedule[0] > 0).sum(axis=1)
    assert bool(used.max() == 2) is spans


def test_cross_rack_slowdown():
    """Two racks of one 2-GPU machine: spreading 4 GPUs runs at 4/s' (s' = 3: slower than 2 on one
    machine; s' = 1.25: faster)."""
    slow = make_instance([(0, 2), (1, 2)], [make_app("a", 0, 60, 4, 1.0, 3.0)])
    fast = make_instance([(0, 2), (1, 2)], [make_app("a", 0, 60, 4, 1.0, 1.25)])
    assert solve_offline(slow, t_id=[10.0], slot=10.0).completion[0] == pytest.approx(30.0)   # 20 per slot
    assert solve_offline(fast, t_id=[10.0], slot=10.0).completion[0] == pytest.approx(20.0)   # 32 per slot


def contended():
    return make_instance([(0, 2), (0, 2)], [make_app("a", 0, 60, 3, 1.5), make_app("b", 0, 45, 2, 2.0),
                                            make_app("c", 10, 30, 2, 1.5, 2.0)])


def test_lp_relaxation_is_a_lower_bound():
    inst = contended()
    t_id = fifo_t_id(inst, slot=10.0)
    exact = solve_offline(inst, t_id=t_id, slot=10.0)
    lp = solve_offline(inst, t_id=t_id, slot=10.0, relax=True)
    assert exact.status is Status.OPTIMAL and lp.status is Status.OPTIMAL
    assert lp.bound <= exact.max_rho + 1e-9
    weighted = solve_offline(inst, t_id=t_id, slot=10.0, lexicographic=False, verify=True)
    assert weighted.reports[0].verified
    assert weighted.bound <= exact.max_rho + 1e-9 <= weighted.max_rho + 2e-9


def test_arrival_is_respected():
    """a = 15, Delta = 10: slots 0 and 1 start before the arrival, so the app starts in slot 2."""
    inst = make_instance([(0, 2)], [make_app("early", 0, 20, 1), make_app("late", 15, 20, 2)])
    result = solve_offline(inst, t_id=[40.0, 10.0], slot=10.0)
    assert result.status is Status.OPTIMAL
    assert not result.schedule[1, :2].any()
    assert result.completion[1] == pytest.approx(30.0)
    assert result.max_rho == pytest.approx(max(20.0 / 40.0, (30.0 - 15.0) / 10.0))


def test_short_horizon_is_a_status():
    inst = make_instance([(0, 2)], [make_app("a", 0, 100, 2)])
    result = solve_offline(inst, t_id=[50.0], slot=10.0, horizon=3)
    assert result.status is Status.INFEASIBLE
    assert result.max_rho is None and result.schedule is None


def test_default_horizon_covers_fifo_and_optimum():
    inst = contended()
    data = offline_data(inst, slot=10.0)
    t_id = np.array(fifo_t_id(inst, slot=10.0))
    fifo = fifo_completions(data)
    result = solve_offline(inst, t_id=t_id, slot=10.0)
    assert result.horizon * 10.0 >= fifo.max()
    assert result.max_rho <= np.max((fifo - data.arrival) / t_id) + 1e-12
    longer = solve_offline(inst, t_id=t_id, slot=10.0, horizon=result.horizon + 3)
    assert longer.max_rho == pytest.approx(result.max_rho, abs=1e-9)


def test_fifo_t_id_by_hand():
    """One 2-GPU machine, Delta = 10: a (W = 40, d = 2, a = 0) runs alone in slots 0-1 (C = 20);
    b (W = 20, d = 2, a = 0) waits, then runs in slot 2 (C = 30). N_avg(a) = 2 over [0, 20];
    N_avg(b) = (2*20 + 1*10) / 30 = 5/3."""
    inst = make_instance([(0, 2)], [make_app("a", 0, 40, 2), make_app("b", 0, 20, 2)])
    assert fifo_completions(offline_data(inst, slot=10.0)).tolist() == [20.0, 30.0]
    assert fifo_t_id(inst, slot=10.0) == pytest.approx([40 / 2 * 2, 20 / 2 * 5 / 3])
    assert fifo_t_id(inst, slot=10.0, mode="exact_share") == pytest.approx([40 / 1, 20 / (2 / (5 / 3))])
    by_name = solve_offline(inst, t_id={"b": 10.0, "a": 20.0}, slot=10.0)
    assert by_name.t_id.tolist() == [20.0, 10.0]


def test_slot_rounded_rho():
    assert slot_rounded_rho(12.0, 0.0, 20.0, 10.0) == pytest.approx(1.0)
    assert slot_rounded_rho(30.0, 0.0, 20.0, 10.0) == pytest.approx(1.5)           # exact multiple
    assert slot_rounded_rho(0.1 + 0.2 + 29.7, 0.0, 10.0, 10.0) == pytest.approx(3.0)
    values = slot_rounded_rho(np.array([25.0, 41.0]), np.array([5.0, 0.0]), np.array([10.0, 50.0]), 10.0)
    assert values == pytest.approx([2.0, 1.0])


def test_multi_job_apps_are_rejected_unless_pooled():
    sh = ThemisApp("sh", 0.0, ((ThemisJob(10, 1.0, 1), ThemisJob(10, 1.0, 1)), (ThemisJob(20, 1.0, 2),)),
                   (1.0, 1.0, 1.0, 1.0))
    inst = make_instance([(0, 2)], [sh])
    with pytest.raises(UsageError, match="single-job"):
        build_offline(inst, t_id=[10.0], slot=10.0)
    pooled = solve_offline(inst, t_id=[10.0], slot=10.0, pool=True)    # 40 GPU-s on d = 2: 2 slots
    assert pooled.status is Status.OPTIMAL and pooled.completion[0] == pytest.approx(20.0)


def test_bad_arguments():
    inst = make_instance([(0, 2)], [make_app("a", 0, 10, 1)])
    with pytest.raises(UsageError):
        build_offline(inst, t_id=[0.0], slot=10.0)
    with pytest.raises(UsageError):
        build_offline(inst, t_id=[1.0, 2.0], slot=10.0)
    with pytest.raises(UsageError):
        build_offline(inst, t_id={"b": 1.0}, slot=10.0)
    with pytest.raises(UsageError):
        build_offline(inst, t_id=[1.0], slot=0.0)
    slotted = ThemisApp("s1", 0.0, ((ThemisJob(10, 1.0, 1),),), (1.0, 1.2, 1.5, 2.0))
    with pytest.raises(UsageError, match="s1"):
        build_offline(make_instance([(0, 2)], [slotted]), t_id=[1.0], slot=10.0)


# ---------------------------------------------------------------------------------------------
# The slotted greedy FIFO as O1's MIP start


def _violated_rows(model, tol=1e-6):
    import pyomo.environ as pyo

    bad = [con.name for con in model.component_data_objects(pyo.Constraint, active=True)
           if (con.has_lb() and pyo.value(con.body) < pyo.value(con.lower) - tol)
           or (con.has_ub() and pyo.value(con.body) > pyo.value(con.upper) + tol)]
    bad += [var.name for var in model.component_data_objects(pyo.Var, active=True)
            if var.value is None or (var.lb is not None and var.value < var.lb - tol)
            or (var.ub is not None and var.value > var.ub + tol)]
    return bad


@pytest.mark.parametrize("seed", range(12))
def test_fifo_start_is_a_feasible_o1_solution(seed):
    from mlsched.formulations.themis_offline import default_horizon, fifo_start, t_id_vector

    machines, apps, t_id, slot, _ = random_case(seed)
    inst = make_instance(machines, [make_app(f"a{i}", a, w, d, s, s3) for i, (a, w, d, s, s3) in enumerate(apps)])
    data = offline_data(inst, slot=float(slot))
    tid = [float(v) for v in t_id]
    horizon = default_horizon(data, t_id_vector(data, tid))
    start = fifo_start(data, horizon)
    assert start is not None and not check_schedule(data, start)
    built = build_offline(inst, t_id=tid, slot=float(slot), tiebreak=0.0)
    built.load_start(start)
    assert _violated_rows(built.model) == []
    fifo_rho = float(np.max((start.completion - data.arrival) / np.array(tid)))
    assert built.model.rho_max.value == pytest.approx(fifo_rho)
    fifo_slots = int(round(start.completion.max() / float(slot)))
    if fifo_slots > 1:                         # a horizon FIFO does not finish within gives no start
        assert fifo_start(data, fifo_slots - 1) is None
    result = solve_offline(inst, t_id=tid, slot=float(slot))
    assert result.status is Status.OPTIMAL and result.max_rho <= fifo_rho + 1e-9


PATHS = pytest.mark.parametrize("verify", [False, True], ids=["arrays", "pyomo model"])


def wrap_solver(monkeypatch, verify, wrap):
    """Replace the first solve's solver of the path ``verify`` selects (the arrays' in-process
    HiGHS, or the Pyomo model's ``solve``) by ``wrap(real solver)``."""
    import mlsched.formulations.themis_offline as offline

    name = "solve" if verify else "solve_arrays"
    monkeypatch.setattr(offline, name, wrap(getattr(offline, name)))


@PATHS
def test_a_stopped_o1_solve_keeps_fifo_as_incumbent(verify, monkeypatch):
    """When HiGHS stops at once (no node explored), the FIFO start is the incumbent: max rho is
    finite and at most FIFO's."""
    node_limit = "node_limit" if verify else "mip_max_nodes"
    wrap_solver(monkeypatch, verify, lambda real: lambda program, **kwargs: real(program, **{**kwargs, node_limit: 0}))
    inst = make_instance([(0, 2), (1, 2)], [make_app(f"a{i}", 5 * i, 40 + 10 * i, 2 + i % 2, 1.5, 2.0)
                                           for i in range(5)])
    data = offline_data(inst, slot=10.0)
    t_id = fifo_t_id(inst, slot=10.0)
    fifo_rho = float(np.max((fifo_completions(data) - data.arrival) / np.array(t_id)))
    result = solve_offline(inst, t_id=t_id, slot=10.0, verify=verify)
    assert result.max_rho is not None and result.max_rho <= fifo_rho + 1e-9
    assert result.bound is None or result.bound <= result.max_rho + 1e-9


@PATHS
def test_one_time_limit_covers_o1s_build_and_both_solves(verify, monkeypatch):
    """On a clock that the build advances 3 s and each solve by three quarters of the limit it
    is given, O1's build, first solve and lexicographic re-solve share one 20 s limit; a solve
    that uses all it got leaves the re-solve the stated floor. Every step is logged."""
    import mlsched.formulations.themis_offline as offline
    import mlsched.formulations.themis_offline_arrays as offline_arrays
    from mlsched.solve import MIN_VERIFY_SECONDS, TimeBudget

    clock = [0.0]

    class FakeClockBudget(TimeBudget):
        def left(self):
            return None if self.limit is None else self.limit - (clock[0] - self.started)

    builder = (offline, "build_offline") if verify else (offline_arrays, "build_offline_arrays")
    real_build = getattr(*builder)
    given = []

    def slow_build(*args, **kwargs):
        clock[0] += 3.0
        return real_build(*args, **kwargs)

    def spending(share):
        def wrap(real):
            def run(program, *, time_limit=None, **kwargs):
                given.append(time_limit)
                clock[0] += share * time_limit
                return real(program, **kwargs)
            return run
        return wrap

    monkeypatch.setattr(offline, "TimeBudget", lambda limit: FakeClockBudget(limit, started=clock[0]))
    monkeypatch.setattr(*builder, slow_build)
    inst = make_instance([(0, 2), (1, 2)], [make_app(f"a{i}", 5 * i, 40 + 10 * i, 2 + i % 2, 1.5, 2.0)
                                           for i in range(4)])
    t_id = fifo_t_id(inst, slot=10.0)
    with monkeypatch.context() as patch:
        wrap_solver(patch, verify, spending(0.75))
        result = solve_offline(inst, t_id=t_id, slot=10.0, time_limit=20.0, verify=verify)
    assert result.status is Status.OPTIMAL and len(result.reports) == 2
    assert given == pytest.approx([17.0, 17.0 * 0.25])
    first = "milp and verification" if verify else "milp"
    assert [step.name for step in result.steps] == ["build", first, "sum-of-completions re-solve"]
    assert [step.granted for step in result.steps] == pytest.approx([None, 17.0, 17.0 * 0.25])
    given.clear()
    wrap_solver(monkeypatch, verify, spending(1.0))
    solve_offline(inst, t_id=t_id, slot=10.0, time_limit=20.0, verify=verify)
    assert given == pytest.approx([17.0, MIN_VERIFY_SECONDS])


@pytest.mark.parametrize("seed", range(8))
def test_an_unbuilt_o1_is_the_interval_of_apps_alone_and_fifo(seed, monkeypatch):
    """Above MAX_BUILD_CELLS O1 is not built: its interval is [apps alone, FIFO], which holds the
    optimum the built program proves (enumerated cases)."""
    import mlsched.formulations.themis_offline as offline

    machines, apps, t_id, slot, _ = random_case(seed)
    inst = make_instance(machines, [make_app(f"a{i}", a, w, d, s, s3) for i, (a, w, d, s, s3) in enumerate(apps)])
    tid = [float(v) for v in t_id]
    proven = solve_offline(inst, t_id=tid, slot=float(slot))
    assert proven.status is Status.OPTIMAL
    monkeypatch.setattr(offline, "MAX_BUILD_CELLS", 0)
    result = solve_offline(inst, t_id=tid, slot=float(slot))
    data = offline_data(inst, slot=float(slot))
    fifo_rho = float(np.max((fifo_completions(data) - data.arrival) / np.array(tid)))
    assert result.max_rho == pytest.approx(fifo_rho) and result.reports[0].bound_source == "apps alone"
    assert result.bound <= proven.max_rho + 1e-9 <= result.max_rho + 2e-9
    assert result.status is (Status.OPTIMAL if result.bound == pytest.approx(fifo_rho, rel=1e-9) else Status.FEASIBLE)
    assert not check_schedule(data, _as_schedule(result))
    with pytest.raises(UsageError, match="not built"):
        solve_offline(inst, t_id=tid, slot=float(slot), relax=True)


@PATHS
@pytest.mark.parametrize("seed", range(6))
def test_a_milp_stopped_without_a_bound_gets_the_bound_of_apps_alone(seed, verify, monkeypatch):
    """When HiGHS stops before it has a bound (the FIFO start still its incumbent), O1's interval
    takes the apps-alone bound, labelled, and it holds the optimum the full solve proves."""
    import dataclasses

    import mlsched.formulations.themis_offline as offline

    machines, apps, t_id, slot, _ = random_case(seed)
    inst = make_instance(machines, [make_app(f"a{i}", a, w, d, s, s3) for i, (a, w, d, s, s3) in enumerate(apps)])
    tid = [float(v) for v in t_id]
    proven = solve_offline(inst, t_id=tid, slot=float(slot), verify=verify)
    assert proven.status is Status.OPTIMAL and proven.bound_source == "milp"

    def stopped(real):
        def run(program, **kwargs):
            return dataclasses.replace(real(program, **kwargs), status=Status.FEASIBLE, bound=None, bound_source=None)
        return run

    wrap_solver(monkeypatch, verify, stopped)
    result = solve_offline(inst, t_id=tid, slot=float(slot), verify=verify)
    data = offline_data(inst, slot=float(slot))
    assert result.bound_source == "apps alone"
    assert result.bound == pytest.approx(min(offline.alone_bound(data, np.array(tid)), result.max_rho), rel=1e-12)
    assert result.bound <= proven.max_rho + 1e-9 <= result.max_rho + 2e-9
    if result.bound == pytest.approx(result.max_rho, rel=1e-9):
        assert result.status is Status.OPTIMAL and "apps alone" in result.message
    else:
        assert result.status is Status.FEASIBLE


def test_o1_refusal_names_what_o1_cannot_take():
    """The reasons `compare` gives before its runs are the ones the program's build raises."""
    small = load(INSTANCES / "themis" / "o1-small.json")
    assert o1_refusal(small) is None
    sliced = load(INSTANCES / "themis" / "w1-16gpu-first60.json")
    reason = o1_refusal(sliced)
    assert reason is not None and "defined for single-job apps" in reason
    assert o1_refusal(sliced, pool=True) is None
    with pytest.raises(UsageError, match="defined for single-job apps"):
        offline_data(sliced, slot=600.0)


def test_an_unproven_sum_of_completions_resolve_is_said(monkeypatch):
    """The lexicographic re-solve stopped with an incumbent: its schedule keeps the proven max rho,
    and the message says that the least sum of completions is not proven."""
    from dataclasses import replace

    from mlsched.formulations import themis_offline

    machines, apps, t_id, slot, horizon = random_case(0)
    inst = make_instance(machines, [make_app(f"a{i}", a, w, d, s, s3) for i, (a, w, d, s, s3) in enumerate(apps)])
    proven = solve_offline(inst, t_id=[float(v) for v in t_id], slot=float(slot), horizon=horizon)
    assert proven.status is Status.OPTIMAL and "re-solve" not in proven.message
    for program in (themis_offline._ModelO1, themis_offline._ArraysO1):
        resolve = program.resolve

        def stopped(self, rho_star, start, seconds, resolve=resolve):
            return replace(resolve(self, rho_star, start, seconds), status=Status.FEASIBLE, message="time limit")
        monkeypatch.setattr(program, "resolve", stopped)
    result = solve_offline(inst, t_id=[float(v) for v in t_id], slot=float(slot), horizon=horizon)
    assert result.status is Status.OPTIMAL and result.max_rho == pytest.approx(proven.max_rho, abs=1e-9)
    assert "sum-of-completions re-solve: feasible time limit" in result.message
