"""The straightforward implementation of the ``gavel-ftf`` policy, kept as the oracle of the
policy's array state (``mlsched.baselines.gavel_ftf``): per-app dictionaries, every app's
priorities, throughputs and placement recomputed from them at each round. The policy and this
reference must give the same grants at every round and the same run record
(tests/test_gavel_ftf_exact.py). The rules are the module docstring of
``mlsched.baselines.gavel_ftf``.
"""

from __future__ import annotations

import itertools

import numpy as np

from mlsched.baselines.gavel_ftf import RESET_INTERVAL, ROUND_SECONDS, UNTYPED
from mlsched.formulations.themis_minmax import isolated_share, min_max_rho
from mlsched.instance.themis import ThemisInstance
from mlsched.sim.event_engine import AppView, RoundView, SimOptions


class ReferenceGavelFTF:
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
        self.gpus_of = {t: [g for g in range(topology.num_gpus) if kinds[g] == t] for t in self.types}
        self.type_of = {g: t for t, gpus in self.gpus_of.items() for g in gpus}
        self.capacity = np.array([len(self.gpus_of[t]) for t in self.types], dtype=float)
        self.largest = int(self.capacity.max())          # an app's scale is capped at the largest type
        self.round_start = self.quiet_until = -np.inf
        self.speeds: dict[int, np.ndarray] = {}          # app -> its speed per type
        self.ran: dict[int, int] = {}                    # app -> type it ran on in the current round
        self.allocation: dict[int, np.ndarray] = {}      # app -> x_ik of the last computation
        self.job_time: dict[int, np.ndarray] = {}        # app -> time run per type since the last reset
        self.deficit: dict[int, np.ndarray] = {}
        self.worker_time = np.zeros(len(self.types))
        self.last_reset: float | None = None
        self.known: set[int] = set()
        self.changed = False
        self.iso_cum: dict[int, float] = {}
        self.previous: dict[int, tuple[float, float]] = {}   # app -> (remaining work, thr_iso) at the last computation
        self.stats = {"allocations": 0, "allocation_failures": 0, "solver_seconds": 0.0}

    # --- one round ------------------------------------------------------------------------
    def round(self, view: RoundView) -> dict[int, frozenset[int]]:
        """A round starts (the engine asks for none while apps hold GPUs before ``quiet_until``)."""
        self._account(view)
        self._track_apps(view)
        never = self.last_reset is None or (self.zero_sentinel and self.last_reset == 0.0)   # Gavel: 0 is "none"
        if self.changed and (never or view.now - self.last_reset >= self.reset_interval):
            self._reset(view.now)
            self._allocate(view)
        scheduled = self._schedule(view)
        if not scheduled and self.changed:   # nothing can run before a new allocation: compute it now
            self._reset(view.now)
            self._allocate(view)
            scheduled = self._schedule(view)
        self.round_start, self.quiet_until = view.now, view.now + self.round_seconds
        self.ran = {view.apps[i].index: k for i, k in scheduled.items()}
        return self._place(view, scheduled)

    def _account(self, view: RoundView) -> None:
        """Time run in the round that just ended, by every app still active."""
        elapsed = view.now - self.round_start
        for app in view.apps:
            if app.index in self.ran:
                self.job_time[app.index][self.ran[app.index]] += elapsed
                self.worker_time[self.ran[app.index]] += elapsed
        self.ran = {}

    def _track_apps(self, view: RoundView) -> None:
        active = {app.index for app in view.apps}
        for a in self.known - active:
            for table in (self.allocation, self.job_time, self.deficit, self.iso_cum, self.previous):
                table.pop(a, None)
        for a in active - self.known:
            self.job_time[a] = np.full(len(self.types), self.round_seconds / 2)
            self.deficit[a] = np.zeros(len(self.types))
        self.changed |= active != self.known
        self.known = active

    def _reset(self, now: float) -> None:
        since = now - self.last_reset if self.last_reset is not None else 0.0
        self.worker_time[:] = 0.0
        for a, spent in self.job_time.items():
            should = self.allocation[a] * since if a in self.allocation else 0.0
            self.deficit[a] += should - (spent - self.round_seconds / 2)
            spent[:] = self.round_seconds / 2
            self.worker_time += spent
        self.last_reset = now
        self.changed = False

    # --- the allocation -------------------------------------------------------------------
    def _scale(self, app: AppView) -> int:
        return min(app.unmet + len(app.holdings), self.largest)

    def _speeds(self, app: AppView) -> np.ndarray:
        if app.index not in self.speeds:
            speeds = app.app.speed_of
            self.speeds[app.index] = np.array([speeds.get(t, 1.0) for t in self.types])
        return self.speeds[app.index]

    def _throughputs(self, apps: list[AppView]) -> tuple[np.ndarray, np.ndarray]:
        """scale_i of every app and thr_ik = scale_i speed_ik (rows: apps, columns: types)."""
        scale = np.array([self._scale(app) for app in apps], dtype=float)
        speeds = np.array([self._speeds(app) for app in apps]).reshape(len(apps), len(self.types))
        return scale, scale[:, None] * speeds

    def _allocate(self, view: RoundView) -> None:
        apps = view.apps
        scale, thr = self._throughputs(apps)
        remaining = np.array([app.remaining_work for app in apps])
        for app, left in zip(apps, remaining):
            if app.index in self.previous:
                before, thr_iso = self.previous[app.index]
                self.iso_cum[app.index] = self.iso_cum.get(app.index, 0.0) + (before - left) / thr_iso
        iso = np.array([self.iso_cum.get(app.index, 0.0) for app in apps])
        result = min_max_rho([app.elapsed for app in apps], remaining, thr, scale, iso, self.capacity,
                             method=self.method)
        self.stats["allocations"] += 1
        self.stats["solver_seconds"] += result.report.solve_seconds
        x = result.x
        if x is None:      # Gavel falls back to the isolated allocation
            self.stats["allocation_failures"] += 1
            x = isolated_share(scale, self.capacity)
        self.allocation = {app.index: row for app, row in zip(apps, x)}
        self.previous = {app.index: (left, thr_iso) for app, left, thr_iso in zip(apps, remaining, result.thr_iso)}

    # --- priorities and the round's jobs ----------------------------------------------------
    def _priorities(self, apps: list[AppView], thr: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """priority_ik, deficit_ik and x_ik of every app (rows) and type (columns)."""
        zeros = np.zeros(len(self.types))
        allocation = np.array([self.allocation.get(app.index, zeros) for app in apps])
        deficit = np.array([self.deficit[app.index] for app in apps])
        spent = np.array([self.job_time[app.index] for app in apps])
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.where(self.worker_time > 0, spent / self.worker_time, 0.0)
            priority = np.where(fraction > 0, allocation / fraction, allocation * 1e9)
        priority[(allocation == 0.0) | (thr <= 0)] = 0.0
        return priority, deficit, allocation

    def _schedule(self, view: RoundView) -> dict[int, int]:
        """Position in ``view.apps`` -> GPU type index, for the apps that run this round."""
        left = self.capacity.tolist()
        chosen: dict[int, int] = {}
        scale_array, thr = self._throughputs(view.apps)
        scale = scale_array.astype(int).tolist()
        allocated = [app.index in self.allocation for app in view.apps]
        priority, deficit, allocation = self._priorities(view.apps, thr)
        runs_on = (thr > 0).T.tolist()     # runs_on[k][i]: app i has throughput on type k
        order = np.arange(len(view.apps))
        for k in range(len(self.types)):
            # (priority, deficit, allocation) descending, ties in arrival order
            for i in np.lexsort((order, -allocation[:, k], -deficit[:, k], -priority[:, k])).tolist():
                if left[k] == 0:
                    break
                if i in chosen or not runs_on[k][i] or not allocated[i] or scale[i] > left[k]:
                    continue
                left[k] -= scale[i]
                chosen[i] = k
        return chosen

    def _place(self, view: RoundView, scheduled: dict[int, int]) -> dict[int, frozenset[int]]:
        free = set(view.free)
        grants: dict[int, frozenset[int]] = {}
        for k, t in enumerate(self.types):
            mine = [i for i, kind in scheduled.items() if kind == k]
            scales = {i: self._scale(view.apps[i]) for i in mine}
            for scale in sorted(set(scales.values()), reverse=True):
                group = [i for i in mine if scales[i] == scale]
                for i in group:   # first keep the GPUs of the last round where they are all free
                    before = view.apps[i].expired
                    if len(before) == scale and before <= free and all(self.type_of[g] == t for g in before):
                        grants[view.apps[i].index] = before
                        free -= before
                # the others take the type's free GPUs in pool order, one after the other
                pool = iter([g for g in self.gpus_of[t] if g in free])
                for i in group:
                    if view.apps[i].index not in grants:
                        taken = frozenset(itertools.islice(pool, scale))
                        grants[view.apps[i].index] = taken
                        free -= taken
        return grants
