"""Finish-time fairness rho = T_sh / T_id of Themis apps (Themis §1.5-1.7).

An app is a list of phases; each phase lists its jobs' remaining serial work w_j = r_j tau_j
(GPU-seconds) and GPU caps d_j. For an allocation G (the app's holdings plus a bundle):

  T_sh(G) = elapsed + sum_p T_sh(p),   T_id = T_cluster * N_avg,   T_cluster = W_total / min(R_C, D_a)

with the intra-app split of §1.7: with k = |G| >= n_p jobs, every job gets one GPU and the rest go
one at a time to the job with the largest w_j / g_j below its cap (ties by lower job index);
T_sh(p) = max_j w_j S_j / g_j. With k < n_p, jobs run one GPU each in LPT waves and T_sh(p) is
the LPT makespan on k GPUs. S_j = s[level(G_j)] from the job's placement profile; GPUs are given to
jobs by best-fit consolidation (machines with the most G-GPUs first). rho(empty) = +inf. On a
heterogeneous cluster job j runs at speed_j, the app's speed on the slowest GPU type of G_j
(T_sh(p) = max_j w_j S_j / (g_j speed_j)); LPT waves are estimated at the slowest type of G.

This is the agent's estimate. The rules it applies (split, LPT, consolidation, slowdown) are the
family's physics in :mod:`mlsched.instance.themis_physics`, which the simulator executes and its
checker verifies; the simulator never runs or checks anything with this estimator.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis_physics import assign, lpt_makespan, lpt_order, slowdown, speed, split, uniform_speed
from mlsched.sim.event_engine import AppView

KEPT_TIMES_MAX = 4096   # estimates an app keeps across rounds before they are dropped
KEPT_PHASE_RULES = 1 << 12   # (work, caps, GPU count) whose split and LPT makespan are kept
KEPT_PLACEMENTS = 1 << 12    # (GPUs, job counts, profile) whose jobs' slowdowns are kept
UNIT_ROUNDOFF = 2.0 ** -53   # u: a float operation's relative rounding error is at most u


@dataclass(frozen=True)
class Phase:
    work: tuple[float, ...]        # w_j: remaining serial GPU-seconds per job
    caps: tuple[int, ...]          # d_j


@dataclass(frozen=True)
class App:
    phases: tuple[Phase, ...]
    t_id: float                    # T_cluster * N_avg
    elapsed: float = 0.0
    profile: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)   # S by placement level 0..3
    speeds: Mapping[str, float] = field(default_factory=dict)   # speed per GPU type (empty: 1)

    @classmethod
    def single_job(cls, work: float, cap: int, *, cluster_gpus: int, n_avg: float, elapsed: float = 0.0,
                   profile: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)) -> App:
        return cls((Phase((work,), (cap,)),), t_id=work / min(cluster_gpus, cap) * n_avg, elapsed=elapsed,
                   profile=profile)

    @property
    def demand(self) -> int:
        """D_a: the largest total cap of any phase."""
        return max(sum(p.caps) for p in self.phases)


def placement(phase: Phase, gpus: Sequence[int], topology: GpuTopology, profile: Sequence[float],
              speeds: Mapping[str, float]) -> list[tuple[int, float, float]]:
    """(GPUs, slowdown S_j, speed_j) per job when k >= number of jobs (§1.7 steps 1 and 3)."""
    return [(g, slow, speed(speeds, job, topology)) for g, slow, job in _jobs(phase, gpus, topology, profile)]


def _jobs(phase: Phase, gpus: Sequence[int], topology: GpuTopology,
          profile: Sequence[float]) -> tuple[tuple[int, float, frozenset[int]], ...]:
    """(GPUs, slowdown S_j, GPU set) of each job when k >= number of jobs, from the kept split
    (:func:`_counts`) and slowdowns (:func:`_slowed`)."""
    return _slowed(tuple(gpus), _counts(tuple(phase.work), tuple(phase.caps), len(gpus)), tuple(profile), topology)


@lru_cache(maxsize=KEPT_PLACEMENTS)
def _slowed(gpus: tuple[int, ...], counts: tuple[int, ...], profile: tuple[float, ...],
            topology: GpuTopology) -> tuple[tuple[int, float, frozenset[int]], ...]:
    """(GPUs, slowdown S_j, GPU set) of each job given ``counts`` GPUs of G, kept: the bidders of an
    auction value the same bundles, and their jobs often take the same counts."""
    sets = assign(list(gpus), counts, topology)   # from all of G: a phase needing fewer GPUs takes the best-fit ones
    return tuple((g, slowdown(profile, job, topology), job) for g, job in zip(counts, map(frozenset, sets)))


@lru_cache(maxsize=KEPT_PHASE_RULES)
def _counts(work: tuple[float, ...], caps: tuple[int, ...], k: int) -> tuple[int, ...]:
    """:func:`split`, kept: an agent values many bundles of each size on the same work."""
    return tuple(split(work, caps, k))


@lru_cache(maxsize=KEPT_PHASE_RULES)
def _makespan(work: tuple[float, ...], k: int) -> float:
    """:func:`lpt_makespan`, kept (as :func:`_counts`)."""
    return lpt_makespan(work, k)


def forget_kept_rules() -> None:
    """Empty the kept splits, LPT makespans and job slowdowns (:func:`_counts`, :func:`_makespan`,
    :func:`_slowed`): a benchmark that values the same bundles again times a first valuation from here."""
    _counts.cache_clear()
    _makespan.cache_clear()
    _slowed.cache_clear()


def _duration(work: float, rate: float) -> float:
    return work / rate if rate > 0 else math.inf


def phase_time(phase: Phase, gpus: Sequence[int], topology: GpuTopology, profile: Sequence[float],
               speeds: Mapping[str, float]) -> float:
    k = len(gpus)
    if k == 0:
        return math.inf
    if k < len(phase.work):
        return _duration(_makespan(tuple(phase.work), k), speed(speeds, gpus, topology))
    jobs = _jobs(phase, gpus, topology, profile)
    if uniform_speed(speeds, topology):   # every job at speed 1: w S / (g 1.0) is w S / g
        return max(w * slow / g for w, (g, slow, _) in zip(phase.work, jobs))
    return max(_duration(w * slow, g * speed(speeds, job, topology)) for w, (g, slow, job) in zip(phase.work, jobs))


def placement_score(app: App, gpus: Sequence[int], topology: GpuTopology) -> float:
    """Mean 1/S_j over the current phase's jobs under G (1.0 when jobs run one GPU each)."""
    phase = app.phases[0]
    if len(gpus) < len(phase.work):
        return 1.0
    return float(np.mean([1.0 / s for _, s, _ in placement(phase, gpus, topology, app.profile, app.speeds)]))


def time_left(app: App, gpus: Sequence[int], topology: GpuTopology) -> float:
    """T_sh(G) - elapsed: the sum of the phase times under G."""
    gpus = tuple(gpus)   # once for all phases (each looks its jobs' slowdowns up by it)
    return sum(phase_time(p, gpus, topology, app.profile, app.speeds) for p in app.phases)


def rho(app: App, gpus: Sequence[int], topology: GpuTopology) -> float:
    """rho(G) of §1.5: (elapsed + sum of phase times under G) / T_id; +inf for no GPUs."""
    if len(gpus) == 0:
        return math.inf
    return (app.elapsed + time_left(app, gpus, topology)) / app.t_id


def rho_bounds(app: App, gpus: Sequence[int], topology: GpuTopology) -> tuple[float, float]:
    """(lo, hi) with lo <= rho(G) <= hi, the floats too (with the left-to-right float sums of
    Python 3.11; the ranking keeps its BOUND_MARGIN whatever the summation), without the LPT waves: a phase with k < n
    jobs takes :func:`waves_bounds`; every other phase its exact time (summed as :func:`rho` does,
    so that the bounds are rho(G) itself when no phase runs in waves)."""
    k = len(gpus)
    if k == 0:
        return math.inf, math.inf
    rate = speed(app.speeds, gpus, topology)
    return _bounds(app.elapsed, app.t_id, [
        waves_bounds(math.fsum(p.work), max(p.work), len(p.work), k, rate) if k < len(p.work)
        else (phase_time(p, gpus, topology, app.profile, app.speeds),) * 2 for p in app.phases])


def _bounds(elapsed: float, t_id: float, phases: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(elapsed + sum of the phases' lower times) / T_id and the same of their upper times, the
    sums taken as :func:`time_left` takes them."""
    return ((elapsed + sum(low for low, _ in phases)) / t_id, (elapsed + sum(high for _, high in phases)) / t_id)


def waves_bounds(total: float, longest: float, jobs: int, k: int, rate: float) -> tuple[float, float]:
    """Bounds on the time of n = ``jobs`` > k one-GPU jobs of total work W and longest w_max in LPT
    waves on k GPUs at ``rate``, valid for the floating-point makespan of :func:`lpt_makespan`:

    - lower, max(w_max, W / k): the busiest GPU runs w_max, and at least the mean load W / k;
    - upper, W / k + (1 - 1/k) w_max (Graham's list-scheduling bound): the job that ends last,
      of work w, starts once every GPU is busy, by (W - w) / k, so it ends by
      W / k + (1 - 1/k) w <= W / k + (1 - 1/k) w_max; with k = 1 this is W itself.

    Rounding (u = 2^-53). The heap compares float loads, so the argument is made on them: a float
    load is a sum of at most n positive terms, within a factor 1 +- n u of its real value. Let c be
    the GPU that ends last and w its last job. If w opened c, the makespan is w <= w_max. Otherwise
    c's float load when w joined was the least of the k float loads, hence at most their mean, at
    most (1 + n u)(W - w) / k; adding w rounds once more, so the float makespan is at most
    (1 + (n + 2) u) (W / k + (1 - 1/k) w_max). The computed bound (W however it was summed, 1/k, the
    product, the sum) is at least 1 - (n + 6) u of its real value, so widening it by
    4 (n + 3) u (> (2n + 8) u plus the widening's own rounding) keeps it above the float makespan.
    Below: the float makespan is at least w_max exactly (float addition of non-negative numbers is
    monotone) and at least the mean float load, at least (1 - n u) W / k, which the widened W / k
    stays under."""
    slack = 4 * (jobs + 3) * UNIT_ROUNDOFF
    low = max(longest, total / k * (1.0 - slack))
    high = (total / k + (1.0 - 1.0 / k) * longest) * (1.0 + slack)
    return _duration(low, rate), _duration(high, rate)


def successive_halving(iteration_times: Sequence[float], budget: float, *, cap: int, cluster_gpus: int,
                       n_avg: float) -> App:
    """An SH app as in the worked example (§1.6): phases of n, n/2, ..., 1 jobs; each phase but the
    last gets budget / P serial GPU-seconds at the median iteration time for survivors; the last phase
    takes what remains. T_id = budget / min(R_C, D_a) * N_avg."""
    n = len(iteration_times)
    phases_count = int(math.log2(n)) + 1
    taus = list(iteration_times)
    median = float(np.median(taus))
    phases = []
    spent = 0.0
    for p in range(phases_count):
        jobs = n // 2**p
        tau = taus if p == 0 else [median] * jobs
        if p < phases_count - 1:
            iters = math.floor((budget / phases_count) / sum(tau))
        else:
            iters = round((budget - spent) / sum(tau))
        spent += iters * sum(tau)
        phases.append(Phase(tuple(iters * t for t in tau), (cap,) * jobs))
    demand = max(sum(p.caps) for p in phases)
    return App(tuple(phases), t_id=budget / min(cluster_gpus, demand) * n_avg)


def estimate(view: AppView, profile: Sequence[float] | None = None) -> App:
    """The §1.7 estimator's view of an active app at a round of the simulator; ``profile``
    overrides its slowdowns (a misreport). Cached in the view's memo."""
    key = ("estimate", tuple(profile) if profile is not None else None)
    if key not in view.memo:
        current = Phase(view.current_work, view.current_caps)
        later = tuple(Phase(work, caps) for work, caps in view.future_phases)
        view.memo[key] = App((current, *later), t_id=view.t_id, elapsed=view.elapsed,
                             profile=tuple(profile or view.app.profile), speeds=view.app.speed_of)
    return view.memo[key]  # type: ignore[return-value]


def _kept_times(view: AppView, reported: tuple[float, ...] | None) -> dict[object, float]:
    """:func:`time_left` of the app's estimates by GPU set (or count), kept in the view's carry from
    round to round while the estimate's inputs other than elapsed and T_id stay: the alive jobs'
    work and caps and the later phases (the same :attr:`AppView.work_stamp`; an app holding no GPUs
    keeps them) and the reported profile. Emptied when it grows past KEPT_TIMES_MAX entries."""
    times = view.memo.get(("times", reported))
    if times is None:
        state = (view.work_stamp, reported)
        kept = view.carry.get("times")
        if kept is None or kept[0] != state or len(kept[1]) > KEPT_TIMES_MAX:
            kept = view.carry["times"] = (state, {})
        times = view.memo[("times", reported)] = kept[1]
    return times  # type: ignore[return-value]


def _later_jobs(view: AppView) -> tuple[float, int]:
    """The fewest and the most jobs of a phase after the current one (+inf and 0 without one), kept
    in the view's carry while the later phases stay (the same tuple from the engine)."""
    kept = view.carry.get("later")
    if kept is None or kept[0] is not view.future_phases:
        counts = [len(work) for work, _ in view.future_phases]
        kept = view.carry["later"] = (view.future_phases, min(counts, default=math.inf), max(counts, default=0))
    return kept[1], kept[2]  # type: ignore[return-value]


def _in_waves(view: AppView, k: int) -> bool:
    """Whether every phase of the app has more alive jobs than k > 0 GPUs (each phase then runs in
    LPT waves, :func:`phase_time`, whatever the placement)."""
    return 0 < k < len(view.current_caps) and k < _later_jobs(view)[0]


def _waves_rate(view: AppView, gpus: frozenset[int], topology: GpuTopology) -> float | None:
    """The speed of the slowest GPU type of ``gpus`` when every phase runs in LPT waves on them
    (:func:`_in_waves`), else None."""
    return speed(view.app.speed_of, gpus, topology) if _in_waves(view, len(gpus)) else None


def _shape(gpus: frozenset[int], count_only: bool, waves_rate: float | None) -> object:
    """What the app's time left under ``gpus`` depends on beyond its work: the GPU count for a
    count-only app; the count and the slowest type's speed in LPT waves (``waves_rate``,
    :func:`_waves_rate`); else the GPU set."""
    if count_only:
        return len(gpus)
    if waves_rate is not None:
        return "waves", len(gpus), waves_rate
    return gpus


def _sorted_phases(view: AppView) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """(work, the same sorted in decreasing order) of every phase as arrays, the current one's alive
    jobs first: kept in the view's carry, the current phase's while its work stays (the same
    :attr:`AppView.work_stamp`), the later phases' while they stay (the same tuple from the engine)."""
    kept = view.carry.get("sorted")
    if kept is None or kept[0] != view.work_stamp:
        work = view.current_work_array
        kept = view.carry["sorted"] = (view.work_stamp, ((work, lpt_order(work)), *_sorted_later(view)))
    return kept[1]  # type: ignore[return-value]


def _sorted_later(view: AppView) -> tuple[tuple[np.ndarray, np.ndarray], ...]:
    """(work, the same sorted in decreasing order) of every phase after the current one, as arrays."""
    kept = view.carry.get("sorted later")
    if kept is None or kept[0] is not view.future_phases:
        arrays = [np.array(work, dtype=float) for work, _ in view.future_phases]
        kept = view.carry["sorted later"] = (view.future_phases, tuple((work, lpt_order(work)) for work in arrays))
    return kept[1]  # type: ignore[return-value]


def _waves_time(view: AppView, k: int, rate: float) -> float:
    """:func:`time_left` in LPT waves (:func:`_in_waves`) without building the estimate: the
    same LPT makespans at ``rate``, summed in the same order, on the work sorted once per work
    stamp."""
    return sum(_duration(lpt_makespan(work, k, descending), rate) for work, descending in _sorted_phases(view))


def view_rho(view: AppView, topology: GpuTopology, bundle: frozenset[int] = frozenset(),
             profile: Sequence[float] | None = None, *, count_only: bool = False) -> float:
    """rho_i(H_i U bundle) (§1.5) of an active app as its agent estimates it; +inf without GPUs.
    Cached in the view's memo (the auction asks for the same GPU set many times in a round), and
    its time left across rounds (:func:`_kept_times`) by what it depends on (:func:`_shape`;
    ``count_only``: the app's rho depends on its GPU count only,
    :func:`mlsched.online.themis.policy.count_only`). rho = (elapsed + time left) / T_id, the same
    float operations as :func:`rho` on :func:`estimate`."""
    gpus = view.holdings | bundle if bundle else view.holdings
    if not gpus:
        return math.inf
    reported = tuple(profile) if profile is not None else None
    key = ("rho", gpus, reported)
    value = view.memo.get(key)
    if value is None:
        rate = _waves_rate(view, gpus, topology)
        times = _kept_times(view, reported)
        shape = _shape(gpus, count_only, rate)
        spent = times.get(shape)
        if spent is None:
            spent = times[shape] = (_waves_time(view, len(gpus), rate) if rate is not None
                                    else time_left(estimate(view, profile), sorted(gpus), topology))
        value = view.memo[key] = (view.elapsed + spent) / view.t_id
    return value  # type: ignore[return-value]


def view_rho_bounds(view: AppView, topology: GpuTopology, bundle: frozenset[int] = frozenset(),
                    profile: Sequence[float] | None = None, *, count_only: bool = False) -> tuple[float, float]:
    """Bounds on :func:`view_rho`: its value when it is already known, when no phase runs in LPT
    waves (:func:`rho_bounds` would be that value) or when every phase does and its time left is
    kept; :func:`rho_bounds` when some phases do; from the alive jobs' total and longest work alone
    (no estimate built) when every phase does."""
    gpus = view.holdings | bundle if bundle else view.holdings
    reported = tuple(profile) if profile is not None else None
    known = view.memo.get(("rho", gpus, reported))
    if known is not None:
        return known, known  # type: ignore[return-value]
    k = len(gpus)
    jobs = len(view.current_caps)
    fewest_later, most_later = _later_jobs(view)
    if k >= jobs and k >= most_later:   # no phase in waves: rho_bounds would be the value itself
        known = view_rho(view, topology, bundle, profile, count_only=count_only)
        return known, known
    if not (0 < k < jobs and k < fewest_later):   # not every phase in waves (:func:`_in_waves`)
        return rho_bounds(estimate(view, profile), sorted(gpus), topology)
    rate = speed(view.app.speed_of, gpus, topology)
    if _shape(gpus, count_only, rate) in _kept_times(view, reported):
        known = view_rho(view, topology, bundle, profile, count_only=count_only)
        return known, known
    total, longest = view.current_extent
    return _bounds(view.elapsed, view.t_id, [waves_bounds(total, longest, jobs, k, rate), *(
        waves_bounds(later_total, later_longest, later_jobs, k, rate)
        for later_total, later_longest, later_jobs in view.future_extents)])


def surely_finite(view: AppView, bundle: frozenset[int] = frozenset()) -> bool:
    """Whether rho_i(H_i U bundle) is finite without computing it: some GPU, and a positive speed on
    every GPU type (then every job's rate is positive)."""
    speeds = view.app.speed_of
    return bool(view.holdings or bundle) and (not speeds or all(v > 0 for v in speeds.values()))
