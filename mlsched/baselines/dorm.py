r"""Dorm baseline (spec §5.3; Dorm's own MILP was not retrievable, these parameters are the
spec's [R] choices). All jobs admitted. At each event, for the unfinished jobs J, HiGHS
(time limit 10 s, relative gap 1%) solves

  max  sum_r [ sum_{i,h} w_i^r y_ih / C_H^r + sum_{i,k} s_i^r z_ik / C_K^r ]       (utilization)
  s.t. sum_i w_i^r y_ih <= c_h^r,  sum_i s_i^r z_ik <= c_k^r                      (capacity)
       n_i = sum_h y_ih <= N_i;  b_i n_i <= B_i sum_k z_ik;  sum_k z_ik <= n_i     (3), (6), (7)
       n_i delta_i >= (1 - theta_f) ds_i^DRF                                       (fairness)
       |n_i - n_i^prev| <= N_i chg_i,  sum_{i in J, not new} chg_i <= ceil(theta_a |J|)  (overhead)
  y, z integer >= 0, chg binary,

with delta_i = max( max_r w_i^r / C_H^r, (b_i/B_i) max_r s_i^r / C_K^r ), ds_i^DRF the
dominant share DRF's progressive filling gives job i in the same state, theta_f = 0.1 and
theta_a = 0.5. If the program has no solution, the fairness rows are dropped, then the
overhead rows; if it still has none, the previous allocations are kept.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pyomo.environ as pyo

from mlsched.baselines.drf import progressive_filling
from mlsched.baselines.placement import EventPolicy, RoundRobin
from mlsched.formulations.oasis import per_server_cap
from mlsched.formulations.rows import row
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotState
from mlsched.solve import Built, solve


class Dorm(EventPolicy):
    name = "dorm"

    def __init__(self, *, fairness: float = 0.1, adjustment: float = 0.5, time_limit: float = 10.0,
                 mip_gap: float = 0.01) -> None:
        self.fairness = fairness
        self.adjustment = adjustment
        self.time_limit = time_limit
        self.mip_gap = mip_gap

    def start(self, instance: ClusterJobsInstance) -> None:
        super().start(instance)
        self.ycap = per_server_cap(instance.worker_demand, instance.worker_capacity)
        self.zcap = per_server_cap(instance.ps_demand, instance.ps_capacity)

    def reschedule(self, state: SlotState) -> None:
        jobs = [int(i) for i in self.active(state)]
        if not jobs:
            return
        new = set(state.arrivals)
        previous = self.alloc_w.sum(axis=1)
        kept_w, kept_ps = self.alloc_w[jobs].copy(), self.alloc_ps[jobs].copy()
        self.release(jobs)
        residual_w, residual_ps = self.residual()
        _, _, shares = progressive_filling(self.instance, np.array(jobs), RoundRobin(self.instance),
                                           residual_w.copy(), residual_ps.copy())
        for rows in (("fairness", "overhead"), ("overhead",), ()):
            built = self._build(jobs, new, previous, shares, set(rows))
            report = solve(built, time_limit=self.time_limit, mip_gap=self.mip_gap)
            if report.schedule is not None:
                y, z = report.schedule
                self.alloc_w[jobs], self.alloc_ps[jobs] = y, z
                return
        self.alloc_w[jobs], self.alloc_ps[jobs] = kept_w, kept_ps  # no solution at all: keep what ran before

    def _build(self, jobs: list[int], new: set[int], previous: np.ndarray, shares: dict[int, float],
               rows: set[str]) -> Built:
        tick = time.perf_counter()
        inst = self.instance
        cap_h = inst.worker_capacity.sum(axis=0)
        cap_k = inst.ps_capacity.sum(axis=0)
        n_h, n_k = len(inst.worker_servers), len(inst.ps_servers)
        m = pyo.ConcreteModel(name="dorm")
        m.y = pyo.Var([(i, h) for i in jobs for h in range(n_h)], domain=pyo.NonNegativeIntegers,
                      bounds=lambda _, i, h: (0, min(inst.jobs[i].chunks, self.ycap[i, h])))
        m.z = pyo.Var([(i, k) for i in jobs for k in range(n_k)], domain=pyo.NonNegativeIntegers,
                      bounds=lambda _, i, k: (0, min(inst.jobs[i].chunks, self.zcap[i, k])))
        n = {i: sum(m.y[i, h] for h in range(n_h)) for i in jobs}
        ps = {i: sum(m.z[i, k] for k in range(n_k)) for i in jobs}
        weight_w = {i: float(sum(inst.worker_demand[i, r] / cap_h[r] for r in range(len(cap_h)) if cap_h[r] > 0))
                    for i in jobs}
        weight_ps = {i: float(sum(inst.ps_demand[i, r] / cap_k[r] for r in range(len(cap_k)) if cap_k[r] > 0))
                     for i in jobs}
        m.obj = pyo.Objective(sense=pyo.maximize,
                              expr=sum(weight_w[i] * n[i] + weight_ps[i] * ps[i] for i in jobs))
        m.cap_w = pyo.Constraint([(h, r) for h in range(n_h) for r in range(len(cap_h))],
                                 rule=lambda _, h, r: row(sum(float(inst.worker_demand[i, r]) * m.y[i, h] for i in jobs
                                                                    if inst.worker_demand[i, r] > 0) <= float(inst.worker_capacity[h, r])))
        m.cap_ps = pyo.Constraint([(k, r) for k in range(n_k) for r in range(len(cap_k))],
                                  rule=lambda _, k, r: row(sum(float(inst.ps_demand[i, r]) * m.z[i, k] for i in jobs
                                                                     if inst.ps_demand[i, r] > 0) <= float(inst.ps_capacity[k, r])))
        m.bandwidth = pyo.Constraint(jobs, rule=lambda _, i: inst.jobs[i].worker_bandwidth * n[i]
                                     <= inst.jobs[i].ps_bandwidth * ps[i])
        m.ps_le = pyo.Constraint(jobs, rule=lambda _, i: ps[i] <= n[i])
        m.max_workers = pyo.Constraint(jobs, rule=lambda _, i: n[i] <= inst.jobs[i].chunks)
        if "fairness" in rows:
            m.fair = pyo.Constraint(jobs, rule=lambda _, i: row(
                n[i] * self._delta(i, cap_h, cap_k) >= (1 - self.fairness) * shares[i]))
        old = [i for i in jobs if i not in new]
        if "overhead" in rows and old:
            m.chg = pyo.Var(old, domain=pyo.Binary)
            m.up = pyo.Constraint(old, rule=lambda _, i: n[i] - int(previous[i]) <= inst.jobs[i].chunks * m.chg[i])
            m.down = pyo.Constraint(old, rule=lambda _, i: int(previous[i]) - n[i] <= inst.jobs[i].chunks * m.chg[i])
            m.budget = pyo.Constraint(expr=sum(m.chg[i] for i in old) <= math.ceil(self.adjustment * len(jobs)))

        def extract() -> tuple[np.ndarray, np.ndarray]:
            y = np.array([[round(m.y[i, h].value or 0) for h in range(n_h)] for i in jobs], dtype=np.int64)
            z = np.array([[round(m.z[i, k].value or 0) for k in range(n_k)] for i in jobs], dtype=np.int64)
            return y, z

        return Built(model=m, name="dorm", sense="max", relaxed=False, build_seconds=time.perf_counter() - tick,
                     extract=extract)

    def _delta(self, i: int, cap_h: np.ndarray, cap_k: np.ndarray) -> float:
        inst = self.instance
        job = inst.jobs[i]
        worker = np.max(np.where(cap_h > 0, inst.worker_demand[i] / np.where(cap_h > 0, cap_h, 1), 0.0))
        ps = np.max(np.where(cap_k > 0, inst.ps_demand[i] / np.where(cap_k > 0, cap_k, 1), 0.0))
        return float(max(worker, job.worker_bandwidth / job.ps_bandwidth * ps))

