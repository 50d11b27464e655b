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
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob, duration
from mlsched.instance.utility import Affine
from mlsched.online.astraea.parameters import worker_cap
from mlsched.online.astraea.placement import Candidate, RoundView, best_candidate, job_shape
from mlsched.online.astraea.policy import Astraea, AstraeaRun, RoundState
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
        first_batch = arrival_batch(job.arrival)
        bad["batching"] += int(not (run.batch[j] >= first_batch and s.start[j] >= lam * 2 ** first_batch + 1
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


def arrival_batch(arrival: int) -> int:
    """The batch l whose interval (tau_{l-1}, tau_l] holds the arrival (l = 1: r_j <= 2)."""
    return 1 if arrival <= 2 else int(np.ceil(np.log2(arrival)))


@dataclass
class Call:
    """One A_maxIrev call replayed from a run: its round, phase and jobs, and the round's state after it."""

    batch: int
    round: int
    phase: int
    jobs: list[int]            # the call's input, in order
    admitted: list[int]
    state: RoundState          # after the call (until the next call is drawn: the replay goes on with it)
    prices_ok: list[bool]      # per admitted job: the "prices" check (see replay_violations)


def replay_calls(instance: MultiTenantInstance, run: AstraeaRun, policy: Astraea) -> Iterator[Call]:
    """Every A_maxIrev call of ``run`` in Alg. 2's order, rebuilt from the run's record alone: the
    jobs pending in each batch, each round's phase-1 and phase-2 inputs and admissions, and the
    round's allocations, quota use and pool after each call."""
    consts, lam = run.constants, run.constants.rounds
    durations = run.schedule.durations(instance)
    dropped = set(run.dropped)
    order = sorted((j for j in range(instance.num_jobs) if j not in dropped),
                   key=lambda j: (instance.jobs[j].arrival, instance.jobs[j].owner, j))
    for batch in range(1, run.batches + 1):
        tau = 2 ** batch
        pending = [j for j in order if arrival_batch(instance.jobs[j].arrival) <= batch
                   and (run.batch[j] == 0 or run.batch[j] >= batch)]
        for i in range(1, lam + 1):
            state = RoundState(instance, (lam + i - 1) * tau, tau, (consts.theta_w, consts.theta_p))
            seen_w, seen_p = np.zeros(tau), np.zeros(tau)
            jobs = list(pending)
            for phase in (1, 2) if policy.sharing else (1,):
                if phase == 2:
                    state.close_phase_one()
                admitted = [j for j in jobs if (run.batch[j], run.round[j], run.phase[j]) == (batch, i, phase)]
                prices_ok = []
                for j in admitted:
                    owner = instance.jobs[j].owner
                    view = state.view(owner)
                    best = _recorded_candidate(run, j, state.rho0, int(durations[j]))
                    slots = state.allocate(best, owner, phase)
                    eta_w, eta_p = view.eta_w[slots], view.eta_p[slots]
                    cost = float(eta_w.sum() * best.y.sum() + eta_p.sum() * best.z.sum())
                    prices_ok.append(not (
                        (eta_w < seen_w[slots] - TOL).any() or (eta_p < seen_p[slots] - TOL).any()
                        or (view.eta_w < -TOL).any() or (view.eta_w > consts.theta_w - 1 + TOL).any()
                        or (view.eta_p < -TOL).any() or (view.eta_p > consts.theta_p - 1 + TOL).any()
                        or (policy.mincostc_cost == "per_slot" and abs(cost - run.cost[j]) > TOL * max(1.0, cost))))
                    seen_w[slots], seen_p[slots] = eta_w, eta_p
                yield Call(batch, i, phase, jobs, admitted, state, prices_ok)
                jobs = [j for j in jobs if j not in admitted]
            pending = [j for j in pending if not (run.batch[j] == batch and run.round[j] == i)]


def replay_violations(instance: MultiTenantInstance, run: AstraeaRun, policy: Astraea) -> Counter[str]:
    """Counts of failures over the replayed calls (empty: none). "prices": an admitted job's posted
    prices fall below those an earlier admission of the round saw in the same slot, leave
    [0, theta - 1], or do not sum over its run to its recorded cost. "PE-op": after a call, a job
    it rejected has a candidate with mu > 0 against the call's final state."""
    bad: Counter[str] = Counter()
    shapes = [job_shape(job, worker_cap(job, policy.cap_by_trace_gpus)) for job in instance.jobs]
    bandwidth = (instance.worker_bandwidth, instance.ps_bandwidth)
    for call in replay_calls(instance, run, policy):
        bad["prices"] += call.prices_ok.count(False)
        for j in call.jobs:
            if j not in call.admitted:
                again = best_candidate(shapes[j], call.state.view(instance.jobs[j].owner), bandwidth=bandwidth,
                                       central_rule=policy.central_server_rule, mincostc_cost=policy.mincostc_cost)
                bad["PE-op"] += int(again is not None)
    return +bad


def _recorded_candidate(run: AstraeaRun, j: int, rho0: int, duration: int) -> Candidate:
    """The admitted job's schedule as a candidate of its round (offset from the round's start)."""
    s = run.schedule
    return Candidate(offset=int(s.start[j]) - rho0, workers=int(s.workers[j].sum()),
                     centralized=bool(s.centralized()[j]), duration=duration, value=float(run.ideal[j]),
                     cost=float(run.cost[j]), mu=float(run.mu[j]), y=s.workers[j], z=s.ps[j])


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


def sp1_surplus(true_job: TenantJob, lie: TenantJob, view: RoundView,
                bandwidth: tuple[float, float]) -> tuple[float, float] | None:
    """(the truthful mu or 0, the true job's surplus on the misreport's choice), or None when the
    misreport is not admitted. With the W_eff rule the true job runs min(W, D_j) workers; if that
    cannot finish inside the chosen window it earns nothing and still pays."""
    truth = best_candidate(job_shape(true_job), view, bandwidth=bandwidth)
    honest = truth.mu if truth is not None else 0.0
    chosen = best_candidate(job_shape(lie), view, bandwidth=bandwidth)
    if chosen is None:
        return None
    d_true = duration(true_job, min(chosen.workers, true_job.chunks), chosen.centralized)
    if d_true > chosen.duration:
        return honest, -chosen.cost
    return honest, float(true_job.utility.value(chosen.offset + d_true - 1)) - chosen.cost
