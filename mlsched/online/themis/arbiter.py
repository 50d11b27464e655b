"""One Themis arbiter round (spec §2.5, §2.6, §2.3 step 4): filter the apps with the worst
finish-time fairness, run the PA auction among them, realise each winner's fraction c_i of its
bundle, and hand the leftover GPUs to the unfiltered apps at random.

- Participants: k = max(1, min(ceil((1 - f) N_active - 1e-9), |offered|)) apps with unmet demand,
  largest current rho first, ties by earlier start then index (A2, A28; ``cap_participants=False``
  drops the cap at |offered|). When k apps report +inf, apps known to have a finite rho_cur are
  not asked for it, with at most k candidates none is asked, and an app whose rho_cur bounds put it
  below k others is not asked either; the others are asked by decreasing upper bound until k
  computed rho_cur lie above every upper bound left (same participants, fewer estimates).
- Realisation (A1): ``stochastic`` (default) k_i = floor(c |G|) + Bernoulli(frac) GPUs, the
  k_i-subset of the PF bundle with the lowest rho (ties by pool order; beyond SUBSET_SEARCH_MAX
  subsets, the first k_i GPUs in pool order); ``floor``; ``lottery`` (the whole bundle with
  probability c_i).
- Leftover (A3): each leftover GPU, in pool order, goes to an unfiltered app with unmet demand drawn
  uniformly; if there is none, to a filtered one; else it stays free.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from mlsched.errors import UsageError
from mlsched.formulations.themis import Bidder
from mlsched.online.themis.bids import AuctionOutcome, exhaustive_auction

REALIZATIONS = ("stochastic", "floor", "lottery")
SUBSET_SEARCH_MAX = 256   # largest number of k-subsets searched for the best one
BOUND_MARGIN = 1e-9       # relative slack on rho_cur bounds before they exclude an app from the ranking


class RoundApp:
    """An active app at a round: its bidder (or how to make it, with its unmet demand: only the
    participants bid), its rho_cur (a number, or how to compute it when the ranking needs it), its
    start, whether its rho_cur is known to be finite, and optionally how to bound rho_cur cheaply,
    (lo, hi). Built for every active app at every round: a slotted class that makes the bidder and
    computes rho_cur and its range at most once, when first asked."""

    __slots__ = ("_bidder", "unmet", "report", "start", "finite", "bounds", "_rho", "_range")

    def __init__(self, bidder: Bidder | Callable[[], Bidder], report: float | Callable[[], float], start: float,
                 finite: bool = False, bounds: Callable[[], tuple[float, float]] | None = None, *,
                 unmet: int | None = None) -> None:
        if isinstance(bidder, Bidder):
            unmet = bidder.unmet
        elif unmet is None:
            raise ValueError("a bidder made on demand needs the app's unmet demand")
        self._bidder = bidder
        self.unmet: int = unmet
        self.report = report
        self.start = start
        self.finite = finite
        self.bounds = bounds
        self._rho: float | None = None if callable(report) else report
        self._range: tuple[float, float] | None = None

    @property
    def bidder(self) -> Bidder:
        if not isinstance(self._bidder, Bidder):
            self._bidder = self._bidder()
        return self._bidder

    @property
    def rho_current(self) -> float:
        if self._rho is None:
            self._rho = self.report()  # type: ignore[operator]
        return self._rho

    @property
    def rho_range(self) -> tuple[float, float]:
        """(lo, hi) around rho_cur: the exact value when known or no bounds are given."""
        if self._range is None:
            self._range = (self.rho_current,) * 2 if self.bounds is None or self._rho is not None else self.bounds()
        return self._range


@dataclass
class RoundOutcome:
    participants: list[int]
    auction: AuctionOutcome | None
    grants: dict[int, frozenset[int]] = field(default_factory=dict)
    leftover_grants: dict[int, frozenset[int]] = field(default_factory=dict)
    idle: frozenset[int] = frozenset()
    fallback_used: bool = False


def participants(apps: Sequence[RoundApp], fairness_knob: float, offered: int) -> list[int]:
    """Indices of the auction's participants (spec §2.5)."""
    if not 0.0 <= fairness_knob <= 1.0:
        raise UsageError(f"the fairness knob f must lie in [0, 1], got {fairness_knob}")
    candidates = [i for i, a in enumerate(apps) if a.unmet > 0]
    if not candidates or offered == 0:
        return []
    k = max(1, min(math.ceil((1.0 - fairness_knob) * len(apps) - 1e-9), offered))
    if len(candidates) <= k:   # all of them take part: no rho_cur is needed to rank them
        return candidates
    starving = [i for i in candidates if not apps[i].finite and apps[i].rho_current == math.inf]
    if len(starving) >= k:   # they outrank every finite rho_cur, which need not be computed
        return sorted(sorted(starving, key=lambda i: (apps[i].start, i))[:k])
    return sorted(_top(apps, _contenders(apps, candidates, k), k))


def _contenders(apps: Sequence[RoundApp], candidates: list[int], k: int) -> list[int]:
    """The candidates that may rank among the k largest rho_cur: one whose upper bound lies below
    the k-th largest lower bound (by a relative margin, against rounding) is outranked by k others
    whatever the ties, and its rho_cur is never computed."""
    ranges = [apps[i].rho_range for i in candidates]
    threshold = sorted((low for low, _ in ranges), reverse=True)[k - 1] * (1.0 - BOUND_MARGIN)
    return [i for i, (_, high) in zip(candidates, ranges) if high * (1.0 + BOUND_MARGIN) >= threshold]


def _top(apps: Sequence[RoundApp], contenders: list[int], k: int) -> list[int]:
    """The k contenders of largest rho_cur (ties by earlier start, then index), their rho_cur
    computed by decreasing upper bound and only while a contender not yet computed could rank
    among them: once the k-th largest computed rho_cur exceeds the next upper bound (by the
    relative margin), every contender left lies strictly below k computed ones. With k
    contenders, none is computed."""
    if len(contenders) <= k:
        return contenders
    computed: list[int] = []
    largest: list[float] = []   # the k largest computed rho_cur, a min-heap: largest[0] is the k-th
    for i in sorted(contenders, key=lambda i: apps[i].rho_range[1], reverse=True):
        if len(largest) == k and largest[0] * (1.0 - BOUND_MARGIN) > apps[i].rho_range[1] * (1.0 + BOUND_MARGIN):
            break
        computed.append(i)
        (heapq.heappush if len(largest) < k else heapq.heappushpop)(largest, apps[i].rho_current)
    return sorted(computed, key=lambda i: (-apps[i].rho_current, apps[i].start, i))[:k]


def realise(bidder: Bidder, bundle: frozenset[int], c: float, mode: str, rng: np.random.Generator) -> frozenset[int]:
    """The part of a PF bundle an app keeps after its hidden payment (spec §2.3 step 4)."""
    if mode not in REALIZATIONS:
        raise UsageError(f"unknown realisation {mode!r}; choose one of {', '.join(REALIZATIONS)}")
    if mode == "lottery":
        return bundle if rng.random() < c else frozenset()
    exact = c * len(bundle)
    keep = math.floor(exact + 1e-9) if mode == "floor" else math.floor(exact) + int(rng.random() < exact - math.floor(exact))
    if keep >= len(bundle):
        return bundle
    if keep == 0:
        return frozenset()
    if math.comb(len(bundle), keep) > SUBSET_SEARCH_MAX:   # too many subsets: keep a consolidated prefix
        return frozenset(sorted(bundle)[:keep])
    return min((frozenset(s) for s in itertools.combinations(sorted(bundle), keep)), key=lambda s: bidder.rho(s))


Auction = Callable[[Sequence[Bidder], Sequence[int], Sequence[int]], AuctionOutcome]


def arbiter_round(apps: Sequence[RoundApp], offered: Sequence[int], *, fairness_knob: float = 0.8,
                  realization: str = "stochastic", seed: int | np.random.Generator = 0,
                  auction: Auction | None = None, cap_participants: bool = True) -> RoundOutcome:
    """One round over the offered GPUs. ``auction(bidders, offered, app_indices)`` runs the PA
    auction among the participants (default: exhaustive bids, for small offers)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    chosen = participants(apps, fairness_knob, len(offered) if cap_participants else len(apps))
    outcome = RoundOutcome(participants=chosen, auction=None)
    leftover = set(offered)
    unmet = [a.unmet for a in apps]
    if chosen:
        run = auction or (lambda bidders, gpus, _: exhaustive_auction(bidders, gpus))
        outcome.auction = run([apps[i].bidder for i in chosen], offered, chosen)
        for i, bundle, c in zip(chosen, outcome.auction.bundles, outcome.auction.payments):
            kept = realise(apps[i].bidder, bundle, c, realization, rng)
            if kept:
                outcome.grants[i] = kept
                unmet[i] -= len(kept)
            leftover -= kept
    inside = set(chosen)
    _allocate_leftover(outcome, sorted(leftover), [i for i in range(len(apps)) if i not in inside], unmet, rng)
    return outcome


def _allocate_leftover(outcome: RoundOutcome, leftover: list[int], unfiltered: list[int], unmet: list[int],
                       rng: np.random.Generator) -> None:
    """Each leftover GPU in pool order to a uniformly drawn unfiltered app with unmet demand, else
    to a participant with unmet demand (fallback), else it stays idle (A3)."""
    grants: dict[int, set[int]] = {}
    idle = set()
    open_unfiltered = [i for i in unfiltered if unmet[i] > 0]
    open_participants: list[int] | None = None     # listed at the first fallback
    for position, gpu in enumerate(leftover):
        pool = open_unfiltered
        if not pool:
            if open_participants is None:
                open_participants = [i for i in outcome.participants if unmet[i] > 0]
            pool = open_participants
            outcome.fallback_used |= bool(pool)
        if not pool:   # both pools only shrink: this GPU and every one after it stay idle
            idle.update(leftover[position:])
            break
        winner = pool[int(rng.integers(len(pool)))]
        grants.setdefault(winner, set()).add(gpu)
        unmet[winner] -= 1
        if unmet[winner] == 0:
            pool.remove(winner)
    outcome.leftover_grants = {i: frozenset(g) for i, g in grants.items()}
    outcome.idle = frozenset(idle)
