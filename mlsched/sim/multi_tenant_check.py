"""Schedules of the multi-tenant family and their independent checker (FEAS of Astraea spec §4.2).

A schedule gives each job a start slot (0: not run) and the constant per-server allocation it
holds in every slot of its run: workers ``workers[j, s]`` and PS ``ps[j, s]`` (§1.4: no
preemption, no migration). The checker reads the instance and the schedule alone: it derives the
placement mode zeta from where the workers and PS are, recomputes the duration d_j(W, zeta) from
the instance's rates, and checks release, horizon, the worker bound D_j (3e), at least one PS (3g),
whole numbers throughout (3o), the bandwidth rule (3i) read as in the spec ([P-fix]: every server hosting a PS covers the workers
on the other servers; the PS count of :mod:`mlsched.instance.parameter_server`, the family's physics) and the servers' capacities in every slot (3c), (3d), checked at the slots where runs start (the
only slots where a server's use can rise), so a run far out in time costs nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlsched.instance.multi_tenant import MultiTenantInstance, duration
from mlsched.instance.parameter_server import ps_needed


@dataclass
class TenantSchedule:
    start: np.ndarray      # (J,) first slot, 0 = not run
    workers: np.ndarray    # (J, S) constant allocation over the run
    ps: np.ndarray         # (J, S)
    algorithm: str = ""

    @classmethod
    def empty(cls, instance: MultiTenantInstance, algorithm: str = "") -> TenantSchedule:
        j, s = instance.num_jobs, len(instance.servers)
        return cls(np.zeros(j, dtype=np.int64), np.zeros((j, s), dtype=np.int64), np.zeros((j, s), dtype=np.int64),
                   algorithm)

    def centralized(self) -> np.ndarray:
        """zeta_j: every worker and PS of the job on one server."""
        used = (self.workers > 0) | (self.ps > 0)
        return used.sum(axis=1) == 1

    def durations(self, instance: MultiTenantInstance) -> np.ndarray:
        """d_j(W, zeta) recomputed from the placement; 0 for jobs not run."""
        central = self.centralized()
        totals = self.workers.sum(axis=1)
        return np.array([duration(job, int(totals[j]), bool(central[j])) if self.start[j] and totals[j] else 0
                         for j, job in enumerate(instance.jobs)], dtype=np.int64)

    def completions(self, instance: MultiTenantInstance) -> np.ndarray:
        """t_j^+ = t_j^- + d_j - 1 (§1.2); 0 for jobs not run."""
        return np.where(self.start > 0, self.start + self.durations(instance) - 1, 0)


def realized_utilities(instance: MultiTenantInstance, schedule: TenantSchedule) -> np.ndarray:
    """f_j(t_j^+) of every job that ran, 0 for the others (objective (3))."""
    ends = schedule.completions(instance)
    return np.array([instance.realized(job, int(ends[j])) if schedule.start[j] else 0.0
                     for j, job in enumerate(instance.jobs)])


def check(instance: MultiTenantInstance, schedule: TenantSchedule, horizon: int | None = None, *,
          online: bool = False) -> list[str]:
    """Every violation of §1.4 and of the servers' capacities, one line each ([] if feasible).
    ``horizon`` (default: the instance's) bounds the completions, except for ``online`` runs."""
    problems: list[str] = []
    n_jobs, n_servers = instance.num_jobs, len(instance.servers)
    if schedule.workers.shape != (n_jobs, n_servers) or schedule.ps.shape != (n_jobs, n_servers):
        return [f"allocation shape {schedule.workers.shape} / {schedule.ps.shape}, expected {(n_jobs, n_servers)}"]
    whole = [label for label, values in (("start slot", schedule.start), ("workers", schedule.workers), ("PS", schedule.ps))
             if not np.all(np.isfinite(values)) or np.any(np.asarray(values) != np.round(values))]
    if whole:   # (3o): every later rule counts slots, workers and PS in whole units
        return [f"{label} values that are not whole numbers (3o)" for label in whole]
    if (schedule.workers < 0).any() or (schedule.ps < 0).any() or (schedule.start < 0).any():
        problems.append("negative workers, PS or start slot")
    ends = schedule.completions(instance)
    last = None if online else horizon if horizon is not None else instance.horizon
    b_w, b_p = instance.worker_bandwidth, instance.ps_bandwidth
    for j, job in enumerate(instance.jobs):
        w, p = schedule.workers[j], schedule.ps[j]
        if not schedule.start[j]:
            if w.any() or p.any():
                problems.append(f"job {job.id} holds resources but never starts")
            continue
        total = int(w.sum())
        if not 1 <= total <= job.chunks:
            problems.append(f"job {job.id} runs {total} workers, not in [1, D_j = {job.chunks}] (3e)")
        if p.sum() < 1:
            problems.append(f"job {job.id} has no PS (3g)")
        if schedule.start[j] < instance.first_slot(job):
            problems.append(f"job {job.id} starts at slot {schedule.start[j]} before its release "
                            f"{instance.first_slot(job)} (3l)")
        if last is not None and ends[j] > last:
            problems.append(f"job {job.id} ends at slot {ends[j]} after the horizon {last}")
        for s in np.flatnonzero(p > 0):
            if p[s] < ps_needed(total - int(w[s]), b_w, b_p):
                problems.append(f"job {job.id}: the PS on server {instance.servers[s].name} cover "
                                f"{p[s] * b_p:g} Mbps, the workers elsewhere need {(total - w[s]) * b_w:g} (3i)")
    running = schedule.start > 0
    if running.any():
        # a server's use only rises where a run starts: checking the start slots checks every slot
        slots = np.unique(schedule.start[running])
        active = running[:, None] & (slots[None, :] >= schedule.start[:, None]) & (slots[None, :] <= ends[:, None])
        used_w = active.T.astype(np.int64) @ schedule.workers          # (starts, S)
        used_p = active.T.astype(np.int64) @ schedule.ps
        for label, used, cap in (("workers", used_w, instance.worker_capacity), ("PS", used_p, instance.ps_capacity)):
            over = np.argwhere(used > cap[None, :])
            for t, s in over[:5]:
                problems.append(f"slot {slots[t]}, server {instance.servers[s].name}: {used[t, s]} {label} of "
                                f"{cap[s]} ({'3c' if label == 'workers' else '3d'})")
    return problems
