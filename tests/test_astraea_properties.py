"""Astraea's invariants on random small instances (spec §7.6): FEAS, batching, BSI-1, GC, NFR,
ACCT, mu > 0, determinism, SP-1 on frozen states, and REV <= OPT(admission) <= LP, UB-POOL."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from astraea_builders import random_instance

from mlsched.instance.multi_tenant import duration
from mlsched.instance.utility import Affine
from mlsched.online.astraea import Astraea, RoundView, best_candidate, job_shape
from mlsched.sim.multi_tenant_check import check, realized_utilities
from mlsched.study import solve_exact

SEEDS = range(200)


def run_of(seed: int):
    inst = random_instance(seed)
    return inst, Astraea().run(inst)


@pytest.mark.parametrize("seed", SEEDS)
def test_hard_invariants(seed):
    inst, run = run_of(seed)
    s = run.schedule
    assert check(inst, s, online=True) == []                                        # FEAS
    lam = run.constants.rounds
    ends = s.completions(inst)
    q_w = np.array([t.workers for t in inst.tenants])
    q_p = np.array([t.ps for t in inst.tenants])
    for j, job in enumerate(inst.jobs):
        if not s.start[j]:
            assert run.phase[j] == 0 and run.payments[j].sum() == 0
            continue
        batch, rnd = int(run.batch[j]), int(run.round[j])
        tau = 2 ** batch
        arrival_batch = 1 if job.arrival <= 2 else int(np.ceil(np.log2(job.arrival)))
        assert batch >= arrival_batch and s.start[j] >= lam * 2 ** arrival_batch + 1 > job.arrival  # batching
        rho0 = (lam + rnd - 1) * tau
        assert rho0 < s.start[j] <= ends[j] <= rho0 + tau                          # inside its round
        assert run.mu[j] > 0 and run.mu[j] == pytest.approx(run.ideal[j] - run.cost[j])
        assert run.ideal[j] == pytest.approx(float(job.utility.value(ends[j] - rho0)))
    owners = np.array([job.owner for job in inst.jobs])
    last = int(ends.max(initial=0))
    for t in range(1, last + 1):                                                     # BSI-1
        active = (s.start > 0) & (s.start <= t) & (ends >= t) & (run.phase == 1)
        for u in range(len(inst.tenants)):
            mine = active & (owners == u)
            assert s.workers[mine].sum() <= q_w[u] and s.ps[mine].sum() <= q_p[u]
    for j, pay in run.shared.items():                                                # GC and NFR
        assert run.phase[j] == 2
        assert pay.rho.sum(axis=0) == pytest.approx(pay.cost_w + pay.cost_p)
        assert (pay.rho >= -1e-12).all()
        expected = (pay.unused_w / pay.unused_w.sum(axis=0) * pay.cost_w
                    + pay.unused_p / pay.unused_p.sum(axis=0) * pay.cost_p)
        assert pay.rho == pytest.approx(expected)
        assert run.cost[j] == pytest.approx(pay.cost_w.sum() + pay.cost_p.sum())
    assert set(run.shared) == set(np.flatnonzero(run.phase == 2))
    assert (run.paid[run.phase != 2] == 0).all()
    utilities = realized_utilities(inst, s)
    assert run.gains(inst).sum() == pytest.approx(utilities.sum())                   # ACCT
    again = Astraea().run(inst)                                                      # determinism
    assert (again.schedule.start == s.start).all() and (again.schedule.workers == s.workers).all()
    assert (again.schedule.ps == s.ps).all() and (again.payments == run.payments).all()


@pytest.mark.parametrize("seed", range(12))
def test_revenue_below_the_offline_optimum_and_its_bounds(seed):
    inst = random_instance(seed, slope=(2.0, 6.0))
    run = Astraea().run(inst)
    revenue = float(realized_utilities(inst, run.schedule).sum())
    opt = solve_exact(inst, variant="admission", verify=True)
    assert opt.status.value == "optimal" and opt.verified is not False
    lp = solve_exact(inst, variant="admission", relax=True).objective
    pool = solve_exact(inst, variant="ub-pool").objective
    assert revenue <= opt.objective + 1e-6 and opt.objective <= lp + 1e-6 and opt.objective <= pool + 1e-6


def random_view(rng, inst, tau):
    n = len(inst.servers)
    h_w = rng.integers(0, inst.worker_capacity[:, None] + 1, size=(n, tau))
    h_p = rng.integers(0, inst.ps_capacity[:, None] + 1, size=(n, tau))
    return RoundView(free_w=inst.worker_capacity[:, None] - h_w, free_p=inst.ps_capacity[:, None] - h_p,
                     quota_w=rng.integers(0, 6, size=tau), quota_p=rng.integers(0, 3, size=tau),
                     eta_w=rng.uniform(0, 5, size=tau), eta_p=rng.uniform(0, 5, size=tau))


@pytest.mark.parametrize("seed", range(40))
def test_sp1_no_misreport_beats_the_truth_at_frozen_prices(seed):
    """SP-1 (§4.2) with the W_eff rule: a misreport's schedule, run by the true job, is no better."""
    rng = np.random.default_rng(seed)
    inst = random_instance(1000 + seed, max_jobs=3)
    ratio = inst.worker_bandwidth / inst.ps_bandwidth
    for _ in range(25):
        true_job = inst.jobs[int(rng.integers(inst.num_jobs))]
        tau = int(2 ** rng.integers(1, 5))
        view = random_view(rng, inst, tau)
        truth = best_candidate(job_shape(true_job), view, bandwidth_ratio=ratio)
        honest = truth.mu if truth is not None else 0.0
        kind = rng.integers(3)
        if kind == 0:
            lie = dataclasses.replace(true_job, utility=Affine(true_job.utility.k * rng.uniform(0.2, 5),
                                                               true_job.utility.g * rng.uniform(0.2, 5)))
        elif kind == 1:
            lie = dataclasses.replace(true_job, epochs=int(rng.integers(1, 4)))
        else:
            lie = dataclasses.replace(true_job, chunks=int(rng.integers(1, 7)))
        chosen = best_candidate(job_shape(lie), view, bandwidth_ratio=ratio)
        if chosen is None:
            continue
        w_eff = min(chosen.workers, true_job.chunks)
        d_true = duration(true_job, w_eff, chosen.centralized)
        if d_true > chosen.duration:
            surplus = -chosen.cost
        else:
            surplus = float(true_job.utility.value(chosen.offset + d_true - 1)) - chosen.cost
        assert surplus <= honest + 1e-9
