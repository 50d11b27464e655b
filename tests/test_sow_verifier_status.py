"""The SoW benchmark's cross-check reads the second solver's status: a second solve that stops
unproven leaves HiGHS's proven optimum uncertified, not in disagreement; only a contradiction
is a disagreement. The paired interval needs every realization proven."""

from __future__ import annotations

import math

import numpy as np

import mlsched.exact as exact
from mlsched.instance import load
from mlsched.solve import SolveReport, Status
from mlsched.sow_metrics import paired_columns


def _second_solve(status, objective):
    def solve(built, **options):
        return SolveReport(status, objective, None, None, 0.0, 1.0, "highs", False, message="scripted")
    return solve


def test_a_second_solve_stopped_without_a_solution_leaves_the_optimum_uncertified(monkeypatch):
    inst = load("sow/t4")
    certified = exact.exact_sow(inst, verify=True)
    assert certified.status is Status.OPTIMAL and certified.verified is True
    monkeypatch.setattr(exact, "solve", _second_solve(Status.NO_SOLUTION, None))
    report = exact.exact_sow(inst, verify=True)
    assert report.status is Status.OPTIMAL and report.verified is None
    assert report.objective == certified.objective and "not cross-certified" in report.message


def test_a_second_solve_proving_a_lower_optimum_is_a_disagreement(monkeypatch):
    inst = load("sow/t4")
    monkeypatch.setattr(exact, "solve", _second_solve(Status.OPTIMAL, -1.0))
    report = exact.exact_sow(inst, verify=True)
    assert report.status is Status.DISAGREE and report.verified is False and "disagree" in report.message


class _Runs:
    class realizations:   # noqa: N801 (the attribute's name in a run set)
        weights = np.array([0.5, 0.5])
        exact = True

        def __len__(self):
            return 2
    realizations = realizations()

    def welfare(self):
        return np.array([1.0, 2.0])


def test_the_paired_interval_needs_every_realization_proven():
    values = np.array([2.0, 3.0])
    proven = SolveReport(Status.OPTIMAL, 2.5, 2.5, 0.0, 0.0, 0.0, "highs", False, schedule=values)
    assert not math.isnan(paired_columns(proven, _Runs())["ratio_ci_low"])
    stopped = SolveReport(Status.FEASIBLE, 2.5, 4.0, 0.6, 0.0, 0.0, "highs", False, schedule=values)
    assert all(math.isnan(v) for v in paired_columns(stopped, _Runs()).values())
