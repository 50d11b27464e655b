"""Astraea's testable properties (spec §4.2, §7.6) as counts of violations, for the test suite and
the property script alike.

* FEAS: the committed schedule passes the independent checker;
* batching: a job starts after its arrival batch's first lambda tau slots, inside the round that
  admitted it, and mu_j = ideal - cost > 0 with the ideal revenue read at the round's start;
* BSI-1: phase-1 jobs of a tenant never hold more than its quotas in a slot;
* GC / NFR: each phase-2 job's payments are non-negative, split its cost in proportion to the
  idle quota lent (Eq. 2) and sum to it; only phase-2 jobs pay;
* ACCT: the tenants' gains sum to the realized revenue;
* determinism: a second run commits the same schedule and payments.
SP-1 (one A_maxIrev call at frozen prices, the W_eff rule): :func:`sp1_surplus` gives the true job's
surplus under a misreport's chosen placement, which must not beat the truthful mu; :func:`misreport`
draws misreports of the five kinds in ``MISREPORTS`` (affine utilities).
"""

from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob, duration
from mlsched.instance.utility import Affine
from mlsched.online.astraea.placement import RoundView, best_candidate, job_shape
from mlsched.online.astraea.policy import AstraeaRun
from mlsched.sim.multi_tenant_check import check, realized_utilities

TOL = 1e-6


def violations(instance: MultiTenantInstance, run: AstraeaRun, again: AstraeaRun | None = None) -> Counter[str]:
    """How many times each property fails on one run (empty: none does); ``again`` is a second run
    of the same policy on the same instance, for determinism."""
    bad: Counter[str] = Counter()
    s = run.schedule
    bad["FEAS"] += len(check(instance, s, online=True))
    lam, ends = run.constants.rounds, s.completions(instance)
    for j, job in enumerate(instance.jobs):
        if not s.start[j]:
            bad["unscheduled pays"] += int(run.phase[j] != 0 or run.payments[j].sum() != 0)
            continue
        tau = 2 ** int(run.batch[j])
        arrival_batch = 1 if job.arrival <= 2 else int(np.ceil(np.log2(job.arrival)))
        bad["batching"] += int(not (run.batch[j] >= arrival_batch and s.start[j] >= lam * 2 ** arrival_batch + 1
                                    > job.arrival))
        rho0 = (lam + int(run.round[j]) - 1) * tau
        bad["round"] += int(not rho0 < s.start[j] <= ends[j] <= rho0 + tau)
        bad["mu"] += int(not (run.mu[j] > 0 and abs(run.mu[j] - (run.ideal[j] - run.cost[j])) <= TOL * max(1, abs(run.mu[j]))))
        bad["ideal"] += int(abs(run.ideal[j] - float(job.utility.value(ends[j] - rho0))) > TOL * max(1, abs(run.ideal[j])))
    owners = np.array([job.owner for job in instance.jobs], dtype=np.int64)
    q_w = np.array([t.workers for t in instance.tenants])
    q_p = np.array([t.ps for t in instance.tenants])
    for t in range(1, int(ends.max(initial=0)) + 1):
        active = (s.start > 0) & (s.start <= t) & (ends >= t) & (run.phase == 1)
        for u in range(len(instance.tenants)):
            mine = active & (owners == u)
            bad["BSI-1"] += int(s.workers[mine].sum() > q_w[u] or s.ps[mine].sum() > q_p[u])
    for j, pay in run.shared.items():
        expected = (pay.unused_w / pay.unused_w.sum(axis=0) * pay.cost_w
                    + pay.unused_p / pay.unused_p.sum(axis=0) * pay.cost_p)
        bad["GC"] += int(run.phase[j] != 2 or not np.allclose(pay.rho.sum(axis=0), pay.cost_w + pay.cost_p)
                         or not np.allclose(pay.rho, expected))
        bad["NFR"] += int((pay.rho < -1e-12).any())
        bad["cost"] += int(not np.isclose(run.cost[j], pay.cost_w.sum() + pay.cost_p.sum()))
    bad["GC"] += int(set(run.shared) != set(np.flatnonzero(run.phase == 2).tolist()))
    bad["NFR"] += int((run.paid[run.phase != 2] != 0).any())
    revenue = float(realized_utilities(instance, s).sum())
    bad["ACCT"] += int(abs(run.gains(instance).sum() - revenue) > TOL * max(1.0, abs(revenue)))
    if again is not None:
        same = (np.array_equal(again.schedule.start, s.start) and np.array_equal(again.schedule.workers, s.workers)
                and np.array_equal(again.schedule.ps, s.ps) and np.array_equal(again.payments, run.payments))
        bad["determinism"] += int(not same)
    return +bad


def random_view(rng: np.random.Generator, instance: MultiTenantInstance, tau: int) -> RoundView:
    """A random frozen round: residual capacities, quotas and prices over tau slots."""
    n = len(instance.servers)
    h_w = rng.integers(0, instance.worker_capacity[:, None] + 1, size=(n, tau))
    h_p = rng.integers(0, instance.ps_capacity[:, None] + 1, size=(n, tau))
    return RoundView(free_w=instance.worker_capacity[:, None] - h_w, free_p=instance.ps_capacity[:, None] - h_p,
                     quota_w=rng.integers(0, 6, size=tau), quota_p=rng.integers(0, 3, size=tau),
                     eta_w=rng.uniform(0, 5, size=tau), eta_p=rng.uniform(0, 5, size=tau))


MISREPORTS = ("utility scale", "epochs", "minibatches", "chunks below", "chunks above")


def misreport(rng: np.random.Generator, job: TenantJob, kind: str) -> TenantJob:
    """A random misreport of one kind: phi' (k and g scaled by U[0.2, 5]), the workload B' through E'
    or M' (1-3), or the demand D' below or above D_j."""
    if kind == "utility scale":
        return dataclasses.replace(job, utility=Affine(job.utility.k * rng.uniform(0.2, 5),
                                                       job.utility.g * rng.uniform(0.2, 5)))
    if kind == "epochs":
        return dataclasses.replace(job, epochs=int(rng.integers(1, 4)))
    if kind == "minibatches":
        return dataclasses.replace(job, minibatches=int(rng.integers(1, 4)))
    if kind == "chunks below":
        return dataclasses.replace(job, chunks=int(rng.integers(1, job.chunks + 1)))
    return dataclasses.replace(job, chunks=job.chunks + int(rng.integers(1, 4)))


def sp1_surplus(true_job: TenantJob, lie: TenantJob, view: RoundView, bandwidth_ratio: float) -> tuple[float, float] | None:
    """(the truthful mu or 0, the true job's surplus on the misreport's choice), or None when the
    misreport is not admitted. With the W_eff rule the true job runs min(W, D_j) workers; if that
    cannot finish inside the chosen window it earns nothing and still pays."""
    truth = best_candidate(job_shape(true_job), view, bandwidth_ratio=bandwidth_ratio)
    honest = truth.mu if truth is not None else 0.0
    chosen = best_candidate(job_shape(lie), view, bandwidth_ratio=bandwidth_ratio)
    if chosen is None:
        return None
    d_true = duration(true_job, min(chosen.workers, true_job.chunks), chosen.centralized)
    if d_true > chosen.duration:
        return honest, -chosen.cost
    return honest, float(true_job.utility.value(chosen.offset + d_true - 1)) - chosen.cost
