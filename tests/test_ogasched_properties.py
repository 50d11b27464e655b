"""OgaSched property tests (spec §8.2) and regret tests (§8.3)."""

from __future__ import annotations

from dataclasses import replace

import cvxpy as cp
import numpy as np
import pytest
from tests_support import one_block

from mlsched.baselines.multi_server import MULTI_SERVER_BASELINES
from mlsched.exact import exact_ogasched
from mlsched.formulations.ogasched import per_slot_optimum
from mlsched.instance.generators.ogasched import generate_ogasched
from mlsched.multiserver import ChannelModel
from mlsched.online.ogasched import OgaSched, diameter_bound, gradient_bound, regret_bound
from mlsched.sim.check import ScheduleViolation, check_allocation
from mlsched.sim.multi_engine import run_slots


def qp_projection(z, u, cap):
    y = cp.Variable(len(z))
    cp.Problem(cp.Minimize(cp.sum_squares(y - z)), [y >= 0, y <= u, cp.sum(y) <= cap]).solve(
        solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13, tol_ktratio=1e-13)
    return y.value


def test_exact_projection_properties():
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(200):
        n = int(rng.integers(1, 7))
        z = rng.normal(1.0, 3.0, n)
        u = rng.uniform(0, 4, n)
        cap = float(rng.uniform(0, 8))
        y = one_block(z, u, cap)
        assert np.all(y >= 0) and np.all(y <= u + 1e-12) and y.sum() <= cap + 1e-9
        assert one_block(y, u, cap) == pytest.approx(y, abs=1e-9)                       # idempotent
        w = rng.uniform(0, 1, n) * u
        w *= min(1.0, cap / w.sum()) if w.sum() > 0 else 1.0
        assert (z - y) @ (w - y) <= 1e-9                                               # variational inequality
        z2 = z + rng.normal(0, 1, n)
        assert np.linalg.norm(one_block(z2, u, cap) - y) <= np.linalg.norm(z2 - z) + 1e-12   # non-expansive
        tau = np.max(z - y, where=(y > 1e-12) & (y < u - 1e-12), initial=0.0)
        assert tau >= -1e-12 and tau * (cap - y.sum()) == pytest.approx(0.0, abs=1e-8)
        free = (y > 1e-9) & (y < u - 1e-9)
        degenerate = np.any(np.isclose(z[free] - tau, 0.0, atol=1e-6)) or np.any(np.isclose(z - tau, u, atol=1e-6))
        if not degenerate:
            assert y == pytest.approx(qp_projection(z, u, cap), abs=1e-7)
            checked += 1
    assert checked > 100


def random_small(seed, utility="linear"):
    return generate_ogasched(seed, ports=3, nodes=4, horizon=200, density=2.5, contention=0.5, utility=utility)


@pytest.mark.parametrize("utility", ["linear", "log", "reciprocal", "poly"])
def test_reward_gradient_and_concavity(utility):
    rng = np.random.default_rng(1)
    inst = random_small(2, utility)
    model = ChannelModel(inst)
    cap = inst.channel_cap
    for _ in range(20):
        x = (rng.random(inst.num_ports) < 0.7).astype(float)
        y = rng.uniform(0.05, 0.95, cap.shape) * cap
        g = model.gradient(x, y)
        loads = model.port_loads(y)
        top = np.sort(loads, axis=1)
        if np.all(top[:, -1] - top[:, -2] > 1e-3):                 # away from ties of the max
            h = 1e-6
            for e, k in [(int(rng.integers(cap.shape[0])), int(rng.integers(cap.shape[1]))) for _ in range(5)]:
                step = np.zeros_like(y)
                step[e, k] = h
                fd = (model.reward(x, y + step) - model.reward(x, y - step)) / (2 * h)
                assert fd == pytest.approx(g[e, k], rel=1e-5, abs=1e-6)
        u = rng.uniform(0, 1, cap.shape) * cap
        assert model.reward(x, u) <= model.reward(x, y) + float((g * (u - y)).sum()) + 1e-9   # supergradient
        assert model.reward(2 * x, y) == pytest.approx(2 * model.reward(x, y))                 # linear in x


def test_offline_optima_dominate():
    rng = np.random.default_rng(3)
    inst = random_small(4)
    x = inst.arrivals()
    model = ChannelModel(inst)
    opt = exact_ogasched(inst)
    assert opt.verified
    for _ in range(20):
        u = rng.uniform(0, 1, inst.channel_cap.shape) * inst.channel_cap
        used = np.zeros_like(inst.capacity)
        np.add.at(used, inst.channel_node, u)
        u *= np.min(np.where(used > 0, inst.capacity / np.maximum(used, 1e-12), 1.0).clip(max=1.0))
        assert not check_allocation(inst, u)
        assert sum(model.reward(x[t], u) for t in range(inst.horizon)) <= opt.objective + 1e-6
    per_slot = per_slot_optimum(inst, x)
    assert per_slot.sum() >= opt.objective - 1e-6
    for name, cls in MULTI_SERVER_BASELINES.items():
        run = run_slots(inst, cls(), keep=True)
        assert np.all(run.rewards <= per_slot + 1e-6), name
        for t, y in enumerate(run.allocations):
            assert np.all(y[x[t][inst.channel_port] == 0] == 0), name                  # idle ports get nothing
            if name != "fairness":                                                      # per-job totals <= a (A10)
                totals = np.zeros_like(inst.request)
                np.add.at(totals, inst.channel_port, y)
                assert np.all(totals <= inst.request + 1e-9), name
    # permuting time leaves y* unchanged
    permuted = exact_ogasched(replace(inst, arrivals_spec={
        "kind": "explicit", "slots": [[int(l) for l in np.flatnonzero(row)] for row in x[::-1]]}))
    assert permuted.objective == pytest.approx(opt.objective, rel=1e-7)


def test_ogasched_is_feasible_and_deterministic():
    inst = random_small(5)
    a = run_slots(inst, OgaSched(), keep=True)
    b = run_slots(inst, OgaSched())
    assert np.array_equal(a.rewards, b.rewards)
    assert all(not check_allocation(inst, y) for y in a.allocations)


def test_paper_projection_without_repair_breaks_feasibility():
    """Negative control (§8.3): the paper's Algorithm 1 alone leaves Y on some instance."""
    failures = 0
    for seed in range(10):
        inst = generate_ogasched(seed, ports=4, nodes=3, horizon=30, density=3, contention=0.3)
        try:
            run_slots(inst, OgaSched(projection="paper", step="decay", eta0=25.0))
        except ScheduleViolation:
            failures += 1
    assert failures > 0


def regret_instance():
    return generate_ogasched(7, ports=3, nodes=4, horizon=8000, density=2.5, contention=0.3, rho=0.7)


def test_regret_within_the_theorem_bound():
    base = regret_instance()
    for horizon in (250, 1000, 4000):
        inst = replace(base, horizon=horizon)
        policy = OgaSched(step="theory")
        run = run_slots(inst, policy)
        opt = exact_ogasched(inst)
        regret = opt.objective - run.total
        eta = diameter_bound(inst) / (gradient_bound(inst) * np.sqrt(horizon))
        y_star = opt.schedule
        instance_bound = float((y_star**2).sum()) / (2 * eta) + eta / 2 * float(np.square(policy.gradient_norms).sum())
        assert regret <= instance_bound + 1e-6 * abs(opt.objective)
        assert instance_bound <= regret_bound(inst, horizon) + 1e-9


def test_regret_grows_sublinearly():
    base = regret_instance()
    horizons = [250, 500, 1000, 2000, 4000, 8000]
    regrets = []
    for horizon in horizons:
        inst = replace(base, horizon=horizon)
        regrets.append(exact_ogasched(inst).objective - run_slots(inst, OgaSched(step="theory")).total)
    per_slot = np.array(regrets) / np.array(horizons)
    assert np.all(per_slot[1:] <= per_slot[:-1] * 1.05)
    assert all(r > 0 for r in regrets)
    slope = np.polyfit(np.log(horizons), np.log(regrets), 1)[0]
    assert slope < 0.8
