"""RRH, the Risk-Reward Heuristic of Irwin et al. (HPDC'04), as operationalised by spec §5.3.

Fixed (n_w, n_ps) per job as FIFO. With rt_j = ceil(remaining_j / n_w,j) slots to finish,
  gain_j = f_j(t + rt_j - 1 - a_j)
  dc_j   = sum_{k != j admitted, unfinished} [ f_k(t + rt_k - 1 - a_k) - f_k(t + rt_k - 1 + rt_j - a_k) ]
A job is admitted at arrival iff gain - dc > theta (default 0), else rejected for good. At each
event, running jobs with score = gain - dc <= theta pause (resources released, progress kept);
then every admitted job not running, by score / rt descending (ties by id), starts if its score
exceeds theta and its placement succeeds. A job always resumes with the same (n_w, n_ps).
"""

from __future__ import annotations

import math

import numpy as np

from mlsched.baselines.placement import EventPolicy, fixed_counts
from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.engine import SlotState


class RRH(EventPolicy):
    name = "rrh"

    def __init__(self, *, seed: int = 0, threshold: float = 0.0) -> None:
        self.seed = seed
        self.threshold = threshold

    def start(self, instance: ClusterJobsInstance) -> None:
        super().start(instance)
        self.counts = fixed_counts(instance, np.random.default_rng(self.seed))

    def _slots_left(self, j: int, progress: np.ndarray) -> int:
        remaining = max(0.0, float(self.instance.workload[j] - progress[j]))
        return max(1, math.ceil(remaining / self.counts[j, 0] - EPS))

    def _utility(self, j: int, completion: int) -> float:
        job = self.instance.jobs[j]
        return float(job.utility.value(completion - job.arrival))

    def score(self, j: int, others: list[int], t: int, progress: np.ndarray) -> float:
        """gain_j - dc_j at slot t."""
        rt_j = self._slots_left(j, progress)
        gain = self._utility(j, t + rt_j - 1)
        delay = 0.0
        for k in others:
            if k == j:
                continue
            rt_k = self._slots_left(k, progress)
            delay += self._utility(k, t + rt_k - 1) - self._utility(k, t + rt_k - 1 + rt_j)
        return gain - delay

    def reschedule(self, state: SlotState) -> None:
        t, progress = state.t, state.progress
        admitted = [int(k) for k in self.active(state) if k not in state.arrivals]
        for i in state.arrivals:
            if self.score(i, admitted, t, progress) > self.threshold:
                admitted.append(i)
            else:
                self.rejected[i] = True
        scores = {j: self.score(j, admitted, t, progress) for j in admitted}
        running = [j for j in admitted if self.alloc_w[j].any()]
        self.release([j for j in running if scores[j] <= self.threshold])
        waiting = [j for j in admitted if not self.alloc_w[j].any() and scores[j] > self.threshold]
        waiting.sort(key=lambda j: (-scores[j] / self._slots_left(j, progress), j))
        residual_w, residual_ps = self.residual()
        for j in waiting:
            placed = self.placer.place(j, int(self.counts[j, 0]), int(self.counts[j, 1]), residual_w, residual_ps)
            if placed is not None:
                self.alloc_w[j], self.alloc_ps[j] = placed
