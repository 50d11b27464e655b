"""The Themis paper's baselines in one shared frame (Themis spec §5.4, A26).

Every baseline runs in the same simulator as Themis: the same leases, the same round triggers and
the same pool. At each round the free GPUs are handed out greedily by the baseline's priority,
re-evaluated after each grant, to apps with unmet demand. A grant is a chunk min(unmet, |free|),
or one GPU for the "unit" baselines; placement-unaware baselines take GPUs in pool order. Ties go
to the earlier arrival, then the lower index. With k the GPUs an app holds plus those granted so
far this round, remaining(k) is its remaining time under the §1.7 estimator:

- Gandiva (placement-aware): the app whose best chunk (consolidated, or pool order) has the highest
  placement score mean_j 1/S_j; ties to the larger chunk.
- Tiresias (least attained service): the least GPU-seconds received so far.
- Optimus (throughput scaling, unit): the largest thr(k+1)/thr(k), thr = 1/remaining; +inf at k = 0.
- SLAQ (model quality): the largest loss decrease within one lease, loss(n) = l_inf + (l0 - l_inf) /
  (1 + n / kappa) with l0 = 1, l_inf = 0.1, kappa = iterations / 5, over the app's iterations.
- SRTF: the smallest remaining time with the chunk.
- SRSF (unit): the smallest remaining service (serial GPU-seconds).
"""

from __future__ import annotations

import math
from collections import defaultdict

from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisInstance
from mlsched.online.themis.bids import Offer
from mlsched.online.themis.rho import estimate, placement_score, view_rho
from mlsched.sim.event_engine import AppView, RoundView, SimOptions

LOSS_START, LOSS_FLOOR, KAPPA_SHARE = 1.0, 0.1, 5.0


class GreedyRounds:
    """The shared frame; subclasses give ``priority`` (larger first) and may pick the chunk."""

    name = "greedy"
    unit = False

    def start(self, instance: ThemisInstance, options: SimOptions) -> None:
        self.instance = instance
        self.lease = options.lease

    def round(self, view: RoundView) -> dict[int, frozenset[int]]:
        free = list(view.free)
        unmet = {app.index: app.unmet for app in view.apps}
        granted: dict[int, frozenset[int]] = defaultdict(frozenset)
        while free:
            best, best_key, best_chunk = None, None, frozenset()
            for app in view.apps:
                if unmet[app.index] == 0:
                    continue
                size = 1 if self.unit else min(unmet[app.index], len(free))
                chunk = self.chunk(app, granted[app.index], free, size)
                key = (*self.priority(app, granted[app.index], chunk), -app.start, -app.index)
                if best_key is None or key > best_key:
                    best, best_key, best_chunk = app, key, chunk
            if best is None:
                break
            granted[best.index] |= best_chunk
            unmet[best.index] -= len(best_chunk)
            free = [g for g in free if g not in best_chunk]
        return dict(granted)

    def chunk(self, app: AppView, extra: frozenset[int], free: list[int], size: int) -> frozenset[int]:
        return frozenset(free[:size])

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        raise NotImplementedError


def remaining_time(app: AppView, gpus: frozenset[int], topology: GpuTopology) -> float:
    """T_sh - elapsed under the §1.7 estimator with the app's holdings plus ``gpus``."""
    estimator = estimate(app)
    return view_rho(app, topology, gpus) * estimator.t_id - estimator.elapsed


class Gandiva(GreedyRounds):
    name = "gandiva"

    def _score(self, app: AppView, gpus: frozenset[int]) -> float:
        return placement_score(estimate(app), sorted(app.holdings | gpus), self.instance.topology)

    def chunk(self, app: AppView, extra: frozenset[int], free: list[int], size: int) -> frozenset[int]:
        offer = Offer(free, self.instance.topology)
        mine = {self.instance.topology.machine_of(g) for g in app.holdings | extra}
        counts = offer.consolidated(list(offer.by_machine), size, prefer=mine)
        candidates = [offer.representative(counts), frozenset(free[:size])]
        return max(candidates, key=lambda c: self._score(app, extra | c))

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        return self._score(app, extra | chunk), len(chunk)


class Tiresias(GreedyRounds):
    name = "tiresias"

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        return (-app.service,)


class Optimus(GreedyRounds):
    name = "optimus"
    unit = True

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        if not app.holdings and not extra:
            return (math.inf,)
        return (remaining_time(app, extra, self.instance.topology) / remaining_time(app, extra | chunk, self.instance.topology),)


class SLAQ(GreedyRounds):
    name = "slaq"

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        total = app.app.work
        tau = total / sum(j.iterations for p in app.app.phases for j in p)   # work-weighted iteration time
        iterations = total / tau
        kappa = iterations / KAPPA_SHARE
        done = (total - app.remaining_work) / tau
        rate = app.remaining_work / remaining_time(app, extra | chunk, self.instance.topology) / tau          # iterations per second
        after = min(iterations, done + rate * self.lease)

        def loss(n: float) -> float:
            return LOSS_FLOOR + (LOSS_START - LOSS_FLOOR) / (1 + n / kappa)

        return (loss(done) - loss(after),)


class SRTF(GreedyRounds):
    name = "srtf"

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        return (-remaining_time(app, extra | chunk, self.instance.topology),)


class SRSF(GreedyRounds):
    name = "srsf"
    unit = True

    def priority(self, app: AppView, extra: frozenset[int], chunk: frozenset[int]) -> tuple[float, ...]:
        return (-app.remaining_work,)


THEMIS_BASELINES = {cls.name: cls for cls in (Gandiva, Tiresias, Optimus, SLAQ, SRTF, SRSF)}
