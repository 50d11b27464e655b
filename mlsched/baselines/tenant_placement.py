"""Per-slot placement for the preemptive multi-tenant baselines (Astraea spec §5.2 [R]).

A job runs W = min(g_j^tr, D_j) workers (D_j when the trace gave no GPU count) and one PS. Workers
go where the caller's strategy puts them; the PS then goes to the server with a free PS slot that
hosts the most of the job's workers, provided it covers the workers elsewhere (3i):
(W - w_s) b_w <= b_p (:func:`mlsched.instance.parameter_server.ps_needed` <= 1). Placements that
cannot meet (3i) are refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob
from mlsched.instance.parameter_server import ps_needed


def gang_size(job: TenantJob) -> int:
    """W_j = min(g_j^tr, D_j)."""
    return min(job.gpus, job.chunks) if job.gpus is not None else job.chunks


class GangScheduler:
    """What the preemptive baselines share: gang sizes, tenant quotas, decisions that depend only on
    the pending jobs (the slot engine may hold them until the next release or completion), and the
    migration cost (spec §5.2 [R], default 0): the fraction of a slot a job loses in a slot it runs
    on another allocation than the last one it ran on."""

    name = "gang"
    stationary = True

    def __init__(self, seed: int = 0, *, migration_cost: float = 0.0) -> None:
        self.seed = seed
        self.migration_cost = migration_cost

    def configure(self, *, migration_cost: float | None = None) -> None:
        """Set the migration cost after construction."""
        if migration_cost is not None:
            self.migration_cost = migration_cost

    def start(self, instance: MultiTenantInstance) -> None:
        self.instance = instance
        self.quota = np.array([t.workers for t in instance.tenants], dtype=np.int64)   # q_w^u
        self.size = [gang_size(job) for job in instance.jobs]


@dataclass
class FreeSlots:
    """The workers and PS slots still free on each server in the slot being decided."""

    workers: np.ndarray
    ps: np.ndarray
    capacity_w: np.ndarray     # C_sw
    capacity_p: np.ndarray     # C_sp

    @classmethod
    def of(cls, instance: MultiTenantInstance) -> FreeSlots:
        capacity_w, capacity_p = instance.worker_capacity, instance.ps_capacity
        return cls(capacity_w.copy(), capacity_p.copy(), capacity_w, capacity_p)

    def idle(self) -> np.ndarray:
        """Servers nothing runs on."""
        return (self.workers == self.capacity_w) & (self.ps == self.capacity_p)

    def take(self, workers: np.ndarray, ps: np.ndarray) -> None:
        self.workers -= workers
        self.ps -= ps


def with_ps(instance: MultiTenantInstance, free: FreeSlots, workers: np.ndarray) -> np.ndarray | None:
    """One PS on the free-PS server holding the most of ``workers`` (the lowest index among equals)
    that satisfies (3i), or None."""
    remote = int(workers.sum()) - workers
    candidates = np.flatnonzero((free.ps > 0) & (ps_needed(remote, instance.worker_bandwidth, instance.ps_bandwidth) <= 1))
    if not candidates.size:
        return None
    ps = np.zeros_like(workers)
    ps[candidates[np.argmax(workers[candidates])]] = 1
    return ps


def first_fit(instance: MultiTenantInstance, free: FreeSlots, size: int,
              servers: Sequence[int]) -> tuple[np.ndarray, np.ndarray] | None:
    """``size`` workers on ``servers`` in order, as many per server as fit, then the PS; None if impossible."""
    workers = np.zeros_like(free.workers)
    left = size
    for s in servers:
        if left == 0:
            break
        got = min(int(free.workers[s]), left)
        workers[s] += got
        left -= got
    if left:
        return None
    ps = with_ps(instance, free, workers)
    return None if ps is None else (workers, ps)
