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

from collections import defaultdict
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass

from mlsched.formulations.themis import Bidder, BidTable, exhaustive_bids, pa_auction, pa_count_auction
from mlsched.instance.gpu_topology import GpuTopology

BIDS_MAX = 64
AUCTION_MODES = ("auto", "canonical", "exhaustive")


@dataclass
class AuctionOutcome:
    bundles: list[frozenset[int]]       # PF bundles, concrete GPUs
    payments: list[float]               # c_i
    phi_star: float
    mode: str
    bids: int                           # rows offered to the integer program (or DP table size)


def exhaustive_auction(bidders: Sequence[Bidder], offered: Sequence[int]) -> AuctionOutcome:
    tables = [exhaustive_bids(b, offered) for b in bidders]
    result = pa_auction(tables, offered)
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
        self.topology = topology
        self.by_machine: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        self.rack_of: dict[int, int] = {}
        pool = sorted(offered)
        for g, (rack, machine, slot) in zip(pool, topology.gpu_table[pool].tolist()):
            self.by_machine[machine][slot].append(g)
            self.rack_of[machine] = rack
        self._free = {m: sum(map(len, slots.values())) for m, slots in self.by_machine.items()}
        self._picked: dict[tuple[int, int], tuple[int, ...]] = {}   # (machine, n) -> representative GPUs

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


def canonical_bids(bidder: Bidder, offer: Offer, *, bids_max: int = BIDS_MAX) -> BidTable:
    """The §1.8 canonical bundles of one app, valued by its rho; the empty row first."""
    machines = list(offer.by_machine)
    racks: dict[int, list[int]] = defaultdict(list)
    for m in machines:
        racks[offer.rack_of[m]].append(m)
    total = sum(offer.free(m) for m in machines)
    orders = [offer.fill_order(ms) for ms in racks.values()]
    whole = offer.fill_order(machines)
    by_size: list[list[tuple[float, frozenset[int]]]] = []
    seen: set[tuple[tuple[int, int], ...]] = set()
    for k in range(1, min(bidder.unmet, total) + 1):
        shapes = [{m: k} for m in machines if offer.free(m) >= k]
        shapes += [offer.fill(order, k) for order in orders]
        shapes.append(offer.fill(whole, k))
        rows = []
        for counts in shapes:
            key = tuple(sorted(counts.items()))
            if counts and key not in seen:
                seen.add(key)
                bundle = offer.representative(counts)
                rows.append((bidder.rho(bundle), bundle))
        by_size.append(sorted(rows, key=lambda r: (r[0], sorted(r[1]))))
    picked: list[tuple[frozenset[int], float]] = []
    depth = 0
    while len(picked) < bids_max and any(depth < len(rows) for rows in by_size):
        for rows in by_size:
            if depth < len(rows) and len(picked) < bids_max:
                picked.append((rows[depth][1], rows[depth][0]))
        depth += 1
    return [(frozenset(), bidder.rho(frozenset())), *picked]


def canonical_auction(bidders: Sequence[Bidder], offered: Sequence[int], topology: GpuTopology, *,
                      bids_max: int = BIDS_MAX, solves: str = "fixed") -> AuctionOutcome:
    offer = Offer(offered, topology)
    tables = [canonical_bids(b, offer, bids_max=bids_max) for b in bidders]
    group_of = {g: topology.machine_of(g) for g in offered}
    result = pa_auction(tables, offered, group_of=group_of, lp_bound=False, solves=solves)
    counts = [dict(_per_machine(bundle, group_of)) for bundle in result.bundles]
    taken: dict[int, set[int]] = defaultdict(set)
    concrete: list[frozenset[int]] = [frozenset()] * len(bidders)
    for m in sorted({m for c in counts for m in c}):
        for i in sorted((i for i, c in enumerate(counts) if m in c), key=lambda i: (-counts[i][m], i)):
            concrete[i] |= offer.representative({m: counts[i][m]}, taken)
    return AuctionOutcome(concrete, result.payments, result.phi_star, "canonical", sum(map(len, tables)))


def _per_machine(bundle: frozenset[int], group_of: dict[int, int]) -> dict[int, int]:
    counts: dict[int, int] = defaultdict(int)
    for g in bundle:
        counts[group_of[g]] += 1
    return counts


def auction_for(mode: str, topology: GpuTopology, count_only: Callable[[int], bool], *,
                bids_max: int = BIDS_MAX) -> Callable[[Sequence[Bidder], Sequence[int], Sequence[int]], AuctionOutcome]:
    """The auction routine of a mode; ``auto`` takes the exact count DP when every participant
    (by app index) is count-only and canonical bundles otherwise."""
    def run(bidders: Sequence[Bidder], offered: Sequence[int], apps: Sequence[int]) -> AuctionOutcome:
        if mode == "exhaustive":
            return exhaustive_auction(bidders, offered)
        if mode == "auto" and all(count_only(a) for a in apps):
            return count_auction(bidders, offered)
        return canonical_auction(bidders, offered, topology, bids_max=bids_max)
    return run
