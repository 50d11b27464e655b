"""The runs' schedules as MIP starts of Astraea's P-OFF (spec §2.5): each reading is a point of the
program scored by its objective, a start never changes a proven optimum, a stopped solve never
reports less than the best start, and a schedule that breaks a rule is no start."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import pytest
from astraea_builders import job, system
from model_rows import violated_rows

from mlsched.exact import _astraea_start, exact_astraea
from mlsched.formulations import astraea
from mlsched.instance.generators.astraea import generate_astraea
from mlsched.instance.multi_tenant import duration
from mlsched.sim.multi_tenant_check import TenantSchedule, check, realized_utilities
from mlsched.sim.tenant_slots import SlotRun
from mlsched.solve import Status
from mlsched.study import solve_exact, study
from mlsched.systems import get_system

SYSTEM = get_system("astraea")
TOL = 1e-6


def runs_of(inst):
    return {name: SYSTEM.execute(inst, SYSTEM.policy(name)) for name in SYSTEM.default_algorithms}


def as_schedule(inst, run) -> TenantSchedule:
    return run.unbroken(inst) if isinstance(run, SlotRun) else run.schedule


INSTANCES = [(3, 2, 0), (4, 2, 1), (5, 3, 2), (6, 3, 3)]


@pytest.fixture(scope="module", params=INSTANCES, ids=[f"{n}j{m}s-seed{s}" for n, m, s in INSTANCES])
def generated(request):
    n, m, seed = request.param
    inst = generate_astraea(jobs=n, servers=m, users=2, profile="small", seed=seed)
    return inst, runs_of(inst)


def test_every_run_reads_as_a_point_of_p_off_scored_by_its_objective(generated):
    inst, runs = generated
    built = astraea.build(inst, variant="admission")
    horizon = astraea.offline_horizon(inst, "admission")
    for name, run in runs.items():
        start = astraea.program_schedule(inst, as_schedule(inst, run), "admission")
        assert check(inst, start, horizon) == [], name
        built.load_start(start)
        assert violated_rows(built.model) == [], name
        assert pyo.value(built.model.obj) == pytest.approx(realized_utilities(inst, start).sum(), abs=TOL), name


def test_a_start_never_changes_the_optimum(generated):
    inst, runs = generated
    starts = [SYSTEM.start_of(run) for run in runs.values()]
    plain = exact_astraea(inst, verify=True)
    started = exact_astraea(inst, verify=True, starts=starts)
    assert plain.status is started.status is Status.OPTIMAL
    assert plain.verified and started.verified
    assert started.objective == pytest.approx(plain.objective, abs=TOL)
    assert check(inst, started.schedule, astraea.offline_horizon(inst, "admission")) == []


def test_the_non_preemptive_runs_score_at_most_their_start():
    """Astraea and BatchSche commit non-preemptive schedules: the reading drops only jobs of
    negative utility (all beyond P-OFF's horizon or worth less than nothing), so it scores at
    least the run's realized utility."""
    for n, m, seed in INSTANCES:
        inst = generate_astraea(jobs=n, servers=m, users=2, profile="small", seed=seed)
        for name in ("astraea", "batchsche"):
            run = SYSTEM.execute(inst, SYSTEM.policy(name))
            start = astraea.program_schedule(inst, run.schedule, "admission")
            values = realized_utilities(inst, run.schedule)
            assert realized_utilities(inst, start).sum() == pytest.approx(values[values > 0].sum(), abs=TOL)


def test_a_stopped_solve_reports_at_least_the_best_start():
    inst = generate_astraea(jobs=10, servers=5, users=2, profile="small", seed=0)
    runs = runs_of(inst)
    best = max(float(realized_utilities(inst, astraea.program_schedule(inst, as_schedule(inst, run))).sum())
               for run in runs.values())
    assert best >= max(float(runs[name].utilities(inst).sum()) for name in ("astraea", "batchsche")) - TOL
    report = solve_exact(inst, time_limit=0.5, verify=False, starts=[SYSTEM.start_of(r) for r in runs.values()])
    assert report.status in (Status.FEASIBLE, Status.OPTIMAL)
    assert report.objective >= best - TOL
    assert check(inst, report.schedule, astraea.offline_horizon(inst, "admission")) == []
    assert report.objective == pytest.approx(realized_utilities(inst, report.schedule).sum(), abs=TOL)
    assert report.bound is None or report.bound >= report.objective - TOL


def two_jobs(horizon: int | None = None):
    """One server of 4 workers and 1 PS (one job at a time); A (B = 12) takes 3 slots on 4
    workers, B (B = 8) 2 slots on 4, 4 on 2. OPT = 48 + 45 (B, then A)."""
    return system([job("A", "u1", arrival=0, chunks=4, epochs=3, minibatches=1, k=-1, g=50),
                   job("B", "u1", arrival=0, chunks=4, epochs=2, minibatches=1, k=-1, g=50)],
                  servers=[(4, 1)], tenants=[(4, 1)], **({} if horizon is None else {"horizon": horizon}))


def schedule_of(inst, starts, workers, ps, name="hand"):
    return TenantSchedule(np.array(starts, dtype=np.int64), np.array(workers, dtype=np.int64),
                          np.array(ps, dtype=np.int64), name)


def test_an_infeasible_start_is_ignored():
    """Both jobs from slot 1 on the one server: 8 workers and 2 PS of 4 and 1. It would score
    more than the optimum; it is no start, so a tiny limit reports no such incumbent."""
    inst = two_jobs()
    crowded = schedule_of(inst, [1, 1], [[4], [4]], [[1], [1]])
    assert check(inst, crowded, online=True) != []
    optimum = exact_astraea(inst, verify=True)
    assert optimum.status is Status.OPTIMAL
    assert realized_utilities(inst, crowded).sum() > optimum.objective
    for limit in (None, 1e-3):
        report = exact_astraea(inst, verify=False, time_limit=limit, starts=[crowded])
        assert report.objective is None or report.objective <= optimum.objective + TOL
        assert report.schedule is None or check(inst, report.schedule, astraea.offline_horizon(inst, "admission")) == []


def test_a_job_beyond_the_horizon_is_dropped_and_the_rest_starts():
    inst = two_jobs(horizon=4)           # A in slots 1-3, B in 4-5: B ends after the horizon
    late = schedule_of(inst, [1, 4], [[4], [4]], [[1], [1]])
    assert check(inst, late, online=True) == [] and check(inst, late, 4) != []
    start = astraea.program_schedule(inst, late, "admission")
    assert list(start.start) == [1, 0] and start.workers[1].sum() == 0 and start.ps[1].sum() == 0
    assert realized_utilities(inst, start).sum() == pytest.approx(50 - 3)
    report = exact_astraea(inst, verify=True, starts=[late])
    assert report.status is Status.OPTIMAL and report.objective == pytest.approx(48)   # B alone


def test_the_all_jobs_program_refuses_a_start_that_drops_a_job():
    inst = two_jobs(horizon=5)           # A in 1-3 and B in 4-5 fit; B on 2 workers from slot 4 does not
    late = schedule_of(inst, [1, 4], [[4], [2]], [[1], [1]])
    assert _astraea_start(inst, "admission", late)[0] == pytest.approx(47)
    assert _astraea_start(inst, "all-jobs", late) is None
    whole = schedule_of(inst, [1, 4], [[4], [4]], [[1], [1]])
    assert _astraea_start(inst, "all-jobs", whole)[0] == pytest.approx(47 + 45)


def test_workers_are_cut_to_the_column_the_pruning_keeps():
    """D = 6 chunks of B = 6 on two servers of 3 workers and 1 PS (a PS covers 4 workers), rate 1: 3 workers take 2 slots,
    and so do 4 and 5; K_j keeps W = 3 only. A run on 5 workers reads as 3 on the same servers,
    still distributed, same end, same score."""
    inst = system([job("J", "u1", arrival=0, chunks=6, epochs=1, minibatches=1, central=1.0, distributed=1.0,
                       k=-1, g=20)], servers=[(3, 1), (3, 1)], tenants=[(6, 2)], bandwidth=(1, 4), horizon=6)
    assert [duration(inst.jobs[0], w, False) for w in (3, 4, 5, 6)] == [2, 2, 2, 1]
    wide = schedule_of(inst, [1], [[3, 2]], [[1, 1]])
    assert check(inst, wide, 6) == []
    start = astraea.program_schedule(inst, wide, "admission")
    assert start.workers.sum() == 3 and not start.centralized()[0]
    assert list(start.completions(inst)) == list(wide.completions(inst))
    assert check(inst, start, 6) == []
    built = astraea.build(inst, variant="admission")
    built.load_start(start)
    assert violated_rows(built.model) == []
    assert pyo.value(built.model.obj) == pytest.approx(realized_utilities(inst, wide).sum())
    with pytest.raises(ValueError, match="no configuration of 5 workers"):
        built.load_start(wide)


def per_slot(inst, run: SlotRun, j: int) -> dict[int, tuple[tuple[int, ...], tuple[int, ...]]]:
    """Job j's allocation (workers, PS per server) in every slot from its first to its completion."""
    rows = np.flatnonzero(run.job == j)
    held = {}
    for t in range(int(run.first[rows].min()), int(run.completion[j]) + 1):
        workers, ps = np.zeros(len(inst.servers), dtype=int), np.zeros(len(inst.servers), dtype=int)
        for r in rows:
            if run.first[r] <= t <= run.last[r]:
                workers[run.server[r]] += run.workers[r]
                ps[run.server[r]] += run.ps[r]
        held[t] = (tuple(workers), tuple(ps))
    return held


def test_a_preemptive_run_keeps_exactly_its_unbroken_jobs():
    """SlotRun.unbroken keeps a job iff the run held one allocation in every slot from the job's
    first to its completion, which is d_j(W, zeta) slots later; slot by slot, apart from its block
    reading."""
    dropped = 0
    for n, m, seed in INSTANCES:
        inst = generate_astraea(jobs=n, servers=m, users=2, profile="small", seed=seed)
        for name in ("gandiva_fair", "hived"):
            run = SYSTEM.execute(inst, SYSTEM.policy(name))
            schedule = run.unbroken(inst)
            assert check(inst, schedule, online=True) == []
            for j, one in enumerate(inst.jobs):
                if not run.completion[j]:
                    assert not schedule.start[j]
                    continue
                held = per_slot(inst, run, j)
                (workers, ps), *_ = held.values()
                central = sum(1 for w, p in zip(workers, ps) if w or p) == 1
                unbroken = len(set(held.values())) == 1 and duration(one, sum(workers), central) == len(held)
                assert bool(schedule.start[j]) == unbroken, (name, j)
                if unbroken:
                    assert schedule.start[j] == min(held)
                    assert tuple(schedule.workers[j]) == workers and tuple(schedule.ps[j]) == ps
                    assert schedule.completions(inst)[j] == run.completion[j]
                else:
                    dropped += 1
    assert dropped > 0     # the instances exercise the preempted case


def test_study_hands_the_runs_to_p_off():
    """`study` (and so `compare`) passes every run; the optimum then covers each run's start."""
    inst = generate_astraea(jobs=4, servers=2, users=2, profile="small", seed=1)
    frame = study([inst], list(SYSTEM.default_algorithms), time_limit=None, progress=False)
    opt = frame["opt"].iloc[0]
    assert (frame["opt_status"] == "optimal").all()
    runs = runs_of(inst)
    for name, run in runs.items():
        start = astraea.program_schedule(inst, as_schedule(inst, run))
        assert opt >= realized_utilities(inst, start).sum() - TOL, name
    assert opt == pytest.approx(exact_astraea(inst, verify=True).objective, abs=TOL)
