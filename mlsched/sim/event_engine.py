"""Event-driven simulator of the Themis family (Themis spec §1.4, §1.7, §3.3).

Apps arrive over continuous time; a GPU given to an app carries a lease that expires ``lease``
seconds later and returns it to the free pool. Events are app arrivals, lease expiries and job
(hence phase and app) completions. At each event time the engine

1. advances every running job: job j of an app progresses at g_j speed_j / S_j serial GPU-seconds
   per second (eq. 1; speed_j = 1 except on heterogeneous clusters) once its restart overhead has
   passed;
2. applies the events: completions free their app's GPUs at once, an app that can no longer use
   some GPUs (its demand dropped) releases them at once (A17), expiries return GPUs to the pool;
3. if the free pool is non-empty and some active app has unmet demand, asks the policy for one
   round of grants of free GPUs (arrivals trigger a round only then, A19), unless the policy is
   quiet until a later time and some app holds GPUs (a round-based policy inside its round);
4. re-splits every app whose GPU set or job set changed (§1.7 steps 1-3): with k >= n jobs alive
   each job gets one GPU and the rest go to the largest w_j / g_j below its cap, GPUs by best-fit
   consolidation; with k < n the k jobs with the most remaining work run on one GPU each (LPT).
   A job whose GPU set changes pays ``restart_overhead`` seconds before progressing (A18).

Finish-time fairness (§1.5): T_id = W / min(R_C, D_a) * N_avg with N_avg the time-weighted mean
number of active apps over the app's lifetime, itself included (A11); ``tid_mode="exact_share"``
uses W / min(R_C / N_avg, D_a) instead (A13). rho_final = (T_finish - T_start) / T_id.
GPU time integrates the GPUs allocated to apps, restart overhead included (A20).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

import numpy as np

from mlsched.errors import MlschedError
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisApp, ThemisInstance
from mlsched.instance.themis_physics import (assign, progress, slowdown, soonest_completion, speed, split,
                                             work_extent)
from mlsched.sim.event_check import assert_valid_run
from mlsched.sim.themis_run import DONE_TOLERANCE, Holding, JobInterval, SimOptions, ThemisRun

__all__ = ["AppView", "EventEngine", "EventPolicy", "Holding", "JobInterval", "RoundView", "SimOptions",
           "ThemisRun", "simulate"]

_record = tuple.__new__   # JobInterval(*fields), Holding(*fields) without the named tuple's Python-level __new__ (millions per run)


class AppView:
    """What a policy may know about one active app at a round: its holdings, demand, the work left
    in its current phase (alive jobs) and later phases, its elapsed time, T_id and profile.
    ``memo`` is the policy's scratch space for its own estimates of this app at this round,
    ``carry`` the same across all rounds of the run (the policy keys what it keeps there by what it
    depends on, e.g. :attr:`work_stamp`)."""

    __slots__ = ("_state", "_engine", "index", "app", "start", "elapsed", "holdings", "expired", "unmet",
                 "service", "memo", "carry", "_t_id")

    def __init__(self, state: _AppState, engine: EventEngine) -> None:
        self._state = state
        self._engine = engine
        self.index = state.index
        self.app = state.app
        self.start = state.app.arrival
        self.elapsed = engine.now - self.start
        self.holdings = state.held()
        expired = engine.just_expired.get(state.index)
        self.expired = frozenset(expired) if expired else frozenset()   # leases that ended at this event
        unmet = state.demand_now - len(state.holdings)
        self.unmet = unmet if unmet > 0 else 0
        self.service = state.service
        self.memo: dict[object, object] = {}
        self.carry = state.carry
        self._t_id: float | None = None

    @property
    def current_work(self) -> tuple[float, ...]:
        """w_j of the alive jobs of the current phase."""
        return self._state.alive_jobs()[0]

    @property
    def current_work_array(self) -> np.ndarray:
        """:attr:`current_work` as a read-only array."""
        return self._state.alive_array()

    @property
    def current_caps(self) -> tuple[int, ...]:
        return self._state.alive_caps

    @property
    def work_stamp(self) -> int:
        """A number that changes whenever the alive jobs' work or caps or the later phases may have
        changed: two rounds with the same stamp see the same :attr:`current_work`,
        :attr:`current_caps` and :attr:`future_phases`."""
        return self._state.stamp

    @property
    def current_extent(self) -> tuple[float, float]:
        """The total (summed left to right) and the largest w_j of the alive jobs."""
        return self._state.alive_extent()

    @property
    def future_phases(self) -> tuple[tuple[tuple[float, ...], tuple[int, ...]], ...]:
        """(work, caps) of every phase after the current one."""
        return self._state.future

    @property
    def future_extents(self) -> tuple[tuple[float, float, int], ...]:
        """The total (math.fsum), the largest w_j and the number of jobs of every phase after the
        current one."""
        return self._state.future_extents

    @property
    def remaining_work(self) -> float:
        """Serial GPU-seconds left over all jobs and phases."""
        return self._state.remaining_work()

    @property
    def t_id(self) -> float:
        """T_id at this round (computed once per view)."""
        if self._t_id is None:
            self._t_id = self._engine.t_id(self._state, self._engine.now)
        return self._t_id


@dataclass
class RoundView:
    now: float
    free: list[int]                     # pool order
    apps: list[AppView]                 # active apps by (arrival, index)
    lease: float


class EventPolicy(Protocol):
    """A policy may also set ``quiet_until`` (seconds): while some app holds GPUs, the engine asks
    it for no round before that time (a round-based policy between its round boundaries)."""

    name: str

    def start(self, instance: ThemisInstance, options: SimOptions) -> None:
        """Reset all state for a run."""

    def round(self, view: RoundView) -> dict[int, frozenset[int]]:
        """Grants of free GPUs: app index -> GPUs, disjoint, within each app's unmet demand."""


class _RunningSlots(NamedTuple):
    """The running jobs' slots, rates, resume times and DONE_TOLERANCE * W_j as arrays."""

    slots: np.ndarray
    rate: np.ndarray
    resume: np.ndarray
    finish_below: np.ndarray


class _RunningJobs:
    """The jobs with a positive rate by slot: their rate, resume time and the remaining work below
    which they are done (DONE_TOLERANCE * W_j), in three dicts with the same keys in the same
    order; :meth:`arrays` gathers them again only after a change."""

    def __init__(self) -> None:
        self.rate: dict[int, float] = {}
        self.resume: dict[int, float] = {}
        self.finish_below: dict[int, float] = {}
        self._arrays: _RunningSlots | None = None

    def start(self, slot: int, rate: float, resume: float, finish_below: float) -> None:
        self.rate[slot], self.resume[slot], self.finish_below[slot] = rate, resume, finish_below
        self._arrays = None

    def stop(self, slot: int) -> None:
        if self.rate.pop(slot, None) is not None:
            del self.resume[slot], self.finish_below[slot]
            self._arrays = None

    def arrays(self) -> _RunningSlots:
        if self._arrays is None:
            n = len(self.rate)
            self._arrays = _RunningSlots(np.fromiter(self.rate, np.int64, n), np.fromiter(self.rate.values(), float, n),
                                         np.fromiter(self.resume.values(), float, n),
                                         np.fromiter(self.finish_below.values(), float, n))
        return self._arrays


class _JobArrays:
    """The current phase's remaining work of every app's jobs side by side (app a in
    ``[start[a], start[a] + width[a])``, width its largest phase), so one vectorised step advances
    every running job; an app's own array is a view of its region."""

    def __init__(self, apps: Sequence[ThemisApp]) -> None:
        width = [max(len(phase) for phase in app.phases) for app in apps]
        self.start = np.concatenate([[0], np.cumsum(width)]).astype(np.int64)
        self.remaining = np.zeros(int(self.start[-1]))
        self.owner = [a for a, w in enumerate(width) for _ in range(w)]   # slot -> app

    def region(self, a: int, jobs: int) -> slice:
        """App a's slots for a phase of ``jobs`` jobs, the rest of its region cleared."""
        whole = slice(int(self.start[a]), int(self.start[a + 1]))
        self.remaining[whole] = 0.0
        return slice(whole.start, whole.start + jobs)


@dataclass
class _AppState:
    index: int
    app: ThemisApp
    arrays: _JobArrays
    phase: int = 0
    remaining: np.ndarray = field(default_factory=lambda: np.zeros(0))
    holdings: dict[int, float] = field(default_factory=dict)      # gpu -> lease expiry
    held_set: frozenset[int] | None = None                        # held() until the holdings change
    held_since: dict[int, float] = field(default_factory=dict)
    job_gpus: dict[int, frozenset[int]] = field(default_factory=dict)   # running job -> its GPU set
    job_since: list[float] = field(default_factory=list)
    job_resume: list[float] = field(default_factory=list)     # resume time of each running job
    slowdown: list[float] = field(default_factory=list)       # S_j of each running job
    speed: list[float] = field(default_factory=list)          # speed_j of each running job
    placed: dict[frozenset[int], tuple[float, float, float]] = field(default_factory=dict)   # placement() by GPU set
    service: float = 0.0
    cum_at_arrival: float = 0.0
    finish: float | None = None
    demand_now: int = 0                 # caps of the alive jobs of the current phase
    caps: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    future: tuple[tuple[tuple[float, ...], tuple[int, ...]], ...] = ()   # (work, caps) of the later phases
    future_extents: tuple[tuple[float, float, int], ...] = ()           # (fsum, max, count) of their work
    alive_work: np.ndarray | None = None                             # alive_array() until the remaining work changes
    alive: tuple[tuple[float, ...], tuple[int, ...]] | None = None   # alive_jobs() until then
    extent: tuple[float, float] | None = None                        # alive_extent() until then
    stamp: int = 0                                                   # bumped whenever the remaining work may change
    carry: dict[object, object] = field(default_factory=dict)          # AppView.carry
    alive_index: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))   # jobs with work left
    alive_caps: tuple[int, ...] = ()

    def enter_phase(self, phase: int) -> None:
        self.phase = phase
        jobs = self.app.phases[phase]
        mine = self.arrays.region(self.index, len(jobs))
        self.remaining = self.arrays.remaining[mine]
        self.remaining[:] = [j.work for j in jobs]
        self.job_gpus = {}
        self.job_since = [0.0] * len(jobs)
        self.job_resume = [0.0] * len(jobs)
        self.slowdown = [1.0] * len(jobs)
        self.speed = [1.0] * len(jobs)
        self.caps = np.array([j.cap for j in jobs], dtype=np.int64)
        self.future = tuple((tuple(j.work for j in p), tuple(j.cap for j in p)) for p in self.app.phases[phase + 1:])
        self.future_extents = tuple((math.fsum(w), max(w, default=0.0), len(w)) for w, _ in self.future)
        self.update_demand()

    def held(self) -> frozenset[int]:
        """The GPUs the app holds (one frozenset until the holdings change)."""
        if self.held_set is None:
            self.held_set = frozenset(self.holdings)
        return self.held_set

    def placement(self, gpus: frozenset[int], topology: GpuTopology) -> tuple[float, float, float]:
        """S_j, speed_j and the rate |G_j| speed_j / S_j of a job of this app on ``gpus`` (they depend
        on the app and the GPU set alone: kept for the run)."""
        known = self.placed.get(gpus)
        if known is None:
            slow, fast = slowdown(self.app.profile, gpus, topology), speed(self.app.speed_of, gpus, topology)
            known = self.placed[gpus] = (slow, fast, len(gpus) * fast / slow)
        return known

    def alive_array(self) -> np.ndarray:
        """The alive jobs' remaining work w_j (read-only), kept while the remaining work stays (an app
        holding no GPUs keeps it from round to round)."""
        if self.alive_work is None:
            self.alive_work = self.remaining[self.alive_index]
            self.alive_work.flags.writeable = False
        return self.alive_work

    def alive_jobs(self) -> tuple[tuple[float, ...], tuple[int, ...]]:
        """(w_j, d_j) of the alive jobs of the current phase, kept as :meth:`alive_array`."""
        if self.alive is None:
            self.alive = (tuple(self.alive_array().tolist()), self.alive_caps)
        return self.alive

    def alive_extent(self) -> tuple[float, float]:
        """(sum, max) of the alive jobs' remaining work (:func:`work_extent`), kept as :meth:`alive_array`."""
        if self.extent is None:
            self.extent = work_extent(self.remaining, self.alive_index)
        return self.extent

    def work_moved(self) -> None:
        """The remaining work may have changed: forget what was derived from it."""
        self.alive_work = self.alive = self.extent = None
        self.stamp += 1

    def update_demand(self) -> None:
        """GPUs the app can use now: the caps of its alive jobs (a job finished or a phase began;
        between these the alive jobs stay, as a job's work reaches 0 only while it runs and its
        completion is applied at the same event)."""
        self.alive_index = np.flatnonzero(self.remaining > 0)
        self.alive_caps = tuple(self.caps[self.alive_index].tolist())
        self.demand_now = sum(self.alive_caps)
        self.work_moved()

    def demand(self) -> int:
        return self.demand_now

    def remaining_work(self) -> float:
        return float(self.remaining.sum()) + self.app.work_after[self.phase]


class EventEngine:
    """One simulation of ``policy`` over ``instance``; call :meth:`run`."""

    def __init__(self, instance: ThemisInstance, policy: EventPolicy, options: SimOptions, *,
                 on_progress: Callable[[int, int], None] | None = None) -> None:
        self.instance = instance
        self.policy = policy
        self.options = options
        self.on_progress = on_progress
        self.now = 0.0
        self.cum_active = 0.0           # integral of N_active
        self.arrays = _JobArrays(instance.apps)
        self.first_slot: list[int] = self.arrays.start.tolist()   # app -> its first slot
        self.states = [_AppState(a, app, self.arrays) for a, app in enumerate(instance.apps)]
        self.free: set[int] = set(range(instance.num_gpus))
        self.active: list[int] = []
        self.holders: set[int] = set()                      # active apps holding GPUs (the only ones progressing)
        self.running = _RunningJobs()
        self.expiries: list[tuple[float, int, int]] = []   # (time, gpu, app)
        self.just_expired: dict[int, set[int]] = {}         # app -> GPUs whose lease ended at this event
        self.holdings: list[Holding] = []
        self.job_log: list[JobInterval] = []
        self.rounds = 0
        self.round_seconds: list[float] = []
        self.finish_t_id = np.full(len(instance.apps), math.nan)
        self._singles = [frozenset((g,)) for g in range(instance.num_gpus)]   # one-GPU job sets, shared

    # --- finish-time fairness -------------------------------------------------------------
    def n_avg(self, s: _AppState, t: float) -> float:
        if t <= s.app.arrival:
            return float(len(self.active))
        return (self.cum_active - s.cum_at_arrival) / (t - s.app.arrival)

    def t_id(self, s: _AppState, t: float) -> float:
        app, gpus, n = s.app, self.instance.num_gpus, self.n_avg(s, t)
        if self.options.tid_mode == "paper":
            return app.work / min(gpus, app.demand) * n
        return app.work / min(gpus / n, app.demand)

    # --- the loop -------------------------------------------------------------------------
    def run(self) -> ThemisRun:
        self.policy.start(self.instance, self.options)
        order = list(self.instance.arrival_order)
        next_arrival = 0
        while next_arrival < len(order) or self.active:
            slots, rate, resume, _ = self.running.arrays()
            t_next = min(self.instance.apps[order[next_arrival]].arrival if next_arrival < len(order) else math.inf,
                         self.expiries[0][0] if self.expiries else math.inf,
                         soonest_completion(self.arrays.remaining, slots, rate, resume, self.now,
                                            self.options.restart_overhead > 0))
            if not math.isfinite(t_next):
                raise MlschedError(f"{self.policy.name}: simulation stalled at t = {self.now:.1f} s with "
                                   f"{len(self.active)} apps unfinished and {len(self.free)} free GPUs")
            if t_next > self.options.max_time:
                raise MlschedError(f"{self.policy.name}: apps still running at max_time = {self.options.max_time} s")
            touched = self._completions(self._advance(t_next))
            touched |= self._expiries()
            while next_arrival < len(order) and self.instance.apps[order[next_arrival]].arrival <= self.now:
                self._arrive(order[next_arrival])
                next_arrival += 1
            touched |= self._round()
            self.just_expired.clear()
            for a in sorted(touched):
                if self.states[a].finish is None:
                    self._resplit(self.states[a])
            if self.on_progress is not None:
                self.on_progress(next_arrival - len(self.active), len(order))
        return ThemisRun(self.instance, self.policy.name, self.options,
                         finish=np.array([s.finish for s in self.states], dtype=float), t_id=self.finish_t_id,
                         holdings=self.holdings, jobs=self.job_log, rounds=self.rounds, round_seconds=self.round_seconds,
                         stats=getattr(self.policy, "stats", {}))

    def _advance(self, t: float) -> np.ndarray:
        """Every running job runs to time t; returns the slots of the jobs done by then (within
        DONE_TOLERANCE of their work, or completing by t to rounding)."""
        dt = t - self.now
        slots, rate, resume, finish_below = self.running.arrays()
        done = progress(self.arrays.remaining, slots, rate, resume, finish_below, self.now, t,
                        self.options.restart_overhead > 0)
        for a in self.holders:
            s = self.states[a]
            s.service += len(s.holdings) * dt
            s.work_moved()
        self.cum_active += len(self.active) * dt
        self.now = t
        return done

    def _arrive(self, a: int) -> None:
        s = self.states[a]
        s.enter_phase(0)
        s.cum_at_arrival = self.cum_active
        self.active.append(a)
        self.active.sort(key=lambda i: (self.instance.apps[i].arrival, i))

    def _completions(self, done: np.ndarray) -> set[int]:
        """Applies the completions of the jobs in slots ``done``."""
        finished: dict[int, list[int]] = {}     # app -> its jobs done
        owner, first_slot = self.arrays.owner, self.first_slot
        for slot in done.tolist():
            a = owner[slot]
            finished.setdefault(a, []).append(slot - first_slot[a])
        for a in sorted(finished):
            s = self.states[a]
            jobs = sorted(finished[a])
            s.remaining[jobs] = 0.0
            s.update_demand()
            self._close_jobs(s, jobs)
            if not len(s.alive_index):
                if s.phase + 1 == len(s.app.phases):
                    self._finish(s)
                    continue
                s.enter_phase(s.phase + 1)
            if len(s.holdings) > s.demand():   # A17: release what the app can no longer use
                keep = frozenset().union(*self._split(s, sorted(s.holdings)).values())
                self._release(s, [g for g in list(s.holdings) if g not in keep])
        return set(finished)

    def _finish(self, s: _AppState) -> None:
        s.finish = self.now
        self.finish_t_id[s.index] = self.t_id(s, self.now)
        self._release(s, list(s.holdings))
        self.active.remove(s.index)
        s.placed.clear()   # kept only while the app runs: a long run keeps no finished app's caches
        s.carry.clear()

    def _expiries(self) -> set[int]:
        touched = set()
        while self.expiries and self.expiries[0][0] <= self.now:
            when, gpu, a = heapq.heappop(self.expiries)
            s = self.states[a]
            if s.holdings.get(gpu) == when:
                self._release(s, [gpu])
                self.just_expired.setdefault(a, set()).add(gpu)
                touched.add(a)
        return touched

    def _release(self, s: _AppState, gpus: Sequence[int]) -> None:
        for g in gpus:
            self.holdings.append(_record(Holding, (s.index, g, s.held_since.pop(g), self.now)))
            del s.holdings[g]
            self.free.add(g)
        s.held_set = None
        if not s.holdings:
            self.holders.discard(s.index)

    def _round(self) -> set[int]:
        states = self.states
        if not self.free or not any(states[a].demand_now > len(states[a].holdings) for a in self.active):
            return set()
        if self.holders and self.now < getattr(self.policy, "quiet_until", -math.inf):
            return set()
        tick = time.perf_counter()
        view = RoundView(self.now, sorted(self.free), [AppView(states[a], self) for a in self.active],
                         self.options.lease)
        grants = self.policy.round(view)
        self.round_seconds.append(time.perf_counter() - tick)
        self.rounds += 1
        unmet = {v.index: v.unmet for v in view.apps}
        given: set[int] = set()
        for a, gpus in grants.items():
            if a not in unmet or len(gpus) > unmet[a] or not gpus <= self.free or gpus & given:
                raise MlschedError(f"{self.policy.name}: invalid grant to app {a} at t = {self.now}: "
                                   f"{sorted(gpus)} (unmet {unmet.get(a)}, free {len(self.free)})")
            given |= gpus
            s = self.states[a]
            s.held_set = None
            for g in gpus:
                s.holdings[g] = self.now + self.options.lease
                s.held_since[g] = self.now
                heapq.heappush(self.expiries, (self.now + self.options.lease, g, a))
            self.free -= gpus
            if gpus:
                self.holders.add(a)
        return {a for a, gpus in grants.items() if gpus}

    # --- execution rule (§1.7) --------------------------------------------------------------
    def _split(self, s: _AppState, gpus: list[int]) -> dict[int, frozenset[int]]:
        """The GPU set of every job of the current phase that runs (jobs without GPUs left out)."""
        if len(s.remaining) == 1:   # a one-job phase (every app of a Gavel trace): the same rule without array steps
            if not gpus or not s.remaining[0] > 0:
                return {}
            chosen = frozenset(assign(gpus, split([float(s.remaining[0])], [int(s.caps[0])], len(gpus)),
                                      self.instance.topology)[0])
            return {0: chosen} if chosen else {}
        alive = s.alive_index
        if len(gpus) >= len(alive):
            counts = split(s.remaining[alive].tolist(), s.alive_caps, len(gpus))
            return {j: frozenset(chosen) for j, chosen in zip(alive.tolist(), assign(gpus, counts, self.instance.topology))
                    if chosen}
        # LPT: the jobs with the most remaining work run, one GPU each
        order = (-s.remaining[alive]).argsort(kind="stable")     # ties by job index
        return dict(zip(alive[order[: len(gpus)]].tolist(), map(self._singles.__getitem__, gpus)))

    def _resplit(self, s: _AppState) -> None:
        sets = self._split(s, sorted(s.holdings))
        old = s.job_gpus
        changed = sorted([j for j, gpus in old.items() if sets.get(j) != gpus] + [j for j in sets if j not in old])
        self._close_jobs(s, changed)
        started = [j for j in changed if j in sets]
        if not started:
            return
        topology, now, jobs, first = self.instance.topology, self.now, s.app.phases[s.phase], self.first_slot[s.index]
        resume = now + self.options.restart_overhead
        for j in started:
            gpus = s.job_gpus[j] = sets[j]
            s.job_since[j] = now
            s.job_resume[j] = resume
            s.slowdown[j], s.speed[j], rate = s.placement(gpus, topology)
            if rate > 0:
                self.running.start(first + j, rate, resume, DONE_TOLERANCE * jobs[j].work)

    def _close_jobs(self, s: _AppState, jobs: Sequence[int]) -> None:
        """Ends the intervals of the jobs among ``jobs`` that run (in that order)."""
        now, first, log = self.now, self.first_slot[s.index], self.job_log
        for j in jobs:
            gpus = s.job_gpus.pop(j, None)
            if gpus:
                since = s.job_since[j]
                log.append(_record(JobInterval, (s.index, s.phase, j, since, now, min(max(s.job_resume[j], since), now),
                                                 gpus, s.slowdown[j], s.speed[j])))
                self.running.stop(first + j)


def simulate(instance: ThemisInstance, policy: EventPolicy, options: SimOptions | None = None, *,
             check: bool = True, on_progress: Callable[[int, int], None] | None = None) -> ThemisRun:
    """Run ``policy`` over ``instance``; the record is checked independently unless ``check=False``.
    ``on_progress`` hears (apps finished, apps in all) after every event."""
    result = EventEngine(instance, policy, options or SimOptions(), on_progress=on_progress).run()
    if check:
        assert_valid_run(result)
    return result
