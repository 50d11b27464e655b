"""Baselines for SoW scheduling (spec §8, item 7; not from the paper, for context).

* ``GreedyStart`` (a): no prices, no eviction priority. A job starts on arrival when its width fits
  beside the jobs already running (FIFO admission) and it can still earn value (v(a) > 0);
  otherwise it is turned away. Running jobs are never evicted: no round is ever overloaded.
* ``UpFrontReservation`` (b): at its birth a job reserves d nodes on every round any of its support
  points could run in when started on arrival (the union of [a, a + l - 1]), if those rounds still
  have d nodes unreserved; it then starts on arrival inside its reservation. Nothing is ever evicted.
* Evict-everything-and-reset (c) is ``SowMechanism(eviction="all")``; the FIFO-eviction variant of
  Algorithm 2 (d) is ``SowMechanism(eviction="fifo")``.
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


class UpFrontReservation:
    """Reserve every round the job could need at its birth; start on arrival (baseline (b))."""

    name = "reservation"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def simulate(self, instance: SowInstance, realization: Realization, sample: int = 0) -> SowOutcome:
        T, rounds = instance.horizon, instance.horizon + instance.max_duration + 2
        reserved = np.zeros(rounds, dtype=np.int64)
        occupied = np.zeros(rounds, dtype=np.int64)
        outcomes = []
        for j, job in enumerate(instance.jobs):     # births in submission order
            sow = job.reported
            need = np.zeros(rounds, dtype=bool)
            for p in sow.support:
                need[p.arrival:min(p.arrival + p.duration, rounds)] = True
            fits = bool(np.all(reserved[need] + sow.width <= instance.capacity))
            plan = {(p.arrival, p.signal): (p.arrival if fits else None) for p in sow.support}
            out = JobOutcome(plan=plan, prices=np.zeros((rounds, instance.max_duration)), estimated_utility=0.0,
                             relaxed_utility=0.0, switched=False, max_estimate=0.0)
            outcomes.append(out)
            a, l, sig = realization.arrival[j], realization.duration[j], realization.signal[j]
            if (a, sig) not in plan:
                out.status, out.removed_at = "outside_support", a
                continue
            if not fits:
                out.status, out.removed_at = "not_launched", a
                continue
            reserved[need] += sow.width
            out.start = a
            end = a + l - 1
            longest = max(p.duration for p in sow.support if (p.arrival, p.signal) == (a, sig))
            if l > longest or end > T:     # it outlived its report (stopped, as in Alg. 1) or the horizon
                stop = min(a + longest, T + 1)
                occupied[a:stop] += sow.width
                out.status, out.removed_at = ("outside_support" if l > longest else "evicted"), stop
                continue
            occupied[a:end + 1] += sow.width
            out.status, out.completion = "completed", end
            out.value = job.sow.value(job.birth, end) if sow.width >= job.width else 0.0
        return SowOutcome(jobs=outcomes, relaxed_usage=reserved[:T + 1].astype(float), load=occupied[:T + 1].copy(),
                          eviction="none")
