r"""Dorm baseline (paper §V-A (iv)); Dorm's own MILP was not retrievable, so the program and its
parameters theta_f = 0.1, theta_a = 0.5, 1% gap are the spec's [R] choices (§5.3, A13); its 10 s
per-event time limit is replaced by a node limit (NODE_LIMIT, ``time_limit`` remains an option), so
that a run is the same on any machine, however loaded.

``run_budget`` (seconds; studies pass their time limit) bounds a whole run as well: each event's
solves get what is left of it spread over the slots left (at most one event per slot), at least
EVENT_FLOOR_SECONDS. A run that stays within its budget never meets that limit and is the same on
any machine; one that does not (about 100 jobs on 100 slots and more) stops its solves on time,
which depends on the machine.

Every job is admitted. At each event the numbers and placement of workers and PS of the
unfinished jobs J are recomputed by HiGHS (at most NODE_LIMIT nodes, relative gap 1%) on

  max  sum_r [ sum_{i,h} w_i^r y_ih / C_H^r + sum_{i,k} s_i^r z_ik / C_K^r ]      (utilization)
  s.t. sum_i w_i^r y_ih <= c_h^r,  sum_i s_i^r z_ik <= c_k^r                     (capacity)
       n_i = sum_h y_ih <= N_i;  b_i n_i <= B_i sum_k z_ik;  sum_k z_ik <= n_i    (3), (6), (7)
       n_i delta_i >= (1 - theta_f) ds_i^DRF                                      (fairness)
       |n_i - n_i^prev| <= N_i chg_i,  sum_{i in J, not new} chg_i <= ceil(theta_a |J|)  (overhead)
       y, z integer >= 0, chg binary,

with C_H^r, C_K^r the pools' total capacities (resources with C = 0 skipped), delta_i =
max( max_r w_i^r / C_H^r, (b_i/B_i) max_r s_i^r / C_K^r ), and ds_i^DRF the dominant share DRF's
progressive filling (:mod:`mlsched.baselines.drf`) gives job i in the same state. If the program
has no solution, the fairness rows are dropped, then the overhead rows; if it still has none,
the previous allocations are kept (they fit: jobs only leave between events).

Each event's program is built as arrays and handed to HiGHS directly (:meth:`Dorm.program`): a
Pyomo build and its solver interface cost more than the solve at a few hundred events;
:meth:`Dorm.model` is the same program as a Pyomo model, its inspectable form (the two are
compared event by event in the tests).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import pyomo.environ as pyo

from mlsched.baselines.drf import pool_shares, progressive_filling
from mlsched.baselines.placement import EventPolicy, RoundRobin
from mlsched.formulations.oasis import per_server_cap
from mlsched.formulations.rows import ArrayRows, row
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotState
from mlsched.solve import ArrayProgram, Built, solve_arrays

ROW_SETS = (("fairness", "overhead"), ("overhead",), ())
NODE_LIMIT = 100   # branch-and-bound nodes per event: a deterministic stop in place of the spec's 10 s
EVENT_FLOOR_SECONDS = 0.1   # an event's least time under ``run_budget``, once the budget is spent


@dataclass
class DormProgram:
    """One event's program in arrays and where its y and z columns sit."""

    arrays: ArrayProgram
    y: tuple[np.ndarray, np.ndarray, np.ndarray]   # (job position, server, column)
    z: tuple[np.ndarray, np.ndarray, np.ndarray]
    shape: tuple[int, int, int]                    # (jobs, worker servers, PS servers)

    def allocation(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Workers (jobs, H) and PS (jobs, K) of a solution vector."""
        jobs, n_h, n_k = self.shape
        y = np.zeros((jobs, n_h), dtype=np.int64)
        z = np.zeros((jobs, n_k), dtype=np.int64)
        y[self.y[0], self.y[1]] = np.rint(values[self.y[2]]).astype(np.int64)
        z[self.z[0], self.z[1]] = np.rint(values[self.z[2]]).astype(np.int64)
        return y, z


class Dorm(EventPolicy):
    name = "dorm"

    def __init__(self, *, fairness: float = 0.1, adjustment: float = 0.5, node_limit: int | None = NODE_LIMIT,
                 time_limit: float | None = None, mip_gap: float = 0.01, run_budget: float | None = None) -> None:
        self.fairness = fairness
        self.adjustment = adjustment
        self.node_limit = node_limit
        self.time_limit = time_limit
        self.mip_gap = mip_gap
        self.run_budget = run_budget

    def start(self, instance: ClusterJobsInstance) -> None:
        super().start(instance)
        self.started = time.perf_counter()
        chunks = np.array([job.chunks for job in instance.jobs])[:, None]
        self.ycap = np.minimum(per_server_cap(instance.worker_demand, instance.worker_capacity), chunks).astype(np.int64)
        self.zcap = np.minimum(per_server_cap(instance.ps_demand, instance.ps_capacity), chunks).astype(np.int64)
        worker_share = pool_shares(instance.worker_demand, instance.worker_capacity.sum(axis=0))
        ps_share = pool_shares(instance.ps_demand, instance.ps_capacity.sum(axis=0))
        self.weight_w = worker_share.sum(axis=1)
        self.weight_ps = ps_share.sum(axis=1)
        ratio = np.array([job.worker_bandwidth / job.ps_bandwidth for job in instance.jobs])
        self.delta = np.maximum(worker_share.max(axis=1), ratio * ps_share.max(axis=1))

    def reschedule(self, state: SlotState) -> None:
        jobs = [int(i) for i in self.active(state)]
        if not jobs:
            return
        previous = self.alloc_w.sum(axis=1)
        kept_w, kept_ps = self.alloc_w[jobs].copy(), self.alloc_ps[jobs].copy()
        self.release(jobs)
        residual_w, residual_ps = self.residual()
        _, _, shares = progressive_filling(self.instance, np.array(jobs, dtype=np.int64), RoundRobin(self.instance),
                                           residual_w, residual_ps)
        old = [i for i in jobs if i not in state.arrivals]
        applicable = {"fairness", "overhead"} if old else {"fairness"}
        tried: list[set[str]] = []
        deadline = self.event_deadline(state.t)
        for rows in ROW_SETS:
            active_rows = set(rows) & applicable
            if active_rows in tried:
                continue
            tried.append(active_rows)
            program = self.program(jobs, old, previous, shares, active_rows)
            limit = None if deadline is None else max(EVENT_FLOOR_SECONDS, deadline - time.perf_counter())
            report = solve_arrays(program.arrays, time_limit=limit, mip_rel_gap=self.mip_gap,
                                  **({} if self.node_limit is None else {"mip_max_nodes": self.node_limit}))
            if report.schedule is not None:
                self.alloc_w[jobs], self.alloc_ps[jobs] = program.allocation(report.schedule)
                return
        self.alloc_w[jobs], self.alloc_ps[jobs] = kept_w, kept_ps

    def event_deadline(self, slot: int) -> float | None:
        """When the solves of the event at ``slot`` must stop (a ``time.perf_counter`` instant):
        ``time_limit`` after now, or sooner, what is left of ``run_budget`` over the slots left."""
        now = time.perf_counter()
        limits = [] if self.time_limit is None else [self.time_limit]
        if self.run_budget is not None:
            left = self.run_budget - (now - self.started)
            limits.append(max(EVENT_FLOOR_SECONDS, left / (self.instance.horizon - slot + 1)))
        return now + min(limits) if limits else None

    def program(self, jobs: list[int], old: list[int], previous: np.ndarray, shares: np.ndarray,
                rows: set[str]) -> DormProgram:
        """The event's program (module docstring) in arrays; columns y_ih, then z_ik (where their
        bounds are at least 1), then chg_i of the jobs in ``old`` ("overhead" rows only)."""
        inst = self.instance
        n_r = len(inst.resources)
        index = np.asarray(jobs, dtype=np.int64)
        pos = np.full(inst.num_jobs, -1, dtype=np.int64)
        pos[index] = np.arange(len(jobs))
        yi, yh = np.nonzero(self.ycap[index] >= 1)
        zi, zk = np.nonzero(self.zcap[index] >= 1)
        n_y, n_z = len(yi), len(zi)
        overhead = "overhead" in rows
        chg_jobs = pos[np.asarray(old, dtype=np.int64)] if overhead else np.zeros(0, dtype=np.int64)
        y_col, z_col = np.arange(n_y), n_y + np.arange(n_z)
        chg_col = n_y + n_z + np.arange(len(chg_jobs))
        cost = np.concatenate([self.weight_w[index[yi]], self.weight_ps[index[zi]], np.zeros(len(chg_jobs))])
        col_upper = np.concatenate([self.ycap[index[yi], yh], self.zcap[index[zi], zk], np.ones(len(chg_jobs))])
        ones_y, ones_z = np.ones(n_y), np.ones(n_z)
        chunks = np.array([inst.jobs[i].chunks for i in jobs], dtype=float)
        out = ArrayRows()
        for servers, on, col, demand, capacity in ((len(inst.worker_servers), yh, y_col, inst.worker_demand[index[yi]],
                                                    inst.worker_capacity),
                                                   (len(inst.ps_servers), zk, z_col, inst.ps_demand[index[zi]],
                                                    inst.ps_capacity)):
            for r in range(n_r):                                                          # capacity
                uses = demand[:, r] != 0
                out.add(on[uses], col[uses], demand[uses, r], np.full(servers, -np.inf), capacity[:, r])
        n_jobs = len(jobs)
        out.add(yi, y_col, ones_y, np.full(n_jobs, -np.inf), chunks)                           # (3)
        b_w = np.array([inst.jobs[i].worker_bandwidth for i in jobs])
        b_p = np.array([inst.jobs[i].ps_bandwidth for i in jobs])
        out.add(np.concatenate([yi, zi]), np.concatenate([y_col, z_col]), np.concatenate([b_w[yi], -b_p[zi]]),
                np.full(n_jobs, -np.inf), np.zeros(n_jobs))                                     # (6)
        out.add(np.concatenate([zi, yi]), np.concatenate([z_col, y_col]), np.concatenate([ones_z, -ones_y]),
                np.full(n_jobs, -np.inf), np.zeros(n_jobs))                                     # (7)
        if "fairness" in rows:
            out.add(yi, y_col, self.delta[index[yi]], (1 - self.fairness) * shares[index], np.full(n_jobs, np.inf))
        if overhead:
            n_old = len(chg_jobs)
            held = previous[index[chg_jobs]].astype(float)
            at = np.full(n_jobs, -1, dtype=np.int64)
            at[chg_jobs] = np.arange(n_old)
            mine = at[yi] >= 0
            out.add(np.concatenate([at[yi[mine]], np.arange(n_old)]), np.concatenate([y_col[mine], chg_col]),
                    np.concatenate([ones_y[mine], -chunks[chg_jobs]]), np.full(n_old, -np.inf), held)   # up
            out.add(np.concatenate([at[yi[mine]], np.arange(n_old)]), np.concatenate([y_col[mine], chg_col]),
                    np.concatenate([-ones_y[mine], -chunks[chg_jobs]]), np.full(n_old, -np.inf), -held)  # down
            out.add(np.zeros(n_old, dtype=np.int64), chg_col, np.ones(n_old), [-np.inf],
                    [math.ceil(self.adjustment * n_jobs)])                                      # budget
        arrays = out.program(cost, np.zeros(len(cost)), col_upper, integer=True, sense="max")
        return DormProgram(arrays, (yi, yh, y_col), (zi, zk, z_col), (n_jobs, len(inst.worker_servers),
                                                                      len(inst.ps_servers)))

    def model(self, jobs: list[int], old: list[int], previous: np.ndarray, shares: np.ndarray,
              rows: set[str]) -> Built:
        """The same program as a Pyomo model: its inspectable form (runs solve :meth:`program`)."""
        tick = time.perf_counter()
        inst = self.instance
        n_h, n_k = len(inst.worker_servers), len(inst.ps_servers)
        n_r = len(inst.resources)
        m = pyo.ConcreteModel(name="dorm")
        m.y = pyo.Var([(i, h) for i in jobs for h in range(n_h) if self.ycap[i, h] >= 1],
                      domain=pyo.NonNegativeIntegers, bounds=lambda _, i, h: (0, int(self.ycap[i, h])))
        m.z = pyo.Var([(i, k) for i in jobs for k in range(n_k) if self.zcap[i, k] >= 1],
                      domain=pyo.NonNegativeIntegers, bounds=lambda _, i, k: (0, int(self.zcap[i, k])))
        on_h = {h: [i for i in jobs if (i, h) in m.y] for h in range(n_h)}
        on_k = {k: [i for i in jobs if (i, k) in m.z] for k in range(n_k)}
        n = {i: sum(m.y[i, h] for h in range(n_h) if (i, h) in m.y) for i in jobs}
        ps = {i: sum(m.z[i, k] for k in range(n_k) if (i, k) in m.z) for i in jobs}
        m.obj = pyo.Objective(sense=pyo.maximize, expr=sum(
            float(self.weight_w[i]) * n[i] + float(self.weight_ps[i]) * ps[i] for i in jobs))
        m.cap_w = pyo.Constraint(range(n_h), range(n_r), rule=lambda _, h, r: row(
            sum(float(inst.worker_demand[i, r]) * m.y[i, h] for i in on_h[h]) <= float(inst.worker_capacity[h, r])))
        m.cap_ps = pyo.Constraint(range(n_k), range(n_r), rule=lambda _, k, r: row(
            sum(float(inst.ps_demand[i, r]) * m.z[i, k] for i in on_k[k]) <= float(inst.ps_capacity[k, r])))
        m.max_workers = pyo.Constraint(jobs, rule=lambda _, i: row(n[i] <= inst.jobs[i].chunks))       # (3)
        m.bandwidth = pyo.Constraint(jobs, rule=lambda _, i: row(
            inst.jobs[i].worker_bandwidth * n[i] <= inst.jobs[i].ps_bandwidth * ps[i]))                # (6)
        m.ps_le = pyo.Constraint(jobs, rule=lambda _, i: row(ps[i] <= n[i]))                             # (7)
        if "fairness" in rows:
            m.fair = pyo.Constraint(jobs, rule=lambda _, i: row(
                float(self.delta[i]) * n[i] >= (1 - self.fairness) * float(shares[i])))
        if "overhead" in rows:
            m.chg = pyo.Var(old, domain=pyo.Binary)
            m.up = pyo.Constraint(old, rule=lambda _, i: n[i] - int(previous[i]) <= inst.jobs[i].chunks * m.chg[i])
            m.down = pyo.Constraint(old, rule=lambda _, i: int(previous[i]) - n[i] <= inst.jobs[i].chunks * m.chg[i])
            m.budget = pyo.Constraint(expr=sum(m.chg[i] for i in old) <= math.ceil(self.adjustment * len(jobs)))

        def extract() -> tuple[np.ndarray, np.ndarray]:
            index = {i: n for n, i in enumerate(jobs)}
            y = np.zeros((len(jobs), n_h), dtype=np.int64)
            z = np.zeros((len(jobs), n_k), dtype=np.int64)
            for (i, h), var in m.y.items():
                y[index[i], h] = round(var.value or 0)
            for (i, k), var in m.z.items():
                z[index[i], k] = round(var.value or 0)
            return y, z

        return Built(model=m, name="dorm", sense="max", relaxed=False,
                     build_seconds=time.perf_counter() - tick, extract=extract)
