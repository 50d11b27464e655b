"""Themis's O1 built as arrays is the Pyomo model: same size, same optimum (MILP and LP, one rack
and several), MIP starts that satisfy every row exactly and read back to their schedule, and the
child-process path of solve_offline (forced, and ended early)."""

from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest
import scipy.sparse as sp

import mlsched.formulations.themis_offline as offline
from mlsched.formulations.themis_offline import (
    TIEBREAK,
    alone_bound,
    build_offline,
    check_schedule,
    default_horizon,
    fifo_start,
    fifo_t_id,
    offline_data,
    solve_offline,
)
from mlsched.formulations.themis_offline_arrays import build_offline_arrays
from mlsched.solve import ArrayProgram, Status, solve, solve_arrays, solve_arrays_by_deadline
from test_themis_offline import make_app, make_instance

SLOT = 10.0
CLUSTERS = [[(0, 2)], [(0, 2), (0, 3)], [(0, 2), (1, 2)], [(0, 1), (0, 2), (1, 2)]]


def random_instance(seed):
    """2-4 apps with staggered arrivals on one to three machines in one or two racks, spread and
    cross-rack slowdowns drawn from 1, 1.5, 2 (s <= s')."""
    rng = random.Random(seed)
    machines = CLUSTERS[seed % len(CLUSTERS)]
    apps = []
    for i in range(rng.randint(2, 4)):
        spread = rng.choice([1.0, 1.5, 2.0])
        apps.append(make_app(f"a{i}", rng.choice([0, 0, 5, 10, 20]), 5 * rng.randint(2, 14), rng.randint(1, 4),
                             spread, rng.choice([spread, 2.0, 3.0])))
    return make_instance(machines, apps)


def both(inst, *, relax=False, tiebreak=0.0):
    """(Pyomo model, arrays) of one O1 with FIFO's T_id over the default horizon."""
    data = offline_data(inst, slot=SLOT)
    t_id = np.array(fifo_t_id(inst, slot=SLOT))
    horizon = default_horizon(data, t_id)
    built = build_offline(inst, t_id=t_id, slot=SLOT, horizon=horizon, relax=relax, tiebreak=tiebreak)
    return built, build_offline_arrays(data, t_id, horizon, relax=relax, tiebreak=tiebreak)


SEEDS = range(16)


@pytest.mark.parametrize("seed", SEEDS)
def test_same_program_same_optimum(seed):
    """Same numbers of columns, integer columns and rows; the same optimum of min rho_max (with
    and without the spec's tiebreak) and of the LP relaxation."""
    inst = random_instance(seed)
    for relax in (False, True):
        for tiebreak in (0.0, TIEBREAK):
            built, arrays = both(inst, relax=relax, tiebreak=tiebreak)
            assert arrays.size == built.size
            ours, reference = solve_arrays(arrays.program), solve(built)
            assert ours.status is reference.status is Status.OPTIMAL
            assert ours.objective == pytest.approx(reference.objective, rel=1e-9, abs=1e-9)
            if not relax:
                schedule = arrays.extract(ours.schedule)
                assert check_schedule(arrays.data, schedule) == []


def test_cases_cover_racks_and_slowdowns():
    """The random cases include several racks with s < s' and apps that wait for their slot."""
    cases = [random_instance(seed) for seed in SEEDS]
    assert any(len({r for r, _ in inst.topology.machines}) > 1 and any(a.profile[2] < a.profile[3] for a in inst.apps)
               for inst in cases)
    assert any(len(inst.topology.machines) == 1 for inst in cases)
    assert any(a.arrival % SLOT for inst in cases for a in inst.apps)


@pytest.mark.parametrize("seed", SEEDS)
def test_lexicographic_optimum_matches_the_cross_certified_model(seed):
    """solve_offline on the arrays (verify False) and on the cross-certified Pyomo model reach
    the same least max rho and, at it, the same least sum of completions."""
    inst = random_instance(seed)
    t_id = fifo_t_id(inst, slot=SLOT)
    ours = solve_offline(inst, t_id=t_id, slot=SLOT)
    certified = solve_offline(inst, t_id=t_id, slot=SLOT, verify=True)
    assert ours.status is certified.status is Status.OPTIMAL and certified.reports[0].verified
    assert len(ours.reports) == len(certified.reports) == 2
    assert ours.max_rho == pytest.approx(certified.max_rho, rel=1e-9)
    assert ours.completion.sum() == pytest.approx(certified.completion.sum(), rel=1e-12)
    assert ours.size == certified.size
    assert check_schedule(offline_data(inst, slot=SLOT), offline.OfflineSchedule(ours.completion, ours.schedule)) == []


@pytest.mark.parametrize("seed", SEEDS)
def test_fifo_start_satisfies_every_row_and_reads_back(seed):
    """The arrays' start from FIFO's schedule lies within every column's bounds and every row's,
    exactly on the rows of integer coefficients over integer columns (most rows) and to 1e-9 of
    the row's terms where rates (1/s, Delta/T_id) or the work done p enter; it scores FIFO's max
    rho, and extracting it gives FIFO's schedule back."""
    inst = random_instance(seed)
    _, arrays = both(inst)
    data = arrays.data
    start = fifo_start(data, arrays.horizon)
    assert start is not None
    values = arrays.start(start)
    program = arrays.program
    matrix = sp.csc_matrix((program.a_value, program.a_index, program.a_start),
                           shape=(len(program.row_lower), len(program.cost)))
    integer = program.integrality
    assert np.all(program.col_lower <= values) and np.all(values <= program.col_upper)
    assert np.all(values[integer] == np.round(values[integer]))
    activity = matrix @ values
    coo = matrix.tocoo()
    inexact = np.zeros(matrix.shape[0], dtype=bool)
    inexact[coo.row[(coo.data != np.round(coo.data)) | ~integer[coo.col]]] = True
    assert inexact.sum() < 0.5 * len(inexact)
    assert np.all(activity[~inexact] >= program.row_lower[~inexact])
    assert np.all(activity[~inexact] <= program.row_upper[~inexact])
    slack = 1e-9 * (1.0 + abs(matrix) @ np.abs(values))
    assert np.all(activity >= program.row_lower - slack) and np.all(activity <= program.row_upper + slack)
    fifo_rho = float(np.max((start.completion - data.arrival) / arrays.t_id))
    assert values[arrays.rho_column] == fifo_rho
    assert program.cost @ values + program.offset == pytest.approx(fifo_rho)
    back = arrays.extract(values)
    assert np.array_equal(back.gpus, start.gpus) and np.array_equal(back.completion, start.completion)


def test_a_mixed_program_keeps_its_continuous_columns_also_in_the_child():
    """max x + y s.t. x + y <= 1.5, x integer in [0, 1], y in [0, 1]: 1.5 with y continuous,
    1 when every column is integer; the child process gets the same program."""
    program = ArrayProgram(cost=np.ones(2), col_lower=np.zeros(2), col_upper=np.ones(2), row_lower=np.array([-np.inf]),
                           row_upper=np.array([1.5]), a_start=np.array([0, 1, 2], dtype=np.int32),
                           a_index=np.array([0, 0], dtype=np.int32), a_value=np.ones(2),
                           integer_columns=np.array([True, False]), offset=0.25)
    assert solve_arrays(program).objective == pytest.approx(1.75)
    child = solve_arrays_by_deadline(program, time_limit=60.0, grace=5.0)
    assert child.status is Status.OPTIMAL and child.objective == pytest.approx(1.75)
    assert child.schedule[0] == pytest.approx(1.0) and child.schedule[1] == pytest.approx(0.5)
    assert solve_arrays(dataclasses.replace(program, integer_columns=None)).objective == pytest.approx(1.25)
    assert solve_arrays(dataclasses.replace(program, integer=False)).objective == pytest.approx(1.75)
    assert not dataclasses.replace(program, integer_columns=np.zeros(2, dtype=bool)).is_mip


@pytest.mark.parametrize("seed", range(6))
def test_the_child_process_path_agrees_with_the_one_in_process(seed, monkeypatch):
    """Above LARGE_COLUMNS (forced to 0 here) with a time limit, both solves run in the child
    process: same least max rho and sum of completions as in this process."""
    inst = random_instance(seed)
    t_id = fifo_t_id(inst, slot=SLOT)
    in_process = solve_offline(inst, t_id=t_id, slot=SLOT, time_limit=600.0)
    called = []

    def recorded(program, **kwargs):
        called.append(kwargs["time_limit"])
        return solve_arrays_by_deadline(program, **kwargs)

    monkeypatch.setattr(offline, "LARGE_COLUMNS", 0)
    monkeypatch.setattr(offline, "solve_arrays_by_deadline", recorded)
    child = solve_offline(inst, t_id=t_id, slot=SLOT, time_limit=600.0)
    assert len(called) == 2
    assert in_process.status is child.status is Status.OPTIMAL
    assert child.max_rho == pytest.approx(in_process.max_rho, rel=1e-9)
    assert child.completion.sum() == pytest.approx(in_process.completion.sum(), rel=1e-12)
    assert child.bound == pytest.approx(in_process.bound, rel=1e-9) and child.bound_source == "milp"


@pytest.mark.parametrize("seed", range(6))
def test_a_child_ended_early_leaves_fifo_and_the_bound_of_apps_alone(seed, monkeypatch):
    """A child ended before it answers (here at once: a limit of 1 ms and no grace) gives no
    incumbent and no bound: O1's result is FIFO's schedule over the bound of apps alone, which
    holds the optimum the full solve proves."""
    inst = random_instance(seed)
    t_id = fifo_t_id(inst, slot=SLOT)
    data = offline_data(inst, slot=SLOT)
    proven = solve_offline(inst, t_id=t_id, slot=SLOT)

    def ended(program, **kwargs):
        return solve_arrays_by_deadline(program, **{**kwargs, "time_limit": 1e-3, "grace": 0.0})

    monkeypatch.setattr(offline, "LARGE_COLUMNS", 0)
    monkeypatch.setattr(offline, "solve_arrays_by_deadline", ended)
    result = solve_offline(inst, t_id=t_id, slot=SLOT, time_limit=30.0)
    horizon = default_horizon(data, np.array(t_id))
    fifo = fifo_start(data, horizon)
    fifo_rho = float(np.max((fifo.completion - data.arrival) / np.array(t_id)))
    assert result.reports[0].status is Status.NO_SOLUTION and len(result.reports) == 1
    assert result.max_rho == fifo_rho and np.array_equal(result.schedule, fifo.gpus)
    assert result.bound_source == "apps alone"
    assert result.bound == pytest.approx(min(alone_bound(data, np.array(t_id)), fifo_rho), rel=1e-12)
    assert result.bound <= proven.max_rho + 1e-9 <= result.max_rho + 2e-9
    assert "FIFO" in result.message
    assert result.status is (Status.OPTIMAL if result.bound == pytest.approx(fifo_rho, rel=1e-9) else Status.FEASIBLE)


@pytest.mark.parametrize("which", ["milp", "sum-of-completions re-solve"])
def test_a_claim_its_solution_does_not_score_is_solved_again_without_the_start(which, monkeypatch):
    """HiGHS 1.16.0 with presolve and a MIP start has returned the start's values with another
    solution's objective (seed 7 here: the re-solve claimed 120 and returned its start, 180, on the
    cross-certified model). Injected: the solve with a start claims one less than its solution
    scores; the solve is run again without the start, and the result is the true optimum."""
    inst = random_instance(3)
    t_id = fifo_t_id(inst, slot=SLOT)
    truth = solve_offline(inst, t_id=t_id, slot=SLOT)
    real = offline.solve_arrays
    calls = []

    def claiming(program, **kwargs):
        report = real(program, **kwargs)
        calls.append(kwargs.get("start") is not None)
        resolving = program.offset > 0        # sum_i C_i's constant; the first solve's is 0 (lexicographic)
        if kwargs.get("start") is not None and resolving == (which != "milp"):
            return dataclasses.replace(report, objective=report.objective - 1.0)
        return report

    monkeypatch.setattr(offline, "solve_arrays", claiming)
    result = solve_offline(inst, t_id=t_id, slot=SLOT)
    assert f"{which} without the start" in [step.name for step in result.steps]
    assert calls.count(False) == 1
    assert result.status is Status.OPTIMAL and "does not score" in " ".join(r.message for r in result.reports)
    assert result.max_rho == pytest.approx(truth.max_rho, rel=1e-12)
    assert result.completion.sum() == pytest.approx(truth.completion.sum(), rel=1e-12)

