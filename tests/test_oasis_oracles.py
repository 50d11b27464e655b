"""OASiS hand-checked instances T1-T7 of the spec (§7.1), asserted to the printed values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from builders import cluster, job

from mlsched import sim
from mlsched.formulations import oasis as oasis_milp
from mlsched.metrics import total_utility
from mlsched.online.oasis import (
    JobTerms, OASiS, SlotPrices, best_schedule, best_schedule_literal, oracle_constants, prices, slot_costs)
from mlsched.online.oasis.subproblem import place
from mlsched.solve import Status, solve

LINEAR = {"kind": "linear", "intercept": 10, "slope": 1}


def t1_instance():
    return cluster([job(str(n), chunks=4, utility=LINEAR) for n in range(1, 5)], horizon=3,
                   workers=[{"cpu": 4}], ps=[{"cpu": 4}], name="T1")


def opt(instance, variant):
    report = solve(oasis_milp.build(instance, variant=variant))
    assert report.status is Status.OPTIMAL
    return report.objective


def test_t1_sequential_fill():
    inst = t1_instance()
    c = oracle_constants(inst)
    assert c.eta1 == pytest.approx(3) and c.eta2 == pytest.approx(3)
    assert math.exp(c.ln_l1) == pytest.approx(1 / 6) and math.exp(c.ln_l2) == pytest.approx(1 / 6)
    assert np.exp(c.ln_u1) == pytest.approx([10]) and np.exp(c.ln_u2) == pytest.approx([10])
    assert c.alpha == pytest.approx(math.log(60)) and 2 * c.alpha == pytest.approx(8.1887, abs=1e-4)
    policy = OASiS()
    result = sim.run(inst, policy)
    payoffs = [r.payoff for r in policy.records]
    assert payoffs[:3] == pytest.approx([26 / 3, 23 / 3, 20 / 3])
    assert [r.admitted for r in policy.records] == [True, True, True, False]
    assert [r.completion for r in policy.records[:3]] == [1, 2, 3]
    assert result.schedule.workers[0, 0, 0] == 4 and result.schedule.ps[0, 0, 0] == 4
    assert policy.ledger.price_w[0, 0, 0] == pytest.approx(10, rel=1e-12)
    assert total_utility(inst, result.schedule) == pytest.approx(27)
    assert opt(inst, "paper") == pytest.approx(27) and opt(inst, "chunk") == pytest.approx(27)
    assert policy.records[-1].dual_objective == pytest.approx(263)
    d0 = inst.horizon * (math.exp(c.ln_l1) * inst.worker_capacity.sum() + math.exp(c.ln_l2) * inst.ps_capacity.sum())
    assert d0 == pytest.approx(4)


def test_t2_large_demands_break_the_bound():
    inst = cluster([job("A", chunks=2, utility={"kind": "constant", "value": 1}),
                    job("B", chunks=2, utility={"kind": "constant", "value": 100})],
                   horizon=1, workers=[{"cpu": 2}], ps=[{"cpu": 2}], name="T2")
    c = oracle_constants(inst)
    assert c.eta1 == pytest.approx(1) and math.exp(c.ln_l1) == pytest.approx(1 / 8)
    assert 2 * c.alpha == pytest.approx(2 * math.log(800)) and 2 * c.alpha == pytest.approx(13.369, abs=1e-3)
    policy = OASiS()
    result = sim.run(inst, policy)
    assert policy.records[0].payoff == pytest.approx(0.5) and policy.records[0].admitted
    assert not policy.records[1].admitted
    alg = total_utility(inst, result.schedule)
    assert alg == pytest.approx(1)
    assert opt(inst, "paper") / alg == pytest.approx(100)
    assert opt(inst, "paper") / alg > 2 * c.alpha


def test_t3_chunk_versus_worker_slot():
    inst = cluster([job("1", epochs=3, chunks=1, minibatch_time=0.6, utility=LINEAR)], horizon=3,
                   workers=[{"cpu": 100}], ps=[{"cpu": 100}], name="T3")
    assert oracle_constants(inst).eta1 == pytest.approx(150)
    chunk, ws = OASiS(), OASiS(granularity="worker_slot")
    r_chunk, r_ws = sim.run(inst, chunk), sim.run(inst, ws)
    assert chunk.records[0].completion == 3 and chunk.records[0].payoff == pytest.approx(7.96)
    assert ws.records[0].completion == 2 and ws.records[0].payoff == pytest.approx(9 - 4 / 150)
    assert total_utility(inst, r_chunk.schedule) == pytest.approx(8)
    assert total_utility(inst, r_ws.schedule) == pytest.approx(9)
    assert opt(inst, "paper") == pytest.approx(9) and opt(inst, "chunk") == pytest.approx(8)


def injected(kappa, *, f, n=2, w=1.0, passes=2, cap=10):
    terms = JobTerms(arrival=1, chunks=n, chunk_time=w, passes=passes, workload=passes * w,
                     worker_bandwidth=1, ps_bandwidth=1, utility=np.asarray(f, dtype=float))
    s = len(kappa)
    slot = SlotPrices(worker_price=np.asarray(kappa, dtype=float)[:, None], worker_cap=np.full((s, 1), cap),
                      ps_price=np.zeros((s, 1)), ps_cap=np.full((s, 1), cap))
    return terms, slot


@pytest.mark.parametrize("routine", [best_schedule, best_schedule_literal])
@pytest.mark.parametrize("kappa,f,payoff,completion,workers", [
    ([5.0, 1.0], [10, 9], 7, 2, [0, 2]),     # T4: time-varying prices, the cheap late slot wins
    ([1.0, 1.0], [10, 10], 8, 1, [2, 0]),    # T5: ties keep the earliest t_hat and the smallest last-slot d
])
def test_t4_t5_dynamic_program(routine, kappa, f, payoff, completion, workers):
    terms, slot = injected(kappa, f=f)
    best = routine(terms, slot)
    assert best.payoff == pytest.approx(payoff)
    assert best.completion == completion
    assert best.workers[:, 0].tolist() == workers


def test_t6_cost_t_greedy():
    terms = JobTerms(arrival=1, chunks=5, chunk_time=1.0, passes=6, workload=6.0, worker_bandwidth=1,
                     ps_bandwidth=2, utility=np.array([100.0]))
    slot = SlotPrices(worker_price=np.array([[3.0, 1.0, 2.0]]), worker_cap=np.array([[4, 2, 0]]),
                      ps_price=np.array([[1.0, 5.0]]), ps_cap=np.array([[3, 3]]))
    costs = slot_costs(terms, slot)[0]
    assert costs[4] == pytest.approx(10) and costs[5] == pytest.approx(14)
    assert costs.shape == (6,)  # Y = 6 > N = 5 is not a choice at all (line 28 caps at N)
    assert place(slot.worker_price[0], slot.worker_cap[0], 4).tolist() == [2, 2, 0]
    assert place(slot.ps_price[0], slot.ps_cap[0], 2).tolist() == [2, 0]
    assert place(slot.worker_price[0], slot.worker_cap[0], 5).tolist() == [3, 2, 0]
    literal = best_schedule_literal(terms, slot)  # 6 chunk-passes in one slot need 6 > N workers
    assert literal.completion == 0 and literal.payoff == 0


def test_t7_price_function():
    p = prices(math.log(0.5), np.array([math.log(8.0)]), np.arange(5.0)[:, None, None], np.array([[4.0]]))
    assert p[:, 0, 0] == pytest.approx([0.5, 1, 2, 4, 8], rel=1e-12)
    assert np.all(np.diff(p[:, 0, 0]) > 0)


def test_t1_utilization_and_job_table():
    from mlsched.metrics import job_table, utilization

    inst = t1_instance()
    schedule = sim.run(inst, OASiS()).schedule
    assert utilization(inst, schedule) == {"cpu": pytest.approx(1.0)}        # 3 jobs x (4 workers + 4 PS) = 24 of 24
    table = job_table(inst, schedule)
    assert table["completion_slot"].tolist() == [1, 2, 3, 0]
    assert table["utility"].tolist() == pytest.approx([10, 9, 8, 0])
