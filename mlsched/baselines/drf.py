"""DRF baseline (paper §V-A (ii); operational rule of spec §5.3, whose details are [R] choices,
A13): every job is admitted; at each event the allocations of all unfinished jobs are discarded
and recomputed by progressive filling on dominant shares

    ds_i = max( max_r n_w w_i^r / C_H^r,  max_r n_ps s_i^r / C_K^r ),

C_H^r = sum_h c_h^r, C_K^r = sum_k c_k^r (resources with C = 0 skipped). Repeatedly the
unsaturated job with the smallest ds_i (ties by index) gets one more worker and, if needed, PS
so that n_ps = ceil(n_w b_i / B_i), placed round-robin; a job whose placement fails or that has
N_i workers is saturated. Filling stops when every job is saturated. Worker counts change at
every event; migration and preemption are free.
"""

from __future__ import annotations

import heapq

import numpy as np

from mlsched.baselines.placement import EventPolicy, RoundRobin
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotState


def pool_shares(demand: np.ndarray, total: np.ndarray) -> np.ndarray:
    """demand^r / C^r for amounts ``demand`` (..., R) and a pool's total capacity C (R,); 0 where
    C^r = 0 (the resource is skipped)."""
    return np.divide(demand, total, out=np.zeros(np.shape(demand)), where=total > 0)


def progressive_filling(instance: ClusterJobsInstance, jobs: np.ndarray, placer: RoundRobin,
                        residual_w: np.ndarray,
                        residual_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DRF allocations (I, H), (I, K) of ``jobs`` placed on ``residual_w``, ``residual_ps`` (both
    updated in place), and the dominant share ds_i of every job (I,), 0 outside ``jobs``."""
    total_w = instance.worker_capacity.sum(axis=0)
    total_ps = instance.ps_capacity.sum(axis=0)
    alloc_w = np.zeros((instance.num_jobs, residual_w.shape[0]), dtype=np.int64)
    alloc_ps = np.zeros((instance.num_jobs, residual_ps.shape[0]), dtype=np.int64)
    shares = np.zeros(instance.num_jobs)
    heap = [(0.0, int(i)) for i in jobs]
    heapq.heapify(heap)
    while heap:
        _, i = heapq.heappop(heap)
        job = instance.jobs[i]
        workers = int(alloc_w[i].sum()) + 1
        if workers > job.chunks:
            continue
        ps = job.ps_needed(workers)
        placed = placer.place(i, 1, ps - int(alloc_ps[i].sum()), residual_w, residual_ps)
        if placed is None:
            continue
        alloc_w[i] += placed[0]
        alloc_ps[i] += placed[1]
        # (n w) / C rather than n (w / C): shares that are equal in exact arithmetic tie exactly
        shares[i] = max(pool_shares(workers * instance.worker_demand[i], total_w).max(),
                        pool_shares(ps * instance.ps_demand[i], total_ps).max())
        heapq.heappush(heap, (shares[i], i))
    return alloc_w, alloc_ps, shares


class DRF(EventPolicy):
    name = "drf"

    def reschedule(self, state: SlotState) -> None:
        jobs = self.active(state)
        self.release(jobs)
        residual_w, residual_ps = self.residual()
        alloc_w, alloc_ps, _ = progressive_filling(self.instance, jobs, self.placer, residual_w, residual_ps)
        self.alloc_w[jobs] = alloc_w[jobs]
        self.alloc_ps[jobs] = alloc_ps[jobs]
