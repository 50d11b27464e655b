r"""Astraea (Wang et al., IEEE TC 2023): the online batch framework (Alg. 1), round-by-round
scheduling of a batch (Alg. 2), posted-price admission (Alg. 3) and Eq. (2) payments (spec §3, §1.6).

Alg. 1  tau_l = 2^l. Batch l collects the jobs left over and those with tau_{l-1} < r_j <= tau_l
        (l = 1: r_j <= 2), ordered by (r_j, owner, index), and schedules them in the window
        (lambda tau_l, lambda tau_{l+1}]; what it does not admit waits for batch l + 1. Jobs no
        configuration of K_j^fit makes worth running are dropped (A21); batches stop when nothing is
        pending or to come, or after ``max_batches`` (L_max).
Alg. 2  round i = 1..lambda covers slots (lambda + i - 1) tau_l + 1 .. (lambda + i) tau_l.
        Phase 1: A_maxIrev over the pending jobs, each tenant within its own quota (a = 0).
        Then a_w(t) = sum_u (q_w^u - Uw^u(t)) (and a_p), the quota its phase-1 jobs leave unused.
        Phase 2: A_maxIrev over the rest on the pooled unused resources; each admitted job pays its
        posted prices, c_jw(t) = eta_w(t) W and c_jp(t) = eta_p(t) P, split among the tenants by
        rho^u_j(t) = unused_w^u(t) / a_w(t) c_jw(t) + unused_p^u(t) / a_p(t) c_jp(t)   (Eq. 2).
Alg. 3  jobs in order; each takes its best candidate (:mod:`.placement`) when mu > 0 at the prices
        eta(t) = theta^(h(t) / C_tot) - 1 posted before its own allocation (Eq. 8), which then
        raise h(t) and, in phase 1, the owner's quota use Uw^u(t), Up^u(t).

Rounds use disjoint slots, so each starts from an empty cluster. ``sharing=False`` skips phase 2
(BatchSche's per-tenant runs, spec §5.2).

Exact skips (``lazy``, the default; ``lazy=False`` is the full re-scan they are tested against).
What a job's enumeration (:func:`.placement.best_candidate`) finds is fixed, within a batch, by the
admissions before it in its round: the round starts from an empty cluster over the same tau; each
admission's placement is a function of the view it was enumerated at; the pool a_w, a_p is phase 1's
admissions'; the enumeration reads only the view of the job's first span(tau) slots (free capacity,
quota bounds, prices by offset, not rho0) and phi_j(t^+ - rho0), a function of the offset alone
(the held width, the pending list's largest span, changes nothing a view shows). Hence:
  1. a job rejected at the same admissions earlier in the batch (phase 1: the call's admissions so
     far; phase 2: the round's phase-1 admissions, then the call's) is rejected again without
     being enumerated: e.g. every job before the previous round's first admission;
  2. once a round admits nothing, the batch ends: round i + 1 gets the same pending list (nothing
     left it) and, by induction over the list with (1), every job of both phases is rejected
     again at the same views, so every later round repeats round i.
A batch's record (schedules, mu, prices, payments, batch and round numbers) is written by
admissions only, so it is unchanged; only rejections already known are skipped (the idle rounds of
Lemma 1's lambda, dozens per batch, were nearly all of its cost).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.online.astraea.parameters import (
    Constants, best_ideal_utility, constants, fitting_configurations, posted_prices, worker_cap)
from mlsched.online.astraea.placement import (
    CENTRAL_SERVER_RULES, MINCOSTC_COSTS, Candidate, JobShape, RoundView, WindowMinimum, best_candidate, job_shape,
    load_minimum, price_sums)
from mlsched.sim.multi_tenant_check import TenantSchedule, realized_utilities
from mlsched.tenant_metrics import mean_utilization, summary, tenant_gains

# free_w, free_p, eta_w, eta_p, their window minima and the price sums (RoundView's fields) over a round's first slots
Capacity = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, WindowMinimum, WindowMinimum,
                 tuple[np.ndarray, np.ndarray]]
# a job, the phase and the admissions before it in its round (phase 1's, then its own call's): with
# the batch, they fix what the job's enumeration sees (module docstring)
Admissions = tuple[int, int, tuple[int, ...], tuple[int, ...]]
# quota_w, quota_p and their window minima (RoundView's fields) of one owner over a round's first slots
Quota = tuple[np.ndarray, np.ndarray, WindowMinimum]


@dataclass
class SharedPayment:
    """Eq. (2) for one phase-2 job, per slot of its run."""

    slots: np.ndarray      # (d,) absolute slots
    cost_w: np.ndarray     # (d,) c_jw(t)
    cost_p: np.ndarray     # (d,) c_jp(t)
    unused_w: np.ndarray   # (U, d) q_w^u - Uw^u(t) after phase 1
    unused_p: np.ndarray   # (U, d)
    rho: np.ndarray        # (U, d) rho^u_j(t)


def shared_payment(cost_w: np.ndarray, cost_p: np.ndarray, unused_w: np.ndarray, unused_p: np.ndarray,
                   slots: np.ndarray) -> SharedPayment:
    """Eq. (2): each slot's worker and PS cost split in proportion to the tenants' unused quota,
    a_w(t) = sum_u unused_w^u(t) (a phase-2 job uses at least one of each, so a > 0)."""
    rho = unused_w / unused_w.sum(axis=0) * cost_w + unused_p / unused_p.sum(axis=0) * cost_p
    return SharedPayment(slots=slots, cost_w=cost_w, cost_p=cost_p, unused_w=unused_w, unused_p=unused_p, rho=rho)


@dataclass
class AstraeaRun:
    """A run: the committed schedule and everything Alg. 1-3 decided along the way."""

    algorithm: str
    schedule: TenantSchedule
    phase: np.ndarray          # (J,) 1 or 2 for admitted jobs, 0 otherwise
    batch: np.ndarray          # (J,) l of the admitting batch, 0 if never admitted
    round: np.ndarray          # (J,) i of the admitting round
    mu: np.ndarray             # (J,) mu*_j at admission
    ideal: np.ndarray          # (J,) phi_j(t^+ - rho0)
    cost: np.ndarray           # (J,) c_jw + c_jp (the virtual cost for phase-1 jobs)
    payments: np.ndarray       # (J, U) sum_t rho^u_j(t)
    shared: dict[int, SharedPayment]
    dropped: list[int]         # hopeless jobs (A21)
    constants: Constants
    batches: int = 0
    time_origin: str = "arrival"   # the realized utilities' origin the run was scored with (A2)
    wall_seconds: float = 0.0
    call_seconds: list[float] = field(default_factory=list)   # every A_maxIrev call

    @property
    def paid(self) -> np.ndarray:
        """c_jw + c_jp actually charged: phase-2 jobs only."""
        return np.where(self.phase == 2, self.cost, 0.0)

    def utilities(self, instance: MultiTenantInstance) -> np.ndarray:
        """f_j(t_j^+) realized (0 for jobs not run), from the run's time origin."""
        return realized_utilities(dataclasses.replace(instance, time_origin=self.time_origin), self.schedule)

    def gains(self, instance: MultiTenantInstance) -> np.ndarray:
        """g_u with the Eq. (2) transfers (§1.6)."""
        return tenant_gains(instance, self.utilities(instance), self.paid, self.payments)

    def summary(self, instance: MultiTenantInstance) -> dict[str, Any]:
        schedule = self.schedule
        ran = schedule.start > 0
        ends = schedule.completions(instance)
        util = mean_utilization(instance, schedule.start, ends, schedule.workers.sum(axis=1))
        row = summary(instance, self.utilities(instance), ran, util, int(ends.max(initial=0)), self.gains(instance))
        calls = np.array(self.call_seconds) if self.call_seconds else np.zeros(1)
        return {**row, "phase1": int((self.phase == 1).sum()), "phase2": int((self.phase == 2).sum()),
                "dropped": len(self.dropped), "payments": float(self.paid.sum()), "batches": self.batches,
                "lambda": self.constants.rounds, "theta_w": self.constants.theta_w,
                "theta_p": self.constants.theta_p, "time_origin": self.time_origin, "wall_seconds": self.wall_seconds,
                "seconds_per_job": self.wall_seconds / max(1, instance.num_jobs),
                "call_median_seconds": float(np.median(calls)), "call_p95_seconds": float(np.percentile(calls, 95))}


class RoundState:
    """The state of one round: allocations h, phase-1 quota use U, the pool a (Alg. 2 line 1).

    Only the round's first ``width`` slots are held (default: all tau): a round whose jobs can
    complete with phi > EPS only in its first slots (:meth:`JobShape.span`) never allocates beyond
    them, while tau doubles with every batch (2^25 slots by batch 25)."""

    def __init__(self, instance: MultiTenantInstance, rho0: int, tau: int, theta: tuple[float, float],
                 width: int | None = None):
        n_servers, n_tenants = len(instance.servers), len(instance.tenants)
        self.instance, self.rho0, self.tau, self.theta = instance, rho0, tau, theta
        self.width = tau if width is None else min(tau, width)
        self.cap_w, self.cap_p = instance.worker_capacity, instance.ps_capacity
        self.h_w = np.zeros((n_servers, self.width), dtype=np.int64)
        self.h_p = np.zeros((n_servers, self.width), dtype=np.int64)
        self.used_w = np.zeros((n_tenants, self.width), dtype=np.int64)
        self.used_p = np.zeros((n_tenants, self.width), dtype=np.int64)
        self.pool_w = np.zeros(self.width, dtype=np.int64)
        self.pool_p = np.zeros(self.width, dtype=np.int64)
        self.quota_w = np.array([t.workers for t in instance.tenants], dtype=np.int64)
        self.quota_p = np.array([t.ps for t in instance.tenants], dtype=np.int64)
        self._capacities: dict[int, Capacity] = {}
        self._quotas: dict[tuple[int, int], Quota] = {}

    def prices(self, cut: slice = slice(None)) -> tuple[np.ndarray, np.ndarray]:
        """eta_w(t), eta_p(t) over the round's slots (or the ``cut`` of them)."""
        return (posted_prices(self.theta[0], self.h_w[:, cut].sum(axis=0), int(self.cap_w.sum())),
                posted_prices(self.theta[1], self.h_p[:, cut].sum(axis=0), int(self.cap_p.sum())))

    def _capacity(self, span: int) -> Capacity:
        """Free capacity, prices and their window minima over the first ``span`` slots: owner-blind,
        so kept for every job until the next allocation."""
        if span not in self._capacities:
            cut = slice(0, span)
            free_w, free_p = self.cap_w[:, None] - self.h_w[:, cut], self.cap_p[:, None] - self.h_p[:, cut]
            eta_w, eta_p = self.prices(cut)
            self._capacities[span] = (free_w, free_p, eta_w, eta_p, WindowMinimum(free_w, free_p),
                                      load_minimum(free_w, free_p), price_sums(eta_w, eta_p))
        return self._capacities[span]

    def _quota(self, owner: int, span: int) -> Quota:
        """The owner's quota bounds and their window minima over the first ``span`` slots: kept until
        the owner's quota use or the pool changes (phase-1 allocations of the owner, phase 1's close)."""
        if (owner, span) not in self._quotas:
            quota_w = np.maximum(self.quota_w[owner] - self.used_w[owner, :span], self.pool_w[:span])
            quota_p = np.maximum(self.quota_p[owner] - self.used_p[owner, :span], self.pool_p[:span])
            self._quotas[owner, span] = (quota_w, quota_p, WindowMinimum(quota_w[None, :], quota_p[None, :]))
        return self._quotas[owner, span]

    def view(self, owner: int, span: int | None = None) -> RoundView:
        """What a job of ``owner`` sees of the round's first ``span`` slots (default: all held)."""
        if span is not None and span > self.width:
            raise ValueError(f"a view of {span} slots of a round holding {self.width}")
        span = self.width if span is None else span
        free_w, free_p, eta_w, eta_p, free_minimum, load, sums = self._capacity(span)
        quota_w, quota_p, quotas = self._quota(owner, span)
        return RoundView(free_w=free_w, free_p=free_p, quota_w=quota_w, quota_p=quota_p, eta_w=eta_w, eta_p=eta_p,
                         free_minimum=free_minimum, load_minimum=load, quota_minimum=quotas, price_sums=sums)

    def close_phase_one(self) -> None:
        """a_w(t), a_p(t): the quota phase-1 jobs left unused (Alg. 2 line 4)."""
        self.pool_w = (self.quota_w[:, None] - self.used_w).sum(axis=0)
        self.pool_p = (self.quota_p[:, None] - self.used_p).sum(axis=0)
        self._quotas.clear()

    def allocate(self, best: Candidate, owner: int, phase: int) -> slice:
        """Raise h over the candidate's run (Alg. 3 line 14) and, in phase 1, the owner's quota use;
        the run's columns."""
        run = slice(best.offset - 1, best.offset - 1 + best.duration)
        self._capacities.clear()
        self.h_w[:, run] += best.y[:, None]
        self.h_p[:, run] += best.z[:, None]
        if phase == 1:
            self.used_w[owner, run] += int(best.y.sum())
            self.used_p[owner, run] += int(best.z.sum())
            self._quotas = {key: quota for key, quota in self._quotas.items() if key[0] != owner}
        return run


class Astraea:
    """Astraea's online mechanism; ``run(instance)`` gives an :class:`AstraeaRun`.

    Options (spec §8): ``lambda_mode`` ("fixed" or "theory"), ``lambda_fixed``, ``theta`` (a fixed
    (theta_w, theta_p), else §3.1's), ``theta_scale``, ``log_base`` of sigma, ``central_server_rule``,
    ``mincostc_cost``, ``max_batches`` (L_max), ``cap_by_trace_gpus`` (astraea_cap_by_trace_gpus, A13:
    W = 1..min(g_j^tr, D_j) instead of 1..D_j) and ``sharing`` (phase 2 on or off). ``lazy=False``
    runs every round of a batch and enumerates every pending job at every call: the full re-scan the
    exact skips of the module docstring are tested against (same run record). The instance carries
    ``time_origin`` and ``release_inclusive``.
    """

    def __init__(self, *, lambda_mode: str = "fixed", lambda_fixed: int = 2, theta: tuple[float, float] | None = None,
                 theta_scale: float = 1.0, log_base: str = "e", central_server_rule: str = "best_fit",
                 mincostc_cost: str = "per_slot", max_batches: int = 40, cap_by_trace_gpus: bool = False,
                 sharing: bool = True, lazy: bool = True, name: str = "astraea"):
        if central_server_rule not in CENTRAL_SERVER_RULES:
            raise UsageError(f"central_server_rule must be one of {', '.join(CENTRAL_SERVER_RULES)}")
        if mincostc_cost not in MINCOSTC_COSTS:
            raise UsageError(f"mincostc_cost must be one of {', '.join(MINCOSTC_COSTS)}")
        if max_batches < 1:
            raise UsageError(f"max_batches must be at least 1, not {max_batches}")
        self.options = {"lambda_mode": lambda_mode, "lambda_fixed": lambda_fixed, "theta": theta,
                        "theta_scale": theta_scale, "log_base": log_base}
        self.central_server_rule, self.mincostc_cost = central_server_rule, mincostc_cost
        self.max_batches, self.sharing, self.name = max_batches, sharing, name
        self.cap_by_trace_gpus, self.lazy = cap_by_trace_gpus, lazy

    def configure(self, *, lambda_mode: str | None = None, theta_scale: float | None = None) -> None:
        """Override the rounds-per-batch mode or the theta scale after construction."""
        if lambda_mode is not None:
            self.options["lambda_mode"] = lambda_mode
        if theta_scale is not None:
            self.options["theta_scale"] = theta_scale

    def run(self, instance: MultiTenantInstance, *,
            on_progress: Callable[[int, int], None] | None = None) -> AstraeaRun:
        """The mechanism over ``instance``; ``on_progress`` hears (jobs admitted or dropped, jobs in
        all) after every round."""
        tick = time.perf_counter()
        fit = [fitting_configurations(instance, job, self.cap_by_trace_gpus) for job in instance.jobs]
        consts = constants(instance, fit, **self.options)
        n_jobs, n_tenants = instance.num_jobs, len(instance.tenants)
        record = AstraeaRun(
            algorithm=self.name, schedule=TenantSchedule.empty(instance, self.name),
            phase=np.zeros(n_jobs, dtype=np.int64), batch=np.zeros(n_jobs, dtype=np.int64),
            round=np.zeros(n_jobs, dtype=np.int64), mu=np.zeros(n_jobs), ideal=np.zeros(n_jobs),
            cost=np.zeros(n_jobs), payments=np.zeros((n_jobs, n_tenants)), shared={},
            dropped=[j for j, (job, configs) in enumerate(zip(instance.jobs, fit))
                     if best_ideal_utility(job, configs) <= 0], constants=consts, time_origin=instance.time_origin)
        shapes = [job_shape(job, worker_cap(job, self.cap_by_trace_gpus)) for job in instance.jobs]
        dropped = set(record.dropped)
        order = sorted((j for j in range(n_jobs) if j not in dropped),
                       key=lambda j: (instance.jobs[j].arrival, instance.jobs[j].owner, j))
        rank = {j: n for n, j in enumerate(order)}
        pending: list[int] = []
        for batch in range(1, self.max_batches + 1):
            low, high = (-1, 2) if batch == 1 else (2 ** (batch - 1), 2 ** batch)
            arrived = [j for j in order if low < instance.jobs[j].arrival <= high]
            pending = sorted(pending + arrived, key=rank.__getitem__)
            if pending:
                admitted = self._batch(instance, shapes, pending, batch, consts, record, on_progress)
                pending = [j for j in pending if j not in admitted]
            record.batches = batch
            if not pending and all(instance.jobs[j].arrival <= high for j in order):
                break
        record.wall_seconds = time.perf_counter() - tick
        return record

    def _batch(self, instance: MultiTenantInstance, shapes: list[JobShape], jobs: list[int], batch: int,
               consts: Constants, record: AstraeaRun,
               on_progress: Callable[[int, int], None] | None = None) -> set[int]:
        """A_round (Alg. 2): lambda rounds of phase 1 then phase 2; the jobs admitted."""
        tau, lam = 2 ** batch, consts.rounds
        left = list(jobs)
        admitted: set[int] = set()
        rejected: set[Admissions] = set()
        for i in range(1, lam + 1):
            width = max(shapes[j].span(tau) for j in left)
            state = RoundState(instance, (lam + i - 1) * tau, tau, (consts.theta_w, consts.theta_p), width)
            first = self._max_irev(state, shapes, left, 1, record, rejected)
            left = [j for j in left if j not in first]
            second: list[int] = []
            if self.sharing:
                state.close_phase_one()
                second = self._max_irev(state, shapes, left, 2, record, rejected, tuple(first))
                left = [j for j in left if j not in second]
            for j in (*first, *second):
                record.batch[j], record.round[j] = batch, i
            admitted.update(first, second)
            if on_progress is not None:
                on_progress(int(np.count_nonzero(record.batch)) + len(record.dropped), instance.num_jobs)
            if not left or (self.lazy and not first and not second):
                break
        return admitted

    def _max_irev(self, state: RoundState, shapes: list[JobShape], jobs: list[int], phase: int,
                  record: AstraeaRun, rejected: set[Admissions],
                  phase_one: tuple[int, ...] = ()) -> list[int]:
        """A_maxIrev (Alg. 3): posted-price admission of ``jobs`` in order; the jobs admitted. A job
        ``rejected`` (lazy runs) at the same admissions of an earlier round of the batch (the
        round's ``phase_one`` admissions, then this call's) is not enumerated again."""
        tick = time.perf_counter()
        instance = state.instance
        bandwidth = (instance.worker_bandwidth, instance.ps_bandwidth)
        admitted: list[int] = []
        for j in jobs:
            key = (j, phase, phase_one, tuple(admitted))
            if self.lazy and key in rejected:
                continue
            owner = instance.jobs[j].owner
            view = state.view(owner, shapes[j].span(state.tau))
            best = best_candidate(shapes[j], view, bandwidth=bandwidth, central_rule=self.central_server_rule,
                                  mincostc_cost=self.mincostc_cost)
            if best is None:
                rejected.add(key)
                continue
            self._admit(state, j, owner, best, view, phase, record)
            admitted.append(j)
        record.call_seconds.append(time.perf_counter() - tick)
        return admitted

    def _admit(self, state: RoundState, j: int, owner: int, best: Candidate, view: RoundView, phase: int,
               record: AstraeaRun) -> None:
        """Commit the job's schedule, raise h (and the owner's quota use in phase 1), charge phase 2."""
        run = state.allocate(best, owner, phase)
        workers, ps = int(best.y.sum()), int(best.z.sum())
        schedule = record.schedule
        schedule.start[j] = state.rho0 + best.offset
        schedule.workers[j], schedule.ps[j] = best.y, best.z
        record.phase[j], record.mu[j], record.ideal[j], record.cost[j] = phase, best.mu, best.value, best.cost
        if phase == 1:
            return
        payment = shared_payment(view.eta_w[run] * workers, view.eta_p[run] * ps,
                                 state.quota_w[:, None] - state.used_w[:, run],
                                 state.quota_p[:, None] - state.used_p[:, run],
                                 np.arange(run.start, run.stop) + state.rho0 + 1)
        record.shared[j] = payment
        record.payments[j] = payment.rho.sum(axis=1)
        record.cost[j] = float(payment.cost_w.sum() + payment.cost_p.sum())
