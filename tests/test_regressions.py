"""Solver defects found so far, kept as regression cases with their true optima.

Each case is an instance (whose true optima brute force confirms; ``meta`` records the wrong value
HiGHS 1.15.1 reported with default presolve and the program variant) and the model file on which it
did. The tests assert the truth whatever the solver build: mlsched's answer is the brute-force
optimum. How a disagreement is reported is tested by injection in tests/test_disagreement.py.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.instance import load
from mlsched.model_files import solve_model_file
from mlsched.solve import (
    CROSSED_BOUND_TOL,
    ArrayProgram,
    Status,
    settle_crossed_bound,
    solve,
    solve_arrays,
)

HERE = Path(__file__).resolve().parent / "regressions"
CASES = sorted(p.stem for p in HERE.glob("*.json"))


def test_cases_are_present():
    assert len(CASES) >= 8
    assert {"highs-presolve-wrong-optimum", "highs-presolve-zero-optimum"} <= set(CASES)
    assert all((HERE / f"{case}.lp").is_file() for case in CASES)


@pytest.mark.parametrize("case", CASES)
def test_model_file_answer_is_the_truth(case):
    """Whatever the HiGHS build: mlsched's final answer on the model file is the brute-force
    optimum, proven (both solvers agree) or flagged DISAGREE with the truth inside the interval."""
    inst = load(HERE / f"{case}.json")
    truth = inst.expected[f"opt_{inst.meta['variant']}"]
    report = solve_model_file(HERE / f"{case}.lp", verify=True)
    assert report.status in (Status.OPTIMAL, Status.DISAGREE)
    assert report.verified is (report.status is Status.OPTIMAL)
    assert report.objective == pytest.approx(truth, rel=1e-9)
    assert report.bound >= truth - 1e-9


@pytest.mark.parametrize("case", CASES)
def test_instance_true_optima(case):
    inst = load(HERE / f"{case}.json")
    for variant in ("paper", "chunk"):
        truth = inst.expected[f"opt_{variant}"]
        assert bruteforce.oasis_opt(inst, variant=variant) == pytest.approx(truth, rel=1e-12)
        report = solve(oasis.build(inst, variant=variant), verify=True)
        assert report.status in (Status.OPTIMAL, Status.DISAGREE)
        assert report.objective == pytest.approx(truth, rel=1e-9)
        off = solve(oasis.build(inst, variant=variant), presolve=False)
        assert off.status is Status.OPTIMAL and off.objective == pytest.approx(truth, rel=1e-9)


@pytest.mark.parametrize("sense, objective, bound, settled", [
    ("max", 10.0, 10.0 - 5e-6, 10.0),            # crossed within tolerance: zero gap
    ("max", 10.0, 10.0 - 2e-5, 10.0 - 2e-5),     # crossed further: left for the caller to judge
    ("max", 10.0, 11.0, 11.0),                   # an ordinary bound
    ("min", 0.5, 0.5 + 9e-7, 0.5),               # tolerance is absolute below magnitude 1
    ("min", 0.5, 0.5 + 2e-6, 0.5 + 2e-6),
    ("min", 0.5, 0.4, 0.4),
])
def test_bound_crossing_the_incumbent_within_tolerance_is_a_zero_gap(sense, objective, bound, settled):
    assert CROSSED_BOUND_TOL == 1e-6
    assert settle_crossed_bound(sense, objective, bound) == settled


def test_themis_pf_program_with_near_tied_bids_meets_its_brute_force_optimum():
    """A Themis PF program from a full Workload-1 run in which two bids differ by less than
    HiGHS's tolerances (HiGHS 1.15.1 reported a bound 7.5e-8 below its own incumbent). Whatever
    the build: the report is OPTIMAL with a zero gap, its objective is the brute-force optimum to
    within that tolerance, and its bound does not cut the optimum off."""
    data = np.load(HERE / "themis-pf-crossed-bound.npz")
    a = sp.csc_matrix((data["a_value"], data["a_index"], data["a_start"]),
                      shape=(len(data["row_lower"]), len(data["cost"])))
    bidders = [r for r in range(a.shape[0]) if data["row_lower"][r] == data["row_upper"][r] == 1]
    columns = [np.flatnonzero(a[r].toarray()[0]) for r in bidders]
    best = max(data["cost"][list(pick)].sum() for pick in itertools.product(*columns)
               if np.all(a[:, list(pick)].sum(axis=1).A1 <= data["row_upper"] + 1e-9))
    tolerance = CROSSED_BOUND_TOL * max(1.0, abs(best))
    for presolve in (True, False):
        report = solve_arrays(ArrayProgram(**{k: data[k] for k in data.files}, integer=True, sense="max"),
                              presolve=presolve)
        assert report.status is Status.OPTIMAL and report.gap == 0.0
        assert abs(report.objective - best) <= tolerance
        assert report.bound >= best - tolerance


def test_astraea_programs_without_columns_are_worth_zero():
    """Found by the differential test: no job can finish by the horizon, so UB-POOL had no variable
    and came back without a value; every variant's answer is the brute-force truth, 0."""
    from mlsched.exact import exact_astraea

    inst = load(HERE / "astraea" / "ubpool-no-columns.json")
    assert bruteforce.astraea_opt(inst) == 0.0 and bruteforce.astraea_opt(inst, variant="all-jobs") is None
    for variant in ("admission", "ub-pool"):
        report = exact_astraea(inst, variant=variant)
        assert report.status is Status.OPTIMAL and report.objective == 0.0
    assert exact_astraea(inst, relax=True).objective == 0.0
    assert exact_astraea(inst, variant="all-jobs").status is Status.INFEASIBLE
