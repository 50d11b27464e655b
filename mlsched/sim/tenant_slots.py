"""Preemptive slot-by-slot runs of the multi-tenant family (the Gandiva_fair and HiveD baselines,
Astraea spec §5.2 [R]) and their independent checker.

In every slot a policy gives each job it runs a per-server allocation of workers and PS. The job
then trains W n_j^zeta mini-batches in that slot (Eq. 1, §1.3), with W its workers and zeta = 1 when
all its workers and PS sit on one server; progress is kept across preemptions and migrations. A
job completes in the first slot where its progress reaches B_j = E_j D_j M_j; it may not hold
resources before its release (§1.2) or after it completes. Each slot's allocation obeys (3e) W <=
D_j, (3g) at least one PS, (3i) every server hosting a PS covers the workers elsewhere, and the
servers' capacities (3c), (3d). The loop stops when every job has completed or after ``max_slots``.
A run is recorded as blocks: one row per (first slot, last slot, job, server) with the workers and
PS held throughout; policies whose decisions depend only on the set of pending jobs (``stationary``)
are asked again only at the next release or completion. A policy's ``migration_cost`` c in [0, 1)
(default 0, spec §5.2 [R]) is the fraction of a slot a job loses when it runs on an allocation other
than the one it last ran on (a migration, or a resumption elsewhere after a preemption): it trains
(1 - c) W n^zeta in that slot.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mlsched.errors import MlschedError, UsageError
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob, duration
from mlsched.instance.parameter_server import ps_needed
from mlsched.sim.multi_tenant_check import TenantSchedule
from mlsched.tenant_metrics import summary as tenant_summary
from mlsched.tenant_metrics import tenant_gains

PROGRESS_TOL = 1e-9
Allocation = tuple[int, np.ndarray, np.ndarray]   # (job, workers per server, PS per server)


class SlotPolicy(Protocol):
    name: str
    stationary: bool      # decisions depend only on the pending set: the engine may skip to the next event
    migration_cost: float   # optional (0 when absent): the slot fraction lost on a changed allocation

    def start(self, instance: MultiTenantInstance) -> None:
        """Reset for a run over ``instance``."""

    def decide(self, t: int, pending: list[int], progress: np.ndarray) -> list[Allocation]:
        """Allocations for slot t among the released, unfinished jobs ``pending`` (in release order)."""


@dataclass
class SlotRun:
    """A preemptive run: allocations held over blocks of slots [first, last], and the completions."""

    algorithm: str
    first: np.ndarray                 # rows: (first, last, job, server, workers, ps)
    last: np.ndarray
    job: np.ndarray
    server: np.ndarray
    workers: np.ndarray
    ps: np.ndarray
    completion: np.ndarray            # (J,) slot t_j^+, 0 if the job never completed
    slots: int                        # slots simulated
    time_origin: str = "arrival"
    migration_cost: float = 0.0       # the policy's, read back by the checker
    wall_seconds: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)

    def utilities(self, instance: MultiTenantInstance) -> np.ndarray:
        inst = dataclasses.replace(instance, time_origin=self.time_origin)
        return np.array([inst.realized(job, int(self.completion[j])) if self.completion[j] else 0.0
                         for j, job in enumerate(instance.jobs)])

    def utilization(self, instance: MultiTenantInstance) -> np.ndarray:
        """util(t) for t = 1..slots: workers in use over the cluster's workers."""
        change = np.zeros(self.slots + 2)
        np.add.at(change, self.first, self.workers)
        np.add.at(change, self.last + 1, -self.workers)
        return np.cumsum(change)[1:self.slots + 1] / max(1, int(instance.worker_capacity.sum()))

    def gains(self, instance: MultiTenantInstance) -> np.ndarray:
        """g_u: no transfers, so each tenant's own realized utilities."""
        return tenant_gains(instance, self.utilities(instance))

    def unbroken(self, instance: MultiTenantInstance) -> TenantSchedule:
        """The run's non-preemptive part (§1.4) as a schedule: every job that completed on one
        allocation held without a break from its first slot, in exactly d_j(W, zeta) slots; the
        others (preempted, migrated, resized or unfinished) are left out, with their resources."""
        schedule = TenantSchedule.empty(instance, self.algorithm)
        for j, job in enumerate(instance.jobs):
            mine = np.flatnonzero(self.job == j)
            if not self.completion[j] or not mine.size:
                continue
            spans = sorted({(int(self.first[r]), int(self.last[r])) for r in mine})
            first = spans[0][0]
            contiguous = all(b[0] == a[1] + 1 for a, b in zip(spans, spans[1:])) and spans[-1][1] == self.completion[j]
            allocations = {span: (np.zeros(len(instance.servers), dtype=np.int64),
                                  np.zeros(len(instance.servers), dtype=np.int64)) for span in spans}
            for r in mine:
                span = (int(self.first[r]), int(self.last[r]))
                allocations[span][0][self.server[r]] += self.workers[r]
                allocations[span][1][self.server[r]] += self.ps[r]
            workers, ps = allocations[spans[0]]
            constant = all(np.array_equal(w, workers) and np.array_equal(p, ps) for w, p in allocations.values())
            centralized = bool(np.count_nonzero((workers > 0) | (ps > 0)) == 1)
            slots = int(self.completion[j]) - first + 1
            if contiguous and constant and duration(job, int(workers.sum()), centralized) == slots:
                schedule.start[j], schedule.workers[j], schedule.ps[j] = first, workers, ps
        return schedule

    def summary(self, instance: MultiTenantInstance) -> dict[str, Any]:
        """§5.3's metrics; the utilization is the mean of util(t) over t = 1..makespan, as for the
        non-preemptive runs (:func:`mlsched.tenant_metrics.mean_utilization`): slots simulated after
        the last completion, where only jobs that never complete hold workers, are left out."""
        utilities = self.utilities(instance)
        makespan = int(self.completion.max(initial=0))
        util = self.utilization(instance)[:makespan]
        row = tenant_summary(instance, utilities, self.completion > 0, float(util.mean()) if util.size else 0.0,
                             makespan, self.gains(instance))
        return {**row, "wall_seconds": self.wall_seconds, "seconds_per_job": self.wall_seconds / max(1, instance.num_jobs)}


def slot_progress(job: TenantJob, workers: np.ndarray, ps: np.ndarray) -> float:
    """W n_j^zeta: mini-batches trained in one slot with this placement."""
    used = (workers > 0) | (ps > 0)
    return float(workers.sum()) * job.rate(bool(used.sum() == 1))


def run_slots(instance: MultiTenantInstance, policy: SlotPolicy, *, max_slots: int | None = None,
              on_progress: Callable[[int, int], None] | None = None) -> SlotRun:
    """Drive ``policy`` slot by slot (block by block for stationary policies: an allocation is held
    until the next release or completion); the run is checked by :func:`check_slots` before it is
    returned. ``on_progress`` hears (jobs completed, jobs in all) after every block."""
    tick = time.perf_counter()
    policy.start(instance)
    loss = float(getattr(policy, "migration_cost", 0.0))
    if not 0.0 <= loss < 1.0:
        raise UsageError(f"{policy.name}: migration_cost must be in [0, 1) (a fraction of a slot), not {loss}")
    n = instance.num_jobs
    release = np.array([instance.first_slot(job) for job in instance.jobs], dtype=np.int64)
    target = np.array([job.workload for job in instance.jobs], dtype=float) * (1 - PROGRESS_TOL)
    cap = max_slots if max_slots is not None else _default_cap(instance, release, loss)
    progress, completion = np.zeros(n), np.zeros(n, dtype=np.int64)
    order = sorted(range(n), key=lambda j: (release[j], j))
    rows: list[tuple[int, int, int, int, int, int]] = []
    last_held: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    t = 1
    while t <= cap and (completion == 0).any():
        pending = [j for j in order if release[j] <= t and not completion[j]]
        chosen = policy.decide(t, pending, progress.copy())
        rates = {j: slot_progress(instance.jobs[j], w, p) for j, w, p in chosen}
        lost = {j: loss * rates[j] if _moved(last_held.get(j), w, p) else 0.0 for j, w, p in chosen}
        block = 1
        if policy.stationary:
            later = release[release > t]
            block = int(later.min() - t) if later.size else cap - t + 1
            for j, rate in rates.items():
                if rate > 0:
                    block = min(block, _slots_to_finish(target[j] - progress[j] + lost[j], rate))
            block = max(1, min(block, cap - t + 1))
        for j, workers, ps in chosen:
            last_held[j] = (workers, ps)
            done_at, progress[j] = _advance(progress[j], rates[j], block, target[j], lost[j])
            last = t + block - 1 if done_at is None else t + done_at
            if done_at is not None:
                completion[j] = last
            for s in np.flatnonzero((workers > 0) | (ps > 0)):
                rows.append((t, last, j, int(s), int(workers[s]), int(ps[s])))
        t += block
        if on_progress is not None:
            on_progress(int(np.count_nonzero(completion)), n)
    table = np.array(rows, dtype=np.int64).reshape(-1, 6)
    run = SlotRun(algorithm=policy.name, first=table[:, 0], last=table[:, 1], job=table[:, 2], server=table[:, 3],
                  workers=table[:, 4], ps=table[:, 5], completion=completion, slots=t - 1,
                  time_origin=instance.time_origin, migration_cost=loss, wall_seconds=time.perf_counter() - tick)
    problems = check_slots(instance, run)
    if problems:
        raise MlschedError(f"{policy.name} on {instance.name}: infeasible run: " + "; ".join(problems[:5]))
    return run


def _moved(before: tuple[np.ndarray, np.ndarray] | None, workers: np.ndarray, ps: np.ndarray) -> bool:
    """Whether a job that ran on ``before`` (None: never ran) now runs on another allocation."""
    return before is not None and not (np.array_equal(before[0], workers) and np.array_equal(before[1], ps))


def _advance(progress: float, rate: float, slots: int, target: float, lost: float = 0.0) -> tuple[int | None, float]:
    """Progress after each of ``slots`` slots at ``rate`` (the first less ``lost``), summed slot by
    slot: (the index of the slot that reaches ``target`` or None, the progress then)."""
    steps = np.full(slots, rate)
    steps[0] -= lost
    sums = np.cumsum(np.concatenate([[progress], steps]))[1:]
    hit = np.flatnonzero(sums >= target)
    return (int(hit[0]), float(sums[hit[0]])) if hit.size else (None, float(sums[-1]))


def _slots_to_finish(remaining: float, rate: float) -> int:
    """Slots of ``rate`` mini-batches that cover ``remaining`` (at least one)."""
    return max(1, math.ceil(remaining / rate - 1e-12))


def _default_cap(instance: MultiTenantInstance, release: np.ndarray, loss: float = 0.0) -> int:
    """The last release plus every job run alone with one distributed worker, each slot less the
    migration loss: a run that places at least one job per slot ends before this."""
    alone = sum(int(np.ceil(job.workload / (job.rate_distributed * (1.0 - loss)))) for job in instance.jobs)
    return int(release.max(initial=0)) + alone + 1


def check_slots(instance: MultiTenantInstance, run: SlotRun) -> list[str]:
    """Every violation of the per-slot rules and of the recorded completions, one line each."""
    problems: list[str] = []
    n_servers = len(instance.servers)
    b_w, b_p = instance.worker_bandwidth, instance.ps_bandwidth
    if (run.workers < 0).any() or (run.ps < 0).any() or (run.last < run.first).any():
        problems.append("negative workers or PS, or a block ending before it starts")
    for s in range(n_servers):                 # capacities: a sweep over each server's blocks
        mine = run.server == s
        for label, amount, cap in (("workers", run.workers, instance.servers[s].workers),
                                   ("PS", run.ps, instance.servers[s].ps)):
            starts = np.stack([run.first[mine], amount[mine]], axis=1)
            ends = np.stack([run.last[mine] + 1, -amount[mine]], axis=1)
            events = np.concatenate([starts, ends])
            events = events[np.lexsort((events[:, 1], events[:, 0]))]      # releases before takes
            level = np.cumsum(events[:, 1])
            if level.size and level.max() > cap:
                t = int(events[int(np.argmax(level)), 0])
                problems.append(f"slot {t}, server {instance.servers[s].name}: {int(level.max())} {label} of {cap}")
    blocks: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
    for a, b, j, s, w, p in zip(run.first, run.last, run.job, run.server, run.workers, run.ps, strict=True):
        key = (int(a), int(b), int(j))
        if key not in blocks:
            blocks[key] = (np.zeros(n_servers, dtype=np.int64), np.zeros(n_servers, dtype=np.int64))
        blocks[key][0][s] += w
        blocks[key][1][s] += p
    progress = np.zeros(instance.num_jobs)
    finished = np.zeros(instance.num_jobs, dtype=np.int64)
    held: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for (a, b, j), (w, p) in sorted(blocks.items()):
        job = instance.jobs[j]
        total = int(w.sum())
        if a < instance.first_slot(job):
            problems.append(f"job {job.id} runs in slot {a} before its release {instance.first_slot(job)}")
        if finished[j]:
            problems.append(f"job {job.id} holds resources in slot {a} after completing in slot {finished[j]}")
            continue
        if not 1 <= total <= job.chunks:
            problems.append(f"job {job.id}, slot {a}: {total} workers, not in [1, D_j = {job.chunks}] (3e)")
        if p.sum() < 1:
            problems.append(f"job {job.id}, slot {a}: no PS (3g)")
        for s in np.flatnonzero(p > 0):
            if p[s] < ps_needed(total - int(w[s]), b_w, b_p):
                problems.append(f"job {job.id}, slot {a}: the PS on {instance.servers[s].name} cover {p[s] * b_p:g} "
                                f"Mbps, the workers elsewhere need {(total - w[s]) * b_w:g} (3i)")
        centralized = np.count_nonzero((w > 0) | (p > 0)) == 1
        rate = total * (job.rate_centralized if centralized else job.rate_distributed)
        steps = np.full(b - a + 1, rate)
        moved = j in held and not (np.array_equal(held[j][0], w) and np.array_equal(held[j][1], p))
        steps[0] -= run.migration_cost * rate if moved else 0.0                           # a migration's loss
        held[j] = (w, p)
        sums = np.cumsum(np.concatenate([[progress[j]], steps]))[1:]                      # slot by slot
        reached = np.flatnonzero(sums >= job.workload * (1 - PROGRESS_TOL))
        progress[j] = sums[reached[0]] if reached.size else sums[-1]
        if reached.size:
            finished[j] = a + int(reached[0])
            if finished[j] < b:
                problems.append(f"job {job.id} holds resources in slots {finished[j] + 1}..{b} after completing")
    for j, job in enumerate(instance.jobs):
        if finished[j] != run.completion[j]:
            problems.append(f"job {job.id}: completes in slot {finished[j]} by its progress, the run says "
                            f"{run.completion[j]}")
    return problems
