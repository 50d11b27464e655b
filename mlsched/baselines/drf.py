"""DRF baseline (spec §5.3): all jobs admitted; at each event the allocations of unfinished jobs
are discarded and recomputed by progressive filling on dominant shares
    ds_i = max( max_r n_w w_i^r / C_H^r,  max_r n_ps s_i^r / C_K^r ),
C_H^r = sum_h c_h^r and C_K^r = sum_k c_k^r (resources with C = 0 skipped): repeatedly the
unsaturated job with the smallest ds_i (ties by id) gets one more worker and, if needed, PS so
that n_ps = ceil(n_w b_i / B_i), placed round-robin; a job whose placement fails or that reaches
N_i workers is saturated. Worker counts change at every event; migration is free."""

from __future__ import annotations

import numpy as np

from mlsched.baselines.placement import EventPolicy, RoundRobin
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotState


def dominant_share(instance: ClusterJobsInstance, job: int, workers: int, ps: int) -> float:
    def share(amount: np.ndarray, total: np.ndarray) -> float:
        used = total > 0
        return float(np.max(amount[used] / total[used], initial=0.0))
    return max(share(workers * instance.worker_demand[job], instance.worker_capacity.sum(axis=0)),
               share(ps * instance.ps_demand[job], instance.ps_capacity.sum(axis=0)))


def progressive_filling(instance: ClusterJobsInstance, jobs: np.ndarray, placer: RoundRobin,
                        residual_w: np.ndarray, residual_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict[int, float]]:
    """DRF allocations (I, H), (I, K) of ``jobs`` on the given residual capacity, and their shares."""
    alloc_w = np.zeros((instance.num_jobs, residual_w.shape[0]), dtype=np.int64)
    alloc_ps = np.zeros((instance.num_jobs, residual_ps.shape[0]), dtype=np.int64)
    shares = {int(i): 0.0 for i in jobs}
    open_jobs = set(shares)
    while open_jobs:
        i = min(open_jobs, key=lambda j: (shares[j], j))
        n_w = int(alloc_w[i].sum())
        job = instance.jobs[i]
        if n_w >= job.chunks:
            open_jobs.discard(i)
            continue
        extra_ps = job.ps_needed(n_w + 1) - int(alloc_ps[i].sum())
        placed = placer.place(i, 1, extra_ps, residual_w, residual_ps)
        if placed is None:
            open_jobs.discard(i)
            continue
        alloc_w[i] += placed[0]
        alloc_ps[i] += placed[1]
        shares[i] = dominant_share(instance, i, n_w + 1, int(alloc_ps[i].sum()))
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
