"""The convexified per-job subproblem and the pooled Lagrangian bound built on it: the payoff is
never below Algorithm 2's exact one (so L stays >= OPT), the schedule is feasible under the caps,
the pooled bound holds against brute force and proven optima, and ``compare`` names it as the
bound source when it is the least."""

from __future__ import annotations

import numpy as np
import pytest

import mlsched.exact as exact_module
import mlsched.list_schedule as list_schedule_module
from mlsched import bruteforce
from mlsched.cli import main
from mlsched.exact import exact_oasis
from mlsched.formulations import oasis
from mlsched.formulations.oasis_terms import SlotPrices
from mlsched.instance import load
from mlsched.instance.generators import generate_oasis
from mlsched.oasis_lagrangian import lagrangian_bound
from mlsched.oasis_relaxed_subproblem import relaxed_best_schedule
from mlsched.online.oasis.policy import job_terms
from mlsched.online.oasis.subproblem import best_schedule
from mlsched.solve import SolveReport, Status


def _random_prices(inst, i, rng, scale):
    """Random per-slot prices and random residual per-server caps of job i's slots."""
    job = inst.jobs[i]
    slots = inst.horizon - job.arrival + 1
    ycap, zcap = oasis.server_bounds(inst)
    keep_w = rng.integers(0, 2, size=(slots, ycap.shape[1]))
    keep_ps = rng.integers(0, 2, size=(slots, zcap.shape[1]))
    return SlotPrices(worker_price=rng.exponential(scale, size=(slots, ycap.shape[1])),
                      worker_cap=(np.broadcast_to(ycap[i], (slots, ycap.shape[1])) * keep_w).astype(np.int64),
                      ps_price=rng.exponential(scale, size=(slots, zcap.shape[1])),
                      ps_cap=(np.broadcast_to(zcap[i], (slots, zcap.shape[1])) * keep_ps).astype(np.int64))


@pytest.mark.parametrize("seed", range(8))
def test_payoff_is_an_upper_bound_and_the_schedule_is_feasible(seed):
    rng = np.random.default_rng(seed)
    inst = generate_oasis(jobs=6, horizon=8, seed=seed, profile="feasible")
    for i in range(inst.num_jobs):
        job = job_terms(inst, i)
        for scale in (0.0, 0.3, 3.0):
            prices = _random_prices(inst, i, rng, scale)
            exact = best_schedule(job, prices, granularity="worker_slot")
            relaxed = relaxed_best_schedule(job, prices)
            assert relaxed.payoff >= exact.payoff - 1e-9, (i, scale)
            if scale == 0.0:
                assert relaxed.payoff == pytest.approx(exact.payoff, abs=1e-12)   # zero prices: exact
            if not relaxed.admitted:
                continue
            assert np.all(relaxed.workers <= prices.worker_cap) and np.all(relaxed.ps <= prices.ps_cap)
            per_slot = relaxed.workers.sum(axis=1)
            assert per_slot.max() <= job.chunks and np.array_equal(per_slot, relaxed.units)
            assert np.array_equal(relaxed.ps.sum(axis=1), job.ps_needed(per_slot))
            assert per_slot.sum() >= job.workload - 1e-9
            assert not per_slot[relaxed.completion - job.arrival + 1:].any()      # nothing after t_hat
            cost = float((prices.worker_price * relaxed.workers).sum() + (prices.ps_price * relaxed.ps).sum())
            assert relaxed.cost <= cost + 1e-9                                     # cost' is a minorant
            assert job.utility[relaxed.completion - job.arrival] - cost <= exact.payoff + 1e-9


@pytest.mark.parametrize("variant", oasis.VARIANTS)
def test_pooled_bound_holds_against_brute_force(variant):
    below_jobwise = 0
    for seed in range(8):
        inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
        truth = bruteforce.oasis_opt(inst, variant=variant)
        result = lagrangian_bound(inst, variant, pooled=True, target=truth, iterations=30)
        assert result.evaluated >= 1 and result.payoff.shape == (inst.num_jobs,)
        assert result.bound >= truth - 1e-6, (seed, result.bound, truth)
        assert result.bound <= oasis.jobwise_bound(inst, variant) + 1e-9    # zero prices come first
        below_jobwise += result.bound < oasis.jobwise_bound(inst, variant) - 1e-6
    assert below_jobwise > 0


def test_pooled_bound_holds_against_proven_optima():
    for seed in range(3):
        inst = generate_oasis(jobs=10, horizon=10, seed=seed, profile="feasible")
        proven = exact_oasis(inst, time_limit=120)
        assert proven.status is Status.OPTIMAL
        result = lagrangian_bound(inst, "paper", pooled=True, target=proven.objective, iterations=40)
        assert proven.objective - 1e-6 <= result.bound <= oasis.jobwise_bound(inst) + 1e-9


def test_compare_names_the_lagrangian_bound(monkeypatch, capsys, tmp_path):
    """A program beyond certification whose LP relaxation, MILP and window LP all stop without an
    answer: the pooled Lagrangian bound is the least candidate, the interval holds the proven
    optimum, and compare prints its label."""
    path = tmp_path / "inst.json"
    assert main(["generate", "oasis", "--jobs", "8", "--horizon", "8", "--seed", "1", "--profile", "feasible",
                 "-o", str(path)]) == 0
    inst = load(path)
    proven = exact_oasis(inst, time_limit=120)
    assert proven.status is Status.OPTIMAL
    monkeypatch.setattr(exact_module, "VERIFY_MAX_INTEGERS", 0)
    monkeypatch.setattr(exact_module, "LAGRANGIAN_COLUMNS", 0)

    def stopped(program, **kwargs):
        return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 1.0, "highs", not program.integer,
                           message="stopped (time limit) without a solution")

    monkeypatch.setattr(exact_module, "solve_arrays", stopped)
    monkeypatch.setattr(list_schedule_module, "solve_arrays", stopped)
    report = exact_oasis(inst, time_limit=30)
    assert report.bound_source == "lagrangian" and report.bound < oasis.jobwise_bound(inst) - 1e-6
    assert report.objective <= proven.objective + 1e-9 <= report.bound + 2e-9
    capsys.readouterr()
    assert main(["compare", str(path), "--algorithms", "oasis,fifo", "--time-limit", "30"]) == 0
    assert "bound: lagrangian" in capsys.readouterr().out
