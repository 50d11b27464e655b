"""OASiS Algorithm 1: online primal-dual admission and worker/PS scheduling (paper §IV-B).

Upon the arrival of job i (same-slot arrivals in id order, spec A17):
  5:  (l*, mu_i) <- Algorithm 2 at the current prices p, q and usage g, v
  6:  if mu_i > 0: admit, fix y, z of l* for all its slots, add the usage to g, v
      (lines 9, 11) and update the prices of the touched slots by eq. (22) (lines 10, 12);
      in float64 a payoff within ADMISSION_TOL = 1e-12 of 0 counts as 0 (spec §3.9)
 14:  else reject (x_i = 0)
A schedule is fixed at admission and never revised; usage and prices only grow. Per job the
policy records mu_i, t_hat_i, the cost of l* and the dual objective
D = sum_i mu_i + sum p c + sum q c after the job (Lemma 1/2 bookkeeping), and its latency.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.online.oasis.constants import PriceConstants, oracle_constants, prices
from mlsched.online.oasis.subproblem import (
    GRANULARITIES, BestSchedule, JobTerms, SlotPrices, best_schedule, best_schedule_literal)
from mlsched.sim.engine import SlotDecision, SlotState

SUBROUTINES = ("dp", "literal")
_BIG_CAP = 10**9
ADMISSION_TOL = 1e-12   # spec §3.9: a payoff within 1e-12 of 0 is 0 (at low load prices underflow to 0.0,
                        # so a job whose utility has decayed to 1e-45 would otherwise be admitted at no cost)


def job_terms(instance: ClusterJobsInstance, i: int) -> JobTerms:
    job = instance.jobs[i]
    slots = np.arange(job.arrival, instance.horizon + 1)
    return JobTerms(
        arrival=job.arrival, chunks=job.chunks, chunk_time=float(instance.chunk_time[i]),
        passes=job.epochs * job.chunks, workload=float(instance.workload[i]),
        worker_bandwidth=job.worker_bandwidth, ps_bandwidth=job.ps_bandwidth,
        utility=np.asarray(job.utility.value(slots - job.arrival), dtype=float),
    )


def server_caps(residual: np.ndarray, demand: np.ndarray, limit: int) -> np.ndarray:
    """min_r floor(residual^r / demand^r) over r with demand^r > 0, capped at ``limit`` (eqs. 30, 31)."""
    used = demand > 0
    if not used.any():
        return np.full(residual.shape[:-1], limit, dtype=np.int64)
    fit = np.floor(residual[..., used] / demand[used] + EPS).min(axis=-1)
    return np.clip(fit, 0, limit).astype(np.int64)


@dataclass
class JobRecord:
    job: int
    admitted: bool
    payoff: float
    completion: int
    cost: float
    dual_objective: float
    seconds: float


@dataclass
class ClusterLedger:
    """Usage g (T, H, R), v (T, K, R) and prices p, q of the cluster as OASiS commits schedules."""

    instance: ClusterJobsInstance
    constants: PriceConstants
    usage_w: np.ndarray = field(init=False)
    usage_ps: np.ndarray = field(init=False)
    price_w: np.ndarray = field(init=False)
    price_ps: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        inst, c = self.instance, self.constants
        self.usage_w = np.zeros((inst.horizon,) + inst.worker_capacity.shape)
        self.usage_ps = np.zeros((inst.horizon,) + inst.ps_capacity.shape)
        self.price_w = prices(c.ln_l1, c.ln_u1, self.usage_w, inst.worker_capacity)
        self.price_ps = prices(c.ln_l2, c.ln_u2, self.usage_ps, inst.ps_capacity)

    def slot_prices(self, i: int, *, empty: bool = False) -> SlotPrices:
        """kappa, lambda and residual caps for job i's window (``empty``: full capacities, g = v = 0)."""
        inst = self.instance
        job = inst.jobs[i]
        window = slice(job.arrival - 1, inst.horizon)
        w, s = inst.worker_demand[i], inst.ps_demand[i]
        used_w = 0.0 if empty else self.usage_w[window]
        used_ps = 0.0 if empty else self.usage_ps[window]
        n_slots = inst.horizon - job.arrival + 1
        residual_w = np.broadcast_to(inst.worker_capacity - used_w, (n_slots,) + inst.worker_capacity.shape)
        residual_ps = np.broadcast_to(inst.ps_capacity - used_ps, (n_slots,) + inst.ps_capacity.shape)
        return SlotPrices(
            worker_price=self.price_w[window] @ w,
            worker_cap=server_caps(residual_w, w, job.chunks),
            ps_price=self.price_ps[window] @ s,
            ps_cap=server_caps(residual_ps, s, job.chunks),
        )

    def commit(self, i: int, plan: BestSchedule) -> None:
        """Lines 8-12: add the schedule's usage and refresh the prices of the touched slots."""
        inst, c = self.instance, self.constants
        start = inst.jobs[i].arrival - 1
        self.usage_w[start:] += plan.workers[:, :, None] * inst.worker_demand[i][None, None, :]
        self.usage_ps[start:] += plan.ps[:, :, None] * inst.ps_demand[i][None, None, :]
        self.price_w[start:] = prices(c.ln_l1, c.ln_u1, self.usage_w[start:], inst.worker_capacity)
        self.price_ps[start:] = prices(c.ln_l2, c.ln_u2, self.usage_ps[start:], inst.ps_capacity)

    def resource_value(self) -> float:
        """sum_{t,h,r} p c + sum_{t,k,r} q c: the resource part of the dual objective (19)."""
        inst = self.instance
        return float((self.price_w * inst.worker_capacity).sum() + (self.price_ps * inst.ps_capacity).sum())


class OASiS:
    """The OASiS online policy.

    Parameters
    ----------
    granularity: ``"chunk"`` (the paper's Alg. 2) or ``"worker_slot"`` (spec §3.8).
    constants: ``"oracle"`` (computed from all jobs) or a :class:`PriceConstants`.
    u_arg: argument of f in U (spec A2), used with oracle constants.
    u_scale: multiply every U by this factor with L fixed (Fig. 6).
    subroutine: ``"dp"`` (accelerated exact DP) or ``"literal"`` (Alg. 2 as printed).
    """

    promises_completion = True

    def __init__(self, *, granularity: str = "chunk", constants: str | PriceConstants = "oracle",
                 u_arg: str = "duration", u_scale: float = 1.0, subroutine: str = "dp") -> None:
        if granularity not in GRANULARITIES:
            raise UsageError(f"unknown granularity {granularity!r}; choose one of {', '.join(GRANULARITIES)}")
        if subroutine not in SUBROUTINES:
            raise UsageError(f"unknown subroutine {subroutine!r}; choose one of {', '.join(SUBROUTINES)}")
        if not isinstance(constants, PriceConstants) and constants != "oracle":
            raise UsageError("constants must be 'oracle' or a PriceConstants")
        self.granularity = granularity
        self.constants_spec = constants
        self.u_arg = u_arg
        self.u_scale = u_scale
        self.subroutine = subroutine
        self.name = "oasis" if granularity == "chunk" else "oasis-ws"
        self.records: list[JobRecord] = []

    def start(self, instance: ClusterJobsInstance) -> None:
        self.instance = instance
        constants = (oracle_constants(instance, u_arg=self.u_arg)
                     if self.constants_spec == "oracle" else self.constants_spec)
        if self.u_scale != 1.0:
            constants = constants.scaled(self.u_scale)
        self.constants = constants
        self.ledger = ClusterLedger(instance, constants)
        self.plan_workers = np.zeros((instance.num_jobs, instance.horizon, len(instance.worker_servers)), dtype=np.int64)
        self.plan_ps = np.zeros((instance.num_jobs, instance.horizon, len(instance.ps_servers)), dtype=np.int64)
        self.plan_units = np.zeros((instance.num_jobs, instance.horizon), dtype=np.int64)
        self.records = []
        self._payoff_sum = 0.0

    def best(self, i: int, *, empty: bool = False) -> BestSchedule:
        """Algorithm 2 for job i at the current prices (``empty``: with g = v = 0, for I10)."""
        routine = best_schedule if self.subroutine == "dp" else best_schedule_literal
        return routine(job_terms(self.instance, i), self.ledger.slot_prices(i, empty=empty),
                       granularity=self.granularity)

    def decide(self, state: SlotState) -> SlotDecision:
        rejected = []
        for i in state.arrivals:
            tick = time.perf_counter()
            plan = self.best(i)
            if plan.payoff > ADMISSION_TOL and plan.admitted:               # line 6, strict (§3.9)
                start = self.instance.jobs[i].arrival - 1
                self.plan_workers[i, start:] = plan.workers
                self.plan_ps[i, start:] = plan.ps
                self.plan_units[i, start:] = plan.units
                self.ledger.commit(i, plan)
                self._payoff_sum += plan.payoff
            else:
                rejected.append(i)
            self.records.append(JobRecord(
                job=i, admitted=i not in rejected, payoff=plan.payoff, completion=plan.completion,
                cost=plan.cost, dual_objective=self._payoff_sum + self.ledger.resource_value(),
                seconds=time.perf_counter() - tick))
        t = state.t - 1
        return SlotDecision(workers=self.plan_workers[:, t, :], ps=self.plan_ps[:, t, :], rejected=rejected)

    def certified_bound(self) -> float:
        """D_cert of spec I10: an LP-dual feasible bound >= OPT_chunk from the final prices.

        mu_i^cert = max(0, Alg. 2 payoff at the final prices with g = v = 0); with
        ``granularity="worker_slot"`` the bound is over the worker-slot schedule space instead.
        """
        mu = sum(max(0.0, self.best(i, empty=True).payoff) for i in range(self.instance.num_jobs))
        return mu + self.ledger.resource_value()

    def certified_bound_variants(self) -> tuple[str, ...]:
        """The exact-program variants whose optimum :meth:`certified_bound` bounds: OPT_chunk for
        the chunk DP; OPT_paper (>= OPT_chunk) over the worker-slot space."""
        return ("chunk",) if self.granularity == "chunk" else ("paper", "chunk")

    def summary(self) -> dict[str, Any]:
        c = self.constants
        return {"alpha": c.alpha, "eta1": c.eta1, "eta2": c.eta2, "ln_L1": c.ln_l1, "ln_L2": c.ln_l2}
