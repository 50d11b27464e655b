"""The OASiS program built as arrays is the Pyomo model: same size, same optimum (MILP and LP),
checked schedules, and MIP starts read back to the schedule they came from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
from mlsched.formulations.oasis_symmetry import ordered
from mlsched.instance import load
from mlsched.instance.generators import generate_oasis
from mlsched.metrics import total_utility
from mlsched.sim import check
from mlsched.solve import Status, solve, solve_arrays

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "instances" / "oasis").glob("*.json"))


def instances():
    return [load(p) for p in SHIPPED] + [generate_oasis(jobs=3, horizon=3, seed=s, profile="small") for s in range(12)]


@pytest.mark.parametrize("variant", oasis.VARIANTS)
def test_same_program_same_optimum(variant):
    """Both builders, solved as production solves them, reach the true optimum (the shipped
    instances' verified optima, brute force on the generated ones)."""
    for inst in instances():
        built = oasis.build(inst, variant=variant)
        arrays = build_arrays(inst, variant=variant)
        assert arrays.num_columns == built.size["variables"]
        assert len(arrays.program.row_lower) == built.size["constraints"]
        truth = (inst.expected[f"opt_{variant}"] if inst.expected
                 else bruteforce.oasis_opt(inst, variant=variant))
        milp = solve_arrays(arrays.program)
        reference = solve(built)
        assert milp.status is reference.status is Status.OPTIMAL
        schedule = arrays.extract(milp.schedule)
        assert check(inst, schedule) == []
        assert total_utility(inst, schedule) == pytest.approx(truth, rel=1e-8, abs=1e-8), inst.name
        assert total_utility(inst, reference.schedule) == pytest.approx(truth, rel=1e-8, abs=1e-8), inst.name
        assert milp.objective == pytest.approx(total_utility(inst, schedule), rel=1e-8, abs=1e-8)
        # a schedule read back as a start is the same solution
        start = arrays.start(oasis.program_schedule(inst, schedule, variant))
        again = arrays.extract(start)
        assert np.array_equal(again.workers, schedule.workers) and np.array_equal(again.ps, schedule.ps)
        lp = solve_arrays(build_arrays(inst, variant=variant, relax=True).program)
        assert lp.objective == pytest.approx(solve(oasis.build(inst, variant=variant, relax=True)).objective,
                                             rel=1e-7, abs=1e-7)


def test_tiny_instances_meet_brute_force():
    for seed in range(8):
        inst = generate_oasis(jobs=2, horizon=2, seed=seed, profile="small")
        for variant in oasis.VARIANTS:
            truth = bruteforce.oasis_opt(inst, variant=variant)
            for earliest in (True, False):       # the tightened program and the plain one
                report = solve_arrays(build_arrays(inst, variant=variant, earliest=earliest).program, presolve=False)
                assert report.objective == pytest.approx(truth, abs=1e-7)
                lp = solve_arrays(build_arrays(inst, variant=variant, relax=True, earliest=earliest).program)
                assert lp.objective >= truth - 1e-7
                assert solve(oasis.build(inst, variant=variant, earliest=earliest)).objective == pytest.approx(truth, abs=1e-7)


@pytest.mark.parametrize("cut", oasis.CUTS)
def test_each_cut_keeps_the_brute_force_optimum(cut):
    """Each strengthening alone: both builders give the same size and the brute-force optimum,
    and its LP relaxation is no higher than without it (every cut only removes points) and at
    least OPT. The generated small instances have classes of interchangeable servers."""
    classes = 0
    for seed in range(8):
        inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
        classes += len(oasis.server_classes(inst, *oasis.server_bounds(inst))[0])
        for variant in oasis.VARIANTS:
            truth = bruteforce.oasis_opt(inst, variant=variant)
            built = oasis.build(inst, variant=variant, cuts=(cut,))
            arrays = build_arrays(inst, variant=variant, cuts=(cut,))
            assert arrays.num_columns == built.size["variables"]
            assert len(arrays.program.row_lower) == built.size["constraints"]
            assert solve_arrays(arrays.program).objective == pytest.approx(truth, abs=1e-7)
            assert solve(built).objective == pytest.approx(truth, abs=1e-7)
            plain = solve_arrays(build_arrays(inst, variant=variant, relax=True, cuts=()).program).objective
            lp = solve_arrays(build_arrays(inst, variant=variant, relax=True, cuts=(cut,)).program).objective
            assert truth - 1e-7 <= lp <= plain + 1e-7
    assert classes > 0


def test_rate_cut_lowers_the_lp_where_a_job_cannot_run_all_its_workers():
    """On 30 x 30 seed 0 (feasible profile) 6 jobs run fewer than N_i workers at most: the LP
    relaxation's bound drops strictly with the rate cut."""
    inst = generate_oasis(jobs=30, horizon=30, seed=0, profile="feasible")
    chunks = np.array([j.chunks for j in inst.jobs])
    assert np.any(oasis.max_rate(inst, *oasis.server_bounds(inst)) < chunks)
    plain = solve_arrays(build_arrays(inst, relax=True, cuts=()).program).objective
    rate = solve_arrays(build_arrays(inst, relax=True, cuts=("rate",)).program).objective
    assert rate < plain - 1.0


def test_symmetric_start_is_put_in_order():
    """A schedule whose interchangeable servers are out of order is a valid MIP start once
    ordered: the program with "symmetry" accepts it, and it scores what the schedule scores."""
    reordered = 0
    for seed in range(8):
        inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
        ycap, zcap = oasis.server_bounds(inst)
        worker_classes, ps_classes = oasis.server_classes(inst, ycap, zcap)
        if not worker_classes:
            continue
        arrays = build_arrays(inst, cuts=("symmetry",))
        best = arrays.extract(solve_arrays(arrays.program).schedule)
        members = worker_classes[0]
        flipped = best.workers.copy()
        flipped[:, :, members] = flipped[:, :, members[::-1]]
        swapped = type(best)(workers=flipped, ps=best.ps, admitted=best.admitted, promises_completion=True)
        assert check(inst, swapped) == []
        again = ordered(swapped, worker_classes, ps_classes)
        reordered += not np.array_equal(again.workers, swapped.workers)
        assert check(inst, again) == []
        assert total_utility(inst, again) == pytest.approx(total_utility(inst, best))
        values = arrays.start(oasis.program_schedule(inst, swapped))
        report = solve_arrays(arrays.program, start=values, time_limit=10)
        assert report.objective == pytest.approx(total_utility(inst, best), abs=1e-7)
        rows = _row_activity(arrays.program, values)
        assert np.all(rows >= arrays.program.row_lower - 1e-7) and np.all(rows <= arrays.program.row_upper + 1e-7)
    assert reordered > 0


def _row_activity(program, values: np.ndarray) -> np.ndarray:
    matrix = sp.csc_matrix((program.a_value, program.a_index, program.a_start),
                           shape=(len(program.row_lower), len(program.cost)))
    return matrix @ values


def test_unknown_cut():
    with pytest.raises(Exception, match="unknown OASiS cut"):
        build_arrays(load(SHIPPED[0]), cuts=("nope",))


def test_unknown_variant():
    with pytest.raises(Exception, match="unknown OASiS variant"):
        build_arrays(load(SHIPPED[0]), variant="nope")
