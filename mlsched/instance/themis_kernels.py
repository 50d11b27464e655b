"""The loops of the Themis family that numpy cannot make fast, compiled with numba: the LPT
makespan of §1.7 step 2 and the alive jobs' total and longest work (the estimator and the
simulator's views ask for them hundreds of thousands of times per simulated run, on apps of up to
about a thousand one-GPU jobs), and the simulator's step of the running jobs (eq. 1, at every
event, on a few dozen jobs, where numpy's cost per call outweighed its work). Imported by
:mod:`mlsched.instance.themis_physics` on the first call of one of them, so that importing the
family does not import numba, and compiled once per machine (numba's cache).

The float results are the ones the rules define. LPT: one GPU runs the jobs in turn, the
left-to-right sum in job order. With k >= n GPUs each job has its own: the longest. Otherwise the
k longest jobs open the k GPUs and each further job, longest first, joins a least-loaded GPU: its
load becomes that load plus the job, one float addition, as in a list schedule by hand. Which of
several equally loaded GPUs it joins does not change the multiset of loads, hence nor the
makespan, their maximum. The loads are kept in a binary min-heap. The extent's total is the
left-to-right sum in job order. The step does per job the operations numpy did elementwise, in the
same order, each rounded once (no fast-math: nothing is fused or reordered).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def lpt(work: np.ndarray, descending: np.ndarray, k: int) -> float:   # pragma: no cover - compiled
    """Makespan of one-GPU jobs ``work`` (job order; ``descending``: the same sorted in decreasing
    order) on k >= 1 GPUs; n >= 1 jobs."""
    n = descending.shape[0]
    if k == 1:
        total = 0.0
        for w in work:
            total += w
        return total
    if k >= n:
        return descending[0]
    heap = descending[:k].copy()
    for start in range(k // 2 - 1, -1, -1):
        _sift_down(heap, start, k)
    for j in range(k, n):
        heap[0] = heap[0] + descending[j]
        _sift_down(heap, 0, k)
    return heap.max()


@numba.njit(cache=True)
def _sift_down(heap: np.ndarray, i: int, size: int) -> None:   # pragma: no cover - compiled
    """Moves heap[i] down until no child is smaller (a min-heap on heap[:size])."""
    value = heap[i]
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heap[child + 1] < heap[child]:
            child += 1
        if not heap[child] < value:
            break
        heap[i] = heap[child]
        i = child
    heap[i] = value


@numba.njit(cache=True)
def extent(work: np.ndarray, jobs: np.ndarray) -> tuple[float, float]:   # pragma: no cover - compiled
    """The sum, left to right, and the largest of work[jobs] (0.0 for no jobs)."""
    total = 0.0
    longest = 0.0
    for j in jobs:
        w = work[j]
        total += w
        if w > longest:
            longest = w
    return total, longest


@numba.njit(cache=True)
def soonest(remaining: np.ndarray, slots: np.ndarray, rate: np.ndarray, resume: np.ndarray, now: float,
            overhead: bool) -> float:   # pragma: no cover - compiled
    """The least of remaining[slots] / rate + begin over the running jobs, begin = max(resume, now)
    with a restart overhead, else now; +inf for no job."""
    least = np.inf
    for i in range(slots.shape[0]):
        begin = max(resume[i], now) if overhead else now
        done = remaining[slots[i]] / rate[i] + begin
        if done < least:
            least = done
    return least


@numba.njit(cache=True)
def advance(remaining: np.ndarray, slots: np.ndarray, rate: np.ndarray, resume: np.ndarray,
            finish_below: np.ndarray, now: float, t: float, overhead: bool) -> np.ndarray:   # pragma: no cover - compiled
    """Runs the jobs in ``slots`` from now to t, remaining work updated in place: a job whose
    remaining / rate + begin (as :func:`soonest`) is at most t (1 + 1e-12) is done (0.0), the others
    lose rate x (the time they ran: min(max(t - begin, 0), t - now) with a restart overhead, else
    t - now), at least 0.0. Returns the slots, in order, whose work is then at most finish_below."""
    dt = t - now
    horizon = t * (1 + 1e-12)
    done = np.empty(slots.shape[0], np.int64)
    count = 0
    for i in range(slots.shape[0]):
        slot = slots[i]
        begin = max(resume[i], now) if overhead else now
        left = remaining[slot]
        if left / rate[i] + begin <= horizon:
            left = 0.0
        else:
            ran = min(max(t - begin, 0.0), dt) if overhead else dt
            left = max(left - rate[i] * ran, 0.0)
        remaining[slot] = left
        if left <= finish_below[i]:
            done[count] = slot
            count += 1
    return done[:count]
