"""The LP-guided list schedule, the MIP start of OASiS programs too large to certify: feasible,
scored as the program scores it, never above the optimum, deterministic, and used by
``exact_oasis`` when the MILP stops without an incumbent."""

from __future__ import annotations

import numpy as np
import pytest

import mlsched.exact as exact_module
from mlsched import bruteforce
from mlsched.exact import exact_oasis
from mlsched.formulations import oasis
from mlsched.list_schedule import density_values, guided_schedule, list_schedule, lp_job_values
from mlsched.instance.generators import generate_oasis
from mlsched.metrics import total_utility
from mlsched.sim import check
from mlsched.solve import SolveReport, Status


@pytest.mark.parametrize("variant", oasis.VARIANTS)
@pytest.mark.parametrize("seed", range(6))
def test_list_schedules_are_feasible_and_below_the_optimum(variant, seed):
    inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
    lp, values = lp_job_values(inst, variant)
    assert lp.status is Status.OPTIMAL and values is not None
    assert values.sum() == pytest.approx(lp.objective, rel=1e-9, abs=1e-9)
    truth = bruteforce.oasis_opt(inst, variant=variant)
    first, plain = list_schedule(inst, list(np.argsort(-values, kind="stable")), variant)
    searched = guided_schedule(inst, [density_values(inst), values], variant=variant)
    for total, schedule in ((first, plain), (total_utility(inst, searched), searched)):
        assert check(inst, schedule) == []
        program = oasis.program_schedule(inst, schedule, variant)
        assert total_utility(inst, program) == pytest.approx(total, rel=1e-12)   # the program scores it whole
        assert total <= truth + 1e-9
    assert total_utility(inst, searched) >= first - 1e-12        # the local search keeps the best order


def test_list_schedule_is_deterministic():
    inst = generate_oasis(jobs=8, horizon=8, seed=4, profile="feasible")
    _, values = lp_job_values(inst)
    a, b = guided_schedule(inst, [values], moves=30), guided_schedule(inst, [values], moves=30)
    assert np.array_equal(a.workers, b.workers) and np.array_equal(a.ps, b.ps)


def test_exact_oasis_starts_large_programs_from_the_list_schedule(monkeypatch):
    """A program beyond certification whose MILP stops with nothing: the list schedule is the
    incumbent and the LP solved for it is the bound."""
    inst = generate_oasis(jobs=8, horizon=8, seed=4, profile="feasible")
    monkeypatch.setattr(exact_module, "VERIFY_MAX_INTEGERS", 0)

    def stopped(program, **kwargs):
        if not program.integer:
            return real(program, **kwargs)
        return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 1.0, "highs", False,
                           message="stopped (time limit) without a solution")

    real = exact_module.solve_arrays
    monkeypatch.setattr(exact_module, "solve_arrays", stopped)
    report = exact_oasis(inst, time_limit=30.0)
    lp, values = lp_job_values(inst)
    expected = guided_schedule(inst, [density_values(inst), values])
    assert report.status is Status.FEASIBLE and report.schedule.algorithm == "guided_list_paper"
    assert report.objective == pytest.approx(total_utility(inst, expected), rel=1e-12) and report.objective > 0
    assert report.bound == pytest.approx(lp.objective, rel=1e-9) and report.bound_source == "lp relaxation"
