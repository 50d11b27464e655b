"""RRH, the Risk-Reward Heuristic of Irwin et al. (HPDC'04) (paper §V-A (iii)); the delay cost,
threshold and ranking are the spec's [R] operationalisation (§5.3, A13).

Each job runs with fixed (n_w, n_ps) (see :mod:`mlsched.baselines.fixed_counts`). At slot t, with
rt_j = ceil(remaining_j / n_w,j) slots left at full speed,

    gain_j = f_j(t + rt_j - 1 - a_j)
    dc_j   = sum_{k != j admitted, unfinished} [ f_k(t + rt_k - 1 - a_k) - f_k(t + rt_k - 1 + rt_j - a_k) ]
    score_j = gain_j - dc_j.

A job is admitted at arrival iff its score (against the jobs admitted so far, same-slot arrivals
in index order) exceeds theta (default 0), else rejected for good. At each event, running jobs
with score <= theta pause (resources released, progress kept); then every admitted job that is
not running, by score_j / rt_j descending (ties by index), starts if its score exceeds theta and
its round-robin placement succeeds (no head-of-line blocking). A job always resumes with the
same (n_w, n_ps).
"""

from __future__ import annotations

import numpy as np

from mlsched.baselines.fixed_counts import FixedCountPolicy
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.engine import SlotState


class RRH(FixedCountPolicy):
    name = "rrh"

    def __init__(self, *, seed: int = 0, threshold: float = 0.0) -> None:
        super().__init__(seed=seed)
        self.threshold = threshold

    def slots_left(self, jobs: list[int], progress: np.ndarray) -> np.ndarray:
        """rt_j = ceil(remaining_j / n_w,j), at least 1 for an unfinished job, (len(jobs),)."""
        remaining = np.maximum(self.instance.workload[jobs] - progress[jobs], 0.0)
        return np.maximum(1, np.ceil(remaining / self.counts[jobs, 0] - EPS)).astype(np.int64)

    def scores(self, jobs: list[int], t: int, progress: np.ndarray) -> np.ndarray:
        """score_j = gain_j - dc_j at slot t of every job of ``jobs``, the others of ``jobs``
        being the admitted unfinished jobs whose delay dc_j counts, (len(jobs),)."""
        rt = self.slots_left(jobs, progress)
        delay = t + rt - 1 - self.instance.arrival[jobs]              # x of f_j if j runs from now
        # value[k, 0] = f_k(delay_k); value[k, 1 + j] = f_k(delay_k + rt_j)
        shifts = np.concatenate([[0], rt])
        value = np.array([self.instance.jobs[k].utility.value(delay[n] + shifts)
                          for n, k in enumerate(jobs)], dtype=float).reshape(len(jobs), len(jobs) + 1)
        gain = value[:, 0]
        loss = gain[:, None] - value[:, 1:]                            # loss[k, j]: k delayed by rt_j
        np.fill_diagonal(loss, 0.0)
        return gain - loss.sum(axis=0)

    def reschedule(self, state: SlotState) -> None:
        t, progress = state.t, state.progress
        admitted = [int(k) for k in self.active(state) if k not in state.arrivals]
        for i in state.arrivals:
            if self.scores(admitted + [i], t, progress)[-1] > self.threshold:
                admitted.append(i)
            else:
                self.rejected[i] = True
        score = dict(zip(admitted, self.scores(admitted, t, progress)))
        self.release([j for j in admitted if self.running(j) and score[j] <= self.threshold])
        waiting = [j for j in admitted if not self.running(j) and score[j] > self.threshold]
        rank = dict(zip(waiting, np.array([score[j] for j in waiting]) / self.slots_left(waiting, progress)))
        residual_w, residual_ps = self.residual()
        for j in sorted(waiting, key=lambda j: (-rank[j], j)):
            self.launch(j, residual_w, residual_ps)
