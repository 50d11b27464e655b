"""The OASiS program built as arrays is the Pyomo model: same size, same optimum (MILP and LP),
checked schedules, and MIP starts read back to the schedule they came from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
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


def test_unknown_variant():
    with pytest.raises(Exception, match="unknown OASiS variant"):
        build_arrays(load(SHIPPED[0]), variant="nope")
