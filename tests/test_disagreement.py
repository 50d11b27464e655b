"""The disagreement path, tested without a defective solver build: the verifier is replaced by one
that is wrong on purpose, and mlsched must report DISAGREE with the checked solution, the safer
bound, one warning line and exit 1 — never the wrong claim as an answer."""

from __future__ import annotations

from pathlib import Path

import pytest

import mlsched.solve as solve_module
from mlsched.cli import main
from mlsched.formulations import oasis
from mlsched.instance import load
from mlsched.model_files import solve_model_file
from mlsched.solve import Status, solve

ROOT = Path(__file__).resolve().parents[1]
T1 = ROOT / "tests" / "data" / "t1.json"        # OPT 27 (spec oracle T1)
MODEL = ROOT / "tests" / "regressions" / "highs-presolve-wrong-optimum.lp"   # brute-force optimum 28.1235609...
MODEL_TRUTH = 28.12356091


def wrong_verifier(monkeypatch, status: Status, objective: float | None, values: dict[str, float] | None = None):
    """Every cross-certification now asks a verifier that answers ``objective`` with ``values``."""
    claim = solve_module.FileSolve(status, objective, objective, "scip", values or {})
    monkeypatch.setattr(solve_module, "solve_lp_file", lambda path, time_limit: claim)


def test_verifier_claiming_a_better_optimum_without_a_solution_is_not_believed(monkeypatch):
    wrong_verifier(monkeypatch, Status.OPTIMAL, 40.0)
    report = solve(oasis.build(load(T1)), verify=True)
    assert report.status is Status.DISAGREE and report.verified is False
    assert report.objective == pytest.approx(27)          # HiGHS's checked solution, not the claim
    assert report.bound == pytest.approx(40)              # the safer of the two bounds
    assert report.verifier_objective == 40.0
    assert report.message == "solvers disagree: highs says 27, scip says 40"


def test_verifier_claiming_a_better_optimum_with_a_solution_that_scores_less_is_not_believed(monkeypatch):
    built = oasis.build(load(T1))
    names = [v.name for v in built.model.component_data_objects(solve_module.pyo.Var, active=True)]
    # a complete assignment (all zeros: feasible, scores 0) sold as a 40
    wrong_verifier(monkeypatch, Status.OPTIMAL, 40.0, dict.fromkeys(names, 0.0))
    report = solve(built, verify=True)
    assert report.status is Status.DISAGREE and report.objective == pytest.approx(27)


def test_verifier_claiming_a_worse_optimum(monkeypatch):
    wrong_verifier(monkeypatch, Status.OPTIMAL, 25.0)
    report = solve(oasis.build(load(T1)), verify=True)
    assert report.status is Status.DISAGREE
    assert report.objective == pytest.approx(27) and report.bound == pytest.approx(27)


def test_verifier_claiming_infeasible_contradicts(monkeypatch):
    wrong_verifier(monkeypatch, Status.INFEASIBLE, None)
    report = solve(oasis.build(load(T1)), verify=True)
    assert report.status is Status.DISAGREE and report.verified is False
    assert report.objective == pytest.approx(27)
    assert "verifier scip: infeasible" in report.message


def test_model_file_disagreement_interval(monkeypatch):
    wrong_verifier(monkeypatch, Status.OPTIMAL, 30.0)
    report = solve_model_file(MODEL, verify=True)
    assert report.status is Status.DISAGREE and not report.verified
    assert report.objective == pytest.approx(MODEL_TRUTH, rel=1e-8)
    assert report.bound == pytest.approx(30.0)
    assert report.message.startswith("solvers disagree: highs says 28.1235609")
    assert report.message.endswith("scip says 30")


@pytest.mark.parametrize("target, objective", [(MODEL, "28.1235609"), (T1, "27")])
def test_cli_reports_disagreement_in_one_line_and_exits_1(monkeypatch, capsys, target, objective):
    wrong_verifier(monkeypatch, Status.OPTIMAL, 30.0)
    code = main(["solve", str(target), "--verify"])
    out, _ = capsys.readouterr()
    assert code == 1 and out.count("\n") == 1
    assert out.startswith("WARNING solvers disagree: highs says")
    assert f"objective {objective}" in out and "bound 30," in out and "verified by scip: NO" in out
