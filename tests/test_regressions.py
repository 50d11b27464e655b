"""Solver defects found so far, kept as regression cases with their true optima."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.instance import load
from mlsched.solve import Status, solve, solve_model_file

HERE = Path(__file__).resolve().parent / "regressions"


def test_highs_presolve_wrong_optimum_is_caught_by_verify():
    """HiGHS 1.15.1 with presolve reports 22.884 on this 4-job OPT_paper MILP; the truth is 28.124."""
    report = solve_model_file(HERE / "highs-presolve-wrong-optimum.lp", verify=True)
    truth = 28.12356089519875
    if report.status is Status.OPTIMAL:  # a fixed HiGHS: then both solvers must agree on the truth
        assert report.verified and report.objective == pytest.approx(truth, rel=1e-9)
    else:
        assert report.status is Status.DISAGREE
        assert report.objective == pytest.approx(truth, rel=1e-9)
        assert report.bound >= truth - 1e-9 and not report.verified
        assert "solvers disagree" in report.message


def test_reconstructed_instance_true_optimum():
    inst = load(HERE / "highs-presolve-wrong-optimum.json")
    truth = inst.expected["opt_paper"]
    assert bruteforce.oasis_opt(inst, variant="paper") == pytest.approx(truth, rel=1e-12)
    for presolve in (True, False):
        report = solve(oasis.build(inst), presolve=presolve, verify=True)
        assert report.status is Status.OPTIMAL and report.verified
        assert report.objective == pytest.approx(truth, rel=1e-9)
