"""Agent bid tables and the three ways the arbiter runs one PA auction (Themis spec §1.8, §2.3, A7).

- ``exhaustive``: every concrete GPU subset of the offer up to the app's unmet demand (tests, small
  offers); the integer program has one row per GPU.
- ``count``: when every participant's rho depends only on how many GPUs it gets (S = 1 profiles,
  or single-GPU jobs only), the exact DP over bidders and counts (§2.3 speed guidance); concrete
  GPUs are then handed out in pool order.
- ``canonical``: bundles are machine-count vectors (§1.8): per size k = 1..min(unmet, |R'|), (a)
  k GPUs of one machine, (b) a consolidated fill of each rack (machines by offered count,
  descending, ties by id), (c) a cluster-wide consolidated fill; at most ``bids_max`` per app, the
  lowest rho first with round-robin over k. Each bundle is valued on a representative concrete
  choice (best-fit slot, then lowest ids), the integer program has one capacity row per machine,
  and the post-pass maps counts to concrete GPUs per machine, apps by decreasing count, best-fit
  slot, then lowest GPU id. Exact when s0 = s1 (every default profile).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from functools import lru_cache

from mlsched.formulations.themis import Bidder, BidTable, exhaustive_bids, pa_auction, pa_count_auction
from mlsched.instance.gpu_topology import GpuTopology

BIDS_MAX = 64
OFFERS_KEPT = 1024   # offers (sets of free GPUs) whose canonical bundles are kept across rounds
AUCTION_MODES = ("auto", "canonical", "exhaustive")


@dataclass
class AuctionOutcome:
    bundles: list[frozenset[int]]       # PF bundles, concrete GPUs
    payments: list[float]               # c_i
    phi_star: float
    mode: str
    bids: int                           # rows offered to the integer program (or DP table size)


def exhaustive_auction(bidders: Sequence[Bidder], offered: Sequence[int], *, tie_break: str | None = None) -> AuctionOutcome:
    tables = [exhaustive_bids(b, offered) for b in bidders]
    result = pa_auction(tables, offered, lp_bound=False, tie_break=tie_break)   # the outcome has no use for the bound
    return AuctionOutcome(result.bundles, result.payments, result.phi_star, "exhaustive", sum(map(len, tables)))


def count_auction(bidders: Sequence[Bidder], offered: Sequence[int]) -> AuctionOutcome:
    """Exact for count-only valuations: rho of the first k offered GPUs stands for any k GPUs."""
    pool = sorted(offered)
    rows = [[b.rho(frozenset(pool[:k])) for k in range(min(b.unmet, len(pool)) + 1)] for b in bidders]
    result = pa_count_auction(rows, len(pool))
    bundles, start = [], 0
    for k in result.counts:
        bundles.append(frozenset(pool[start:start + k]))
        start += k
    return AuctionOutcome(bundles, result.payments, result.phi_star, "count", sum(map(len, rows)))


class Offer:
    """The offered GPUs grouped by rack, machine and slot, with each machine's offered count."""

    def __init__(self, offered: Sequence[int], topology: GpuTopology) -> None:
        self.by_machine: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        self.rack_of: dict[int, int] = {}
        pool = sorted(offered)
        self.machine_of: dict[int, int] = {}    # offered GPU -> its machine
        for g, (rack, machine, slot) in zip(pool, topology.gpu_table[pool].tolist()):
            self.machine_of[g] = machine
            self.by_machine[machine][slot].append(g)
            self.rack_of[machine] = rack
        self._free = {m: sum(map(len, slots.values())) for m, slots in self.by_machine.items()}
        self.total = len(pool)
        self._picked: dict[tuple[int, int], tuple[int, ...]] = {}   # (machine, n) -> representative GPUs
        self._bundles: dict[int, tuple[tuple[frozenset[int], tuple[int, ...]], ...]] = {}   # k -> bundles(k)
        self._orders: tuple[list[list[int]], list[int]] | None = None

    def free(self, machine: int) -> int:
        return self._free.get(machine, 0)

    def consolidated(self, machines: Sequence[int], k: int, prefer: Set[int] = frozenset()) -> dict[int, int]:
        """Counts per machine filling machines by offered count (descending, ties by id), machines
        in ``prefer`` first; {} if they cannot hold k GPUs."""
        return self.fill(self.fill_order(machines, prefer), k)

    def fill_order(self, machines: Sequence[int], prefer: Set[int] = frozenset()) -> list[int]:
        """The order :meth:`consolidated` fills machines in (it does not depend on k)."""
        return sorted(machines, key=lambda m: (m not in prefer, -self.free(m), m))

    def fill(self, order: Sequence[int], k: int) -> dict[int, int]:
        """Counts per machine taking k GPUs from the machines in ``order``; {} if they cannot hold k."""
        counts, need = {}, k
        for m in order:
            take = min(need, self.free(m))
            if take:
                counts[m], need = take, need - take
            if not need:
                return counts
        return {}

    def bundles(self, k: int) -> tuple[tuple[frozenset[int], tuple[int, ...]], ...]:
        """The distinct canonical bundles of k GPUs (§1.8): (a) k GPUs of one machine, machines in
        offer order, (b) a consolidated fill of each rack, (c) a cluster-wide consolidated fill, each
        as its representative GPUs (:meth:`representative`), with those GPUs sorted; the same list
        for every app (it depends on the offer alone) and kept."""
        known = self._bundles.get(k)
        if known is None:
            if self._orders is None:
                racks: dict[int, list[int]] = defaultdict(list)
                for m in self.by_machine:
                    racks[self.rack_of[m]].append(m)
                self._orders = [self.fill_order(ms) for ms in racks.values()], self.fill_order(list(self.by_machine))
            rack_orders, whole = self._orders
            shapes = [{m: k} for m in self.by_machine if self.free(m) >= k]
            shapes += [self.fill(order, k) for order in rack_orders]
            shapes.append(self.fill(whole, k))
            seen: set[tuple[tuple[int, int], ...]] = set()
            found = []
            for counts in shapes:
                key = tuple(sorted(counts.items()))
                if counts and key not in seen:
                    seen.add(key)
                    bundle = self.representative(counts)
                    found.append((bundle, tuple(sorted(bundle))))
            known = self._bundles[k] = tuple(found)
        return known

    def representative(self, counts: dict[int, int], taken: dict[int, set[int]] | None = None) -> frozenset[int]:
        """Concrete GPUs for machine counts: per machine the best-fit slot (fewest free GPUs that
        still fit), else the fullest slots first; then lowest ids. ``taken`` excludes GPUs. Without
        ``taken`` a machine's pick for n GPUs is the same every time and is remembered."""
        chosen: list[int] = []
        for m, n in counts.items():
            if taken is None:
                picked = self._picked.get((m, n))
                if picked is None:
                    picked = self._picked[m, n] = tuple(self._pick(self.by_machine[m], n))
                chosen += picked
            else:
                used = taken[m]
                slots = {s: [g for g in gpus if g not in used] for s, gpus in self.by_machine[m].items()}
                picked = self._pick(slots, n)
                chosen += picked
                used.update(picked)
        return frozenset(chosen)

    @staticmethod
    def _pick(slots: dict[int, list[int]], n: int) -> list[int]:
        """n GPUs of one machine's free slots: the best-fit slot, else the fullest slots first."""
        fitting = [s for s, gpus in slots.items() if len(gpus) >= n]
        if fitting:
            best = min(fitting, key=lambda s: (len(slots[s]), s))
            return slots[best][:n]
        return [g for s in sorted(slots, key=lambda s: (-len(slots[s]), s)) for g in slots[s]][:n]

    def concrete(self, bundles: Sequence[frozenset[int]]) -> list[frozenset[int]]:
        """Concrete GPUs for the PF bundles of a canonical auction (representatives standing for
        machine counts): per machine, apps by decreasing count (ties by position) take their
        :meth:`representative` GPUs among those not yet taken."""
        counts = [Counter(self.machine_of[g] for g in bundle) for bundle in bundles]
        taken: dict[int, set[int]] = defaultdict(set)
        concrete: list[frozenset[int]] = [frozenset()] * len(bundles)
        for m in sorted({m for c in counts for m in c}):
            for i in sorted((i for i, c in enumerate(counts) if m in c), key=lambda i: (-counts[i][m], i)):
                concrete[i] |= self.representative({m: counts[i][m]}, taken)
        return concrete


@lru_cache(maxsize=OFFERS_KEPT)
def offer_of(offered: tuple[int, ...], topology: GpuTopology) -> Offer:
    """The :class:`Offer` of a set of free GPUs (sorted), kept: it depends on the GPUs and the
    topology alone, and the same free GPUs come back round after round (one GPU offered in most)."""
    return Offer(offered, topology)


ValuedBundle = tuple[float, tuple[int, ...], frozenset[int]]   # (rho, sorted GPU ids, bundle)


def _valued_by_size(bidder: Bidder, offer: Offer) -> list[list[ValuedBundle]]:
    """Every canonical bundle of sizes 1..min(unmet, |R'|), valued by the bidder's rho, size by size
    in :meth:`Offer.bundles` order."""
    return [[(bidder.rho(bundle), ids, bundle) for bundle, ids in offer.bundles(k)]
            for k in range(1, min(bidder.unmet, offer.total) + 1)]


def _rank(row: ValuedBundle) -> tuple[float, tuple[int, ...]]:
    """A table's order within one size: lowest rho first, then sorted GPU ids."""
    return row[0], row[1]


def canonical_bids(bidder: Bidder, offer: Offer, *, bids_max: int = BIDS_MAX) -> BidTable:
    """The §1.8 canonical bundles of one app, valued by its rho; the empty row first."""
    by_size = [sorted(rows, key=_rank) for rows in _valued_by_size(bidder, offer)]
    picked: list[tuple[frozenset[int], float]] = []
    depth = 0
    while len(picked) < bids_max and any(depth < len(rows) for rows in by_size):
        for rows in by_size:
            if depth < len(rows) and len(picked) < bids_max:
                picked.append((rows[depth][2], rows[depth][0]))
        depth += 1
    return [(frozenset(), bidder.rho(frozenset())), *picked]


def lone_canonical_bids(bidder: Bidder, offer: Offer, *, bids_max: int = BIDS_MAX) -> tuple[BidTable, int]:
    """The rows of :func:`canonical_bids` a lone bidder's auction can choose, and the length of the
    whole table: the empty row and the first row of each size the table lists at depth 0 (the
    lowest (rho, sorted GPUs) of its size; sizes 1..min(unmet, |R'|, bids_max)), every bundle
    valued in the same order as :func:`canonical_bids`.

    A lone bidder takes the first row of its table with the largest phi, the fewest GPUs among
    ties (:func:`mlsched.formulations.themis.pa_auction`, A4). That row is the first row of its
    size: within a size, rows come by increasing rho, so the first has a phi at least as large
    and comes earlier. Its phi and Phi* are the same on these rows as on the whole table: phi =
    -log rho for finite rho, and rho = +inf rows (phi = -log rho_cap) lose to every finite row
    whatever rho_cap >= 10 x the largest finite rho is; when no first row is finite no row is,
    and rho_cap is RHO_CAP_FLOOR on both tables."""
    valued = _valued_by_size(bidder, offer)
    firsts = [(first[2], first[0]) for first in (min(rows, key=_rank) for rows in valued[:bids_max])]
    return [(frozenset(), bidder.rho(frozenset())), *firsts], 1 + min(sum(map(len, valued)), bids_max)


def canonical_auction(bidders: Sequence[Bidder], offered: Sequence[int], topology: GpuTopology, *,
                      bids_max: int = BIDS_MAX, solves: str = "fixed", tie_break: str | None = None) -> AuctionOutcome:
    """The PA auction on canonical bids; a lone bidder's on :func:`lone_canonical_bids` (its
    choice, Phi* and c = 1 are those of its whole table, and its bundle, alone on each machine, is
    its own representative GPUs). ``solves`` and ``tie_break``: those of :func:`pa_auction`."""
    offer = offer_of(tuple(sorted(offered)), topology)
    if len(bidders) == 1:
        table, rows = lone_canonical_bids(bidders[0], offer, bids_max=bids_max)
        result = pa_auction([table], offered, group_of=offer.machine_of, lp_bound=False, solves=solves)
        return AuctionOutcome(result.bundles, result.payments, result.phi_star, "canonical", rows)
    tables = [canonical_bids(b, offer, bids_max=bids_max) for b in bidders]
    result = pa_auction(tables, offered, group_of=offer.machine_of, lp_bound=False, solves=solves, tie_break=tie_break)
    return AuctionOutcome(offer.concrete(result.bundles), result.payments, result.phi_star, "canonical",
                          sum(map(len, tables)))


def auction_for(mode: str, topology: GpuTopology, count_only: Callable[[int], bool], *,
                bids_max: int = BIDS_MAX,
                tie_break: str | None = None) -> Callable[[Sequence[Bidder], Sequence[int], Sequence[int]], AuctionOutcome]:
    """The auction routine of a mode; ``auto`` takes the exact count DP when every participant
    (by app index) is count-only and canonical bundles otherwise (``tie_break``: the re-solve's
    program of :func:`pa_auction`)."""
    def run(bidders: Sequence[Bidder], offered: Sequence[int], apps: Sequence[int]) -> AuctionOutcome:
        if mode == "exhaustive":
            return exhaustive_auction(bidders, offered, tie_break=tie_break)
        if mode == "auto" and all(count_only(a) for a in apps):
            return count_auction(bidders, offered)
        return canonical_auction(bidders, offered, topology, bids_max=bids_max, tie_break=tie_break)
    return run
