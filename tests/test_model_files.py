"""Model files as an adversary writes them (tests/data/hostile/models): every solver status maps to
one Status with each solver alone and with both, no solver's infinity is printed as a number, and
files that hold no usable linear model are one line and exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest

import mlsched.solve as solve_module
from mlsched.cli import main
from mlsched.errors import UsageError
from mlsched.model_files import ModelArrays, read_model_file, solve_model_file
from mlsched.solve import FileSolve, Status, exact_highs, highs_file_solve, scip_file_solve

HOSTILE = Path(__file__).resolve().parent / "data" / "hostile" / "models"
U, I, IOU = Status.UNBOUNDED, Status.INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED

# file: HiGHS (presolve on), HiGHS (presolve off), SCIP, the cross-certified status, its objective
ANSWERS = {
    "unbounded-max.lp": (U, U, U, U, None),
    "unbounded-min-free.lp": (U, U, U, U, None),
    "unbounded-integer.lp": (IOU, U, U, U, None),
    "infeasible.lp": (I, I, I, I, None),
    "infeasible-integer.lp": (I, I, I, I, None),
    "infeasible-with-a-ray.lp": (I, I, IOU, I, None),
    "empty-model.lp": (Status.OPTIMAL,) * 4 + (0.0,),
    "empty-model-constant.lp": (Status.OPTIMAL,) * 4 + (3.0,),
    "semi-continuous.lp": (Status.OPTIMAL,) * 4 + (5.0,),
    "semi-continuous-zero.lp": (Status.OPTIMAL,) * 4 + (1.0,),
    "semi-continuous-gap.lp": (Status.OPTIMAL,) * 4 + (4.0,),
}

REFUSED = {
    "garbage.lp": "not a model file: an .lp file opens with its objective sense",
    "binary-garbage.lp": "not a model file",
    "instance-text.lp": "not a model file",
    "only-end.lp": "not a model file",
    "empty.lp": "is empty (no model)",
    "blank.lp": "is empty (no model)",
    "garbage.mps": "not a model file: an .mps file opens with a NAME, ROWS or OBJSENSE section",
    "truncated.mps": "HiGHS cannot read this model file",
    "nan-objective.lp": "HiGHS cannot read this model file",
    "nan-objective.mps": "objective coefficient of x is NaN",
    "huge-objective.lp": "objective coefficient of x is infinite",
    "huge-row-coefficient.lp": "HiGHS cannot read this model file",
    "quadratic-objective.lp": "the objective is quadratic",
    "quadratic-product.lp": "the objective is quadratic",
    "quadratic-constraint.lp": "HiGHS cannot read this model file",
    "non-utf8-name.lp": "a column or row name is not UTF-8 text",
}


READ_DIFFERENTLY = ("binary-over-bounds.lp", "binary-with-bounds-2-10.lp")   # tested one by one below


def test_every_hostile_model_file_has_an_expected_answer():
    assert {p.name for p in HOSTILE.iterdir()} == set(ANSWERS) | set(REFUSED) | set(READ_DIFFERENTLY)


def highs_alone(path: Path, presolve: bool) -> FileSolve:
    h = exact_highs(None, presolve=presolve)
    h.readModel(str(path))
    h.run()
    return highs_file_solve(h, "highs")


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_each_solver_alone(name):
    path = HOSTILE / name
    on, off, scip, _, objective = ANSWERS[name]
    claims = [(highs_alone(path, True), on), (highs_alone(path, False), off)]
    if solve_module.scip_available():
        claims.append((scip_file_solve(path, None), scip))
    for claim, expected in claims:
        assert claim.status is expected, (claim.solver, claim.status)
        if expected is Status.OPTIMAL:
            assert claim.objective == pytest.approx(objective) and claim.bound == pytest.approx(objective)
        else:
            assert claim.objective is None and claim.bound is None


@pytest.mark.parametrize("verifier", ["scip", "highs(presolve off)"])
@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_both_solvers_together(name, verifier, monkeypatch):
    if verifier == "scip" and not solve_module.scip_available():
        pytest.skip("pyscipopt is not installed")
    monkeypatch.setattr(solve_module, "scip_available", lambda: verifier == "scip")
    on, _, _, joint, objective = ANSWERS[name]
    report = solve_model_file(HOSTILE / name, verify=True)
    assert report.status is joint and report.verified is True and report.verifier == verifier
    if joint is Status.OPTIMAL:
        assert report.objective == pytest.approx(objective) and report.bound == pytest.approx(objective)
    else:
        assert report.objective is None and report.bound is None and report.gap is None
    alone = solve_model_file(HOSTILE / name, verify=False)
    assert alone.status is on and alone.verified is None


@pytest.mark.parametrize("name", sorted(ANSWERS))
def test_cli_never_prints_a_solvers_infinity(name, capsys):
    code = main(["solve", str(HOSTILE / name)])
    out, err = capsys.readouterr()
    assert code == (0 if ANSWERS[name][3] is Status.OPTIMAL else 1) and err == ""
    assert out.startswith(f"status {ANSWERS[name][3].value}, ") and out.count("\n") == 1
    for infinity in ("1e+20", "-1e+20", "inf", "nan"):
        assert infinity not in out.replace("infeasible", "")


@pytest.mark.parametrize("verify", ["--verify", "--no-verify"])
@pytest.mark.parametrize("name", sorted(REFUSED))
def test_files_without_a_usable_model_are_one_line_and_exit_2(name, verify, capsys):
    path = HOSTILE / name
    code = main(["solve", str(path), verify])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{path}: {REFUSED[name]}")


def test_scip_read_error_is_one_line_naming_the_file():
    pytest.importorskip("pyscipopt")
    path = HOSTILE / "quadratic-product.lp"
    with pytest.raises(UsageError) as caught:
        scip_file_solve(path, None)
    assert str(caught.value).startswith(f"{path}: SCIP cannot read this model file (Syntax error in line 4")
    assert "\n" not in str(caught.value)


def test_a_binary_column_with_bounds_2_to_10_is_refused_by_scip_in_one_line(capsys):
    """HiGHS keeps the bounds of a column declared binary (optimum 6 with x = 2); SCIP's binary
    [2, 1] is an error in its input data, which used to escape as a bare Exception."""
    pytest.importorskip("pyscipopt")
    path = HOSTILE / "binary-with-bounds-2-10.lp"
    assert main(["solve", str(path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == f"{path}: SCIP rejects the model's data (invalid bounds [2,1] for binary variable <t_x>)\n"
    alone = solve_model_file(path, verify=False)
    assert alone.status is Status.OPTIMAL and alone.objective == pytest.approx(6.0)


def test_a_file_the_solvers_read_differently_is_never_verified():
    """`binary` over explicit bounds [0, 3]: an integer in [0, 3] to HiGHS 1.16 (3), a binary to
    SCIP (1). Unless the readings agree, the answer is DISAGREE, never a verified optimum."""
    pytest.importorskip("pyscipopt")
    report = solve_model_file(HOSTILE / "binary-over-bounds.lp", verify=True)
    if report.status is Status.OPTIMAL:   # a build that reads `binary` as SCIP does
        assert report.objective == pytest.approx(1.0) and report.verified is True
    else:
        assert report.status is Status.DISAGREE and report.verified is False
        assert report.message == "solvers disagree: highs says 3, scip says 1"


def test_a_verifier_claiming_an_optimum_of_an_unbounded_model_is_a_disagreement(monkeypatch):
    monkeypatch.setattr(solve_module, "solve_lp_file",
                        lambda path, limit: FileSolve(Status.OPTIMAL, 1.0, 1.0, "scip", {"x": 1.0, "y": 0.0}))
    report = solve_model_file(HOSTILE / "unbounded-max.lp", verify=True)
    assert report.status is Status.DISAGREE and report.verified is False
    assert report.objective == 1.0 and report.bound is None       # the checked point; no finite bound is safe
    assert report.message == "solvers disagree: highs says unbounded, scip says 1"


def test_infeasible_against_unbounded_is_a_disagreement_without_numbers(monkeypatch):
    monkeypatch.setattr(solve_module, "solve_lp_file", lambda path, limit: FileSolve(Status.INFEASIBLE, None, None,
                                                                                      "scip", {}))
    report = solve_model_file(HOSTILE / "unbounded-max.lp", verify=True)
    assert report.status is Status.DISAGREE and report.objective is None and report.bound is None


def test_time_limited_incumbents_of_both_solvers_are_feasible_not_a_disagreement(monkeypatch):
    # two solvers stopped by the limit with different incumbents: an interval, not a contradiction
    path = Path(__file__).resolve().parent / "regressions" / "highs-presolve-wrong-optimum.lp"
    truth = 28.12356091
    own = solve_model_file(path, verify=False)
    values = dict.fromkeys(ModelArrays.of(read_model_file(path, None).getLp()).names, 0.0)
    monkeypatch.setattr(solve_module, "solve_lp_file",
                        lambda p, limit: FileSolve(Status.FEASIBLE, 0.0, 40.0, "scip", values))
    report = solve_model_file(path, verify=True)
    assert own.status is Status.OPTIMAL
    assert report.status is Status.FEASIBLE and report.verified is False
    assert report.objective == pytest.approx(truth, rel=1e-8) and report.bound == pytest.approx(40.0)


def test_semi_continuous_zero_is_a_solution_and_a_value_between_is_not():
    model = ModelArrays.of(read_model_file(HOSTILE / "semi-continuous-zero.lp", None).getLp())
    assert model.problems(FileSolve(Status.OPTIMAL, 1.0, 1.0, "x", {"x": 0.0, "y": 1.0})) == 0
    assert model.problems(FileSolve(Status.OPTIMAL, 7.0, 7.0, "x", {"x": 2.0, "y": 1.0})) == 0
    assert model.problems(FileSolve(Status.OPTIMAL, 3.0, 3.0, "x", {"x": 1.0, "y": 0.0})) == 1   # 0 < x < 2
    assert model.problems(FileSolve(Status.OPTIMAL, 0.5, 0.5, "x", {"x": 0.0, "y": 0.5})) == 1   # row c
    assert model.problems(FileSolve(Status.OPTIMAL, 1.0, 1.0, "x", {"y": 1.0})) == 1               # x has no value


class _Counting:
    """A HiGHS object (or one of its models) that counts what is asked of it."""

    def __init__(self, inner, counts):
        self._inner, self._counts = inner, counts

    def __getattr__(self, name):
        self._counts[name] = self._counts.get(name, 0) + 1
        value = getattr(self._inner, name)
        if name == "getLp":
            return lambda: _Counting(value(), self._counts)
        return value


@pytest.mark.parametrize("verify", [False, True])
def test_solutions_are_read_in_one_call_whatever_the_columns(tmp_path, monkeypatch, verify):
    """Reading a solution once per column copied HiGHS's whole name list per column (quadratic:
    95 s after a 5 s solve of 24,846 columns). The calls made of HiGHS must not grow with the columns."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("speed", Path(__file__).resolve().parents[1] / "benchmarks" /
                                                  "model_file_speed.py")
    speed = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(speed)
    real = solve_module.exact_highs
    calls = []
    for columns in (20, 2000):
        counts: dict[str, int] = {}
        monkeypatch.setattr(solve_module, "exact_highs", lambda *a, counts=counts, **k: _Counting(real(*a, **k), counts))
        monkeypatch.setattr(solve_module, "scip_available", lambda: False)   # the HiGHS verifier counts too
        report = solve_model_file(speed.write_choice(tmp_path / f"c{columns}.lp", columns), verify=verify)
        assert report.status is Status.OPTIMAL
        calls.append(counts)
    assert calls[0] == calls[1] and calls[0]["col_names_"] <= 6
