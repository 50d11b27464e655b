"""Baselines of spec §5.3 on hand-checked instances, plus feasibility on random ones."""

from __future__ import annotations

import numpy as np
import pytest
from builders import cluster, job, random_tiny

from mlsched import sim
from mlsched.baselines import DRF, FIFO, RRH, Dorm
from mlsched.baselines.placement import RoundRobin
from mlsched.metrics import job_table, total_utility

LINEAR = {"kind": "linear", "intercept": 10, "slope": 1}
NO_PS = {}


def test_fifo_blocks_the_head_of_the_line():
    inst = cluster([job("1", epochs=3, worker={"cpu": 1}, ps=NO_PS, utility=LINEAR),
                    job("2", epochs=1, worker={"cpu": 2}, ps=NO_PS, utility=LINEAR),
                    job("3", epochs=1, worker={"cpu": 1}, ps=NO_PS, utility=LINEAR)],
                   horizon=5, workers=[{"cpu": 2}], ps=[{"cpu": 1}])
    result = sim.run(inst, FIFO())
    # job 3 fits beside job 1 but waits behind job 2 (no backfilling)
    assert result.schedule.workers_per_slot.tolist() == [[1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]
    assert result.schedule.completion_slots().tolist() == [3, 4, 5]
    assert total_utility(inst, result.schedule) == pytest.approx(8 + 7 + 6)


def test_drf_splits_a_server_evenly():
    inst = cluster([job("1", chunks=4, worker={"cpu": 1}, ps=NO_PS, utility=LINEAR),
                    job("2", chunks=4, worker={"cpu": 1}, ps=NO_PS, utility=LINEAR)],
                   horizon=3, workers=[{"cpu": 4}], ps=[{"cpu": 1}])
    result = sim.run(inst, DRF())
    assert result.schedule.workers_per_slot.tolist() == [[2, 2, 0], [2, 2, 0]]
    assert total_utility(inst, result.schedule) == pytest.approx(9 + 9)


def test_rrh_rejects_a_job_whose_delay_cost_exceeds_its_gain():
    hurried = {"kind": "linear", "intercept": 10, "slope": 5}
    small = {"kind": "linear", "intercept": 1, "slope": 1}
    inst = cluster([job("1", epochs=2, worker={"cpu": 1}, ps=NO_PS, utility=hurried),
                    job("2", epochs=1, worker={"cpu": 1}, ps=NO_PS, utility=small)],
                   horizon=2, workers=[{"cpu": 1}], ps=[{"cpu": 1}])
    result = sim.run(inst, RRH())
    # job 2: gain f2(0) = 1, delay cost to job 1: f1(1) - f1(2) = 5 - 0 -> score -4 <= 0
    assert result.schedule.admitted.tolist() == [True, False]
    assert result.schedule.workers_per_slot.tolist() == [[1, 1], [0, 0]]
    assert total_utility(inst, result.schedule) == pytest.approx(5)


def test_round_robin_cursor_and_rollback():
    inst = cluster([job("1", chunks=4), job("2", chunks=4), job("3", chunks=9)], horizon=1,
                   workers=[{"cpu": 2}, {"cpu": 2}, {"cpu": 2}], ps=[{"cpu": 9}])
    placer = RoundRobin(inst)
    residual_w, residual_ps = inst.worker_capacity.copy(), inst.ps_capacity.copy()
    y, _ = placer.place(0, 4, 1, residual_w, residual_ps)
    assert y.tolist() == [2, 1, 1] and placer.cursor["worker"] == 1
    y, _ = placer.place(1, 2, 1, residual_w, residual_ps)
    assert y.tolist() == [0, 1, 1] and placer.cursor["worker"] == 0
    before = residual_w.copy()
    assert placer.place(2, 1, 1, residual_w, residual_ps) is None  # servers are full: rolled back
    assert np.array_equal(residual_w, before) and placer.cursor["worker"] == 0


def test_dorm_uses_at_least_as_much_as_drf_at_the_first_event():
    rng = np.random.default_rng(5)
    inst = random_tiny(rng, jobs=4, horizon=3, workers=2, ps=2, resources=("cpu", "mem"))
    first = min(j.arrival for j in inst.jobs)

    def used(policy):
        schedule = sim.run(inst, policy).schedule
        return float(np.einsum("is,ir->", schedule.workers[:, first - 1, :].astype(float), inst.worker_demand))
    assert used(Dorm()) >= used(DRF()) - 1e-9


@pytest.mark.parametrize("seed", range(8))
def test_baselines_are_feasible_and_scored_consistently(seed):
    rng = np.random.default_rng(seed)
    inst = random_tiny(rng, jobs=5, horizon=4, workers=2, ps=2, resources=("cpu", "mem"))
    for policy in (FIFO(seed=seed), DRF(), RRH(seed=seed), Dorm()):
        schedule = sim.run(inst, policy).schedule  # the engine runs the independent checker
        table = job_table(inst, schedule)
        work = schedule.workers_per_slot.sum(axis=1)
        for i, row in table.iterrows():
            finished = row.admitted and work[i] >= inst.workload[i] - 1e-9
            expected = float(inst.jobs[i].utility.value(row.completion_slot - inst.jobs[i].arrival)) if finished else 0.0
            assert row.utility == pytest.approx(expected)
        # a baseline never gives resources to a job after it has completed
        done_at = np.argmax(np.cumsum(schedule.workers_per_slot, axis=1) >= inst.workload[:, None] - 1e-9, axis=1)
        for i in np.flatnonzero(table["completed"]):
            assert schedule.workers_per_slot[i, done_at[i] + 1:].sum() == 0
