"""Gavel's finish-time-fairness policy (Narayanan et al., OSDI 2020; stanford-futuredata/gavel,
``FinishTimeFairnessPolicyWithPerf`` and its round-based scheduler) as a policy of the Themis
event simulator, beside Themis and the six baselines.

Rounds. The round length is the simulator's lease (``default_lease`` = 360 s, Gavel's
``time_per_iteration``): every grant lasts one round. A round starts when the previous one ends,
or earlier when no app holds GPUs any more (Gavel's round ends with its last running job); GPUs
freed inside a round stay idle until it ends (the policy's ``quiet_until``: the simulator asks for
no round before it while apps hold GPUs).

Allocation (min-max rho over GPU types, ``mlsched.formulations.themis_minmax``): every active app
i is one gang of scale_i = its current demand (capped at the largest type's GPU count), running on
one GPU type k at thr_ik = scale_i speed_ik serial GPU-seconds per second, with W_i its remaining
work, t_i its elapsed time and iso_i its cumulative isolated time. The program gives time fractions
x_ik. It is recomputed at the start of a round when the set of apps changed since the last
computation and at least ``reset_interval`` seconds (Gavel's 1,920 s
``minimum_time_between_allocation_resets``) passed since the last one, or when no app holds GPUs.
Gavel's scheduler keeps "no computation yet" as a last-reset time of 0 (``_last_reset_time == 0``),
so a computation at time 0 counts as none: the first change after it recomputes without waiting
(``zero_sentinel=True``, the default; False waits the interval after every computation).
An app that arrived since the last computation has no allocation and waits for the next one.

Priorities (Gavel's ``_update_priorities``, ``_reset_time_run_so_far``): per type k,
priority_ik = x_ik / f_ik with f_ik = (time app i ran on type k since the last reset) / (the time
of all apps on type k since then), x_ik * 1e9 when f_ik = 0, 0 without allocation or throughput.
At a reset each app's deficit on k grows by x_ik (time since the reset) minus the time it ran, and
every app's time restarts at half a round. Per type in pool order (V100, P100, K80 on Gavel's
cluster), apps by (priority, deficit, allocation) descending take scale_i GPUs of that type while
they fit, each app at most once per round.

If no app can run for want of an allocation (every waiting app arrived since the last one), the
allocation is recomputed at once rather than leaving the cluster idle until the next arrival.

Placement (Gavel's ``_schedule_jobs_on_workers``): per type and scale, largest first, apps keep the
GPUs they held in the last round when all are still free, then the others take the type's free
GPUs in pool order (Gavel assigns servers in order).

State. Apps never return once finished, so every app's allocation x_ik, time run per type,
deficits, cumulative isolated time and speeds stand in arrays indexed by the app's index in the
instance, and a round gathers the active apps' rows: its priorities and its order of all (type,
app) candidates are a few array operations, whatever the number of apps. An app's scale is at
least one GPU, so thr_ik > 0 exactly where speed_ik > 0: the apps that may run on a type (an
allocation and a speed there) are known from one allocation to the next. The straightforward form,
one dictionary per table, is the tests' oracle; both give the same grants and the same state at
every round, bit for bit.
"""

from __future__ import annotations

import itertools

import numpy as np

from mlsched.formulations.themis_minmax import isolated_share, min_max_rho
from mlsched.instance.themis import ThemisInstance
from mlsched.sim.event_engine import RoundView, SimOptions

RESET_INTERVAL = 1920.0        # seconds, Gavel's minimum_time_between_allocation_resets
ROUND_SECONDS = 360.0          # Gavel's time_per_iteration
UNTYPED = "gpu"                # the one type of a cluster that names none


def repeated_sum(value: float, count: int) -> float:
    """value added ``count`` times, one addition after the other from 0.0 (as a loop over apps
    adds each app's time; n * value may differ in the last bit)."""
    total = 0.0
    for _ in range(count):
        total += value
    return total


class GavelFTF:
    name = "gavel-ftf"
    default_lease = ROUND_SECONDS

    def __init__(self, *, reset_interval: float = RESET_INTERVAL, method: str = "direct",
                 zero_sentinel: bool = True) -> None:
        self.reset_interval = reset_interval
        self.method = method
        self.zero_sentinel = zero_sentinel

    def start(self, instance: ThemisInstance, options: SimOptions) -> None:
        topology = instance.topology
        self.round_seconds = options.lease
        self.types = topology.type_names or (UNTYPED,)
        kinds = topology.gpu_types or (UNTYPED,) * topology.num_gpus
        self.gpus_of = [[g for g in range(topology.num_gpus) if kinds[g] == t] for t in self.types]   # pool order
        self.gpu_set_of = [frozenset(gpus) for gpus in self.gpus_of]
        self.capacity = np.array([len(gpus) for gpus in self.gpus_of], dtype=float)
        self.largest = int(self.capacity.max())          # an app's scale is capped at the largest type
        self.round_start = self.quiet_until = -np.inf
        apps, types = len(instance.apps), len(self.types)
        # per app index (rows) and type (columns)
        self.speeds = np.array([[app.speed_of.get(t, 1.0) for t in self.types] for app in instance.apps],
                               dtype=float).reshape(apps, types)
        self.allocation = np.zeros((apps, types))        # x_ik of the last computation (0 for apps outside it)
        self.allocated = np.zeros(apps, dtype=bool)      # the app was in the last computation
        # thr_ik > 0 exactly where speed_ik > 0 (an app's scale is at least 1 GPU): the apps that may run
        # on a type have an allocation and speed there
        self.runs_on = self.speeds > 0
        self.eligible = self.allocated[:, None] & self.runs_on
        self.job_time = np.zeros((apps, types))          # time run per type since the last reset
        self.deficit = np.zeros((apps, types))
        self.iso_cum = np.zeros(apps)
        self.previous_work = np.zeros(apps)              # remaining work at the last computation
        self.previous_thr_iso = np.ones(apps)            # thr_iso at the last computation
        self.has_previous = np.zeros(apps, dtype=bool)
        self.active = np.zeros(apps, dtype=bool)
        self.worker_time = np.zeros(types)
        self.last_reset: float | None = None
        self.known: list[int] = []                       # the active apps' indices at the last round, in view order
        self.changed = False
        self.ran_apps = np.zeros(0, dtype=np.int64)      # apps that run in the current round
        self.ran_types = np.zeros(0, dtype=np.int64)     # and the type each runs on
        self.stats = {"allocations": 0, "allocation_failures": 0, "solver_seconds": 0.0}

    # --- one round ------------------------------------------------------------------------
    def round(self, view: RoundView) -> dict[int, frozenset[int]]:
        """A round starts (the engine asks for none while apps hold GPUs before ``quiet_until``)."""
        rows = [app.index for app in view.apps]
        index = np.array(rows, dtype=np.int64)
        self._track_apps(rows)
        self._account(view.now)
        scale = [min(app.unmet + len(app.holdings), self.largest) for app in view.apps]
        if self.changed and self._reset_due(view.now):
            self._reset(view.now, index)
            self._allocate(view, index, scale)
        scheduled = self._schedule(index, scale)
        if not scheduled and self.changed:   # nothing can run before a new allocation: compute it now
            self._reset(view.now, index)
            self._allocate(view, index, scale)
            scheduled = self._schedule(index, scale)
        self.round_start, self.quiet_until = view.now, view.now + self.round_seconds
        self.ran_apps = index[list(scheduled)]
        self.ran_types = np.array(list(scheduled.values()), dtype=np.int64)
        return self._place(view, scheduled, scale)

    def _reset_due(self, now: float) -> bool:
        """No computation yet (or, as Gavel reads it, the last one at time 0), or the interval passed."""
        if self.last_reset is None or (self.zero_sentinel and self.last_reset == 0.0):
            return True
        return now - self.last_reset >= self.reset_interval

    def _track_apps(self, rows: list[int]) -> None:
        """New apps start with half a round run on every type and no deficit."""
        if rows == self.known:      # the views list the active apps in arrival order
            return
        known = set(self.known)
        self.active[list(known.difference(rows))] = False
        new = [a for a in rows if a not in known]
        self.active[new] = True
        self.job_time[new] = self.round_seconds / 2
        self.deficit[new] = 0.0
        self.changed = True
        self.known = rows

    def _account(self, now: float) -> None:
        """Time run in the round that just ended, by every app still active."""
        elapsed = now - self.round_start
        still = self.active[self.ran_apps]
        apps, types = self.ran_apps[still], self.ran_types[still]
        self.job_time[apps, types] += elapsed
        np.add.at(self.worker_time, types, elapsed)     # one addition per app, as the apps ran
        self.ran_apps = self.ran_types = np.zeros(0, dtype=np.int64)

    def _reset(self, now: float, index: np.ndarray) -> None:
        since = now - self.last_reset if self.last_reset is not None else 0.0
        half = self.round_seconds / 2
        should = np.where(self.allocated[index][:, None], self.allocation[index] * since, 0.0)
        self.deficit[index] += should - (self.job_time[index] - half)
        self.job_time[index] = half
        self.worker_time[:] = repeated_sum(half, len(index))
        self.last_reset = now
        self.changed = False

    # --- the allocation -------------------------------------------------------------------
    def _allocate(self, view: RoundView, index: np.ndarray, scale: list[int]) -> None:
        apps = view.apps
        scales = np.array(scale, dtype=float)
        thr = scales[:, None] * self.speeds[index]       # thr_ik = scale_i speed_ik
        remaining = np.array([app.remaining_work for app in apps])
        before = self.has_previous[index]
        seen = index[before]
        done = self.previous_work[seen] - remaining[before]
        self.iso_cum[seen] = self.iso_cum[seen] + done / self.previous_thr_iso[seen]
        result = min_max_rho([app.elapsed for app in apps], remaining, thr, scales, self.iso_cum[index], self.capacity,
                             method=self.method)
        self.stats["allocations"] += 1
        self.stats["solver_seconds"] += result.report.solve_seconds
        x = result.x
        if x is None:      # Gavel falls back to the isolated allocation
            self.stats["allocation_failures"] += 1
            x = isolated_share(scales, self.capacity)
        self.allocation[self.allocated] = 0.0
        self.allocated[:] = False
        self.allocation[index] = x
        self.allocated[index] = True
        self.eligible = self.allocated[:, None] & self.runs_on
        self.has_previous[:] = False
        self.has_previous[index] = True
        self.previous_work[index] = remaining
        self.previous_thr_iso[index] = result.thr_iso

    # --- priorities and the round's jobs ----------------------------------------------------
    @staticmethod
    def _priorities(allocation: np.ndarray, spent: np.ndarray, kinds: np.ndarray, worker_time: np.ndarray) -> np.ndarray:
        """priority_ik = x_ik / f_ik with f_ik = spent_ik / worker_time_k (0 while type k has run
        for no time: spent / inf), x_ik * 1e9 when f_ik = 0, 0 without allocation; one value per
        candidate (app i, type kinds[c])."""
        fraction = spent / np.where(worker_time > 0, worker_time, np.inf)[kinds]
        # the quotient only where f_ik > 0 (no floating-point warnings to silence)
        priority = np.divide(allocation, fraction, out=allocation * 1e9, where=fraction > 0)
        priority[allocation == 0.0] = 0.0
        return priority

    def _candidates(self, index: np.ndarray) -> list[list[int]]:
        """Per type in pool order, the positions in ``view.apps`` of the apps that can run there (an
        allocation and throughput there), by (priority_ik, deficit_ik, x_ik) descending, ties in
        arrival order."""
        kinds, positions = np.nonzero(self.eligible[index].T)     # by type, then arrival
        apps = index[positions]
        allocation = self.allocation[apps, kinds]
        priority = self._priorities(allocation, self.job_time[apps, kinds], kinds, self.worker_time)
        ordered = positions[np.lexsort((positions, -allocation, -self.deficit[apps, kinds], -priority, kinds))].tolist()
        ends = np.cumsum(np.bincount(kinds, minlength=len(self.types))).tolist()
        return [ordered[begin:end] for begin, end in zip([0, *ends], ends)]

    def _schedule(self, index: np.ndarray, scale: list[int]) -> dict[int, int]:
        """Position in ``view.apps`` -> GPU type index, for the apps that run this round: per type,
        the candidates in order take their scale of GPUs while they fit, each app once."""
        left = self.capacity.tolist()
        chosen: dict[int, int] = {}
        for k, candidates in enumerate(self._candidates(index)):
            for i in candidates:
                if left[k] == 0:
                    break
                if i in chosen or scale[i] > left[k]:
                    continue
                left[k] -= scale[i]
                chosen[i] = k
        return chosen

    def _place(self, view: RoundView, scheduled: dict[int, int], scale: list[int]) -> dict[int, frozenset[int]]:
        available = set(view.free)
        grants: dict[int, frozenset[int]] = {}
        mine: list[list[int]] = [[] for _ in self.types]
        for i, k in scheduled.items():
            mine[k].append(i)
        for k, apps in enumerate(mine):
            free = available & self.gpu_set_of[k]      # the type's free GPUs (a set)
            groups: dict[int, list[int]] = {}
            for i in apps:
                groups.setdefault(scale[i], []).append(i)
            for size in sorted(groups, reverse=True):
                waiting = []
                for i in groups[size]:   # first keep the GPUs of the last round where they are all free
                    before = view.apps[i].expired
                    if len(before) == size and before <= free:
                        grants[view.apps[i].index] = before
                        free -= before
                    else:
                        waiting.append(i)
                if waiting:   # the others take the type's free GPUs in pool order, one after the other
                    pool = iter([g for g in self.gpus_of[k] if g in free])
                    for i in waiting:
                        taken = frozenset(itertools.islice(pool, size))
                        grants[view.apps[i].index] = taken
                        free -= taken
        return grants
