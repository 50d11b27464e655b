"""Astraea's online mechanism against the spec's hand-checked oracles (§7.1-7.4)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from astraea_builders import ex, job, system

from mlsched.errors import UsageError
from mlsched.online.astraea.bounds import linear_gap_bound, theorem1_bound
from mlsched.online.astraea import (
    Astraea, RoundView, constants, fitting_configurations, job_shape, placement_at, posted_prices, shared_payment)
from mlsched.sim.multi_tenant_check import check, realized_utilities
from mlsched.tenant_metrics import fairness_ratios

SIXTEEN = (16.0, 16.0)


def empty_view(inst, tau: int, eta: float = 0.0) -> RoundView:
    n = len(inst.servers)
    return RoundView(free_w=np.repeat(inst.worker_capacity[:, None], tau, axis=1),
                     free_p=np.repeat(inst.ps_capacity[:, None], tau, axis=1),
                     quota_w=np.full(tau, 4), quota_p=np.full(tau, 2),
                     eta_w=np.full(tau, eta), eta_p=np.full(tau, eta)) if n else None


def test_prices_follow_eq8():
    expected_w = [0, 0.41421, 1, 1.82843, 3, 4.65685, 7, 10.31371, 15]
    assert posted_prices(16.0, np.arange(9), 8) == pytest.approx(expected_w, abs=1e-5)
    assert posted_prices(16.0, np.arange(5), 4) == pytest.approx([0, 1, 3, 7, 15])


def test_durations_of_ex():
    inst = ex()
    shapes = {j.id: job_shape(j) for j in inst.jobs}
    assert shapes["j11"].central[1] == 2 and shapes["j11"].distributed[1] == 4 and shapes["j11"].distributed[0] == 8
    assert shapes["j12"].central[1] == 3 and shapes["j12"].distributed[2] == 4
    assert shapes["j22"].central[1] == 30 and shapes["j22"].distributed[2] == 40


def test_mincost_d_and_c_on_an_empty_round():
    inst = ex()
    shape = job_shape(inst.jobs[0])
    view = empty_view(inst, 4)
    dist = placement_at(shape, view, 1, 2, centralized=False)
    assert (dist.duration, dist.cost, dist.value) == (4, 0.0, 92.0)
    assert dist.y.tolist() == [1, 1, 0, 0] and dist.z.tolist() == [1, 0, 0, 0]
    cent = placement_at(shape, view, 1, 2, centralized=True)
    assert (cent.duration, cent.cost, cent.value) == (2, 0.0, 96.0)
    assert cent.y.tolist() == [2, 0, 0, 0] and cent.z.tolist() == [1, 0, 0, 0]


def test_costs_at_unit_prices():
    inst = ex()
    view = empty_view(inst, 4, eta=1.0)      # h_w = 2, h_p = 1 on every slot: eta = 1
    assert placement_at(job_shape(inst.jobs[0]), view, 1, 2, centralized=False).cost == pytest.approx(12)
    three = placement_at(job_shape(inst.jobs[1]), view, 1, 3, centralized=False)
    assert three.cost == pytest.approx(16) and three.mu == pytest.approx(76)


def test_payment_split_of_the_papers_scenario():
    unused_w = np.array([[2, 2, 4, 4], [4, 4, 2, 2]])
    unused_p = np.array([[1, 1, 2, 2], [2, 2, 1, 1]])
    pay = shared_payment(np.full(4, 3.0), np.full(4, 1.0), unused_w, unused_p, np.arange(9, 13))
    assert pay.rho.sum(axis=1) == pytest.approx([8, 8])
    assert pay.rho.sum(axis=0) == pytest.approx(pay.cost_w + pay.cost_p)


def test_lambda_and_theta_of_ex():
    inst = ex()
    fit = [fitting_configurations(inst, j) for j in inst.jobs]
    fixed = constants(inst, fit, theta=SIXTEEN, lambda_mode="theory")
    assert fixed.sigma == pytest.approx(4 * math.log(16)) and fixed.rounds == 24
    derived = constants(inst, fit)
    assert (derived.theta_w, derived.theta_p, derived.rounds) == (25.0, 49.0, 2)


def test_theorem_1_bound_of_ex():
    """§7.1: N = 4, L = 5, lambda = 2, k = -2 gives 4 ((31)(-2) - (63)(3)(-2)) = 1264."""
    inst = ex()
    assert linear_gap_bound(4, 5, 2, -2.0, -2.0) == pytest.approx(1264)
    run = Astraea(theta=SIXTEEN).run(inst)
    assert run.batches == 5 and theorem1_bound(inst, run.batches, run.constants.rounds) == ("gap", pytest.approx(1264))


def test_theory_lambda_rejects_sigma_at_most_one():
    inst = ex()
    fit = [fitting_configurations(inst, j) for j in inst.jobs]
    with pytest.raises(UsageError, match="sigma"):
        constants(inst, fit, theta=(1.1, 1.1), lambda_mode="theory")


def test_full_run_ex():
    inst = ex()
    run = Astraea(theta=SIXTEEN).run(inst)
    s = run.schedule
    assert check(inst, s, online=True) == []
    assert s.start.tolist() == [9, 10, 11, 65] and run.batch.tolist() == [2, 2, 2, 5]
    assert s.workers.tolist() == [[2, 0, 0, 0], [0, 2, 0, 0], [2, 0, 0, 0], [2, 0, 0, 0]]
    assert run.mu.tolist() == pytest.approx([96, 89, 86, 40]) and run.cost.tolist() == pytest.approx([0, 3, 6, 0])
    assert realized_utilities(inst, s).tolist() == pytest.approx([86, 82, 82, -82])
    assert run.gains(inst).tolist() == pytest.approx([168, 0]) and run.payments.sum() == 0
    assert run.phase.tolist() == [1, 1, 1, 1]


def test_full_run_ex_share():
    inst = ex(("j11", "j12", "j21"), tenants=((2, 1), (6, 3)))
    run = Astraea(theta=SIXTEEN).run(inst)
    s = run.schedule
    assert check(inst, s, online=True) == []
    assert run.phase.tolist() == [1, 2, 1] and s.start.tolist() == [9, 9, 11]
    assert run.mu.tolist() == pytest.approx([96, 85, 92]) and run.cost[1] == pytest.approx(9)
    pay = run.shared[1]
    assert pay.cost_w.sum() == pytest.approx(6) and pay.cost_p.sum() == pytest.approx(3)
    assert run.payments[1].tolist() == pytest.approx([1, 8])
    assert realized_utilities(inst, s).tolist() == pytest.approx([86, 84, 82])
    gains = run.gains(inst)
    assert gains.tolist() == pytest.approx([162, 90])
    assert fairness_ratios(inst, gains).tolist() == pytest.approx([2.5714286, 0.4761905])


def test_utility_misreport_raises_the_tenants_gain():
    """§7.4: inflating j21's utility tenfold buys slots 9..10 for free in phase 1 (A17)."""
    truthful = ex(("j11", "j12", "j21"))
    lying = system([*(j for j in truthful.to_dict()["jobs"] if j["id"] != "j21"),
                    {**truthful.to_dict()["jobs"][2], "utility": {"kind": "affine", "k": -20, "g": 1000}}],
                   servers=[(2, 1)] * 4, tenants=[(4, 2), (4, 2)])
    honest_run, lying_run = Astraea(theta=SIXTEEN).run(truthful), Astraea(theta=SIXTEEN).run(lying)
    assert lying_run.schedule.start[2] == 9 and lying_run.mu[2] == pytest.approx(948)
    honest = realized_utilities(truthful, honest_run.schedule)[2]
    lied = realized_utilities(truthful, lying_run.schedule)[2]      # scored with the true utility
    assert (honest, lied) == (pytest.approx(82), pytest.approx(86))


def demand_example(d21: int):
    """B = E D M: j21's B = 3 and j22's B = 2 at D = 4 become 12 and 8 at four times the rates."""
    scale = 4 if d21 == 4 else 1
    return system([job("j21", "u2", arrival=0, chunks=d21, epochs=3, central=scale, distributed=scale, k=-1, g=40),
                   job("j22", "u2", arrival=0, chunks=4, epochs=1, minibatches=2, central=4, distributed=2, k=-2,
                       g=100)],
                  servers=[(3, 2)], tenants=[(1, 1), (2, 1)])


def test_demand_misreport_raises_the_tenants_gain():
    """§7.4's second counterexample: u2 reporting D' = 1 for j21 gains about 40."""
    truthful = demand_example(4)
    run = Astraea().run(truthful)
    assert (run.constants.theta_w, run.constants.theta_p) == pytest.approx((50, 99))
    assert run.phase.tolist() == [1, 2] and run.schedule.start.tolist() == [5, 5]
    assert run.cost[1] == pytest.approx(2 * ((50 ** (2 / 3) - 1) + (99 ** 0.5 - 1)))
    assert run.gains(truthful).tolist() == pytest.approx([43.044, 78.956], abs=1e-3)
    lying_run = Astraea().run(demand_example(1))
    scored = realized_utilities(truthful, lying_run.schedule)
    assert lying_run.schedule.start.tolist() == [9, 5] and scored.tolist() == pytest.approx([29, 90])
    assert scored.sum() - lying_run.paid.sum() == pytest.approx(119)



def test_a_round_holds_only_the_slots_its_jobs_can_use(monkeypatch):
    """Rounds double with every batch (a job arriving at slot 1,000,000 meets tau = 2^20), but a
    job with phi(x) = 100 - x has phi <= EPS beyond x = 100 (JobShape.span), so its round holds
    100 slots, not 2^20 per server."""
    from mlsched.online.astraea import policy as astraea_policy

    held = []

    class Recording(astraea_policy.RoundState):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            held.append((self.tau, self.width, self.h_w.shape[1]))

    monkeypatch.setattr(astraea_policy, "RoundState", Recording)
    inst = system([job("j1", "u1", arrival=1_000_000, chunks=2, k=-1, g=100)], servers=[(2, 1)], tenants=[(2, 1)])
    run = Astraea(theta=SIXTEEN).run(inst)
    assert held == [(2 ** 20, 100, 100)]
    assert check(inst, run.schedule, online=True) == []
    assert run.phase.tolist() == [1] and run.batch.tolist() == [20]
    # one mini-batch at rate 1: a one-slot run at offset 1 of the empty round, phi(1) = 99, no cost
    assert run.schedule.start.tolist() == [2 * 2 ** 20 + 1] and run.mu.tolist() == pytest.approx([99])


@pytest.mark.parametrize("start", [9, 400_000_000])
def test_checker_reports_each_overloaded_server_at_the_slot_its_overload_starts(start):
    """j11 and j21 of EX both on server s1 (2 workers, 1 PS) from the same slot: 4 workers and 2 PS.
    A start 400 million slots out is checked as cheaply (the check looks at start slots only)."""
    from mlsched.sim.multi_tenant_check import TenantSchedule

    inst = ex(("j11", "j21"))
    on_s1 = np.array([[2, 0, 0, 0], [2, 0, 0, 0]])
    schedule = TenantSchedule(np.array([start, start]), on_s1, on_s1 // 2)
    assert check(inst, schedule, online=True) == [f"slot {start}, server s1: 4 workers of 2 (3c)",
                                                  f"slot {start}, server s1: 2 PS of 1 (3d)"]
    apart = TenantSchedule(np.array([start, start + int(schedule.durations(inst)[0])]), on_s1, on_s1 // 2)
    assert check(inst, apart, online=True) == []


def test_mean_utilization_is_the_mean_of_util_t_over_the_makespan():
    """EX's run (starts 9, 10, 11, 65 on 2 workers each, 8 workers in all): the closed form equals
    util(t) = workers in use / 8 averaged slot by slot over t = 1..makespan."""
    from mlsched.tenant_metrics import mean_utilization

    inst = ex()
    s = Astraea(theta=SIXTEEN).run(inst).schedule
    ends, workers = s.completions(inst), s.workers.sum(axis=1)
    slots = np.arange(1, ends.max() + 1)
    in_use = ((slots[:, None] >= s.start[None, :]) & (slots[:, None] <= ends[None, :])) @ workers
    assert mean_utilization(inst, s.start, ends, workers) == pytest.approx((in_use / 8).mean(), rel=1e-12)
    assert Astraea(theta=SIXTEEN).run(inst).summary(inst)["utilization"] == pytest.approx((in_use / 8).mean(), rel=1e-12)


def test_load_bounds_hold_wherever_a_placement_exists():
    """load_minimum's bounds are necessary: every (o, W) placement MINCOSTC or MINCOSTD finds on a
    random partly used cluster under random quotas lies where the window minima of sum_s and max_s
    free capacity allow it, and where the quota and those bounds at the window's first slot do."""
    rng = np.random.default_rng(3)
    inst, placed = ex(), 0
    for _ in range(20):
        tau = int(rng.integers(4, 12))
        free_w = np.repeat(inst.worker_capacity[:, None], tau, axis=1) - rng.integers(0, 3, (len(inst.servers), tau))
        free_p = np.repeat(inst.ps_capacity[:, None], tau, axis=1) - rng.integers(0, 2, (len(inst.servers), tau))
        view = RoundView(free_w=np.maximum(free_w, 0), free_p=np.maximum(free_p, 0), quota_w=rng.integers(2, 40, tau),
                         quota_p=rng.integers(1, 40, tau), eta_w=np.zeros(tau), eta_p=np.zeros(tau))
        for shape in (job_shape(j) for j in inst.jobs):
            for w in range(1, shape.chunks + 1):
                for centralized in (True, False):
                    d = int((shape.central if centralized else shape.distributed)[w - 1])
                    for offset in range(1, tau - d + 2):
                        if placement_at(shape, view, offset, w, centralized) is None:
                            continue
                        room = view.load_minimum(d, offset - 1, offset)[:, 0]
                        assert room[1 if centralized else 0] >= w and room[2] >= 1
                        first = view.load_minimum.values[:, offset - 1]
                        assert first[1 if centralized else 0] >= w and first[2] >= 1
                        assert view.quota_w[offset - 1] >= w and (view.quota_p[offset - 1] >= 1 or not centralized)
                        placed += 1
    assert placed > 50


def test_a_rounds_shared_views_match_fresh_ones_after_allocations():
    """RoundState keeps free capacity, prices, quotas, window minima and price sums between
    allocations; after each allocation (phase 1 of owner 0, then phase 2) every owner's view equals
    one built from h, U and a alone."""
    from mlsched.online.astraea.policy import RoundState
    inst = ex()
    state = RoundState(inst, 0, 8, SIXTEEN)
    shape = job_shape(inst.jobs[0])
    for step in range(3):
        if step == 2:
            state.close_phase_one()
        for owner in range(len(inst.tenants)):
            view = state.view(owner)
            fresh = RoundView(free_w=inst.worker_capacity[:, None] - state.h_w,
                              free_p=inst.ps_capacity[:, None] - state.h_p,
                              quota_w=np.maximum(state.quota_w[owner] - state.used_w[owner], state.pool_w),
                              quota_p=np.maximum(state.quota_p[owner] - state.used_p[owner], state.pool_p),
                              eta_w=state.prices()[0], eta_p=state.prices()[1])
            for name in ("free_w", "free_p", "eta_w", "eta_p", "quota_w", "quota_p"):
                assert np.array_equal(getattr(view, name), getattr(fresh, name))
            for sums, fresh_sums in zip(view.price_sums, fresh.price_sums):
                assert np.array_equal(sums, fresh_sums)
            for d in (1, 2, 3):
                for table in ("free_minimum", "load_minimum", "quota_minimum"):
                    assert np.array_equal(getattr(view, table)(d, 0, 8 - d + 1), getattr(fresh, table)(d, 0, 8 - d + 1))
        chosen = placement_at(shape, state.view(0), 1 + 2 * step, 1, centralized=True)
        assert chosen is not None
        state.allocate(chosen, 0, 1 if step < 2 else 2)
