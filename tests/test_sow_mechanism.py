"""SoW mechanism: LIFO eviction (spec §3.3, test oracle T1)."""

import math

import numpy as np
import numpy.typing as npt

from mlsched.online.sow import (
    ExpPrices, best_start, group_gains, interval_prices, launch_plan, lifo_removals_prefix,
    lifo_removals_sequential, relaxed_usage)
from mlsched.online.sow.bundles import BundleMenu, fua_violations
from mlsched.online.sow.launch import is_switched, relaxed_utility
from mlsched.online.sow.reduction import Reduction
from mlsched.online.sow.oracle import (
    enumerate_futures, failure_table, lemma_f1_samples, load_paths, sample_futures, threshold_closure)

FORMS = (lifo_removals_prefix, lifo_removals_sequential)


def test_t1a_running_jobs_and_waiting_latecomer() -> None:
    # J1, J2, J3 running; J4 arrived, scheduled at 7 (not contributing at r = 5); C = 2.
    for form in FORMS:
        assert form([1, 1, 1, 1], [True, True, True, False], 2).tolist() == [False, False, True, True]


def test_t1b_later_born_running_job_removed_only() -> None:
    # J1, J2, J4 running; J3 scheduled later; prefix loads 1, 2, 2, 3 -> only J4 removed.
    for form in FORMS:
        assert form([1, 1, 1, 1], [True, True, False, True], 2).tolist() == [False, False, False, True]


def test_t1c_wide_first_job_evicts_second() -> None:
    for form in FORMS:
        assert form([2, 1], [True, True], 2).tolist() == [False, True]


def test_t1_both_forms_agree_on_random_configurations() -> None:
    rng = np.random.default_rng(20220302)
    for _ in range(10_000):
        n = int(rng.integers(0, 9))
        widths = rng.integers(1, 5, size=n)
        contributing = rng.random(n) < 0.6
        capacity = int(rng.integers(1, 9))
        a = lifo_removals_prefix(widths, contributing, capacity)
        b = lifo_removals_sequential(widths, contributing, capacity)
        assert np.array_equal(a, b)
        kept_load = int(widths[contributing & ~a].sum())
        assert kept_load <= capacity


def test_t3_exponential_prices_hand_example() -> None:
    # d_max = 1, D = 2, V = 4 -> L = 1/4, mu = 32; C' = 5; nine jobs born at 1: d = 1, a = 2, l = 1,
    # v(c) = 4 for c <= 3 (Delta = 3) else 0.
    alg = ExpPrices(capacity=5.0, d_max=1, max_duration=2, max_value=4.0)
    assert alg.L == 0.25 and alg.base == 32.0 and alg.capacity_condition
    assert np.allclose(alg.unit(np.arange(6.0))[:5], [0.25, 0.5, 1, 2, 4])
    assert np.isinf(alg.unit([5.0])[0])  # u > C' - d_max = 4
    assert abs(alg.alpha - (2 + 4 * np.log(32))) < 1e-12
    horizon = 6
    value = np.array([4.0 if c <= 3 else 0.0 for c in range(horizon + 2)])
    usage = np.zeros(horizon)
    starts, pays = [], []
    for _ in range(9):
        price = interval_prices(alg.unit(usage), 1, 2)
        s, _gain = best_start(2, [1], [1.0], 3, value, price, np.zeros_like(price))
        starts.append(s)
        if s is not None:
            pays.append(price[s, 0])
            usage[s] += 1
    assert starts == [2, 3, 2, 3, 2, 3, 2, 3, None]
    assert np.allclose(pays, [0.25, 0.25, 0.5, 0.5, 1, 1, 2, 2])
    assert abs(sum(pays) - 7.5) < 1e-9 and abs(32 - sum(pays) - 24.5) < 1e-9
    assert usage[2] == usage[3] == 4 <= 5


def test_infinite_price_is_minus_infinity_and_ties_pick_earliest() -> None:
    value = np.array([0.0, 5.0, 5.0, 5.0, 0.0])
    price = np.array([[1.0], [1.0], [1.0], [np.inf], [np.inf]])
    fail = np.zeros_like(price)
    fail[3, 0] = 1.0  # certain failure at an infinite price: still -inf, never nan
    gains = group_gains(1, [1], [1.0], 3, value, price, fail)
    assert gains.tolist() == [4.0, 4.0, -np.inf]
    assert best_start(1, [1], [1.0], 3, value, price, fail) == (1, 4.0)
    assert best_start(3, [1], [1.0], 3, value, price, fail) == (None, 0.0)


def test_equal_unit_prices_give_bitwise_equal_interval_prices() -> None:
    # Every interval over the same unit prices has the same price to the last bit (ties between
    # starts stay ties); infinite unit prices block every interval that covers them.
    rng = np.random.default_rng(3)
    for unit in (np.full(40, 1 / 12), np.full(40, 0.1), np.tile(rng.random(3), 15)):
        period = 3 if unit[0] != unit[1] else 1
        for width in (1, 2, 3):
            price = interval_prices(unit, width, 5)
            for l in range(1, 6):
                finite = price[:len(unit) - l + 1, l - 1]
                assert np.array_equal(finite[period:], finite[:-period])
                assert np.isinf(price[len(unit) - l + 1:, l - 1]).all()
                assert np.allclose(finite[0], width * unit[:l].sum(), rtol=1e-15)
    blocked = interval_prices(np.array([1.0, 2.0, np.inf, 3.0, 4.0]), 2, 3)
    assert blocked.tolist() == [[2.0, 6.0, np.inf], [4.0, np.inf, np.inf], [np.inf] * 3,
                                [6.0, 14.0, np.inf], [8.0, np.inf, np.inf]]


def test_shared_start_across_durations_section_3_4() -> None:
    # sigma constant, a = 1, l in {1, 3} w.p. 1/2, v(1) = 10 else 0, 1 per node-round, no failures:
    # the shared start 1 gives 0.5 * 9 + 0.5 * (0 - 3) = 3.
    value = np.array([0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    price = interval_prices(np.ones(7), 1, 3)
    s, gain = best_start(1, [1, 3], [0.5, 0.5], 4, value, price, np.zeros_like(price))
    assert s == 1 and abs(gain - 3.0) < 1e-12


def test_t2_exact_failure_probabilities() -> None:
    # C = 1; J1 (d = 1, born 1) starts on arrival a in {2, 3} w.p. 1/2, l = 1; J2 born 1 after J1.
    starts, durs, weights = enumerate_futures([[(0.5, 2, 1), (0.5, 3, 1)]])
    loads = load_paths([1], starts, durs, tau=1, horizon=6, capacity=1)
    q = failure_table(loads, weights, width=1, capacity=1, max_duration=2)  # rows t = 1..5
    assert q[1, 0] == 0.5 and q[2, 0] == 0.5 and q[3, 0] == 0.0
    assert q[1, 1] == 1.0 and q[2, 1] == 0.5


def test_lifo_among_earlier_jobs_and_overload_before_start() -> None:
    # C = 1: J1 runs round 2 (d = 1), J2 (later) also at round 2 -> J2 evicted at 2, so round 3 is free;
    # the load at 2 is 2 > C, so any start t >= 3 fails too (removed by the overload before it starts).
    starts, durs, weights = enumerate_futures([[(1.0, 2, 1)], [(1.0, 2, 2)]])
    loads = load_paths([1, 1], starts, durs, tau=1, horizon=5, capacity=1)
    assert loads.tolist() == [[0.0, 2.0, 0.0, 0.0]]
    q = failure_table(loads, weights, width=1, capacity=1, max_duration=1)
    assert q[:, 0].tolist() == [0.0, 1.0, 1.0, 1.0]


def test_lemma_f1_sample_count_and_closure() -> None:
    assert lemma_f1_samples(10, 4, 0.05, 0.05) == 1476
    raw = np.array([[[0.05, 0.3, 0.2]], [[0.0, 0.1, 0.6]]])
    assert threshold_closure(raw, 0.1).tolist() == [[[0.0, 0.3, 0.3]], [[0.0, 0.3, 0.6]]]


def test_sampled_estimates_depend_on_the_failure_count_alone() -> None:
    # Two starts that fail in as many of M sampled futures (different ones) get the same estimate
    # to the last bit, k / M, so the launch plan's tie goes to the earlier start (spec §3.2). With
    # weights 1/M summed in the dot product's order, 78 of 156 came to 0.49999999999999994 at one
    # start and 0.4999999999999999 at another, and the later start won.
    rng = np.random.default_rng(5)
    for samples in (156, 1476, 997):
        for count in (1, samples // 3, samples // 2, samples - 1):
            loads = np.zeros((samples, 6))
            for round_ in range(6):   # load 1 of capacity 1: a start there with width 1 fails
                loads[rng.choice(samples, size=count, replace=False), round_] = 1.0
            q = failure_table(loads, np.ones(samples), width=1, capacity=1, max_duration=1, total=samples)
            assert q[:, 0].tolist() == [count / samples] * 6


def test_sampled_oracle_is_monotone_and_close_to_exact() -> None:
    jobs = [[(0.5, 2, 1), (0.5, 3, 2)], [(0.3, 2, 2), (0.7, None, 1)], [(0.6, 3, 1), (0.4, 4, 2)]]
    exact = enumerate_futures(jobs)
    sampled = sample_futures(jobs, 1476, np.random.default_rng(7))
    tabs = []
    for (starts, durs, w), total in ((exact, 1.0), (sampled, 1476)):
        loads = load_paths([1, 1, 1], starts, durs, tau=1, horizon=8, capacity=2)
        tabs.append(np.stack([failure_table(loads, w, d, 2, 3, total) for d in (1, 2)]))
    assert np.max(np.abs(tabs[0] - tabs[1])) <= 0.05
    for t in tabs:  # CRN: monotone in l and d without closure
        assert np.all(np.diff(t, axis=2) >= 0) and np.all(np.diff(t, axis=0) >= 0)


def test_reduction_constants() -> None:
    red = Reduction(capacity=6, d_max=1, max_duration=2, delta_window=3, eps=0.2)
    assert abs(red.relaxed_capacity - 5.0) < 1e-12
    assert (red.accuracy, red.confidence, red.threshold) == (0.05, 0.05, 0.1)
    assert red.samples == lemma_f1_samples(3, 2, 0.05, 0.05)
    dp = 5 / 5 - 1  # (C - d_max) / C' - 1 = 0 -> no concentration
    assert dp == 0 and red.eta == 1.0 and not red.capacity_condition
    big = Reduction(capacity=10_000, d_max=2, max_duration=4, delta_window=10, eps=0.2)
    cp = 10_000 / 1.2
    dpb = (10_000 - 2) / cp - 1
    assert abs(big.eta - math.exp(-dpb ** 2 * (cp / 2) / (2 + dpb))) < 1e-15


def test_capacity_condition_gives_b_switch_at_most_eps() -> None:
    # Thm 4.1 derivation: under the condition, B_switch <= 3 eps / 4 + zeta = eps.
    for eps in (0.05, 0.1, 0.2, 0.5, 1.0):
        for d_max in (1, 2, 4):
            for window in (2, 10, 50):
                need = max(4 * d_max / eps, 24 * d_max * math.log(16 * window ** 2 / (3 * eps * eps)) / eps ** 2)
                c = math.ceil(need)
                red = Reduction(capacity=c, d_max=d_max, max_duration=3, delta_window=window, eps=eps)
                assert red.capacity_condition
                assert red.b_switch <= eps + 1e-12
                assert not Reduction(capacity=c - 1, d_max=d_max, max_duration=3, delta_window=window,
                                     eps=eps).capacity_condition


def test_section_3_4_counterexample_overreporting_width_pays_with_constant_signal() -> None:
    # C = 2, D = 3, Delta = 4, 1 per node-round. J1 (d = 1) runs at round 3 for sure. J2 born 1,
    # d = 1, a = 1, l in {1, 3} w.p. 1/2 (sigma constant), v(1) = 10 else 0.
    starts, durs, weights = enumerate_futures([[(1.0, 3, 1)]])
    loads = load_paths([1], starts, durs, tau=1, horizon=8, capacity=2)
    value = np.zeros(9)
    value[1] = 10.0
    utilities = {}
    for width in (1, 2):
        q = np.zeros((8, 3))
        q[1:, :] = failure_table(loads, weights, width, 2, 3)[:7]  # row index = absolute round
        price = interval_prices(np.ones(8), width, 3)
        s, gain = best_start(1, [1, 3], [0.5, 0.5], 4, value, price, q)
        assert s == 1
        # exact oracle: the estimated utility of the plan is the true expected utility at this width
        utilities[width] = sum(w * (1 - q[s, l - 1]) * (value[s + l - 1] - price[s, l - 1])
                               for l, w in ((1, 0.5), (3, 0.5)))
        assert abs(gain - utilities[width]) < 1e-12
    assert abs(utilities[1] - 3.0) < 1e-12 and abs(utilities[2] - 4.0) < 1e-12


def test_t7_sampled_oracle_accuracy_over_200_births() -> None:
    # Delta = 10, D = 4, gamma = zeta = 0.05 -> M = 1476; any error > gamma in at most
    # zeta + 3 sqrt(zeta (1 - zeta) / 200) of the births.
    window, dur, gamma, zeta = 10, 4, 0.05, 0.05
    m = lemma_f1_samples(window, dur, gamma, zeta)
    rng = np.random.default_rng(11)
    bad = 0
    for _ in range(200):
        capacity = int(rng.integers(2, 4))
        widths = rng.integers(1, 3, size=int(rng.integers(1, 5)))
        jobs = []
        for _ in widths:
            k = int(rng.integers(1, 4))
            probs = rng.dirichlet(np.ones(k))
            jobs.append([(float(p), None if rng.random() < 0.15 else int(rng.integers(1, window + 1)),
                          int(rng.integers(1, dur + 1))) for p in probs])
        tables = []
        for futures, total in ((enumerate_futures(jobs), 1.0), (sample_futures(jobs, m, rng), m)):
            loads = load_paths(widths, futures[0], futures[1], tau=1, horizon=1 + window + dur, capacity=capacity)
            tables.append(np.stack([failure_table(loads, futures[2], d, capacity, dur, total)[:window] for d in (1, 2)]))
            assert np.all(np.diff(tables[-1], axis=2) >= 0) and np.all(np.diff(tables[-1], axis=0) >= 0)
        bad += bool(np.max(np.abs(tables[0] - tables[1])) > gamma)
    assert bad / 200 <= zeta + 3 * math.sqrt(zeta * (1 - zeta) / 200)


def test_t10_fua_checker_and_single_bundle_menu() -> None:
    n = np.array([[0.0, 1.0, 1.0]])  # rounds {1, 2}, d_max = 1
    good = [(0, 1, 1, 0.5), (0, 2, 2, 0.5)]
    assert fua_violations(n, good, d_max=1, supply=1) == []
    assert [p[:2] for p in fua_violations(n, [(0, 1, 2, 0.6), (0, 2, 2, 0.5)], 1, 1)] == ["F1", "F2"]
    assert [p[:2] for p in fua_violations(np.array([[0.0, 1.0, 0.5]]), [(0, 1, 1, 0.5)], 1, 1)] == ["F3"]
    assert fua_violations(np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]]), [], 1, 1)[0].startswith("supply")
    menu = BundleMenu.from_fua(n, values=[4.0], weights=[1.0], d_max=1)  # V_k = 0.5*4 + 0.5*4
    assert menu.rho.tolist() == [2.0]
    assert menu.price(1, 1, 1) == 2.0 and menu.price(1, 1, 2) == 2.0 and menu.price(0, 1, 1) == np.inf
    assert menu.charge([(1, 1, 1.0)]) == [0]
    assert menu.fill.tolist() == [1.0] and menu.price(1, 1, 1) == np.inf
    assert BundleMenu.from_fua(n, [4.0], [1.0], d_max=2, by_weight=False).rho.tolist() == [1.0]


def test_bundle_menu_cheapest_feasible_and_pre_job_fills() -> None:
    present = np.array([[True, True, True], [True, True, False], [True, True, True]])
    menu = BundleMenu(present=present, rho=np.array([3.0, 1.0, 1.0]), d_max=2)
    assert menu.cheapest(0, 1) == 1 and menu.cheapest(0, 2) == 2
    # one job, two tasks, both charged against fills as of before the job
    assert menu.charge([(0, 1, 1.5), (0, 0, 1.0)]) == [1, 1]
    assert menu.fill.tolist() == [0.0, 2.5, 0.0] and menu.cheapest(0, 1) == 2
    assert menu.fill.max() <= 2 * menu.d_max


def test_bundle_menu_closes_a_bundle_whose_fill_reaches_d_max_in_floating_point() -> None:
    menu = BundleMenu(present=np.array([[True]]), rho=np.array([1.0]), d_max=1)
    for _ in range(10):
        menu.charge([(0, 0, 0.1)])
    assert menu.fill[0] < 1.0 and menu.cheapest(0, 0) is None     # 0.9999999999999999 is full


def test_t2_truthful_plan_and_misreports_under_fixed_menu() -> None:
    # J2's true SoW: a = 2, l = 1, v(c) = 4 for c <= 4 else 0 (Delta = 4, born 1); menu 1 per node-round.
    starts, durs, weights = enumerate_futures([[(0.5, 2, 1), (0.5, 3, 1)]])
    loads = load_paths([1], starts, durs, tau=1, horizon=8, capacity=1)
    fail = {}
    for width in (1, 2):
        q = np.zeros((8, 2))
        q[1:] = failure_table(loads, weights, width, 1, 2)[:7]
        fail[width] = q
    true_v = np.array([4.0 if c <= 4 else 0.0 for c in range(10)])

    def plan_and_true_utility(width: int, value: npt.NDArray[np.float64],
                              support: list[tuple[int, int, float]]) -> tuple[int | None, float]:
        price = interval_prices(np.ones(8), width, 2)
        group = [(l, w) for a, l, w in support if a == 2]
        if not group:  # realization outside the reported support: not launched
            return None, 0.0
        s, _ = best_start(2, [g[0] for g in group], [g[1] for g in group], 4, value, price, fail[width])
        if s is None:
            return None, 0.0
        return s, (1 - fail[width][s, 0]) * (true_v[s] - price[s, 0])

    s, truthful = plan_and_true_utility(1, true_v, [(2, 1, 1.0)])
    assert s == 4 and abs(truthful - 3.0) < 1e-12
    price = interval_prices(np.ones(8), 1, 2)
    gains = group_gains(2, [1], [1.0], 4, true_v, price, fail[1])
    assert np.allclose(gains, [1.5, 1.5, 3.0])
    values = [true_v, 2 * true_v, true_v / 2] + [np.array([4.0 if c <= k else 0.0 for c in range(10)])
                                                 for k in range(1, 5)]
    supports = [[(2, 1, 1.0)], [(1, 1, 1.0)], [(3, 1, 1.0)], [(2, 2, 1.0)],
                [(2, 1, 0.5), (2, 2, 0.5)], [(1, 1, 0.25), (2, 1, 0.25), (3, 1, 0.25), (4, 1, 0.25)]]
    for width in (1, 2):
        for value in values:
            for support in supports:
                assert plan_and_true_utility(width, value, support)[1] <= truthful + 1e-9


def test_launch_plan_groups_by_signal_and_relaxed_usage() -> None:
    value = np.array([0.0, 10.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    price = interval_prices(np.ones(7), 1, 3)
    zero = np.zeros_like(price)
    support = ([1, 1], [1, 3], [0.5, 0.5])
    plan, u = launch_plan(support[0], support[1], [1, 3], support[2], 4, value, price, zero)  # sigma = l
    assert plan == {(1, 1): 1, (1, 3): None} and abs(u - 4.5) < 1e-12
    assert relaxed_usage(plan, support[0], support[1], [1, 3], support[2], 2, 6).tolist() == [0, 1, 0, 0, 0, 0]
    plan, u = launch_plan(support[0], support[1], [0, 0], support[2], 4, value, price, zero)  # sigma const
    assert plan == {(1, 0): 1} and abs(u - 3.0) < 1e-12
    assert relaxed_usage(plan, support[0], support[1], [0, 0], support[2], 1, 6).tolist() == [0, 1, 0.5, 0.5, 0, 0]


def test_t3_through_plans_and_relaxed_usage() -> None:
    alg = ExpPrices(capacity=5.0, d_max=1, max_duration=2, max_value=4.0)
    value = np.array([4.0 if c <= 3 else 0.0 for c in range(8)])
    usage = np.zeros(6)
    plans = []
    for _ in range(9):
        price = interval_prices(alg.unit(usage), 1, 2)
        plan, _u = launch_plan([2], [1], [1], [1.0], 3, value, price, np.zeros_like(price))
        plans.append(plan[(2, 1)])
        usage += relaxed_usage(plan, [2], [1], [1], [1.0], 1, 6)
        assert usage.max() <= alg.capacity
    assert plans == [2, 3, 2, 3, 2, 3, 2, 3, None] and usage.tolist() == [0, 0, 4, 4, 0, 0]


def test_t6_claim_4_2_zero_estimates_never_switch() -> None:
    rng = np.random.default_rng(5)
    for _ in range(300):
        k = int(rng.integers(1, 4))
        arrivals = rng.integers(1, 4, size=k).tolist()
        durations = rng.integers(1, 3, size=k).tolist()
        signals = durations if rng.random() < 0.5 else [0] * k
        probs = rng.dirichlet(np.ones(k)).tolist()
        value = np.where(np.arange(9) <= int(rng.integers(2, 6)), float(rng.integers(1, 5)), 0.0)
        price = interval_prices(rng.random(9) * 2, 1, 2)
        price[int(rng.integers(0, 9)), :] = np.inf
        zero = np.zeros_like(price)
        plan, u = launch_plan(arrivals, durations, signals, probs, 5, value, price, zero)
        assert not is_switched(plan, arrivals, durations, signals, probs, 5, value, price)
        assert abs(u - relaxed_utility(plan, arrivals, durations, signals, probs, value, price)) < 1e-9
        fail = rng.random(price.shape) * (rng.random(price.shape) < 0.5)
        plan_q, _ = launch_plan(arrivals, durations, signals, probs, 5, value, price, fail)
        if is_switched(plan_q, arrivals, durations, signals, probs, 5, value, price):
            assert fail.any() and plan_q != plan


def test_switched_when_failure_estimates_move_the_plan() -> None:
    value = np.array([0.0, 0.0, 5.0, 5.0, 0.0])
    price = interval_prices(np.array([0.0, 0.0, 1.0, 2.0, 2.0]), 1, 1)
    fail = np.zeros_like(price)
    fail[2, 0] = 0.9  # the cheap start 2 is risky -> plan moves to 3
    plan, _ = launch_plan([2], [1], [1], [1.0], 3, value, price, fail)
    assert plan == {(2, 1): 3}
    assert is_switched(plan, [2], [1], [1], [1.0], 3, value, price)


def test_t8_exponential_prices_invariants_sigma_l() -> None:
    rng = np.random.default_rng(8)
    for _ in range(40):
        d_max, dur, vmax = int(rng.integers(1, 3)), 2, 4.0
        alg = ExpPrices(capacity=float(rng.integers(6, 12)) * d_max, d_max=d_max, max_duration=dur, max_value=vmax)
        assert alg.capacity_condition
        horizon, window = 12, 4
        usage = np.zeros(horizon)
        welfare = 0.0
        previous = {d: interval_prices(alg.unit(usage), d, dur) for d in range(1, d_max + 1)}
        for _ in range(int(rng.integers(5, 40))):
            birth = int(rng.integers(1, horizon - window - dur))
            width = int(rng.integers(1, d_max + 1))
            k = int(rng.integers(1, 4))
            arrivals = (birth + rng.integers(0, 3, size=k)).tolist()
            durations = rng.integers(1, dur + 1, size=k).tolist()
            probs = rng.dirichlet(np.ones(k)).tolist()
            value = np.where(np.arange(horizon + dur) <= birth + window - 1, float(rng.integers(1, 5)), 0.0)
            tables = {d: interval_prices(alg.unit(usage), d, dur) for d in range(1, d_max + 1)}
            for d in tables:  # monotone in tau (usage only grows), in l and in d
                assert np.all(tables[d] >= previous[d] - 1e-12)
                assert np.all(np.diff(tables[d][:-dur], axis=1) >= 0)
                if d > 1:
                    assert np.all(tables[d] >= tables[d - 1])
            previous = tables
            price = tables[width]
            plan, u = launch_plan(arrivals, durations, durations, probs, birth + window - 1, value, price,
                                  np.zeros_like(price))
            assert u >= 0
            usage += relaxed_usage(plan, arrivals, durations, durations, probs, width, horizon)
            assert usage.max() <= alg.capacity + 1e-9
            welfare += sum(w * value[plan[(a, l)] + l - 1] for a, l, w in zip(arrivals, durations, probs, strict=True)
                           if plan[(a, l)] is not None)
        pbar = alg.L * np.power(alg.base, usage / alg.capacity)
        assert welfare >= alg.capacity / (2 * np.log(alg.base)) * float(np.sum(pbar - alg.L)) - 1e-9
