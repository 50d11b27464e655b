"""Baselines for SoW scheduling (spec §8, item 7; not from the paper, for context).

* ``GreedyStart`` (a): no prices, no eviction priority. A job starts on arrival when its width fits
  beside the jobs already running (FIFO admission) and it can still earn value (v(a) > 0);
  otherwise it is turned away. Running jobs are never evicted: no round is ever overloaded.
* ``UpFrontReservation`` (b): at its birth a job reserves d nodes on every round any of its support
  points could run in when started on arrival (the union of [a, a + l - 1]), if those rounds still
  have d nodes unreserved; it then starts on arrival inside its reservation. Nothing is ever evicted.
  Its menu is 0 for intervals inside the reservation and infinite outside, so a job that outlives
  its reservation (only a misreport can) is stopped where the reservation ends, as Algorithm 1 stops
  a job whose price becomes infinite.
* Evict-everything-and-reset (c) is ``SowMechanism(eviction="all")``; the FIFO-eviction variant of
  Algorithm 2 (d) is ``SowMechanism(eviction="fifo")``.
Baselines charge nothing, so their welfare is the sum of their jobs' utilities.
"""

from __future__ import annotations

import numpy as np

from mlsched.instance.sow import Realization, SowInstance, SowJob
from mlsched.online.sow.mechanism import JobOutcome, SowOutcome


def _unpriced(plan: dict[tuple[int, int], int | None], instance: SowInstance,
              prices: np.ndarray | None = None) -> JobOutcome:
    """A job's record under a baseline: its plan and its price table (all zero unless given)."""
    rounds = instance.horizon + instance.max_duration + 2
    table = np.zeros((rounds, instance.max_duration)) if prices is None else prices
    return JobOutcome(plan=plan, prices=table, estimated_utility=0.0, relaxed_utility=0.0, switched=False,
                      max_estimate=0.0)


def _run_from_arrival(out: JobOutcome, job: SowJob, instance: SowInstance, realization: Realization, j: int,
                      occupied: np.ndarray) -> None:
    """Start job j on its arrival and run it to completion, unless its price becomes infinite while it
    runs (stopped then, as in Algorithm 1) or it outlives the horizon (evicted)."""
    a, l = realization.arrival[j], realization.duration[j]
    width, T = job.reported.width, instance.horizon
    out.start, end = a, a + l - 1
    unpriced = [a + k - 1 for k in range(2, l + 1) if np.isinf(out.prices[a, k - 1])]
    if unpriced or end > T:
        stop = min(unpriced[0] if unpriced else T + 1, T + 1)
        occupied[a:stop] += width
        out.status, out.removed_at = ("outside_support" if unpriced and stop <= T else "evicted"), stop
        return
    occupied[a:end + 1] += width
    out.status, out.completion = "completed", end
    out.value = job.sow.value(job.birth, end) if width >= job.width else 0.0


class GreedyStart:
    """Start on arrival if the job fits now; never evict (baseline (a))."""

    name = "greedy"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def simulate(self, instance: SowInstance, realization: Realization, sample: int = 0) -> SowOutcome:
        T = instance.horizon
        occupied = np.zeros(T + instance.max_duration + 2, dtype=np.int64)
        outcomes = [_unpriced({(p.arrival, p.signal): p.arrival for p in job.reported.support}, instance)
                    for job in instance.jobs]
        for j in sorted(range(instance.num_jobs), key=lambda j: (realization.arrival[j], j)):
            job, out = instance.jobs[j], outcomes[j]
            a, sig = realization.arrival[j], realization.signal[j]
            if (a, sig) not in out.plan:
                out.status, out.removed_at = "outside_support", a
            elif a > T or job.reported.value(job.birth, a) <= 0 or occupied[a] + job.reported.width > instance.capacity:
                out.status, out.removed_at = "cancelled", a
            else:
                _run_from_arrival(out, job, instance, realization, j, occupied)
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
            out = _unpriced({(p.arrival, p.signal): (p.arrival if fits else None) for p in sow.support}, instance,
                            _reservation_menu(need, instance.max_duration))
            outcomes.append(out)
            a, sig = realization.arrival[j], realization.signal[j]
            if (a, sig) not in out.plan:
                out.status, out.removed_at = "outside_support", a
            elif not fits:
                out.status, out.removed_at = "not_launched", a
            else:
                reserved[need] += sow.width
                _run_from_arrival(out, job, instance, realization, j, occupied)
        return SowOutcome(jobs=outcomes, relaxed_usage=reserved[:T + 1].astype(float), load=occupied[:T + 1].copy(),
                          eviction="none")


def _reservation_menu(reserved: np.ndarray, max_duration: int) -> np.ndarray:
    """Price 0 for [s, s + l - 1] inside the reserved rounds, infinite otherwise ([s, l - 1] table)."""
    rounds = reserved.shape[0]
    table = np.full((rounds, max_duration), np.inf)
    for s in range(rounds):
        run = int(np.cumprod(reserved[s:s + max_duration]).sum())
        table[s, :run] = 0.0
    return table
