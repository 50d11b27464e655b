"""Baselines for SoW scheduling (spec §8, item 7; not from the paper, for context).

* ``GreedyStart`` (a): no prices, no eviction priority. A job starts on arrival when its width fits
  beside the jobs already running (FIFO admission) and it can still earn value (v(a) > 0);
  otherwise it is turned away. Running jobs are never evicted: no round is ever overloaded.
* The FIFO-eviction variant of Algorithm 2 (d) is ``SowMechanism(eviction="fifo")``.
Baselines charge nothing, so their welfare is the sum of their jobs' utilities.
"""

from __future__ import annotations

import numpy as np

from mlsched.instance.sow import Realization, SowInstance
from mlsched.online.sow.mechanism import JobOutcome, SowOutcome


class GreedyStart:
    """Start on arrival if the job fits now; never evict (baseline (a))."""

    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def simulate(self, instance: SowInstance, realization: Realization, sample: int = 0) -> SowOutcome:
        T, rounds = instance.horizon, instance.horizon + instance.max_duration + 2
        occupied = np.zeros(rounds, dtype=np.int64)
        outcomes = []
        for job in instance.jobs:
            plan = {(p.arrival, p.signal): p.arrival for p in job.reported.support}
            outcomes.append(JobOutcome(plan=plan, prices=np.zeros((rounds, instance.max_duration)),
                                       estimated_utility=0.0, relaxed_utility=0.0, switched=False, max_estimate=0.0))
        order = sorted(range(instance.num_jobs), key=lambda j: (realization.arrival[j], j))
        for j in order:
            job, out = instance.jobs[j], outcomes[j]
            a, l, sig = realization.arrival[j], realization.duration[j], realization.signal[j]
            if (a, sig) not in out.plan:
                out.status, out.removed_at = "outside_support", a
                continue
            width = job.reported.width
            end = a + l - 1
            if a > T or job.reported.value(job.birth, a) <= 0 or occupied[a] + width > instance.capacity:
                out.status, out.removed_at = "cancelled", a
                continue
            out.start = a
            if end > T:
                occupied[a:T + 1] += width
                out.status, out.removed_at = "evicted", T + 1
                continue
            occupied[a:end + 1] += width
            out.status, out.completion = "completed", end
            out.value = job.sow.value(job.birth, end) if width >= job.width else 0.0
        return SowOutcome(jobs=outcomes, relaxed_usage=np.zeros(T + 1), load=occupied[:T + 1].copy(),
                          eviction="none")
