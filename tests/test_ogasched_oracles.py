"""OgaSched hand-checked instances H1-H12 of the spec (§8.1)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from builders import multi_server

from mlsched.baselines.multi_server import BinPacking, Fairness, MultiServerDRF, Spreading
from mlsched.exact import exact_ogasched
from mlsched.formulations.ogasched import hindsight_cvxpy, per_slot_optimum
from mlsched.multiserver import ChannelModel
from mlsched.online.ogasched import OgaSched, project_block_paper
from mlsched.sim.multi_engine import run_slots
from tests_support import one_block


def test_h1_gradient_ascent_trajectory():
    inst = multi_server(ports=[{"cpu": 2}], nodes=[{"cpu": 3}], channels=[[0, 0]], beta={"cpu": 0.5},
                        slots=[[0]] * 10)
    run = run_slots(inst, OgaSched(step="decay", eta0=1.0, decay=1.0), keep=True)
    assert [float(y[0, 0]) for y in run.allocations] == pytest.approx([0, 0.5, 1, 1.5, 2, 2, 2, 2, 2, 2])
    assert run.rewards.tolist() == pytest.approx([0, 0.25, 0.5, 0.75, 1, 1, 1, 1, 1, 1])
    assert run.total == pytest.approx(7.5)
    opt = exact_ogasched(inst)
    assert opt.objective == pytest.approx(10) and opt.verified
    assert opt.objective - run.total == pytest.approx(2.5)


@pytest.mark.parametrize("z,u,cap,exact,paper", [
    ((3, 1, -2), (5, 5, 5), 2, (2, 0, 0), (2, 0, 0)),            # H2
    ((0.5, 0.2), (5, 5), 10, (0.5, 0.2), (5, 5)),                 # H3: slack capacity, D1 fill-up
    ((4, 3, 1), (1, 1, 10), 4, (1, 1, 1), (1, 2.5, 0.5)),         # H4: caps, D2 infeasible
    ((6, 1), (2, 5), 5, (2, 1), (2, 3)),                          # H5
    ((1,), (0.5,), 3, (0.5,), (0.5,)),                            # H6: single port
])
def test_h2_h6_projections(z, u, cap, exact, paper):
    assert one_block(z, u, cap) == pytest.approx(exact, abs=1e-12)
    assert project_block_paper(np.array(z, float), np.array(u, float), cap) == pytest.approx(paper, abs=1e-12)


def test_h7_offline_lp():
    slots = [[0, 1]] * 5 + [[0]] * 5
    inst = multi_server(ports=[{"cpu": 2}, {"cpu": 2}], nodes=[{"cpu": 3}], channels=[[0, 0], [1, 0]],
                        beta={"cpu": 0.5}, slots=slots)
    opt = exact_ogasched(inst)
    assert opt.objective == pytest.approx(12.5, rel=1e-7) and opt.verified
    assert opt.schedule[:, 0] == pytest.approx([2, 1], abs=1e-5)
    per_slot = per_slot_optimum(inst, inst.arrivals())
    assert per_slot == pytest.approx([1.5] * 5 + [1.0] * 5, abs=1e-7)


@pytest.mark.parametrize("utility,beta,y_star,value", [
    ("log", 0.5, 1.0, math.log(2) - 0.5),
    ("reciprocal", 0.25, 1.0, 0.25),
    ("poly", 0.25, 3.0, 0.25),
])
def test_h8_nonlinear_offline(utility, beta, y_star, value):
    inst = multi_server(ports=[{"cpu": 10}], nodes=[{"cpu": 10}], channels=[[0, 0]], beta={"cpu": beta},
                        slots=[[0]], utility=utility)
    report = hindsight_cvxpy(inst, np.array([1.0]))
    assert report.objective == pytest.approx(value, abs=1e-6)
    assert report.schedule[0, 0] == pytest.approx(y_star, abs=5e-3)


def test_h9_max_term_and_gradient():
    inst = multi_server(ports=[{"a": 2, "b": 2}], nodes=[{"a": 5, "b": 5}], channels=[[0, 0]],
                        beta={"a": 0.5, "b": 0.2}, slots=[[0]], resources=("a", "b"))
    model = ChannelModel(inst)
    x = np.array([1.0])
    y = np.array([[2.0, 2.0]])
    assert model.reward(x, y) == pytest.approx(3.0)
    assert model.gradient(x, y)[0] == pytest.approx([0.5, 1.0])
    assert model.gradient(x, np.zeros((1, 2)))[0] == pytest.approx([0.5, 1.0])   # tie at 0 -> k* = 0
    assert exact_ogasched(inst).objective == pytest.approx(3.0, rel=1e-7)


def h10():
    return multi_server(ports=[{"cpu": 3}, {"cpu": 2}], nodes=[{"cpu": 4}, {"cpu": 4}],
                        channels=[[0, 0], [0, 1], [1, 1]], beta={"cpu": 0.5}, slots=[[0, 1]])


@pytest.mark.parametrize("policy,expected_y,expected_q", [
    (Fairness(), [3, 2.4, 1.6], 3.5),
    (MultiServerDRF(), [3, 0, 2], 2.5),
    (Spreading(), [3, 0, 2], 2.5),
    (BinPacking(), [3, 0, 2], 2.5),
])
def test_h10_baselines(policy, expected_y, expected_q):
    inst = h10()
    run = run_slots(inst, policy, keep=True)
    assert run.allocations[0][:, 0] == pytest.approx(expected_y)
    assert run.total == pytest.approx(expected_q)
    assert per_slot_optimum(inst, inst.arrivals())[0] == pytest.approx(3.5, rel=1e-7)


def test_h11_binpacking_versus_spreading():
    inst = multi_server(ports=[{"cpu": 2}, {"cpu": 2}], nodes=[{"cpu": 5}, {"cpu": 3}],
                        channels=[[0, 0], [0, 1], [1, 0], [1, 1]], beta={"cpu": 0.5}, slots=[[0, 1]])
    spread = run_slots(inst, Spreading(), keep=True).allocations[0][:, 0]
    packed = run_slots(inst, BinPacking(), keep=True).allocations[0][:, 0]
    assert spread.tolist() == [2, 0, 2, 0]      # both ports on node 0 (3 left ties 3 -> lowest index)
    assert packed.tolist() == [0, 2, 2, 0]      # port 0 best-fits node 1, port 1 then node 0


@pytest.mark.parametrize("utility,at_one,varpi", [
    ("linear", 1.0, 1.0), ("log", math.log(2), 1.0), ("reciprocal", 0.5, 1.0), ("poly", math.sqrt(2) - 1, 0.5),
])
def test_h12_utilities(utility, at_one, varpi):
    inst = multi_server(ports=[{"cpu": 5}], nodes=[{"cpu": 5}], channels=[[0, 0]], beta={"cpu": 0},
                        slots=[[0]], utility=utility)
    model = ChannelModel(inst)
    assert model.utility(np.zeros((1, 1)))[0, 0] == pytest.approx(0.0)
    assert model.utility(np.ones((1, 1)))[0, 0] == pytest.approx(at_one)
    assert model.varpi()[0, 0] == pytest.approx(varpi)
