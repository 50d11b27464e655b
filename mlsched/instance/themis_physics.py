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
  untyped cluster or for an app without speeds); job j progresses at |G_j| speed_j / S_j;
- soonest_completion and progress: the running jobs' next completion, and their work after running
  to a later time at those rates (eq. 1), the simulator's step between events.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import ModuleType

import numpy as np

from mlsched.instance.gpu_topology import GpuTopology


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


def lpt_makespan(work: Sequence[float] | np.ndarray, k: int, descending: Sequence[float] | np.ndarray | None = None) -> float:
    """Longest-processing-time-first makespan of n >= 1 one-GPU jobs on k >= 1 GPUs (§1.7 step 2):
    one GPU runs them all in turn (their sum, in job order); with 1 < k < n the k longest jobs open
    the k GPUs and each further job joins the least-loaded one; k >= n GPUs run one job each.
    ``descending``: the work already in that order (:func:`lpt_order`), when the caller keeps it (an
    agent prices many GPU counts on the same work). Compiled (:mod:`mlsched.instance.themis_kernels`)."""
    jobs = np.ascontiguousarray(work, dtype=float)
    if k < 1 or not len(jobs):
        raise ValueError(f"LPT needs at least one job and one GPU, got {len(jobs)} jobs on {k} GPUs")
    if descending is not None:
        ordered = np.ascontiguousarray(descending, dtype=float)
    else:   # one GPU sums the work in job order; more take it sorted
        ordered = jobs if k == 1 else lpt_order(jobs)
    return float(_kernels().lpt(jobs, ordered, k))


def lpt_order(work: np.ndarray) -> np.ndarray:
    """The work of one-GPU jobs in the order LPT places them, decreasing (a new array)."""
    return -np.sort(-work)


def work_extent(work: np.ndarray, jobs: np.ndarray) -> tuple[float, float]:
    """The total (summed left to right) and the largest of ``work[jobs]``, 0.0 for no jobs (compiled)."""
    return _kernels().extent(work, jobs)  # type: ignore[no-any-return]


def soonest_completion(remaining: np.ndarray, slots: np.ndarray, rate: np.ndarray, resume: np.ndarray, now: float,
                       overhead: bool) -> float:
    """When the first of the running jobs ``slots`` completes its remaining work (eq. 1: each
    progresses at its rate from now, or, with a restart overhead, from its resume time if later);
    +inf for no job (compiled)."""
    return _kernels().soonest(remaining, slots, rate, resume, now, overhead)  # type: ignore[no-any-return]


def progress(remaining: np.ndarray, slots: np.ndarray, rate: np.ndarray, resume: np.ndarray,
             finish_below: np.ndarray, now: float, t: float, overhead: bool) -> np.ndarray:
    """Runs the jobs ``slots`` from now to t, their remaining work updated in place (eq. 1, as
    :func:`soonest_completion`): a job whose completion falls by t (1 + 1e-12) is done, the others
    lose their rate times the time they ran, at least down to 0. Returns the slots (in order) whose
    remaining work is then at most ``finish_below`` (compiled)."""
    return _kernels().advance(remaining, slots, rate, resume, finish_below, now, t, overhead)  # type: ignore[no-any-return]


@lru_cache(maxsize=1)
def _kernels() -> ModuleType:
    """The compiled loops, imported (and numba with them) on the first call."""
    from mlsched.instance import themis_kernels
    return themis_kernels


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


def uniform_speed(speeds: Mapping[str, float], topology: GpuTopology) -> bool:
    """Whether every job of the app runs at speed 1 (an app without speeds, or an untyped cluster)."""
    return not speeds or not topology.typed


def speed(speeds: Mapping[str, float], gpus: Sequence[int] | frozenset[int], topology: GpuTopology) -> float:
    """speed_j of a job running on ``gpus``: the slowest of their GPU types for the app."""
    if uniform_speed(speeds, topology):
        return 1.0
    types = topology.gpu_types
    return float(min(speeds[types[g]] for g in gpus))
