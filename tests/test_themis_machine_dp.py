"""The machine DP of small PA auctions (decision A8c) against brute force over every allocation and
against the HiGHS path (``solves="fresh"``), in exhaustive and canonical mode."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from mlsched.formulations import themis, themis_machine_dp
from mlsched.formulations.themis import exhaustive_bids, log_values, pa_auction, table_usage, usage_matrices
from mlsched.formulations.themis_machine_dp import WINDOW, MachineDp, machine_dp
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.online.themis.bids import Offer, canonical_bids
from mlsched.online.themis.rho import App

from test_themis import NETWORK, bidder


def _random_synthetic(rng: np.random.Generator) -> tuple[list[list[float]], list[list[Counter[int]]], Counter[int]]:
    """2-4 bidders, 1-3 capacity rows of 1-3 units, 1-5 rows per table (the empty row first);
    values from a coarse grid so that exact ties are common."""
    capacity = Counter({k: int(rng.integers(1, 4)) for k in range(int(rng.integers(1, 4)))})
    phi, usage = [], []
    for _ in range(int(rng.integers(2, 5))):
        rows = [Counter()] + [Counter({k: int(rng.integers(0, c + 1)) for k, c in capacity.items()})
                              for _ in range(int(rng.integers(0, 5)))]
        usage.append([+row for row in rows])   # + drops zero counts, as the auction's usage has none
        phi.append([-float(rng.integers(0, 6)) / 2 for _ in rows])
    return phi, usage, capacity


def _dense(usage, capacity, keys=None):
    """The DP's inputs: each table's rows' units per capacity row (``keys``, default every
    capacity row, in sorted order) and the capacities in that order."""
    keys = sorted(capacity) if keys is None else keys
    return ([np.array([[row[k] for k in keys] for row in table], dtype=np.int64).reshape(len(table), len(keys))
             for table in usage], np.array([capacity[k] for k in keys], dtype=np.int64))


def _allocations(phi, usage, capacity, skip=None):
    """(welfare summed in bidder order, GPUs, rows) of every feasible allocation (bidder ``skip`` out)."""
    bidders = [i for i in range(len(phi)) if i != skip]
    out = []
    for rows in itertools.product(*(range(len(phi[i])) for i in bidders)):
        used = sum((usage[i][b] for i, b in zip(bidders, rows)), Counter())
        if all(used[k] <= capacity[k] for k in used):
            out.append((sum(phi[i][b] for i, b in zip(bidders, rows)), sum(sum(usage[i][b].values()) for i, b in zip(bidders, rows)), list(rows)))
    return out


@pytest.mark.parametrize("seed", range(300))
def test_dp_values_and_forced_allocation_equal_brute_force(seed):
    """Phi*, every Phi*_{-i}, and: the DP names an allocation exactly when brute force finds one
    allocation with the fewest GPUs among those within WINDOW of Phi*, welfare maximal."""
    phi, usage, capacity = _random_synthetic(np.random.default_rng(seed))
    dp = MachineDp(phi, *_dense(usage, capacity))
    every = _allocations(phi, usage, capacity)
    best = max(w for w, _, _ in every)
    assert dp.phi_star == pytest.approx(best, abs=1e-12)
    for i in range(len(phi)):
        assert dp.phi_without[i] == pytest.approx(max(w for w, _, _ in _allocations(phi, usage, capacity, skip=i)), abs=1e-12)
    near = [(g, rows) for w, g, rows in every if w >= best - WINDOW * max(1.0, abs(best))]
    fewest = min(g for g, _ in near)
    at_fewest = [rows for g, rows in near if g == fewest]
    forced = at_fewest[0] if len(at_fewest) == 1 and sum(phi[i][b] for i, b in enumerate(at_fewest[0])) == best else None
    assert dp.forced_rows() == forced
    answer = machine_dp(phi, *_dense(usage, capacity))
    assert answer.rows == forced and answer.phi_star == dp.phi_star and answer.phi_without == dp.phi_without


@pytest.mark.parametrize("seed", range(100))
def test_completion_bounds_and_near_optimal_members_equal_their_definitions(seed):
    """:meth:`MachineDp._completions` (0 for the last bidder without looking at B_n) equals
    max_{v <= rest} B_{i+1}(v) over the stage's vectors for every bidder and rest, and the members
    of W equal brute force's allocations within WINDOW of Phi* (rows, GPUs, welfare in bidder order)."""
    phi, usage, capacity = _random_synthetic(np.random.default_rng(1000 + seed))
    dp = MachineDp(phi, *_dense(usage, capacity))
    for i in range(len(phi)):
        rests = np.array([[int(v) for v in rest] for rest in itertools.product(*(range(c + 1) for c in dp.capacity))])
        stage = dp.after[i]
        expected = [max((float(w) for used, w in zip(stage.used, stage.value) if np.all(used <= rest)),
                        default=-math.inf) for rest in rests]
        assert dp._completions(i, rests).tolist() == expected
    every = _allocations(phi, usage, capacity)
    floor = dp.phi_star - WINDOW * max(1.0, abs(dp.phi_star))
    members = dp.near_optimal()
    assert members is not None
    assert sorted((rows, g, w) for g, w, rows in members) == sorted((rows, g, w) for w, g, rows in every if w >= floor)


def test_capacity_rows_no_row_uses_change_nothing():
    """The auction hands the DP the usage columns of its whole tables, before dominated rows are
    pruned, so some columns may be unused by every row left: the DP's Phi*, Phi*_{-i} and forced
    allocation are the same as on the used columns alone (and with an unused capacity row added)."""
    unused = 0
    for seed in range(300):
        phi, usage, capacity = _random_synthetic(np.random.default_rng(seed))
        used = sorted({k for table in usage for row in table for k in row})
        widened = capacity + Counter({max(capacity) + 1: 2})
        unused += len(used) < len(capacity)
        alone = MachineDp(phi, *_dense(usage, capacity, used))
        for dp in (MachineDp(phi, *_dense(usage, capacity)), MachineDp(phi, *_dense(usage, widened))):
            assert dp.phi_star == alone.phi_star and dp.phi_without == alone.phi_without
            assert dp.forced_rows() == alone.forced_rows()
    assert unused >= 10   # not vacuous: some cases have capacity rows no row uses (19 of the 300)


def test_both_outcomes_occur_in_the_brute_force_cases():
    """The comparison above is not vacuous: the DP both answers and declines among its cases."""
    outcomes = Counter(MachineDp(case[0], *_dense(case[1], case[2])).forced_rows() is None
                       for case in (_random_synthetic(np.random.default_rng(seed)) for seed in range(300)))
    assert outcomes[True] >= 30 and outcomes[False] >= 30


def test_exact_tie_at_the_fewest_gpus_leaves_the_choice_to_the_resolve():
    """Two equal bidders, one GPU: giving it to either ties in welfare and GPU count, so the DP
    names no allocation but gives Phi* = -1.5 and Phi*_{-i} = -0.5 (the other takes the GPU); the
    auction's re-solve picks the winner, who pays c = exp((-1.5 - (-0.5)) - (-0.5)) = exp(-0.5)."""
    phi = [[-1.0, -0.5], [-1.0, -0.5]]
    usage = [[Counter(), Counter({0: 1})], [Counter(), Counter({0: 1})]]
    answer = machine_dp(phi, *_dense(usage, Counter({0: 1})))
    assert answer.rows is None and answer.phi_star == -1.5 and answer.phi_without == [-0.5, -0.5]
    tables = [[(frozenset(), math.e), (frozenset({7}), math.exp(0.5))]] * 2
    result = pa_auction(tables, [7], lp_bound=False)
    assert sorted(map(len, result.bundles)) == [0, 1]
    winner = 0 if result.bundles[0] else 1
    assert result.phi_star == pytest.approx(-1.5, abs=1e-12)
    assert result.payments[winner] == pytest.approx(math.exp(-0.5), abs=1e-12) and result.payments[1 - winner] == 1.0
    assert result.payments == pytest.approx(pa_auction(tables, [7], lp_bound=False, solves="fresh").payments, abs=1e-12)


def test_dp_beyond_the_caps_is_declined():
    phi = [[0.0, 1.0], [0.0, 2.0]]
    usage = [[Counter(), Counter({0: 1})]] * 2
    assert machine_dp(phi, *_dense(usage, Counter({0: 1, 1: 0}))) is not None
    assert machine_dp(phi, *_dense(usage, Counter({0: 1})), state_cap=1) is None      # two vectors after bidder 0
    assert machine_dp(phi, *_dense(usage, Counter({0: 1})), pair_cap=3) is None       # 1 x 2 + 2 x 1 pairs
    wide_phi, wide_usage = [[-float(r) for r in range(41)], [0.0, 1.0]], [[Counter()] * 41, usage[1]]
    assert machine_dp(wide_phi, *_dense(wide_usage, Counter({0: 1})), state_cap=2) is not None
    assert machine_dp(wide_phi, *_dense(wide_usage, Counter({0: 1})), state_cap=1) is None   # 41 candidates > 1 x 32



def _declining_instance(rng: np.random.Generator):
    """4-7 bidders of 1-9 rows, or 30-70 with probability 1/3 (more than the DP builds per state),
    on 2-3 capacity rows of 2-4 units; a bidder's row that uses nothing is missing with probability
    1/4 (the DP's states then need not grow)."""
    capacity = Counter({k: int(rng.integers(2, 5)) for k in range(int(rng.integers(2, 4)))})
    phi, usage = [], []
    for _ in range(int(rng.integers(4, 8))):
        rows = [Counter({k: int(rng.integers(0, c + 1)) for k, c in capacity.items()}) for _ in range(int(rng.integers(30, 71) if rng.random() < 1 / 3 else rng.integers(1, 10)))]
        if rng.random() < 0.75:
            rows[0] = Counter()
        usage.append([+row for row in rows])
        phi.append([-float(rng.integers(0, 20)) / 4 for _ in rows])
    return phi, usage, capacity


def test_early_decline_equals_the_stage_by_stage_caps(monkeypatch):
    """Declining before a later stage is built (``_largest_later``) changes no answer: on random
    auctions and caps the DP answers (None or the same values and allocation) as it does with the
    shortcut off, and the shortcut does decline some of them early."""
    rng = np.random.default_rng(7)
    cases = [(*_declining_instance(rng), int(rng.integers(1, 40))) for _ in range(400)]
    built = {"on": 0, "off": 0}
    extend = themis_machine_dp.Stage.extend

    def answers(mode):
        def counted(self, *args, **kwargs):
            built[mode] += 1
            return extend(self, *args, **kwargs)
        monkeypatch.setattr(themis_machine_dp.Stage, "extend", counted)
        out = []
        for phi, usage, capacity, cap in cases:
            answer = machine_dp(phi, *_dense(usage, capacity), state_cap=cap)
            out.append(None if answer is None else (answer.phi_star, answer.rows, answer.phi_without))
        return out

    with_shortcut = answers("on")
    monkeypatch.setattr(themis_machine_dp, "_largest_later", lambda units: [0] * len(units))
    without = answers("off")
    assert with_shortcut == without
    assert sum(a is None for a in without) > 50 and sum(a is not None for a in without) > 50
    assert built["on"] < built["off"]


def test_largest_later_stops_at_a_table_without_an_empty_row():
    empty, busy = np.zeros((1, 2), dtype=np.int64), np.ones((1, 2), dtype=np.int64)
    tables = [np.vstack([empty, busy]), np.vstack([empty] + [busy] * 4), np.vstack([busy] * 3), np.vstack([empty] * 9)]
    assert themis_machine_dp._largest_later(tables) == [5, 5, 0, 0]
    assert themis_machine_dp._largest_later(tables[:2]) == [5, 5]

def _random_apps(rng: np.random.Generator, topology: GpuTopology, gpus: int):
    return [bidder(str(n), App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=gpus,
                                          n_avg=float(rng.integers(1, 4)), elapsed=float(rng.uniform(0, 500)),
                                          profile=NETWORK if rng.random() < 0.5 else (1.0, 1.0, 1.0, 1.0)), topology)
            for n in range(int(rng.integers(2, 5)))]


def _answered_by_dp(monkeypatch) -> list[str]:
    """Spy on the auction's DP hook: one entry per call, ``forced`` when the DP named the allocation,
    ``values`` when it gave only Phi* and the Phi*_{-i} (the re-solve picks among ties), ``declined``
    beyond its caps."""
    calls: list[str] = []

    def spy(*args, **kwargs):
        answer = machine_dp(*args, **kwargs)
        calls.append("declined" if answer is None else "values" if answer.rows is None else "forced")
        return answer

    monkeypatch.setattr(themis, "machine_dp", spy)
    return calls


def _same_as_fresh(result, fresh):
    assert result.rows == fresh.rows
    assert result.bundles == fresh.bundles
    assert result.phi_star == pytest.approx(fresh.phi_star, abs=1e-12)
    assert result.payments == pytest.approx(fresh.payments, abs=1e-9)
    assert result.phi_without == pytest.approx(fresh.phi_without, abs=1e-9)


def test_exhaustive_auctions_equal_the_highs_path(monkeypatch):
    """Random exhaustive auctions on three 2-GPU machines: the default auction (the DP where it
    answers) gives the fresh HiGHS path's allocation, Phi*, Phi*_{-i}, c_i and LP bound."""
    calls = _answered_by_dp(monkeypatch)
    topology = GpuTopology(((0, (2,)), (0, (2,)), (1, (2,))))
    for seed in range(40):
        rng = np.random.default_rng(seed)
        offered = sorted(int(g) for g in rng.choice(6, size=int(rng.integers(1, 5)), replace=False))
        tables = [exhaustive_bids(b, offered) for b in _random_apps(rng, topology, 6)]
        fresh = pa_auction(tables, offered, solves="fresh")
        result = pa_auction(tables, offered)
        _same_as_fresh(result, fresh)
        assert result.lp_bound == pytest.approx(fresh.lp_bound, abs=1e-9)
    assert calls.count("forced") >= 10 and calls.count("values") >= 5


def test_canonical_auctions_equal_the_highs_path(monkeypatch):
    """Random canonical auctions (one capacity row per machine) on four 4-GPU machines in two racks."""
    calls = _answered_by_dp(monkeypatch)
    topology = GpuTopology(((0, (2, 2)), (0, (2, 2)), (1, (2, 2)), (1, (4,))))
    for seed in range(40):
        rng = np.random.default_rng(1000 + seed)
        offered = sorted(int(g) for g in rng.choice(16, size=int(rng.integers(1, 7)), replace=False))
        offer = Offer(offered, topology)
        tables = [canonical_bids(b, offer) for b in _random_apps(rng, topology, 16)]
        group_of = {g: topology.machine_of(g) for g in offered}
        fresh = pa_auction(tables, offered, group_of=group_of, lp_bound=False, solves="fresh")
        _same_as_fresh(pa_auction(tables, offered, group_of=group_of, lp_bound=False), fresh)
        units, capacity = usage_matrices(tables, table_usage(tables, group_of), Counter(group_of.values()))
        assert MachineDp(log_values(tables), units, capacity).phi_star \
            == pytest.approx(fresh.phi_star, abs=1e-9)
    assert calls.count("forced") >= 10 and calls.count("values") >= 5


def test_only_the_default_path_uses_the_dp(monkeypatch):
    """The persistent and fresh paths stay HiGHS throughout (the fresh one is the oracle)."""
    calls = _answered_by_dp(monkeypatch)
    tables = [[(frozenset(), 2.0), (frozenset({0}), 1.5)], [(frozenset(), 3.0), (frozenset({0}), 1.0)]]
    pa_auction(tables, [0], solves="fresh")
    pa_auction(tables, [0], solves="persistent")
    assert calls == []
    pa_auction(tables, [0])
    assert calls == ["forced"]


def test_module_constants_keep_the_window_wider_than_the_resolve_tolerances():
    assert WINDOW > 1e-9 + themis.TIE_GRID + 1e-7
    assert themis_machine_dp.MAXIMUM_SLACK < 1e-9
