"""P-OFF's upper bound when the MILP is not proven (spec §2.5): the least of the MILP's own bound,
UB-POOL, the LP relaxation and the job-wise bound, named by ``bound_source``, never below the
brute-force optimum, and a proof of optimality when it meets the incumbent."""

from __future__ import annotations

import numpy as np
import pytest

from mlsched import bruteforce
from mlsched import exact as exact_module
from mlsched.differential import random_tenant_instance
from mlsched.exact import exact_astraea
from mlsched.formulations import astraea
from mlsched.instance.generators.astraea import generate_astraea
from mlsched.pool_schedule import pool_guided_schedule
from mlsched.sim.multi_tenant_check import check, realized_utilities
from mlsched.solve import SolveReport, Status

TOL = 1e-6
CASES = 40


def stopped_milp(monkeypatch, bound: float | None = None) -> None:
    """P-OFF's MILP stops at its limit with nothing found (and ``bound`` as its own bound); the
    relaxations solve."""
    real_solve = exact_module.solve

    def stopped(built, **kwargs):
        if built.relaxed:
            return real_solve(built, **kwargs)
        return SolveReport(Status.NO_SOLUTION, None, bound, None, 0.0, 1.0, "highs", False,
                           message="stopped (time limit) without a solution",
                           bound_source=None if bound is None else "milp")

    monkeypatch.setattr(exact_module, "solve", stopped)


def relaxation_values(inst, variant: str) -> dict[str, float]:
    return {"ub-pool": exact_astraea(inst, variant="ub-pool").objective,
            "lp relaxation": exact_astraea(inst, variant=variant, relax=True).objective,
            "job-wise bound": astraea.jobwise_bound(inst, variant)}


@pytest.mark.parametrize("variant", ["admission", "all-jobs"])
def test_the_fallback_bound_is_the_least_named_one_and_never_below_the_optimum(monkeypatch, variant):
    checked = 0
    for k in range(CASES):
        inst = random_tenant_instance(np.random.default_rng([7, k]))
        truth = bruteforce.astraea_opt(inst, variant=variant)
        if truth is None:        # no schedule runs every job
            continue
        values = relaxation_values(inst, variant)
        assert min(values.values()) >= truth - TOL * max(1.0, abs(truth)), (k, values, truth)
        with monkeypatch.context() as patch:
            stopped_milp(patch)
            report = exact_astraea(inst, variant=variant)
        if report.solver == "none":      # no column: nothing to solve, OPT = 0
            assert report.status is Status.OPTIMAL and report.bound == 0.0 == truth
            continue
        source = min(values, key=values.get)
        assert report.bound == pytest.approx(values[source], abs=TOL) and report.bound_source == source, k
        assert report.bound >= truth - TOL * max(1.0, abs(truth))
        # the incumbent, if any, is the UB-POOL-guided schedule: checked, never above OPT
        assert report.objective is None or report.objective <= truth + TOL * max(1.0, abs(truth))
        proven = report.objective is not None and report.gap <= exact_module.EXACT_REL_GAP
        assert report.status is (Status.OPTIMAL if proven else
                                 Status.FEASIBLE if report.objective is not None else Status.NO_SOLUTION)
        checked += 1
    assert checked >= CASES // 2


def test_a_tighter_milp_bound_is_kept_and_named(monkeypatch):
    inst = generate_astraea(jobs=3, servers=2, users=2, profile="small", seed=1)
    least = min(relaxation_values(inst, "admission").values())
    stopped_milp(monkeypatch, bound=least - 0.5)
    report = exact_astraea(inst)
    assert report.bound == pytest.approx(least - 0.5) and report.bound_source == "milp"


def test_the_job_wise_bound_is_each_job_on_its_best_column():
    inst = random_tenant_instance(np.random.default_rng([7, 3]))
    horizon = astraea.offline_horizon(inst, "admission")
    best = [max([inst.realized(job, t0 + c.duration - 1) for c in astraea.configurations(inst, job)
                 for t0 in astraea.start_slots(inst, job, c, horizon)], default=0.0) for job in inst.jobs]
    assert astraea.jobwise_bound(inst) == pytest.approx(sum(max(0.0, b) for b in best))


def test_an_incumbent_that_meets_a_fallback_bound_is_proven(monkeypatch):
    """A run's schedule as the start and a MILP that stops: when the start scores UB-POOL's value
    (every job at its best, as on an uncrowded cluster), the call reports it optimal."""
    proven_count = 0
    for seed in range(6):
        inst = generate_astraea(jobs=3, servers=6, users=2, profile="small", seed=seed)
        truth = exact_astraea(inst, verify=False)
        assert truth.status is Status.OPTIMAL
        with monkeypatch.context() as patch:
            stopped_milp(patch)
            report = exact_astraea(inst, starts=[truth.schedule])
        assert report.objective == pytest.approx(truth.objective, abs=TOL)
        assert report.bound >= truth.objective - TOL
        proven = report.bound - truth.objective <= exact_module.EXACT_REL_GAP * max(1.0, abs(truth.objective))
        assert (report.status is Status.OPTIMAL) == proven and report.bound_source is not None
        proven_count += proven
    assert proven_count >= 1


def test_a_time_limited_call_logs_its_steps_and_has_a_bound():
    inst = generate_astraea(jobs=10, servers=20, users=2, profile="small", seed=0)
    report = exact_astraea(inst, time_limit=2.0, verify=False)
    names = [step.name for step in report.steps]
    assert names[:3] == ["ub-pool", "ub-pool-guided schedule", "starts"]
    assert report.bound is not None and np.isfinite(report.bound) and report.bound_source is not None
    assert report.bound <= astraea.jobwise_bound(inst) + TOL
    if report.status is not Status.OPTIMAL:
        assert {"build", "milp", "lp relaxation"} <= set(names)


@pytest.mark.parametrize("variant", ["admission", "all-jobs"])
def test_the_ub_pool_guided_schedule_passes_the_checker_and_never_beats_the_optimum(variant):
    for k in range(CASES):
        inst = random_tenant_instance(np.random.default_rng([8, k]))
        built = astraea.build(inst, variant="ub-pool")
        if not len(built.model.x):
            continue
        exact_module.solve(built)
        values = {key: var.value or 0.0 for key, var in built.model.x.items()}
        horizon = astraea.offline_horizon(inst, variant)
        schedule = pool_guided_schedule(inst, horizon, values, variant)
        assert check(inst, schedule, horizon) == [], k
        truth = bruteforce.astraea_opt(inst, variant=variant)
        if truth is not None and (variant == "admission" or schedule.start.all()):
            assert realized_utilities(inst, schedule).sum() <= truth + TOL * max(1.0, abs(truth))


def test_on_an_uncrowded_cluster_the_guided_schedule_meets_ub_pool_and_needs_no_milp():
    inst = generate_astraea(jobs=10, servers=20, users=2, profile="small", seed=0)
    report = exact_astraea(inst, time_limit=60, verify=False)
    pool = exact_astraea(inst, variant="ub-pool").objective
    assert report.status is Status.OPTIMAL and report.bound_source == "ub-pool"
    assert report.objective == pytest.approx(pool, rel=1e-9) and "milp" not in [s.name for s in report.steps]
    assert check(inst, report.schedule, astraea.offline_horizon(inst, "admission")) == []
    assert realized_utilities(inst, report.schedule).sum() == pytest.approx(report.objective)


def test_a_claim_no_schedule_scores_is_solved_again_without_the_start():
    """All-jobs case 1 of the differential (seed 0): with the UB-POOL-guided start, HiGHS 1.16
    with presolve claimed 8 for a schedule that scores 4 (the brute force's optimum); the call
    solves again without the start and returns the optimum, cross-certified."""
    from mlsched.differential import GENERATORS

    inst = GENERATORS["astraea-poff-alljobs"](np.random.default_rng([0, 1]))
    truth = bruteforce.astraea_opt(inst, variant="all-jobs")
    report = exact_astraea(inst, variant="all-jobs", verify=True)
    assert report.status is Status.OPTIMAL and report.verified
    assert report.objective == pytest.approx(truth, abs=TOL)


def test_a_relaxation_with_a_spent_time_limit_still_answers():
    inst = generate_astraea(jobs=3, servers=2, users=2, profile="small", seed=1)
    for kwargs in ({"relax": True}, {"variant": "ub-pool"}):
        report = exact_astraea(inst, time_limit=1e-9, **kwargs)
        assert report.status in (Status.OPTIMAL, Status.NO_SOLUTION), kwargs
