"""Solver defects found so far, kept as regression cases with their true optima.

Each case is an instance (whose true optima brute force confirms; ``meta`` records the wrong value
HiGHS 1.15.1 reports with default presolve and the program variant) and the model file on which it
does. mlsched's verify path must report the truth, never the wrong value.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.instance import load
from mlsched.solve import Status, solve, solve_model_file

HERE = Path(__file__).resolve().parent / "regressions"
CASES = sorted(p.stem for p in HERE.glob("*.json"))


def test_cases_are_present():
    assert len(CASES) >= 8
    assert {"highs-presolve-wrong-optimum", "highs-presolve-zero-optimum"} <= set(CASES)
    assert all((HERE / f"{case}.lp").is_file() for case in CASES)


@pytest.mark.parametrize("case", CASES)
def test_model_file_disagreement_is_caught(case):
    inst = load(HERE / f"{case}.json")
    truth = inst.expected[f"opt_{inst.meta['variant']}"]
    wrong = inst.meta["highs_default_presolve_objective"]
    report = solve_model_file(HERE / f"{case}.lp", verify=True)
    if report.status is Status.OPTIMAL:  # a fixed HiGHS: then both solvers must give the truth
        assert report.verified and report.objective == pytest.approx(truth, rel=1e-9)
        return
    assert report.status is Status.DISAGREE and not report.verified
    assert report.objective == pytest.approx(truth, rel=1e-9)
    assert report.bound >= truth - 1e-9
    assert f"highs says {wrong:.10g}" in report.message


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


def test_highs_bound_crossing_its_incumbent_is_not_a_gap():
    """A Themis PF program from a full Workload-1 run where HiGHS 1.15.1 reports optimal with a dual
    bound 7.5e-8 below its own incumbent (two bids differ by less than its tolerance): the report
    is OPTIMAL with the bound clamped to the incumbent, not FEASIBLE with a spurious gap."""
    import numpy as np

    from mlsched.solve import ArrayProgram, Status, solve_arrays

    data = np.load(Path(__file__).parent / "regressions" / "themis-pf-crossed-bound.npz")
    report = solve_arrays(ArrayProgram(**{k: data[k] for k in data.files}, integer=True, sense="max"))
    assert report.status is Status.OPTIMAL and report.gap == 0.0
    # brute force: one column per bidder (equality rows), capacity rows respected
    import itertools

    import scipy.sparse as sp
    a = sp.csc_matrix((data["a_value"], data["a_index"], data["a_start"]), shape=(len(data["row_lower"]), len(data["cost"])))
    bidders = [r for r in range(a.shape[0]) if data["row_lower"][r] == data["row_upper"][r] == 1]
    columns = [np.flatnonzero(a[r].toarray()[0]) for r in bidders]
    best = max(data["cost"][list(pick)].sum() for pick in itertools.product(*columns)
               if np.all(a[:, list(pick)].sum(axis=1).A1 <= data["row_upper"] + 1e-9))
    assert report.objective == pytest.approx(best, abs=1e-9)
