"""Fixed worker and PS counts of the FIFO and RRH baselines (paper §V-A: "fixed to a number in
[1, 30]"; spec §5.1 table and A14, [R] choices).

Per job, in index order, with ``np.random.default_rng(seed)``:
n_w = min(N_i, U{1..30}) and n_ps = ceil(n_w b_i / B_i), the fewest PS meeting (6); n_ps <= n_w
because b_i <= B_i, so (7) holds, and n_w <= N_i gives (3).
"""

from __future__ import annotations

import numpy as np

from mlsched.baselines.placement import EventPolicy
from mlsched.instance import ClusterJobsInstance

MAX_FIXED_WORKERS = 30


def draw_fixed_counts(instance: ClusterJobsInstance, seed: int) -> np.ndarray:
    """(n_w, n_ps) per job, shape (I, 2)."""
    draws = np.random.default_rng(seed).integers(1, MAX_FIXED_WORKERS + 1, size=instance.num_jobs)
    n_w = np.minimum([job.chunks for job in instance.jobs], draws)
    n_ps = [job.ps_needed(int(w)) for job, w in zip(instance.jobs, n_w)]
    return np.stack([n_w, n_ps], axis=1).astype(np.int64)


class FixedCountPolicy(EventPolicy):
    """An event policy whose jobs always run with their fixed (n_w, n_ps) or not at all."""

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def start(self, instance: ClusterJobsInstance) -> None:
        super().start(instance)
        self.counts = draw_fixed_counts(instance, self.seed)

    def launch(self, job: int, residual_w: np.ndarray, residual_ps: np.ndarray) -> bool:
        """Place ``job`` with its fixed counts round-robin; False (nothing changed) if it does not fit."""
        placed = self.placer.place(job, int(self.counts[job, 0]), int(self.counts[job, 1]), residual_w, residual_ps)
        if placed is None:
            return False
        self.alloc_w[job], self.alloc_ps[job] = placed
        return True
