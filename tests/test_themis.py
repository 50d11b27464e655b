"""Themis foundations: the rho estimator on the worked example (spec §1.6, oracle T5), rho
monotonicity (T9), and the PA auction against hand-checked instances (T1, T3, T4) and brute force
(spec §7)."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import scipy.sparse as sp
import pytest

from mlsched import bruteforce
from mlsched.formulations.themis import Bidder, exhaustive_bids, pa_auction
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.online.themis.rho import App, Phase, phase_time, rho, successive_halving

SIXTEEN = GpuTopology.uniform(racks=1, machines_per_rack=2, slots_per_machine=2, gpus_per_slot=4)
NETWORK = (1.0, 1.0, 1.5, 2.0)


def worked_example():
    return successive_halving([80, 100, 100, 120], 10_000, cap=8, cluster_gpus=16, n_avg=4)


def test_t5_worked_example():
    app = worked_example()
    assert app.t_id == pytest.approx(2500)
    assert [len(p.work) for p in app.phases] == [4, 2, 1]
    two = [0, 1]
    assert [phase_time(p, two, SIXTEEN, app.profile, app.speeds) for p in app.phases] == pytest.approx([1600, 1600, 1800])
    assert rho(app, two, SIXTEEN) == pytest.approx(2.0, abs=1e-12)
    expected = {1: 4.0, 4: 1.064, 8: 0.532, 16: 259 / 750}
    for k, value in expected.items():
        assert rho(app, list(range(k)), SIXTEEN) == pytest.approx(value, rel=1e-12)
    assert math.isinf(rho(app, [], SIXTEEN))
    revised = App((Phase((120 * 16, 100 * 16), (8, 8)), Phase((120 * 36,), (8,))), t_id=2500)
    assert [phase_time(p, two, SIXTEEN, revised.profile, revised.speeds) for p in revised.phases] == pytest.approx([1920, 2160])


def test_t9_rho_monotone_in_gpus_and_linear_in_elapsed():
    app = App.single_job(4000.0, 6, cluster_gpus=16, n_avg=2)
    values = [rho(app, list(range(k)), SIXTEEN) for k in range(1, 9)]
    assert all(b <= a + 1e-12 for a, b in zip(values, values[1:]))
    assert values[5] == pytest.approx(values[6]) == pytest.approx(values[7])      # constant beyond d = 6
    late = App.single_job(4000.0, 6, cluster_gpus=16, n_avg=2, elapsed=300.0)
    assert rho(late, [0, 1], SIXTEEN) - rho(app, [0, 1], SIXTEEN) == pytest.approx(300.0 / app.t_id)


def bidder(name, app, topology, holdings=frozenset()):
    return Bidder(name, lambda bundle: rho(app, sorted(holdings | bundle), topology),
                  unmet=app.demand - len(holdings))


def test_t1_homogeneous_single_machine():
    offered = [0, 1, 2, 3]
    apps = [Bidder("1", lambda b: 3.0 / len(b) if b else math.inf, 4),
            Bidder("2", lambda b: 7.0 / len(b) if b else math.inf, 4)]
    result = pa_auction([exhaustive_bids(b, offered) for b in apps], offered)
    assert [len(b) for b in result.bundles] == [2, 2]
    assert result.payments == pytest.approx([0.5, 0.5])
    assert result.lp_bound >= result.phi_star - 1e-9


def test_t3_envy_free_pareto_efficient_placement():
    topology = GpuTopology(((0, (4,)), (0, (2,)), (0, (2,))))       # machines of 4, 2 and 2 GPUs
    offered = list(range(8))
    inception = App.single_job(8000.0, 4, cluster_gpus=8, n_avg=2)
    vgg = App.single_job(8000.0, 4, cluster_gpus=8, n_avg=2, profile=(1.0, 1.0, 1.5, 1.5))
    apps = [bidder("A1", inception, topology), bidder("A2", vgg, topology)]
    result = pa_auction([exhaustive_bids(b, offered) for b in apps], offered)
    assert result.bundles[1] == frozenset({0, 1, 2, 3})            # VGG16 gets the 4-GPU machine
    assert len(result.bundles[0]) == 4 and topology.level(result.bundles[0]) == 2
    assert result.payments == pytest.approx([1.0, 1.0])
    swapped_vgg = rho(vgg, [4, 5, 6, 7], topology)
    assert swapped_vgg > rho(vgg, [0, 1, 2, 3], topology)            # A2 envies A1 in the swapped allocation


def test_t4_whole_machines_beat_the_spread():
    topology = GpuTopology(((0, (4,)), (0, (4,))))
    offered = list(range(8))
    vgg = App.single_job(8000.0, 4, cluster_gpus=8, n_avg=2, profile=NETWORK)
    apps = [bidder("1", vgg, topology), bidder("2", vgg, topology)]
    result = pa_auction([exhaustive_bids(b, offered) for b in apps], offered)
    assert sorted(tuple(sorted(b)) for b in result.bundles) == [(0, 1, 2, 3), (4, 5, 6, 7)]
    assert result.payments == pytest.approx([1.0, 1.0])
    spread = [0, 1, 4, 5]
    assert rho(vgg, spread, topology) > rho(vgg, [0, 1, 2, 3], topology)


@pytest.mark.parametrize("seed", range(15))
def test_auction_matches_bruteforce(seed):
    rng = np.random.default_rng(seed)
    topology = GpuTopology(((0, (2,)), (0, (2,)), (1, (2,))))
    offered = sorted(rng.choice(6, size=int(rng.integers(3, 7)), replace=False).tolist())
    apps, holdings = [], []
    for n in range(int(rng.integers(2, 4))):
        app = App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=6,
                             n_avg=float(rng.integers(1, 4)), elapsed=float(rng.uniform(0, 500)),
                             profile=NETWORK if rng.random() < 0.5 else (1.0, 1.0, 1.0, 1.0))
        held = frozenset(g for g in range(6) if g not in offered and rng.random() < 0.3 and app.demand > 1)
        held = frozenset(sorted(held)[: app.demand - 1])
        apps.append(bidder(str(n), app, topology, held))
        holdings.append(held)
    tables = [exhaustive_bids(b, offered) for b in apps]
    result = pa_auction(tables, offered)
    phi_star, phi_without = bruteforce.themis_pf([b.rho for b in apps], [b.unmet for b in apps], offered)
    assert result.phi_star == pytest.approx(phi_star, abs=1e-9)
    assert result.phi_without == pytest.approx(phi_without, abs=1e-9)
    chosen = [b for b in result.bundles]
    assert all(not (a & b) for i, a in enumerate(chosen) for b in chosen[i + 1:])          # disjoint bundles
    for i, c in enumerate(result.payments):
        own = -math.log(tables[i][result.rows[i]][1]) if math.isfinite(tables[i][result.rows[i]][1]) else None
        assert 0.0 <= c <= 1.0
        if own is not None:
            assert c == pytest.approx(min(1.0, math.exp(result.phi_star - own - phi_without[i])), abs=1e-9)
    assert result.lp_bound >= result.phi_star - 1e-9


from mlsched.online.themis.arbiter import RoundApp, arbiter_round, participants, realise  # noqa: E402


def round_apps(rhos, starts, unmet):
    return [RoundApp(Bidder(str(i), lambda b, i=i: (i + 2.0) / len(b) if b else math.inf, u), r, s)
            for i, (r, s, u) in enumerate(zip(rhos, starts, unmet))]


def test_t10_filtering_edge_cases():
    apps = round_apps([1.0, math.inf, math.inf, 3.0, 0.5], [0, 5, 2, 1, 3], [2, 2, 2, 2, 0])
    assert participants(apps, 1.0, 8) == [2]                  # f = 1: one app; +inf tie broken by earlier start
    assert participants(apps, 0.0, 8) == [0, 1, 2, 3]         # f = 0: every candidate (app 4 has no unmet demand)
    assert participants(apps, 0.7, 8) == [1, 2]               # ceil(0.3 * 5) = 2 (not 3 from 1.5000000000000002)
    assert participants(apps, 0.0, 1) == [2]                  # never more participants than offered GPUs


def test_t8_round_invariants():
    for seed in range(10):
        apps = round_apps([2.0, 5.0, math.inf, 1.0], [0, 1, 2, 3], [3, 2, 2, 4])
        offered = [0, 1, 2, 3, 4]
        out = arbiter_round(apps, offered, fairness_knob=0.5, seed=seed)
        given = list(out.grants.values()) + list(out.leftover_grants.values())
        assert all(not (a & b) for i, a in enumerate(given) for b in given[i + 1:])              # disjoint
        assert frozenset().union(*given, out.idle) == frozenset(offered)                          # all accounted
        assert all(0 <= c <= 1 for c in out.auction.payments)
        assert out.participants == [1, 2]
        for i in out.leftover_grants:
            assert i not in out.participants or out.fallback_used
        for i, app in enumerate(apps):
            assert len(out.grants.get(i, frozenset()) | out.leftover_grants.get(i, frozenset())) <= app.bidder.unmet
        if out.idle:                                                                                # work conservation
            assert all(len(out.grants.get(i, frozenset()) | out.leftover_grants.get(i, frozenset())) == a.bidder.unmet
                       for i, a in enumerate(apps))


def test_lone_participant_keeps_its_bundle_and_realisations():
    apps = round_apps([4.0], [0], [3])
    out = arbiter_round(apps, [0, 1, 2, 3], fairness_knob=0.8)
    assert out.auction.payments == [1.0] and len(out.grants[0]) == 3 and len(out.idle) == 1
    bidder = apps[0].bidder
    rng = np.random.default_rng(0)
    assert realise(bidder, frozenset({0, 1, 2, 3}), 0.5, "floor", rng) == frozenset({0, 1})
    assert realise(bidder, frozenset({0, 1}), 0.4, "floor", rng) == frozenset()
    kept = [len(realise(bidder, frozenset({0, 1}), 0.75, "stochastic", np.random.default_rng(s))) for s in range(400)]
    assert set(kept) == {1, 2} and 1.4 < np.mean(kept) < 1.6      # E[k] = 0.75 * 2


from mlsched.formulations.themis import hidden_payments, log_values, pa_count_auction  # noqa: E402


@pytest.mark.parametrize("seed", range(10))
def test_count_dp_auction_equals_the_program(seed):
    rng = np.random.default_rng(50 + seed)
    gpus = int(rng.integers(2, 7))
    offered = list(range(gpus))
    rows, bidders = [], []
    for n in range(int(rng.integers(2, 4))):
        app = App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=gpus,
                             n_avg=float(rng.integers(1, 4)), elapsed=float(rng.uniform(0, 500)))
        one_machine = GpuTopology(((0, (gpus,)),))
        rows.append([rho(app, list(range(k)), one_machine) for k in range(min(app.demand, gpus) + 1)])
        bidders.append(bidder(str(n), app, one_machine))
    dp = pa_count_auction(rows, gpus)
    program = pa_auction([exhaustive_bids(b, offered) for b in bidders], offered)
    assert dp.phi_star == pytest.approx(program.phi_star, abs=1e-9)
    assert dp.phi_without == pytest.approx(program.phi_without, abs=1e-9)
    assert sum(dp.counts) == sum(len(b) for b in program.bundles)          # both take the fewest GPUs among optima
    assert sum(dp.counts) <= gpus and all(0 <= c <= 1 for c in dp.payments)


def _reference_count_dp(phi, gpus):
    """The count DP as first written (one DP from scratch per call): the oracle of the shared-stage one."""
    best = [0.0] + [-math.inf] * gpus
    choices = []
    for table in phi:
        nxt = [-math.inf] * (gpus + 1)
        pick = [0] * (gpus + 1)
        for used in range(gpus + 1):
            if best[used] == -math.inf:
                continue
            for k, value in enumerate(table[: gpus - used + 1]):
                if best[used] + value > nxt[used + k] + 1e-12:
                    nxt[used + k], pick[used + k] = best[used] + value, k
        best = nxt
        choices.append(pick)
    top = max(best)
    used = min(g for g in range(gpus + 1) if best[g] >= top - 1e-9 * max(1.0, abs(top)))
    counts = []
    for pick in reversed(choices):
        counts.append(pick[used])
        used -= pick[used]
    return float(best[sum(counts)]), counts[::-1]


@pytest.mark.parametrize("seed", range(40))
def test_count_auction_equals_the_count_dp_from_scratch(seed):
    """Phi*, the counts, every Phi*_{-i} and the payments of :func:`pa_count_auction` (the stages
    of the bidders before i shared with the whole auction) are bit for bit those of the DP run from
    scratch on all bidders and on the others; rho values on a coarse grid, repeated, +inf, and
    sums apart by less than and more than the 1e-12 tie step."""
    rng = np.random.default_rng(900 + seed)
    gpus = int(rng.integers(0, 9))
    grid = [0.5, 1.0, 1.0 + 1e-13, 1.0 + 3e-12, 2.0, 2.0 * (1 + 2e-12), 3.0, math.inf]
    rows = [[float(rng.choice(grid)) for _ in range(int(rng.integers(1, 7)))] for _ in range(int(rng.integers(1, 5)))]
    result = pa_count_auction(rows, gpus)
    phi = log_values([[(frozenset(range(k)), r) for k, r in enumerate(row)] for row in rows])
    phi_star, counts = _reference_count_dp(phi, gpus)
    assert (result.phi_star, result.counts) == (phi_star, counts)
    own = [phi[i][k] for i, k in enumerate(counts)]
    payments, without = hidden_payments(phi_star, own, [k > 0 for k in counts],
                                        lambda i: _reference_count_dp(phi[:i] + phi[i + 1:], gpus)[0])
    assert (result.payments, result.phi_without) == (payments, without)


def test_count_dp_keeps_the_earlier_candidate_within_the_tie_step():
    """One GPU, two bidders: giving it to bidder 1 (met first) is worth 1e-13 less than giving it to
    bidder 0; within the 1e-12 step the earlier candidate stays, as in the DP from scratch."""
    rows = [[2.0, 1.0], [2.0, 1.0 + 1e-13]]
    result = pa_count_auction(rows, 1)
    assert result.counts == [0, 1]
    phi = log_values([[(frozenset(), r) for r in row] for row in rows])
    assert (result.phi_star, result.counts) == _reference_count_dp(phi, 1)


from mlsched.formulations.themis import DivisibleBidder, divisible_pa  # noqa: E402


@pytest.mark.parametrize("n,expected", [(2, 0.5), (3, 4 / 9), (4, 27 / 64)])
def test_t2_symmetric_divisible_payments(n, expected):
    gpus = 12.0
    bidders = [DivisibleBidder(t_id=100.0, elapsed=0.0, work=500.0, held=0.0, unmet=gpus / (n - 1))
               for _ in range(n)]
    result = divisible_pa(bidders, gpus)
    assert result.extra == pytest.approx([gpus / n] * n, rel=1e-5)
    assert result.payments == pytest.approx([expected] * n, rel=1e-5)          # ((n-1)/n)^(n-1)


def test_t7_cole_identity_and_truthfulness_on_homogeneous_valuations():
    gpus = 10.0
    truth = [DivisibleBidder(100.0, 0.0, w, 0.0, u) for w, u in ((300.0, 6.0), (800.0, 8.0), (500.0, 3.0))]
    result = divisible_pa(truth, gpus)
    for i, b in enumerate(truth):
        utility = result.payments[i] * math.exp(-math.log(b.work / b.t_id)) * (b.held + result.extra[i])
        assert utility == pytest.approx(math.exp(result.phi_star - result.phi_without[i]), rel=1e-5)
    # misreporting the demand cap never raises the true utility c_i v_i(x_i)  (T6, homogeneous setting)
    honest = result.payments[1] * (result.extra[1] * truth[1].t_id / truth[1].work)
    for lie in (1.0, 3.0, 5.0, 10.0):
        reported = list(truth)
        reported[1] = DivisibleBidder(100.0, 0.0, 800.0, 0.0, lie)
        out = divisible_pa(reported, gpus)
        assert out.payments[1] * (out.extra[1] * truth[1].t_id / truth[1].work) <= honest * (1 + 1e-5)


def _allocations(n_bidders: int, offered: list[int], unmet: list[int]):
    """Every map of the offered GPUs to bidders or nobody within the bidders' unmet demand."""
    import itertools
    for owners in itertools.product([None, *range(n_bidders)], repeat=len(offered)):
        bundles = [frozenset(g for g, o in zip(offered, owners) if o == i) for i in range(n_bidders)]
        if all(len(b) <= u for b, u in zip(bundles, unmet)):
            yield bundles


@pytest.mark.parametrize("seed", range(8))
def test_section4_pf_allocation_is_pareto_efficient(seed):
    """§4 PE: no allocation of R' makes every app at least as well off and one strictly better than
    the PF allocation (all v_i(H_i U empty) > 0 here: every app holds a GPU)."""
    rng = np.random.default_rng(100 + seed)
    topology = GpuTopology(((0, (2,)), (0, (2,)), (1, (2,))))
    offered = [1, 3, 4, 5]
    held = [frozenset({0}), frozenset({2})]
    apps = []
    for n, h in enumerate(held):
        app = App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(2, 4)), cluster_gpus=6, n_avg=2.0,
                             profile=NETWORK if rng.random() < 0.5 else (1.0, 1.0, 1.0, 1.0))
        apps.append(bidder(str(n), app, topology, h))
    tables = [exhaustive_bids(b, offered) for b in apps]
    result = pa_auction(tables, offered)
    value = [1.0 / b.rho(x) for b, x in zip(apps, result.bundles)]
    for other in _allocations(len(apps), offered, [b.unmet for b in apps]):
        alt = [1.0 / b.rho(x) for b, x in zip(apps, other)]
        dominates = all(a >= v - 1e-12 for a, v in zip(alt, value)) and any(a > v + 1e-12 for a, v in zip(alt, value))
        assert not dominates, (result.bundles, other)


def _misreports(profile: tuple[float, ...], rng: np.random.Generator):
    """Spec §4's family M: S' = S (1 + X) on multi-machine placements and/or S' = max(0.05, S (1 - X))
    on single-machine ones, X in {0.1, ..., 1.0}; random rho perturbations by [0.5, 2]; and (ours)
    misreported scaling, rho' = rho |G|^p, which a mechanism without payments rewards."""
    for x in np.round(np.arange(0.1, 1.01, 0.1), 1):
        up = tuple(s * (1 + x) if level >= 2 else s for level, s in enumerate(profile))
        down = tuple(max(0.05, s * (1 - x)) if level <= 1 else s for level, s in enumerate(profile))
        both = tuple(max(0.05, s * (1 - x)) if level <= 1 else s * (1 + x) for level, s in enumerate(profile))
        yield from (("profile", up), ("profile", down), ("profile", both))
    for _ in range(5):
        yield "noise", float(rng.uniform(0.5, 2.0))
    for power in (-1.0, -0.5, 0.5, 1.0):
        yield "scaling", power


@pytest.mark.parametrize("seed", range(6))
def test_t6_exact_strategy_proofness_with_fractional_realisation(seed):
    """T6: with H = empty, E = 0 and fractional utility u_i = c_i v_i(G_i,pf), no misreport in M
    raises an app's true utility (within 1e-9)."""
    rng = np.random.default_rng(200 + seed)
    topology = GpuTopology(((0, (1, 1)), (0, (1, 1)), (1, (1, 1))))
    offered = sorted(rng.choice(6, size=int(rng.integers(3, 6)), replace=False).tolist())
    apps = [App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=6, n_avg=3.0,
                           profile=NETWORK if rng.random() < 0.7 else (1.0, 1.0, 1.0, 1.0))
            for _ in range(int(rng.integers(2, 4)))]
    truth = [bidder(str(n), app, topology, frozenset()) for n, app in enumerate(apps)]

    def utility(reports: list[Bidder], i: int) -> float:
        result = pa_auction([exhaustive_bids(b, offered) for b in reports], offered)
        bundle = result.bundles[i]
        return result.payments[i] / truth[i].rho(bundle) if bundle else 0.0

    for i, app in enumerate(apps):
        honest = utility(truth, i)
        for kind, lie in _misreports(app.profile, rng):
            if kind == "profile":
                liar = bidder(str(i), App(app.phases, app.t_id, app.elapsed, lie), topology, frozenset())
            elif kind == "noise":
                liar = Bidder(str(i), lambda b, f=lie, t=truth[i]: t.rho(b) * f, truth[i].unmet)
            else:
                liar = Bidder(str(i), lambda b, p=lie, t=truth[i]: t.rho(b) * max(len(b), 1) ** p, truth[i].unmet)
            reports = list(truth)
            reports[i] = liar
            assert utility(reports, i) <= honest * (1 + 1e-9) + 1e-12, (i, kind, lie)


def test_rho_bounds_bracket_the_estimate():
    """rho_bounds (the ranking's shortcut) holds the exact rho between its bounds, LPT phases
    (k < n) and split phases alike, on random multi-phase apps of a two-machine cluster."""
    from mlsched.online.themis.rho import rho_bounds

    rng = np.random.default_rng(7)
    for _ in range(300):
        phases = tuple(Phase(tuple(rng.uniform(1, 500, n).tolist()), tuple(rng.integers(1, 5, n).tolist()))
                       for n in rng.integers(1, 12, rng.integers(1, 3)))
        app = App(phases, t_id=float(rng.uniform(10, 1000)), elapsed=float(rng.uniform(0, 100)), profile=NETWORK)
        gpus = sorted(rng.choice(16, int(rng.integers(1, 17)), replace=False).tolist())
        low, high = rho_bounds(app, gpus, SIXTEEN)
        exact = rho(app, gpus, SIXTEEN)
        assert low <= exact <= high
        if all(len(gpus) >= len(p.work) for p in phases):
            assert low == pytest.approx(exact) and high == pytest.approx(exact)


def _lpt_by_definition(work, k):
    """LPT as §1.7 states it: jobs by decreasing work, each to a least-loaded GPU (linear scan)."""
    loads = [0.0] * k
    for w in sorted(work, reverse=True):
        i = loads.index(min(loads))
        loads[i] += w
    return max(loads)


def _random_work(rng, n):
    """n job works: all equal (0.1, prone to rounding), a few repeated values, or all distinct."""
    kind = rng.integers(3)
    if kind == 0:
        return [0.1] * n
    if kind == 1:
        return rng.choice([0.1, 0.3, 1.7, 2.9], n).tolist()
    return rng.uniform(1, 5000, n).tolist()


def test_lpt_makespan_equals_list_scheduling_by_definition():
    """The compiled LPT, with and without the caller's sorted work, equals LPT by its definition bit
    for bit (1 < k < n; ties of equal work included); one GPU runs the jobs in turn (their sum in
    job order), k >= n GPUs one job each."""
    from mlsched.instance.themis_physics import lpt_makespan

    rng = np.random.default_rng(5)
    for _ in range(1500):
        n = int(rng.integers(1, 120))
        work = _random_work(rng, n)
        for k in {1, int(rng.integers(1, n + 2)), n, n + 1}:
            expected = sum(work) if k == 1 else max(work) if k >= n else _lpt_by_definition(work, k)
            assert lpt_makespan(work, k) == expected
            assert lpt_makespan(work, k, sorted(work, reverse=True)) == expected


def test_lpt_makespan_heavy_tails_and_near_ties_equal_the_definition():
    """The compiled LPT equals LPT by its definition bit for bit on heavy-tailed work (the makespan
    is often the longest job alone), ties with the longest job, zero jobs, read-only arrays, and
    works whose longest job lies within a few ulps of (W - w_0) / (k - 1) + w_k (the edge of the
    sufficient condition for the longest job alone that the Python loop used as a shortcut)."""
    from mlsched.instance.themis_physics import lpt_makespan

    rng = np.random.default_rng(11)
    alone = 0
    for _ in range(3000):
        n = int(rng.integers(3, 150))
        work = np.exp(rng.normal(6.0, 2.5, n)).tolist()
        if rng.random() < 0.2:
            work[1] = max(work)                       # a tie with the longest job
        if rng.random() < 0.2:
            work[-3:] = [0.0, 0.0, 0.0]
        k = int(rng.integers(2, n))
        ordered = sorted(work, reverse=True)
        frozen = np.array(work)
        frozen.flags.writeable = False
        expected = _lpt_by_definition(work, k)
        alone += expected == ordered[0]
        assert lpt_makespan(work, k) == lpt_makespan(work, k, ordered) == lpt_makespan(frozen, k) == expected
    assert alone > 500
    near = 0
    for _ in range(3000):
        k = int(rng.integers(2, 9))
        rest = rng.uniform(0.1, 1.0, int(rng.integers(k, 40))).tolist()
        w_k = sorted(rest, reverse=True)[k - 1]          # ordered[k] once the longest job leads
        edge = math.fsum(rest) / (k - 1) + w_k
        n = len(rest) + 1
        longest = edge * (1.0 + float(rng.integers(-8 * (n + 3), 8 * (n + 3) + 1)) * 2.0 ** -53)
        work = [longest, *rest]
        if max(work) != longest:
            continue
        near += 1
        assert lpt_makespan(work, k) == _lpt_by_definition(work, k)
    assert near > 2000


def test_lpt_makespan_rejects_no_jobs_or_no_gpus():
    from mlsched.instance.themis_physics import lpt_makespan

    with pytest.raises(ValueError, match="at least one job and one GPU"):
        lpt_makespan([], 2)
    with pytest.raises(ValueError, match="at least one job and one GPU"):
        lpt_makespan([1.0, 2.0], 0)


def test_work_extent_and_lpt_order_are_the_rules_floats():
    """The compiled extent is the left-to-right sum and the largest of the chosen jobs' work (0.0 for
    none), and the LPT order the work sorted in decreasing order, bit for bit, on read-only arrays
    too."""
    from mlsched.instance.themis_physics import lpt_order, work_extent

    rng = np.random.default_rng(13)
    for _ in range(2000):
        n = int(rng.integers(1, 300))
        work = np.array(_random_work(rng, n))
        jobs = np.flatnonzero(rng.random(n) < rng.random())
        if rng.random() < 0.5:
            work.flags.writeable = False
        total = 0.0
        for w in work[jobs].tolist():
            total += w
        assert work_extent(work, jobs) == (total, max(work[jobs].tolist(), default=0.0))
        ordered = lpt_order(work)
        assert ordered.tolist() == sorted(work.tolist(), reverse=True) and ordered.flags.writeable


def test_progress_and_soonest_completion_are_the_numpy_rules_floats():
    """The compiled step of the running jobs gives numpy's elementwise floats bit for bit (the
    simulator's step before it was compiled): the soonest completion, the remaining work after
    running to t, with and without restart overhead, jobs done by t to rounding or within their
    tolerance, the other slots untouched; on no job too."""
    from mlsched.instance.themis_physics import progress, soonest_completion

    rng = np.random.default_rng(17)
    finished = partial = edge = 0
    for trial in range(3000):
        n = int(rng.integers(1, 60))
        size = int(rng.integers(0, n + 1))
        remaining = rng.random(n) * 10.0 ** rng.uniform(-3, 6, n)
        slots = rng.choice(n, size, replace=False).astype(np.int64)
        rate = rng.uniform(0.05, 8.0, size)
        now = float(rng.uniform(0, 1e6))
        resume = now + rng.uniform(-100, 100, size)
        finish_below = remaining[slots] * rng.choice([0.0, 1e-9, 0.5], size)
        for overhead in (False, True):
            begin = np.maximum(resume, now) if overhead else now
            done_at = np.divide(remaining[slots], rate)
            done_at += begin
            soonest = float(np.minimum.reduce(done_at, initial=math.inf))
            assert soonest_completion(remaining, slots, rate, resume, now, overhead) == soonest
            if size and trial % 3:   # a job's completion, or just under it: at the edge of the rounding tolerance
                t = float(rng.choice(done_at)) / (1 + 1e-12 if trial % 3 == 2 else 1.0)
            else:
                t = now + float(rng.uniform(0, 200))
            ran = np.minimum(np.maximum(t - begin, 0.0), t - now) if overhead else t - now
            after = np.where(done_at <= t * (1 + 1e-12), 0.0, np.maximum(remaining[slots] - rate * ran, 0.0))
            work = remaining.copy()
            done = progress(work, slots, rate, resume, finish_below, now, t, overhead)
            assert done.tolist() == slots[after <= finish_below].tolist()
            assert work[slots].tobytes() == after.tobytes()
            others = np.setdiff1d(np.arange(n), slots)
            assert work[others].tobytes() == remaining[others].tobytes()
            edge += int((done_at == t * (1 + 1e-12)).sum())
            finished += int((after == 0.0).sum())
            partial += int((after > 0.0).sum())
    assert finished > 1000 and partial > 1000 and edge > 10


def test_waves_bounds_hold_the_float_makespan():
    """The LPT bounds hold the float makespan itself (no tolerance), with the total summed by numpy
    (pairwise), left to right (the simulator's views) or exactly rounded, equal works included; and
    the upper bound is Graham's: W/k + (1 - 1/k) w_max, reached by k + 1 equal jobs (makespan 2w)."""
    from mlsched.instance.themis_physics import lpt_makespan, work_extent
    from mlsched.online.themis.rho import waves_bounds

    rng = np.random.default_rng(9)
    for _ in range(3000):
        n = int(rng.integers(2, 500))
        work, k, rate = _random_work(rng, n), int(rng.integers(1, n)), float(rng.choice([1.0, 0.3, 1.7]))
        exact = lpt_makespan(work, k) / rate
        for total in (float(np.sum(work)), work_extent(np.array(work), np.arange(n))[0], math.fsum(work)):
            low, high = waves_bounds(total, max(work), n, k, rate)
            assert low <= exact <= high
    for k in range(1, 40):
        low, high = waves_bounds(0.1 * (k + 1), 0.1, k + 1, k, 1.0)
        assert lpt_makespan([0.1] * (k + 1), k) == pytest.approx(0.2) and high == pytest.approx(0.2, rel=1e-12)


def test_participants_with_bounds_equal_the_full_ranking():
    """Bounds only spare estimates: the participants are those of the exact ranking (ties by start
    included), and an app is left unestimated only when k others lie above its upper bound, by
    their lower bounds or their computed rho_cur (it is out), or fewer than k others can reach its
    lower bound (it is in)."""
    rng = np.random.default_rng(3)
    spared_by_computed = 0
    for _ in range(300):
        n = int(rng.integers(2, 12))
        rhos = rng.choice([0.5, 1.0, 1.5, 2.0, 3.0, math.inf], n).tolist()
        starts, unmet = rng.integers(0, 4, n).tolist(), rng.integers(0, 3, n).tolist()
        asked: list[int] = []

        def report(i, r, asked=asked):
            asked.append(i)
            return r

        plain = round_apps(rhos, starts, unmet)
        widths = [float(rng.uniform(0, 0.6)) if math.isfinite(r) else 0.0 for r in rhos]
        bounded = [RoundApp(a.bidder, lambda i=i, r=r: report(i, r), a.start, math.isfinite(r),
                            (lambda r=r, w=w: (r - w, r + w)) if math.isfinite(r) else None)
                   for i, (a, r, w) in enumerate(zip(plain, rhos, widths))]
        f, offered = float(rng.uniform(0, 1)), int(rng.integers(1, 8))
        chosen = participants(bounded, f, offered)
        assert chosen == participants(plain, f, offered)
        candidates = [i for i in range(n) if unmet[i]]   # the rule of spec §2.5 literally, every rho_cur known
        top = max(1, min(math.ceil((1.0 - f) * n - 1e-9), offered))
        assert chosen == sorted(sorted(candidates, key=lambda i: (-rhos[i], starts[i], i))[:top])
        k = len(chosen)
        for i in set(range(n)) - set(asked):
            if unmet[i] and math.isfinite(rhos[i]) and k and len([j for j in range(n) if unmet[j]]) > k:
                low, high = bounded[i].rho_range
                others = [j for j in range(n) if j != i and unmet[j]]
                if i in chosen:
                    assert sum(1 for j in others if (rhos[j] if j in asked else bounded[j].rho_range[1]) >= low) < k
                    continue
                by_bounds = sum(1 for j in others if bounded[j].rho_range[0] > high)
                above = sum(1 for j in others if (rhos[j] if j in asked else bounded[j].rho_range[0]) > high)
                assert above >= k
                spared_by_computed += by_bounds < k
    assert spared_by_computed > 10


def _random_tables(seed, gpus=5):
    rng = np.random.default_rng(seed)
    topology = GpuTopology(((0, (2,)), (0, (2,)), (1, (2,))))
    offered = sorted(rng.choice(6, size=gpus, replace=False).tolist())
    apps = [bidder(str(n), App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=6,
                                          n_avg=float(rng.integers(1, 4)), elapsed=float(rng.uniform(0, 500)),
                                          profile=NETWORK), topology)
            for n in range(3)]
    return [exhaustive_bids(b, offered) for b in apps], offered


@pytest.mark.parametrize("seed", range(4))
def test_shared_bundle_usage_and_column_restriction_build_the_same_program(seed):
    """Counting each distinct bundle once gives every row its own units per machine and the same
    (P-PF) arrays; restricting the program to some columns keeps exactly those columns' entries."""
    from mlsched.formulations.themis import _columns, _usage, log_values, pf_arrays, table_usage

    tables, offered = _random_tables(seed)
    group_of = {g: g // 2 for g in offered}
    phi = log_values(tables)
    usage = table_usage(tables, group_of)
    assert [[dict(u) for u in uses] for uses in usage] == [[dict(_usage(b, group_of)) for b, _ in t] for t in tables]
    shared, direct = pf_arrays(tables, phi, offered, group_of=group_of, usage=usage), pf_arrays(tables, phi, offered, group_of=group_of)
    for name in ("cost", "row_lower", "row_upper", "a_start", "a_index", "a_value"):
        assert np.array_equal(getattr(shared, name), getattr(direct, name))
    keep = np.random.default_rng(seed).random(len(direct.cost)) < 0.5
    matrix = sp.csc_matrix((direct.a_value, direct.a_index, direct.a_start), shape=(len(direct.row_lower), len(direct.cost)))
    part = _columns(direct, keep)
    restricted = sp.csc_matrix((part.a_value, part.a_index, part.a_start), shape=(len(direct.row_lower), int(keep.sum())))
    assert (restricted != matrix[:, np.flatnonzero(keep)]).nnz == 0
    assert np.array_equal(part.cost, direct.cost[keep])


@pytest.mark.parametrize("seed", range(4))
def test_undominated_rows_by_pairwise_comparison(seed):
    """A row is dropped exactly when another row uses no more of every machine and is worth at least
    as much (ties: the earlier row is kept), checked pair by pair; the dense usage matrices hold
    each row's units per machine."""
    from mlsched.formulations.themis import log_values, table_usage, undominated, usage_matrices

    tables, offered = _random_tables(seed)
    group_of = {g: g // 2 for g in offered}
    phi = log_values(tables)
    usage = table_usage(tables, group_of)
    machines = sorted({group_of[g] for g in offered})
    capacity = Counter(group_of.values())
    dense, capacity_units = usage_matrices(tables, usage, capacity)
    assert capacity_units.tolist() == [capacity[m] for m in machines]
    for table, values, uses, use in zip(tables, phi, usage, dense):
        assert use.tolist() == [[row.get(m, 0) for m in machines] for row in uses]
        def dominates(a, b, uses=uses, values=values):
            fewer = all(uses[a][k] <= uses[b][k] for k in set(uses[a]) | set(uses[b]))
            same = dict(uses[a]) == dict(uses[b]) and values[a] == values[b]
            return a != b and fewer and values[a] >= values[b] and (not same or a < b)
        expected = [b for b in range(len(table)) if not any(dominates(a, b) for a in range(len(table)))]
        assert undominated([use], [values])[0] == expected
        assert len(expected) < len(table)   # not vacuous: rows are dropped


@pytest.mark.parametrize("seed", range(200))
def test_undominated_matches_pairwise_dominance_on_random_usage(seed):
    """Random small usage matrices with many exact ties in value and usage (where the ranking's
    tie-breaks matter): the rows kept are those no other row dominates, pair by pair."""
    from mlsched.formulations.themis import undominated

    rng = np.random.default_rng(seed)
    rows, keys = int(rng.integers(1, 30)), int(rng.integers(1, 5))
    use = rng.integers(0, 3, size=(rows, keys))
    values = rng.integers(0, 4, rows).astype(float) if seed % 2 else rng.normal(size=rows)

    def dominates(a, b):
        same = (use[a] == use[b]).all() and values[a] == values[b]
        return a != b and (use[a] <= use[b]).all() and values[a] >= values[b] and (not same or a < b)
    assert undominated([use], [values])[0] == [b for b in range(rows) if not any(dominates(a, b) for a in range(rows))]


def test_undominated_tables_together_as_each_alone():
    """Tables of many lengths pruned in one call (padded together by length) keep the rows each
    keeps alone, checked pair by pair."""
    from mlsched.formulations.themis import undominated

    rng = np.random.default_rng(11)
    uses = [rng.integers(0, 3, size=(int(rows), 3)) for rows in rng.integers(1, 80, size=40)]
    phis = [rng.integers(0, 4, len(use)).astype(float) for use in uses]

    def alone(use, values):
        def dominates(a, b):
            same = (use[a] == use[b]).all() and values[a] == values[b]
            return a != b and (use[a] <= use[b]).all() and values[a] >= values[b] and (not same or a < b)
        return [b for b in range(len(use)) if not any(dominates(a, b) for a in range(len(use)))]
    assert undominated(uses, phis) == [alone(use, values) for use, values in zip(uses, phis)]


@pytest.mark.parametrize("seed", range(6))
def test_reduced_cost_fixing_keeps_every_column_of_every_allocation_at_least_as_good(seed):
    """Brute force over all allocations without bidder i: whatever multipliers >= 0, no column of an
    allocation worth at least the incumbent is dropped, and the bound is never below the optimum."""
    import itertools

    from mlsched.formulations.themis import capacity_usage, lagrangian_keep, log_values, pf_arrays

    tables, offered = _random_tables(seed)
    phi = log_values(tables)
    program = pf_arrays(tables, phi, offered)
    sizes = [len(t) for t in tables]
    usage = capacity_usage(program, len(tables))
    capacity = program.row_upper[len(tables):]
    offsets = np.cumsum([0, *sizes])
    rng = np.random.default_rng(100 + seed)
    dropped = 0
    for skip in range(len(tables)):
        others = [i for i in range(len(tables)) if i != skip]
        allocations = [(sum(phi[i][b] for i, b in zip(others, rows)), rows)
                       for rows in itertools.product(*(range(sizes[i]) for i in others))
                       if not any(tables[i][b][0] & tables[j][c][0] for (i, b), (j, c)
                                  in itertools.combinations(list(zip(others, rows)), 2))]
        incumbent = sorted(value for value, _ in allocations)[len(allocations) // 2]
        for dual in (np.zeros(len(offered)), rng.uniform(0, 3, len(offered)), rng.uniform(0, 0.2, len(offered))):
            keep = lagrangian_keep(program.cost, usage, capacity, sizes, dual, incumbent, skip=skip)
            assert not keep[offsets[skip]:offsets[skip + 1]].any()
            dropped += len(keep) - sizes[skip] - int(keep.sum())
            for value, rows in allocations:
                if value >= incumbent:
                    assert all(keep[offsets[i] + b] for i, b in zip(others, rows))
        # with no incumbent nothing of the other bidders is dropped
        assert lagrangian_keep(program.cost, usage, capacity, sizes, np.zeros(len(offered)), -math.inf, skip=skip).sum() == len(keep) - sizes[skip]
    assert dropped > 0   # the check is not vacuous: the bound does rule columns out


@pytest.mark.parametrize("seed", range(8))
def test_phi_star_from_the_lp_guided_start_equals_the_best_allocation(seed):
    """The LP-guided greedy start of Phi* is a feasible allocation (one row per bidder, every
    machine's capacity kept), and Phi* solved from it equals the best of all allocations."""
    import itertools

    from mlsched.formulations.themis import _FixedWelfare, capacity_usage, log_values, pf_arrays

    tables, offered = _random_tables(seed, gpus=6)
    group_of = {g: g // 2 for g in offered}
    phi = log_values(tables)
    program = pf_arrays(tables, phi, offered, group_of=group_of)
    sizes = [len(t) for t in tables]
    usage = capacity_usage(program, len(sizes))
    offsets = np.cumsum([0, *sizes])[:-1]
    welfare = _FixedWelfare(program, sizes)
    relaxation = welfare._relaxation(None)
    assert relaxation is not None   # the LP is solved
    rows = welfare._lp_greedy(relaxation.x)
    assert rows is not None and len(rows) == len(tables) and all(0 <= b < size for b, size in zip(rows, sizes))
    assert (usage[offsets + np.array(rows)].sum(axis=0) <= program.row_upper[len(sizes):]).all()
    best = max(sum(phi[i][b] for i, b in enumerate(choice))
               for choice in itertools.product(*(range(size) for size in sizes))
               if (usage[offsets + np.array(choice)].sum(axis=0) <= program.row_upper[len(sizes):]).all())
    assert welfare.optimum() == pytest.approx(best, abs=1e-9)


def _reference_moves(cost, usage, capacity, owner, offsets, rows, skip):
    """Single-bidder moves by hand: while some bidder (not ``skip``) has a row worth more than
    1e-12 above its own that fits the units the others leave, the first such row (column order)
    of the largest gain is taken."""
    rows = list(rows)
    while True:
        used = [sum(usage[offsets[j] + rows[j]][k] for j in range(len(rows)) if j != skip) for k in range(len(capacity))]
        best = None
        for c in range(len(cost)):
            j = int(owner[c])
            if j == skip:
                continue
            held = offsets[j] + rows[j]
            gain = cost[c] - cost[held]
            if gain > 1e-12 and all(usage[c][k] <= capacity[k] - used[k] + usage[held][k] for k in range(len(capacity))):
                if best is None or gain > best[0]:
                    best = (gain, c)
        if best is None:
            return rows
        j = int(owner[best[1]])
        rows[j] = best[1] - offsets[j]


@pytest.mark.parametrize("seed", range(6))
def test_compiled_single_bidder_moves_are_the_moves_by_hand(seed):
    """The default path's start improvement (compiled) makes the same moves as a plain loop, from
    random feasible allocations of random tables over machines, with and without a bidder left
    out; the result fits and no single move is left."""
    from mlsched.formulations.themis import _FixedWelfare, log_values, pf_arrays

    rng = np.random.default_rng(seed)
    offered = list(range(12))
    group_of = {g: g // 3 for g in offered}
    tables = [[(frozenset(), 1e3)] + [(frozenset(rng.choice(12, size=int(rng.integers(1, 5)), replace=False).tolist()),
                                       float(rng.choice([rng.uniform(1, 100), 50.0])))
                                      for _ in range(int(rng.integers(3, 12)))] for _ in range(6)]
    phi = log_values(tables)
    program = pf_arrays(tables, phi, offered, group_of=group_of)
    sizes = [len(t) for t in tables]
    welfare = _FixedWelfare(program, sizes)
    usage, capacity = welfare.usage.tolist(), welfare.capacity.tolist()
    offsets = [int(o) for o in welfare.offsets]
    moved = 0
    for trial in range(20):
        skip = None if trial % 2 else int(rng.integers(len(tables)))
        rows, free = [0] * len(tables), np.array(capacity)
        for j in rng.permutation(len(tables)).tolist():
            fitting = [b for b in range(sizes[j]) if (welfare.usage[offsets[j] + b] <= free).all()]
            rows[j] = int(rng.choice(fitting))
            free -= welfare.usage[offsets[j] + rows[j]]
        expected = _reference_moves(program.cost.tolist(), usage, capacity, welfare.owner, offsets, rows,
                                    -1 if skip is None else skip)
        assert welfare.improve(rows, skip) == expected
        moved += expected != rows
        others = [j for j in range(len(tables)) if j != skip]
        assert (welfare.usage[[offsets[j] + expected[j] for j in others]].sum(axis=0) <= welfare.capacity).all()
    assert moved > 10   # the moves are exercised, not only allocations already at a local optimum


@pytest.mark.parametrize("seed", range(8))
def test_every_auction_path_gives_the_same_allocation_and_payments(seed):
    """The default path (reduced-cost fixing), the persistent model and fresh programs (the oracle)
    agree exactly on Phi*, the allocation (A8's grid makes ties resolve alike) and every c_i."""
    tables, offered = _random_tables(seed, gpus=6)
    results = {solves: pa_auction(tables, offered, lp_bound=False, solves=solves) for solves in ("fixed", "persistent", "fresh")}
    for solves in ("fixed", "persistent"):
        assert results[solves].rows == results["fresh"].rows
        assert results[solves].phi_star == pytest.approx(results["fresh"].phi_star, abs=1e-12)
        assert results[solves].payments == pytest.approx(results["fresh"].payments, abs=1e-9)
        assert results[solves].phi_without == pytest.approx(results["fresh"].phi_without, abs=1e-9)


def test_tie_threshold_is_on_its_grid_within_the_a8_tolerance():
    from mlsched.formulations.themis import TIE_GRID, tie_threshold

    for phi_star in (0.0, 29.765275442569973, -3.25, 1e4 / 3):
        threshold = tie_threshold(phi_star)
        assert threshold / TIE_GRID == math.floor(threshold / TIE_GRID)
        slack = phi_star - threshold
        assert 1e-9 * max(1.0, abs(phi_star)) <= slack <= 1e-9 * max(1.0, abs(phi_star)) + TIE_GRID
    assert tie_threshold(29.765275442569973) == tie_threshold(29.76527544256997)   # one ulp apart


def _recorded_auction(name):
    """An auction recorded from a simulation (tests/data/NAME.json): its tables, offered GPUs,
    machine of each GPU, log values, and every feasible allocation of all bidders by depth-first
    enumeration with machine capacities (as (welfare, GPUs, rows)). Every recorded table has a row
    without GPUs, so the allocations without bidder i are those giving i such a row."""
    import json

    from mlsched.formulations.themis import log_values

    data = json.loads((Path(__file__).parent / "data" / f"{name}.json").read_text())
    tables = [[(frozenset(b), float(r)) for b, r in table] for table in data["tables"]]
    offered, group_of = data["offered"], {int(g): m for g, m in data["machine_of"].items()}
    machines = sorted(set(group_of.values()))
    capacity = tuple(sum(group_of[g] == m for g in offered) for m in machines)
    use = [[tuple(sum(group_of[g] == m for g in b) for m in machines) for b, _ in t] for t in tables]
    assert all(any(not bundle for bundle, _ in table) for table in tables)
    phi = log_values(tables)
    found = []

    def extend(k, free, rows):
        if k == len(tables):
            found.append((math.fsum(phi[i][b] for i, b in enumerate(rows)),
                          sum(len(tables[i][b][0]) for i, b in enumerate(rows)), tuple(rows)))
            return
        for b, units in enumerate(use[k]):
            if all(u <= f for u, f in zip(units, free)):
                extend(k + 1, tuple(f - u for f, u in zip(free, units)), [*rows, b])

    extend(0, capacity, [])
    return tables, offered, group_of, phi, found


def _every_path_exact(name):
    """Each auction path on the recorded auction NAME against the enumeration: an allocation of
    welfare Phi* with the fewest GPUs, Phi*, every Phi*_{-i} and c_i exact, and the three paths
    alike. Returns the optimal allocations with the fewest GPUs and their welfare."""
    tables, offered, group_of, phi, everyone = _recorded_auction(name)
    top = max(w for w, _, _ in everyone)
    tied = [a for a in everyone if a[0] >= top - 1e-9 * max(1.0, abs(top))]
    fewest = min(n for _, n, _ in tied)
    best = {rows for w, n, rows in tied if n == fewest}
    without = [max(math.fsum(phi[j][b] for j, b in enumerate(rows) if j != i) for _, _, rows in everyone
                   if not tables[i][rows[i]][0]) for i in range(len(tables))]
    results = {solves: pa_auction(tables, offered, group_of=group_of, lp_bound=False, solves=solves)
               for solves in ("fixed", "persistent", "fresh")}
    for result in results.values():
        assert tuple(result.rows) in best
        assert result.phi_star == pytest.approx(top, abs=1e-12)
        for i, c in enumerate(result.payments):
            assert result.phi_without[i] == pytest.approx(without[i], abs=1e-9)
            assert c == pytest.approx(min(1.0, math.exp(top - phi[i][result.rows[i]] - without[i])), abs=1e-9)
        assert result.rows == results["fresh"].rows
        assert result.payments == pytest.approx(results["fresh"].payments, abs=1e-12)
    return {rows: w for w, n, rows in tied if n == fewest}


def test_the_w1_run_s_first_tied_auction_resolves_alike_on_every_path():
    """The first auction of the full W1 run whose allocation moved with A8's grid (docs/reproduction.md):
    seven allocations share Phi* to the last bit and the fewest GPUs (app 671's two GPUs on any of
    seven machines). Brute force over every allocation: each path returns one of them, with Phi*,
    every Phi*_{-i} and c_i exact, and the three paths return the same one."""
    best = _every_path_exact("themis-w1-tied-auction")
    assert len(best) == 7 and len(set(best.values())) == 1   # an exact tie


def test_an_auction_highs_ends_optimal_above_the_exact_gap_is_solved_again():
    """An auction of Themis on the first 600 jobs of Gavel's trace (docs/reproduction.md): HiGHS
    ended its Phi*_{-3} program "optimal" at relative gap 2.7e-8, which the auction refused
    (the simulation stopped). It is now solved again with a tighter feasibility tolerance: every
    path returns the enumeration's Phi*, Phi*_{-i} and c_i."""
    assert _every_path_exact("themis-gavel-gap-auction")


def test_auction_solves_switch_thread_counts_within_one_process():
    """HiGHS keeps one thread pool per process and refuses a solve asking for another thread
    count; the auction gives the same answer on 2, 1 and 2 threads in turn, and the process's
    setting is restored after each block."""
    from mlsched import solve

    app = App((Phase((400.0, 300.0), (2, 2)),), t_id=100.0, profile=NETWORK)
    other = App((Phase((900.0,), (4,)),), t_id=300.0, profile=NETWORK)
    offered = [0, 1, 2, 4, 5]
    bidders = [Bidder("a", lambda b: rho(app, sorted(b), SIXTEEN), 4),
               Bidder("b", lambda b: rho(other, sorted(b), SIXTEEN), 4)]
    before = solve._THREADS
    outcomes = []
    for threads in (2, 1, 2):
        with solve.solver_threads(threads):
            result = pa_auction([exhaustive_bids(b, offered) for b in bidders], offered)
        assert solve._THREADS == before
        outcomes.append((result.phi_star, result.bundles, result.payments))
    assert outcomes[0] == outcomes[1] == outcomes[2]
    assert any(outcomes[0][1])


@pytest.mark.parametrize("seed", range(100))
def test_lone_bidder_takes_the_row_the_pruned_table_would_give(seed):
    """A lone bidder's auction skips the dominance pruning: its row, bundle and Phi* are those of
    the best row (fewest GPUs among ties, then the first) of the pruned table, on random tables with
    coarse values (exact ties in value and GPU count, repeated bundles), per GPU and per machine."""
    from mlsched.formulations.themis import _usage, log_values, pa_auction, table_usage, undominated, usage_matrices

    rng = np.random.default_rng(seed)
    offered = sorted(rng.choice(8, size=int(rng.integers(1, 7)), replace=False).tolist())
    bundles = [frozenset(b) for k in range(len(offered) + 1) for b in itertools.combinations(offered, k)]
    picks = rng.choice(len(bundles), size=int(rng.integers(1, 12)))
    table = [(frozenset(), float(rng.choice([2.0, 4.0, math.inf])))]
    table += [(bundles[b], float(rng.choice([1.0, 2.0, 4.0]))) for b in picks]
    for group_of in (None, {g: g // 2 for g in offered}):
        phi = log_values([table])
        usage = table_usage([table], group_of)
        kept = undominated(usage_matrices([table], usage, _usage(frozenset(offered), group_of))[0], phi)[0]
        best = max(kept, key=lambda b: (phi[0][b], -len(table[b][0])))
        result = pa_auction([table], offered, group_of=group_of)
        assert result.rows == [best] and result.bundles == [table[best][0]]
        assert result.phi_star == phi[0][best] == result.lp_bound and result.payments == [1.0]


def test_numba_is_imported_only_when_a_compiled_loop_runs():
    """Importing the package, its command line, the simulator and a policy, and loading an
    instance, leave numba unimported; the first simulated step imports it."""
    small = Path(__file__).resolve().parents[1] / "instances" / "themis" / "o1-small.json"
    script = (
        "import sys, mlsched, mlsched.cli\n"
        "from mlsched.baselines.gavel_ftf import GavelFTF\n"
        "from mlsched.sim.event_engine import SimOptions, simulate\n"
        f"instance = mlsched.load({str(small)!r})\n"
        "print('numba' in sys.modules)\n"
        "simulate(instance, GavelFTF(), SimOptions(lease=360.0))\n"
        "print('numba' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]
