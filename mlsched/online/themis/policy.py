"""The Themis arbiter as a policy of the event simulator (Themis spec §3.2).

At every round each active app reports rho_cur = rho_i(H_i) from its valuation (step 1, A21); the
top 1 - f by rho_cur with unmet demand take part (§2.5), bid (canonical bundles, or the exact
count DP when every participant's rho depends on its GPU count only), the PA auction allocates
and charges hidden payments (§2.2-2.3), each winner keeps its fraction c_i of its bundle (A1) and
the leftover goes to the other apps at random (§2.6). Leases are the simulator's.

``current_rho="holdings"`` (spec §1.5) reports rho_i(H_i) after this event's expiries returned
their GPUs, +inf for an app whose every lease just ended; ``"running"`` reports the rho of the
allocation the app was running on, expired GPUs included (decisions: Themis, rho_cur).

The auctions' HiGHS solves run on ``solver_threads`` threads (default 1; None: the process's
setting, :func:`mlsched.solve.set_solver_threads`), the process's setting restored after each round
(decisions: A8b). ``tie_break`` is the program of the auctions' fewest-GPU re-solve
(:func:`mlsched.formulations.themis.pa_auction`): ``whole`` (the policy's default) or ``reduced``
(an auction's own default). Both give the same values; among allocations tied exactly they may
pick others, and a simulated run takes no measurable time from ``reduced`` (its auctions are
mostly settled by the count and machine DPs), so the policy keeps the pick of its documented run
records (decisions A8e).

Lies (Fig. 18, §5.7): an app in ``lies`` with factor X reports S' = S (1 + X) for placements of
level >= 2 and S' = max(0.05, S (1 - X)) for level <= 1, in its bids and in its step-1 reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from mlsched.errors import UsageError
from mlsched.formulations.themis import TIE_BREAKS, Bidder
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisInstance
from mlsched.online.themis.arbiter import REALIZATIONS, RoundApp, arbiter_round
from mlsched.online.themis.bids import AUCTION_MODES, BIDS_MAX, auction_for
from mlsched.online.themis.rho import surely_finite, view_rho, view_rho_bounds
from mlsched.sim.event_engine import AppView, RoundView, SimOptions
from mlsched.solve import solver_threads

CURRENT_RHO = ("holdings", "running")
SOLVER_THREADS = 1   # HiGHS threads of the auctions' solves (A8b): the pool's idle wait costs more than it saves


def _never_priced(bundle: frozenset[int]) -> float:
    raise AssertionError("an app without unmet demand is never priced")


# Every app without unmet demand at a round: it counts toward N_active but is never ranked, priced
# nor given GPUs (§2.5, A3), so one shared entry stands for all of them.
_SATISFIED = RoundApp(Bidder("satisfied", _never_priced, 0), math.inf, math.inf)


class _Agent:
    """An app's agent at one round: its bidder and its estimates of rho_cur (with ``running``, the
    GPUs it counts as held, A21), as the app reports them (``profile``: a lie, or None for the
    truth; ``flat``: its rho depends on its GPU count only). Made for every app with unmet demand
    at every round, its bidder only for the participants."""

    __slots__ = ("view", "topology", "running", "profile", "flat")

    def __init__(self, view: AppView, topology: GpuTopology, running: frozenset[int],
                 profile: tuple[float, ...] | None, flat: bool) -> None:
        self.view, self.topology, self.running, self.profile, self.flat = view, topology, running, profile, flat

    def rho(self, bundle: frozenset[int]) -> float:
        return view_rho(self.view, self.topology, bundle, self.profile, count_only=self.flat)

    def bidder(self) -> Bidder:
        return Bidder(str(self.view.index), self.rho, self.view.unmet)

    def current(self) -> float:
        return view_rho(self.view, self.topology, self.running, self.profile, count_only=self.flat)

    def bounds(self) -> tuple[float, float]:
        return view_rho_bounds(self.view, self.topology, self.running, self.profile, count_only=self.flat)


def lie_profile(profile: Sequence[float], factor: float) -> tuple[float, ...]:
    """The slowdowns a liar reports (§5.7 lie model)."""
    return tuple(max(0.05, s * (1 - factor)) if level <= 1 else s * (1 + factor) for level, s in enumerate(profile))


def count_only(app: AppView, profile: Sequence[float] | None = None) -> bool:
    """Whether the app's rho, as it reports it (``profile``, default its true one), depends only on
    its GPU count: the same speed on every GPU type, and no slowdown at any level or every job on
    one GPU (level 0)."""
    reported = app.app.profile if profile is None else profile
    return (len(set(app.app.speed_of.values())) <= 1
            and (all(s == 1.0 for s in reported) or all(j.cap == 1 for p in app.app.phases for j in p)))


class Themis:
    name = "themis"

    def __init__(self, *, fairness_knob: float = 0.8, realization: str = "stochastic", seed: int = 0,
                 auction: str = "auto", bids_max: int = BIDS_MAX, cap_participants: bool = True,
                 lies: Mapping[int, float] | None = None, current_rho: str = "holdings",
                 solver_threads: int | None = SOLVER_THREADS, tie_break: str = "whole") -> None:
        if realization not in REALIZATIONS:
            raise UsageError(f"unknown realisation {realization!r}; choose one of {', '.join(REALIZATIONS)}")
        if auction not in AUCTION_MODES:
            raise UsageError(f"unknown auction mode {auction!r}; choose one of {', '.join(AUCTION_MODES)}")
        if not 0.0 <= fairness_knob <= 1.0:
            raise UsageError(f"the fairness knob f must lie in [0, 1], got {fairness_knob}")
        if tie_break not in TIE_BREAKS:
            raise UsageError(f"unknown auction tie_break {tie_break!r}; choose one of {', '.join(TIE_BREAKS)}")
        if current_rho not in CURRENT_RHO:
            raise UsageError(f"unknown current_rho {current_rho!r}; choose one of {', '.join(CURRENT_RHO)}")
        self.current_rho = current_rho
        self.fairness_knob = fairness_knob
        self.realization = realization
        self.seed = seed
        self.auction_mode = auction
        self.bids_max = bids_max
        self.cap_participants = cap_participants
        self.lies = dict(lies or {})
        self.solver_threads = solver_threads
        self.tie_break = tie_break

    def start(self, instance: ThemisInstance, options: SimOptions) -> None:
        self.instance = instance
        self.rng = np.random.default_rng(self.seed)
        self.stats = {"auctions": 0, "count_auctions": 0, "canonical_auctions": 0, "exhaustive_auctions": 0,
                      "bids": 0, "mean_kept_fraction": 0.0, "fallback_rounds": 0}
        self._kept_sum, self._kept_count = 0.0, 0   # c_i of every participant of a contested auction

    def _reported(self, app: AppView) -> tuple[float, ...] | None:
        factor = self.lies.get(app.index)
        return None if factor is None else lie_profile(app.app.profile, factor)

    def _count_only(self, app: AppView) -> bool:
        """:func:`count_only` on the app's report, kept in its carry (it depends on the app and its lie only)."""
        known = app.carry.get("count_only")
        if known is None:
            known = app.carry["count_only"] = count_only(app, self._reported(app))
        return known  # type: ignore[return-value]

    def round(self, view: RoundView) -> dict[int, frozenset[int]]:
        topology = self.instance.topology
        round_apps = []
        for app in view.apps:
            if not app.unmet:
                round_apps.append(_SATISFIED)
                continue
            running = app.expired if self.current_rho == "running" else frozenset()
            agent = _Agent(app, topology, running, self._reported(app), self._count_only(app))
            finite = surely_finite(app, running)
            round_apps.append(RoundApp(agent.bidder, agent.current, app.start, finite, agent.bounds if finite else None,
                                       unmet=app.unmet))
        run = auction_for(self.auction_mode, self.instance.topology, lambda i: self._count_only(view.apps[i]),
                          bids_max=self.bids_max, tie_break=self.tie_break)
        with solver_threads(self.solver_threads):
            outcome = arbiter_round(round_apps, view.free, fairness_knob=self.fairness_knob,
                                    realization=self.realization, seed=self.rng, auction=run,
                                    cap_participants=self.cap_participants)
        if outcome.auction is not None and len(outcome.participants) > 1:
            self.stats["auctions"] += 1
            self.stats[f"{outcome.auction.mode}_auctions"] += 1
            self.stats["bids"] += outcome.auction.bids
            self._kept_sum += sum(outcome.auction.payments)
            self._kept_count += len(outcome.auction.payments)
            self.stats["mean_kept_fraction"] = self._kept_sum / self._kept_count
        self.stats["fallback_rounds"] += int(outcome.fallback_used)
        grants: dict[int, frozenset[int]] = {}
        for part in (outcome.grants, outcome.leftover_grants):
            for i, gpus in part.items():
                grants[view.apps[i].index] = grants.get(view.apps[i].index, frozenset()) | gpus
        return grants
