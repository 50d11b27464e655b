"""The array checker of Themis-family run records against its one-record-at-a-time oracle
(tests/event_check_reference.py): the same problems, as a multiset, on valid records of every
policy and on records forged in every way the checker looks for."""

import dataclasses
from collections import Counter

import numpy as np
import pytest

from event_check_reference import check_run as reference_check
from mlsched.baselines.greedy_rounds import THEMIS_BASELINES
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, NETWORK_PROFILE, ThemisApp, ThemisInstance, ThemisJob
from mlsched.online.themis.policy import Themis
from mlsched.sim.event_check import check_run
from mlsched.sim.event_engine import SimOptions, simulate
from mlsched.sim.themis_run import Holding, ThemisRun

TYPED = GpuTopology(((0, (2, 2)), (0, (2,)), (1, (1, 1, 1))), ("v100", "v100", "k80"))


def instance(seed: int, apps: int = 8) -> ThemisInstance:
    rng = np.random.default_rng(seed)
    out = []
    for a in range(apps):
        phases = [tuple(ThemisJob(float(rng.integers(100, 2000)), 1.0, int(rng.integers(1, 4)))
                        for _ in range(int(rng.integers(1, 5)))) for _ in range(int(rng.integers(1, 3)))]
        speeds = (("v100", 1.0), ("k80", float(rng.choice([0.25, 0.5])))) if rng.random() < 0.7 else ()
        out.append(ThemisApp(f"a{a}", float(rng.uniform(0, 800)), tuple(phases),
                             NETWORK_PROFILE if rng.random() < 0.5 else COMPUTE_PROFILE, speeds=speeds))
    return ThemisInstance(f"check-{seed}", TYPED, tuple(out))


def same_problems(run: ThemisRun) -> list[str]:
    problems = check_run(run)
    assert Counter(problems) == Counter(reference_check(run))
    return problems


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name", ["themis", *sorted(THEMIS_BASELINES)])
def test_valid_records_pass_both(seed, name):
    policy = Themis if name == "themis" else THEMIS_BASELINES[name]
    run = simulate(instance(seed), policy(), SimOptions(lease=200.0, restart_overhead=10.0 * (seed % 2)))
    assert same_problems(run) == []


def forge(run: ThemisRun, rng: np.random.Generator) -> ThemisRun:
    """The record with one to three random forgeries, each of a kind the checker looks for."""
    holdings, jobs, finish, t_id = list(run.holdings), list(run.jobs), run.finish.copy(), run.t_id.copy()
    gpus = run.instance.num_gpus
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(15))
        h = int(rng.integers(len(holdings)))
        j = int(rng.integers(len(jobs)))
        if kind == 0:     # an unknown GPU id
            holdings[h] = holdings[h]._replace(gpu=int(rng.choice([-1, gpus, gpus + 5])))
        elif kind == 1:   # held before arrival, after finish, or ending before it starts
            g = holdings[h]
            holdings[h] = g._replace(**[{"start": g.start - 100.0}, {"end": g.end + 100.0},
                                       {"end": g.start - 1.0}][int(rng.integers(3))])
        elif kind == 2:   # the same GPU held by another app at once, or by the same app twice
            g = holdings[h]
            holdings.append(g._replace(app=int(rng.integers(len(run.instance.apps)))))
        elif kind == 3:   # a holding trimmed: some interval is then not held throughout
            g = holdings[h]
            holdings[h] = g._replace(end=g.start + (g.end - g.start) * float(rng.uniform(0, 0.9)))
        elif kind == 4:   # an interval moved to another GPU, possibly unknown
            jobs[j] = jobs[j]._replace(gpus=frozenset({int(rng.integers(-1, gpus + 2))}))
        elif kind == 5:   # above its cap
            jobs[j] = jobs[j]._replace(gpus=frozenset(range(gpus)))
        elif kind == 6:   # a wrong slowdown or speed
            field = str(rng.choice(["slowdown", "speed"]))
            jobs[j] = jobs[j]._replace(**{field: getattr(jobs[j], field) * float(rng.choice([1.5, 1 + 1e-12]))})
        elif kind == 7:   # an interval dropped: work missing
            jobs.pop(j)
        elif kind == 8:   # an interval repeated: two jobs of the app on one GPU at once
            jobs.append(jobs[j]._replace(job=0))
        elif kind == 9:   # an interval shifted in time (phase order, holding, finish)
            shift = float(rng.choice([-300.0, -1e-7, 1e-7, 300.0]))
            jobs[j] = jobs[j]._replace(start=jobs[j].start + shift, end=jobs[j].end + shift)
        elif kind == 10:  # a wrong finish
            a = int(rng.integers(len(finish)))
            finish[a] += float(rng.choice([-50.0, 1e-4, 50.0]))
        elif kind == 12:  # progress credited from another time than the interval's start plus its overhead
            jobs[j] = jobs[j]._replace(resume=jobs[j].resume + float(rng.choice([-1e3, -1e-7, 1e-7, float("nan")])))
        elif kind == 13:  # a T_id that is not the app's lifetime's (a lower rho)
            t_id[int(rng.integers(len(t_id)))] *= float(rng.choice([1.5, 1 + 1e-6, 1 + 1e-12]))
        elif kind == 14:  # an interval that runs on past its job's completion
            jobs[j] = jobs[j]._replace(end=jobs[j].end + float(rng.choice([1e-7, 50.0])))
        else:             # a holding split in two touching or nearly touching spans
            g = holdings.pop(h)
            middle = (g.start + g.end) / 2
            holdings += [g._replace(end=middle), g._replace(start=middle + float(rng.choice([0.0, 5e-7, 1e-3])))]
    return dataclasses.replace(run, holdings=holdings, jobs=jobs, finish=finish, t_id=t_id)


@pytest.mark.parametrize("seed", range(4))
def test_forged_records_give_the_same_problems(seed):
    run = simulate(instance(10 + seed), Themis(), SimOptions(lease=200.0))
    rng = np.random.default_rng(seed)
    flagged = sum(bool(same_problems(forge(run, rng))) for _ in range(150))
    assert flagged > 120   # most are seen (not a split that still touches, or a shift within the tolerance)


def test_each_kind_of_problem_is_reported():
    run = simulate(instance(20), Themis(), SimOptions(lease=200.0))
    h, iv = run.holdings[0], run.jobs[0]
    other = next(a for a in range(len(run.instance.apps)) if a != h.app)
    forged = dataclasses.replace(
        run, holdings=[*run.holdings, Holding(other, h.gpu, h.start, h.end), Holding(h.app, 99, h.start, h.end),
                               Holding(h.app, h.gpu, -1000.0, -900.0)],
        jobs=[*run.jobs[2:], iv._replace(slowdown=iv.slowdown * 2), run.jobs[1]._replace(gpus=frozenset({42}))])
    problems = same_problems(forged)
    for claim in ("held by apps", "holds unknown GPU 99", "runs with slowdown", "outside its lifetime",
                  "runs on unknown GPU 42", "runs on GPU 42 over"):
        assert any(claim in p for p in problems), claim
    empty = dataclasses.replace(run, holdings=[], jobs=[])
    assert any("is not the end of its last job" in p for p in same_problems(empty))
    unheld = dataclasses.replace(run, holdings=[])
    assert sum("without holding it" in p for p in same_problems(unheld)) == sum(len(iv.gpus) for iv in run.jobs)


@pytest.mark.parametrize("overhead", [0.0, 30.0])
def test_work_before_its_start_or_restart_and_times_that_are_not_finite_are_reported(overhead):
    """An interval credited with work before it starts, or before its restart overhead ends, and
    times that are not finite (they would silence every comparison) are problems in both checkers."""
    run = simulate(instance(21), Themis(), SimOptions(lease=200.0, restart_overhead=overhead))
    assert same_problems(run) == []
    iv = max(range(len(run.jobs)), key=lambda k: run.jobs[k].end - run.jobs[k].start)
    long = run.jobs[iv]
    forgeries = {
        "progresses from": long._replace(resume=long.start - 1e6),
        "has a time that is not finite": long._replace(resume=float("nan")),
        "ends before it starts": long._replace(end=long.start - 5.0, resume=long.start - 5.0),
    }
    if overhead:
        forgeries["progresses from "] = long._replace(resume=long.start)   # the overhead not paid
    for claim, forged in forgeries.items():
        jobs = [*run.jobs[:iv], forged, *run.jobs[iv + 1:]]
        problems = same_problems(dataclasses.replace(run, jobs=jobs))
        assert any(claim.strip() in p for p in problems), claim
    nan_start = dataclasses.replace(run, jobs=[*run.jobs[:iv], long._replace(start=float("nan")), *run.jobs[iv + 1:]])
    assert any("not finite" in p for p in same_problems(nan_start))
    h = run.holdings[0]
    nan_holding = dataclasses.replace(run, holdings=[h._replace(start=float("nan")), *run.holdings[1:]])
    assert any("outside its lifetime" in p for p in same_problems(nan_holding))


@pytest.mark.parametrize("tid_mode", ["paper", "exact_share"])
def test_a_t_id_that_is_not_the_lifetimes_is_reported(tid_mode):
    """T_id is re-derived from the apps' lifetimes in the record (N_avg over each), not taken from
    it: a larger T_id (a lower rho) for one app is one problem, in both checkers and both T_id modes."""
    run = simulate(instance(22), Themis(), SimOptions(lease=200.0, tid_mode=tid_mode))
    assert same_problems(run) == []
    t_id = run.t_id.copy()
    t_id[3] *= 1.25
    problems = same_problems(dataclasses.replace(run, t_id=t_id))
    assert len(problems) == 1 and problems[0].startswith("app 3 has T_id")


def test_t_id_by_hand():
    """Two apps on 4 GPUs: a (work 400, demand 2) over [0, 100], b (work 100, demand 1) over [50, 150]: N_avg
    of each is (50 x 1 + 50 x 2) / 100 = 1.5; T_id of a = 400 / 2 x 1.5 = 300 (paper), 400 / min(4 / 1.5, 2) = 200
    (exact share); of b 150 and 100."""
    topology = GpuTopology(((0, (4,)),))
    apps = (ThemisApp("a", 0.0, ((ThemisJob(400.0, 1.0, 2),),), COMPUTE_PROFILE),
            ThemisApp("b", 50.0, ((ThemisJob(100.0, 1.0, 1),),), COMPUTE_PROFILE))
    inst = ThemisInstance("by-hand", topology, apps)
    run = simulate(inst, Themis(), SimOptions(lease=1000.0))
    paper = dataclasses.replace(run, finish=np.array([100.0, 150.0]), t_id=np.array([300.0, 100.0 / 1 * 1.5]),
                                holdings=[], jobs=[])
    assert not [p for p in same_problems(paper) if "T_id" in p]
    wrong = dataclasses.replace(paper, t_id=np.array([300.0 * (1 + 1e-8), 150.0]))
    assert [p for p in same_problems(wrong) if "T_id" in p] == ["app 0 has T_id 300, its lifetime gives 300 (N_avg 1.5)"]
    share = dataclasses.replace(paper, options=SimOptions(lease=1000.0, tid_mode="exact_share"),
                                t_id=np.array([200.0, 100.0 / min(4 / 1.5, 1)]))
    assert not [p for p in same_problems(share) if "T_id" in p]


def test_a_job_that_runs_past_its_completion_is_reported():
    run = simulate(instance(23), Themis(), SimOptions(lease=200.0))
    last = max(range(len(run.jobs)), key=lambda k: run.jobs[k].end - run.jobs[k].resume)
    iv = run.jobs[last]
    jobs = [*run.jobs[:last], iv._replace(end=iv.end + 0.5 * (iv.end - iv.resume)), *run.jobs[last + 1:]]
    problems = same_problems(dataclasses.replace(run, jobs=jobs))
    assert any(p.startswith(f"app {iv.app} phase {iv.phase} job {iv.job} got") and "ran past its completion" in p
               for p in problems)
