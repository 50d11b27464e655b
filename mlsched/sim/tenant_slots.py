"""Preemptive slot-by-slot runs of the multi-tenant family (the Gandiva_fair and HiveD baselines,
Astraea spec §5.2 [R]) and their independent checker.

In every slot a policy gives each job it runs a per-server allocation of workers and PS. The job
then trains W n_j^zeta mini-batches in that slot (Eq. 1, §1.3), with W its workers and zeta = 1 when
all its workers and PS sit on one server; progress is kept across preemptions and migrations. A
job completes in the first slot where its progress reaches B_j = E_j D_j M_j; it may not hold
resources before its release (§1.2) or after it completes. Each slot's allocation obeys (3e) W <=
D_j, (3g) at least one PS, (3i) every server hosting a PS covers the workers elsewhere, and the
servers' capacities (3c), (3d). The loop stops when every job has completed or after ``max_slots``.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mlsched.errors import MlschedError
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob
from mlsched.tenant_metrics import summary as tenant_summary
from mlsched.tenant_metrics import tenant_gains

PROGRESS_TOL = 1e-9
Allocation = tuple[int, np.ndarray, np.ndarray]   # (job, workers per server, PS per server)


class SlotPolicy(Protocol):
    name: str

    def start(self, instance: MultiTenantInstance) -> None:
        """Reset for a run over ``instance``."""

    def decide(self, t: int, pending: list[int], progress: np.ndarray) -> list[Allocation]:
        """Allocations for slot t among the released, unfinished jobs ``pending`` (in release order)."""


@dataclass
class SlotRun:
    """A preemptive run: every (slot, job, server) allocation and the completions."""

    algorithm: str
    slot: np.ndarray
    job: np.ndarray
    server: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    completion: np.ndarray            # (J,) slot t_j^+, 0 if the job never completed
    slots: int                        # slots simulated
    time_origin: str = "arrival"
    wall_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def utilities(self, instance: MultiTenantInstance) -> np.ndarray:
        inst = dataclasses.replace(instance, time_origin=self.time_origin)
        return np.array([inst.realized(job, int(self.completion[j])) if self.completion[j] else 0.0
                         for j, job in enumerate(instance.jobs)])

    def summary(self, instance: MultiTenantInstance) -> dict[str, Any]:
        utilities = self.utilities(instance)
        ran = self.completion > 0
        used = np.bincount(self.slot, weights=self.workers, minlength=self.slots + 1)[1:]
        util = used / max(1, int(instance.worker_capacity.sum()))
        gains = tenant_gains(instance, utilities)      # no transfers: g_u is u's own utilities
        row = tenant_summary(instance, utilities, ran, util, int(self.completion.max(initial=0)), gains)
        return {**row, "wall_seconds": self.wall_seconds, "seconds_per_job": self.wall_seconds / max(1, instance.num_jobs)}


def slot_progress(job: TenantJob, workers: np.ndarray, ps: np.ndarray) -> float:
    """W n_j^zeta: mini-batches trained in one slot with this placement."""
    used = (workers > 0) | (ps > 0)
    return float(workers.sum()) * job.rate(bool(used.sum() == 1))


def run_slots(instance: MultiTenantInstance, policy: SlotPolicy, *, max_slots: int | None = None) -> SlotRun:
    """Drive ``policy`` slot by slot; the run is checked by :func:`check_slots` before it is returned."""
    tick = time.perf_counter()
    policy.start(instance)
    n = instance.num_jobs
    release = np.array([instance.first_slot(job) for job in instance.jobs], dtype=np.int64)
    workload = np.array([job.workload for job in instance.jobs], dtype=float)
    cap = max_slots if max_slots is not None else _default_cap(instance, release)
    progress, completion = np.zeros(n), np.zeros(n, dtype=np.int64)
    order = sorted(range(n), key=lambda j: (release[j], j))
    rows: list[tuple[int, int, int, int, int]] = []
    t = 0
    while t < cap and (completion == 0).any():
        t += 1
        pending = [j for j in order if release[j] <= t and not completion[j]]
        for j, workers, ps in policy.decide(t, pending, progress.copy()):
            for s in np.flatnonzero((workers > 0) | (ps > 0)):
                rows.append((t, j, int(s), int(workers[s]), int(ps[s])))
            progress[j] += slot_progress(instance.jobs[j], workers, ps)
            if progress[j] >= workload[j] * (1 - PROGRESS_TOL):
                completion[j] = t
    table = np.array(rows, dtype=np.int64).reshape(-1, 5)
    run = SlotRun(algorithm=policy.name, slot=table[:, 0], job=table[:, 1], server=table[:, 2], workers=table[:, 3],
                  ps=table[:, 4], completion=completion, slots=t, time_origin=instance.time_origin,
                  wall_seconds=time.perf_counter() - tick)
    problems = check_slots(instance, run)
    if problems:
        raise MlschedError(f"{policy.name} on {instance.name}: infeasible run: " + "; ".join(problems[:5]))
    return run


def _default_cap(instance: MultiTenantInstance, release: np.ndarray) -> int:
    """The last release plus every job run alone with one distributed worker: a run that places at
    least one job per slot ends before this."""
    alone = sum(int(np.ceil(job.workload / job.rate_distributed)) for job in instance.jobs)
    return int(release.max(initial=0)) + alone + 1


def check_slots(instance: MultiTenantInstance, run: SlotRun) -> list[str]:
    """Every violation of the per-slot rules and of the recorded completions, one line each."""
    problems: list[str] = []
    n_servers = len(instance.servers)
    b_w, b_p = instance.worker_bandwidth, instance.ps_bandwidth
    if (run.workers < 0).any() or (run.ps < 0).any():
        problems.append("negative workers or PS")
    per_slot_server: dict[tuple[int, int], list[int]] = {}
    by_job_slot: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    for t, j, s, w, p in zip(run.slot, run.job, run.server, run.workers, run.ps, strict=True):
        key = (int(t), int(j))
        if key not in by_job_slot:
            by_job_slot[key] = (np.zeros(n_servers, dtype=np.int64), np.zeros(n_servers, dtype=np.int64))
        by_job_slot[key][0][s] += w
        by_job_slot[key][1][s] += p
        used = per_slot_server.setdefault((int(t), int(s)), [0, 0])
        used[0] += int(w)
        used[1] += int(p)
    for (t, s), (w, p) in per_slot_server.items():
        server = instance.servers[s]
        if w > server.workers or p > server.ps:
            problems.append(f"slot {t}, server {server.name}: {w} workers of {server.workers}, {p} PS of {server.ps}")
    progress = np.zeros(instance.num_jobs)
    finished = np.zeros(instance.num_jobs, dtype=np.int64)
    for (t, j), (w, p) in sorted(by_job_slot.items()):
        job = instance.jobs[j]
        total = int(w.sum())
        if t < instance.first_slot(job):
            problems.append(f"job {job.id} runs in slot {t} before its release {instance.first_slot(job)}")
        if finished[j]:
            problems.append(f"job {job.id} holds resources in slot {t} after completing in slot {finished[j]}")
        if not 1 <= total <= job.chunks:
            problems.append(f"job {job.id}, slot {t}: {total} workers, not in [1, D_j = {job.chunks}] (3e)")
        if p.sum() < 1:
            problems.append(f"job {job.id}, slot {t}: no PS (3g)")
        for s in np.flatnonzero(p > 0):
            if (total - w[s]) * b_w > p[s] * b_p * (1 + 1e-12):
                problems.append(f"job {job.id}, slot {t}: the PS on {instance.servers[s].name} cover {p[s] * b_p:g} "
                                f"Mbps, the workers elsewhere need {(total - w[s]) * b_w:g} (3i)")
        centralized = np.count_nonzero((w > 0) | (p > 0)) == 1
        progress[j] += total * (job.rate_centralized if centralized else job.rate_distributed)
        if not finished[j] and progress[j] >= job.workload * (1 - PROGRESS_TOL):
            finished[j] = t
    for j, job in enumerate(instance.jobs):
        if finished[j] != run.completion[j]:
            problems.append(f"job {job.id}: completes in slot {finished[j]} by its progress, the run says "
                            f"{run.completion[j]}")
    return problems
