"""How the work of a Themis app executes on a set of GPUs (Themis spec §1.7): the rules the event
simulator runs jobs by and its checker verifies, kept with the instance family, apart from any
algorithm. The Themis agent's finish-time estimator (``mlsched.online.themis.rho``) calls the same
rules to make its guess, but a run is never executed or checked with the estimator.

- split: with k >= n jobs, every job gets one GPU and each further GPU goes to the job with the
  largest w_j / g_j below its cap (ties by lower job index) (step 1);
- lpt_makespan: with k < n, jobs run one GPU each in longest-processing-time waves (step 2);
- assign: concrete GPU sets by best-fit consolidation, jobs by count descending taking GPUs from
  the machine with the most remaining GPUs of the set, spilling within the same rack first (step 3);
- slowdown: S_j = s[level(G_j)] of the app's placement profile;
- speed: on a heterogeneous cluster, the app's lowest speed among the GPU types of G_j (1 on an
  untyped cluster or for an app without speeds); job j progresses at |G_j| speed_j / S_j.
"""

from __future__ import annotations

import heapq
import itertools
import math
from functools import lru_cache
from collections.abc import Mapping, Sequence

from mlsched.instance.gpu_topology import GpuTopology

UNIT_ROUNDOFF = 2.0 ** -53   # u: a float operation's relative rounding error is at most u


def split(work: Sequence[float], caps: Sequence[int], k: int) -> list[int]:
    """GPUs per job when k >= number of jobs (§1.7 step 1); the jobs below their caps wait in a
    heap keyed (-w_j / g_j, j), so each further GPU costs O(log n)."""
    g = [1] * len(work)
    open_jobs = [(-w, j) for j, w in enumerate(work) if caps[j] > 1]
    heapq.heapify(open_jobs)
    for _ in range(k - len(work)):
        if not open_jobs:
            break
        j = heapq.heappop(open_jobs)[1]
        g[j] += 1
        if g[j] < caps[j]:
            heapq.heappush(open_jobs, (-(work[j] / g[j]), j))
    return g


def lpt_makespan(work: Sequence[float], k: int, descending: Sequence[float] | None = None) -> float:
    """Longest-processing-time-first makespan of one-GPU jobs on k GPUs (§1.7 step 2): one GPU
    runs them all in turn (their sum, in job order); with 1 < k < n the k longest jobs open the k
    GPUs and each further job joins the least-loaded one. ``descending``: the work already sorted
    in decreasing order, when the caller keeps it (an agent prices many GPU counts on the same work)."""
    if k == 1:
        return float(sum(work))
    if k >= len(work):
        return float(max(work))
    ordered = descending if descending is not None else sorted(work, reverse=True)
    if _longest_alone(ordered, k):
        return ordered[0]
    loads = list(ordered[:k])
    heapq.heapify(loads)
    join = heapq.heapreplace   # the loop runs millions of times per simulation
    for w in itertools.islice(ordered, k, None):
        join(loads, loads[0] + w)
    return max(loads)


def _longest_alone(ordered: Sequence[float], k: int) -> bool:
    """Whether the LPT makespan of ``ordered`` (decreasing, non-negative, 1 < k < n) on k GPUs is its
    longest job w_0 alone, by (W - w_0) / (k - 1) + w_k < w_0 with W the total work: no other GPU
    then ever reaches w_0 (about half the estimator's LPT calls on Philly apps end so, at the cost
    of one exact sum).

    Proof. Let j >= k be the next job, the first j - 1 jobs but w_0 placed on the other k - 1 GPUs
    (none on w_0's so far). Those GPUs hold T = w_1 + ... + w_{j-1} <= W - w_0 - w_j, so the least
    loaded of them holds at most T / (k - 1) < w_0: w_j joins one of them (never w_0's GPU) and
    ends it at most (W - w_0 - w_j) / (k - 1) + w_j <= (W - w_0) / (k - 1) + w_k < w_0. Every
    other GPU's load stays at most w_0 (the openers w_1.. w_{k-1} <= w_0), so the makespan is w_0.

    Floats. A float load is a left-to-right float sum of at most n non-negative jobs, at most
    (1 + u)^n above the real sum (u = 2^-53), and each new load rounds once more: the argument
    holds for the float loads when ((W - w_0) / (k - 1) + w_k) (1 + u)^(n + 1) < w_0. The sum
    W - w_0 is math.fsum of w_1.. (exactly rounded; no cancellation), and the division, the sum
    and the product below round four more times, so widening by 4 (n + 3) u (the margin of
    :func:`mlsched.online.themis.rho.waves_bounds`) keeps the computed left side above the real
    one.

    The exact sum is skipped when w_{k-1} + w_k >= w_0: (W - w_0) / (k - 1) is at least the mean
    of w_1 .. w_{k-1}, hence at least w_{k-1}, so the test fails there (skipping it only ever
    leaves the heap to run; about a third of the calls on W1)."""
    if ordered[k - 1] + ordered[k] >= ordered[0]:
        return False
    n = len(ordered)
    others = math.fsum(itertools.islice(ordered, 1, None))
    return (others / (k - 1) + ordered[k]) * (1.0 + 4 * (n + 3) * UNIT_ROUNDOFF) < ordered[0]


def assign(gpus: Sequence[int], counts: Sequence[int], topology: GpuTopology) -> tuple[tuple[int, ...], ...]:
    """Concrete GPU sets per job by best-fit consolidation (§1.7 step 3): jobs by count descending
    take GPUs from the machine with the most remaining GPUs, spilling within the same rack first.
    GPUs the counts leave over stay unused."""
    return _assign(tuple(sorted(gpus)), tuple(counts), topology)


@lru_cache(maxsize=1 << 16)
def _assign(gpus: tuple[int, ...], counts: tuple[int, ...], topology: GpuTopology) -> tuple[tuple[int, ...], ...]:
    free: dict[int, list[int]] = {}
    for gpu in gpus:
        free.setdefault(topology.machine_of(gpu), []).append(gpu)
    rack_of = {m: topology.rack_of(ids[0]) for m, ids in free.items()}
    out: list[list[int]] = [[] for _ in counts]
    for j in sorted(range(len(counts)), key=lambda j: (-counts[j], j)):
        need, rack = counts[j], None
        while need > 0 and free:
            candidates = [m for m in free if rack is None or rack_of[m] == rack] or list(free)
            machine = max(candidates, key=lambda m: (len(free[m]), -m))
            taken, free[machine] = free[machine][:need], free[machine][need:]
            out[j] += taken
            need -= len(taken)
            rack = rack_of[machine]
            if not free[machine]:
                del free[machine]
    return tuple(map(tuple, out))


def slowdown(profile: Sequence[float], gpus: Sequence[int] | frozenset[int], topology: GpuTopology) -> float:
    """S_j of a job running on ``gpus``: the profile's slowdown at their placement level (a profile
    with one slowdown at every level, e.g. compute-intensive apps, needs no level). The level is
    asked for as a frozenset, which the topology remembers (the same job GPU sets recur)."""
    if _flat(tuple(profile)):
        return float(profile[0])
    return float(profile[topology.level(gpus if isinstance(gpus, frozenset) else frozenset(gpus))])


@lru_cache(maxsize=1 << 8)
def _flat(profile: tuple[float, ...]) -> bool:
    return len(set(profile)) == 1


def speed(speeds: Mapping[str, float], gpus: Sequence[int] | frozenset[int], topology: GpuTopology) -> float:
    """speed_j of a job running on ``gpus``: the slowest of their GPU types for the app."""
    if not speeds or not topology.typed:
        return 1.0
    types = topology.gpu_types
    return float(min(speeds[types[g]] for g in gpus))
