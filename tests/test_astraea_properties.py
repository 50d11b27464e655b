"""Astraea's invariants on 200 random small instances (spec §7.6; U <= 3, S <= 6, N <= 10): FEAS,
batching, BSI-1, GC, NFR, ACCT, mu > 0, determinism, posted prices and PE-op on the replayed calls,
SP-1 on frozen states, and REV <= OPT(admission) <= LP, UB-POOL."""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np
import pytest
from mlsched.instance.generators.astraea import tiny_astraea

from mlsched.online.astraea import Astraea
from mlsched.online.astraea.invariants import (
    MISREPORTS, misreport, random_view, replay_violations, sp1_surplus, violations)
from mlsched.sim.multi_tenant_check import realized_utilities
from mlsched.study import solve_exact

SEEDS = range(200)


def run_of(seed: int):
    inst = tiny_astraea(seed)
    return inst, Astraea().run(inst)


@pytest.mark.parametrize("seed", SEEDS)
def test_hard_invariants(seed):
    """FEAS, batching, rounds, mu > 0, BSI-1, GC, NFR, ACCT, determinism, and on the replayed calls
    posted prices that never fall within a round and stay in [0, theta - 1] and PE-op (none may fail)."""
    inst, run = run_of(seed)
    assert violations(inst, run, Astraea().run(inst)) == Counter()
    assert replay_violations(inst, run, Astraea()) == Counter()


def test_replay_catches_a_wrong_cost_and_a_wrongly_rejected_job():
    inst = tiny_astraea(3)
    run = Astraea().run(inst)
    admitted = np.flatnonzero(run.phase > 0)
    assert admitted.size
    overcharged = dataclasses.replace(run, cost=run.cost + 1.0)
    assert replay_violations(inst, overcharged, Astraea())["prices"] == admitted.size
    first = int(admitted[0])
    dropped = dataclasses.replace(run, batch=run.batch.copy(), round=run.round.copy(), phase=run.phase.copy(),
                                  schedule=dataclasses.replace(run.schedule, start=run.schedule.start.copy()))
    dropped.batch[first] = dropped.round[first] = dropped.phase[first] = dropped.schedule.start[first] = 0
    assert replay_violations(inst, dropped, Astraea())["PE-op"] >= 1


def test_invariant_counts_catch_a_broken_run():
    inst, run = run_of(3)
    assert run.schedule.start.any()
    broken = dataclasses.replace(run, mu=-run.mu, schedule=dataclasses.replace(
        run.schedule, workers=run.schedule.workers * 10))
    found = violations(inst, broken)
    assert found["mu"] > 0 and found["FEAS"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_revenue_below_the_offline_optimum_and_its_bounds(seed):
    """Utilities steep enough (g / |k| <= 25 slots) and N <= 6 keep P-OFF's horizon and solve short;
    every twentieth optimum is cross-certified by SCIP."""
    inst = tiny_astraea(seed, max_jobs=6, slope=(4.0, 10.0))
    run = Astraea().run(inst)
    revenue = float(realized_utilities(inst, run.schedule).sum())
    opt = solve_exact(inst, variant="admission", verify=seed % 20 == 0)
    assert opt.status.value == "optimal" and opt.verified is not False
    lp = solve_exact(inst, variant="admission", relax=True).objective
    pool = solve_exact(inst, variant="ub-pool").objective
    assert revenue <= opt.objective + 1e-6 and opt.objective <= lp + 1e-6 and opt.objective <= pool + 1e-6


@pytest.mark.parametrize("seed", SEEDS)
def test_sp1_no_misreport_beats_the_truth_at_frozen_prices(seed):
    """SP-1 (§4.2) with the W_eff rule: a misreport's schedule, run by the true job, is no better."""
    rng = np.random.default_rng(seed)
    inst = tiny_astraea(1000 + seed, max_jobs=3)
    bandwidth = (inst.worker_bandwidth, inst.ps_bandwidth)
    for _ in range(10):
        true_job = inst.jobs[int(rng.integers(inst.num_jobs))]
        tau = int(2 ** rng.integers(1, 5))
        view = random_view(rng, inst, tau)
        lie = misreport(rng, true_job, MISREPORTS[int(rng.integers(len(MISREPORTS)))])
        result = sp1_surplus(true_job, lie, view, bandwidth)
        if result is None:
            continue
        honest, surplus = result
        assert surplus <= honest + 1e-9
