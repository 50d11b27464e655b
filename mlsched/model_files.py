"""Model files (``.lp``, ``.mps``): read, refused or solved by two solvers, every answer checked.

``solve_model_file`` answers for a linear or integer-linear program written by anyone, so it
trusts neither the file nor the solvers:

- The file must declare a model (an ``.lp`` file opens with its objective sense, an ``.mps`` file
  with a NAME, ROWS or OBJSENSE section), HiGHS must read it, its names must be UTF-8 text, its
  objective must be linear, and every cost and matrix coefficient must be a number below the
  solvers' infinity (1e20; HiGHS reads larger ones as infinite) with no NaN bound. Anything else is a :class:`UsageError`: one
  line naming the file (exit 2 in the CLI), before any solve.
- HiGHS solves it (default options, zero MIP gaps) and, with ``verify``, the independent solver
  of :func:`mlsched.solve.solve_lp_file` too, each within its share of one time limit.
- Each solver's claim is a :class:`Status`. A solution counts only if it gives every column a
  value within its bounds (a semi-continuous column may also be 0), holds every row and
  integrality, and scores what the solver claims (:meth:`ModelArrays.problems`); the
  objective reported is the best counted solution.
- Two claims are reconciled as follows: the same optimum (within 1e-7 relative) is OPTIMAL,
  verified; two claims of no finite optimum that fit together are that claim, verified (the more
  specific of "infeasible or unbounded" and "infeasible" or "unbounded"); an optimum against a
  different optimum, or against a claim of no finite optimum, or "infeasible" against
  "unbounded", is DISAGREE; a time-limited incumbent is FEASIBLE. The bound is the safer one,
  and none when either solver claims the model unbounded.

A solver's infinity is never reported as a value: it is no objective and no bound.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mlsched import solve as solvers
from mlsched.errors import UsageError
from mlsched.solve import (
    EXACT_REL_GAP,
    HIGHS_SHARE_WHEN_VERIFYING,
    NO_FINITE_OPTIMUM,
    SOLVER_INF,
    FileSolve,
    SolveReport,
    Status,
    TimeBudget,
    better,
    close,
    relative_gap,
    safer_bound,
)
from mlsched.solver_watch import run_watched

SOLVED = (Status.OPTIMAL, Status.FEASIBLE)
ROW_TOL = 1e-6   # relative to max(1, |side|): the solvers' feasibility tolerances are 1e-7..1e-6
LP_SENSES = {"max", "maximize", "maximise", "maximum", "min", "minimize", "minimise", "minimum"}
MPS_SECTIONS = {"NAME", "ROWS", "OBJSENSE", "OBJSENCE"}


def solve_model_file(path: str | Path, *, time_limit: float | None = None, verify: bool = True) -> SolveReport:
    """Solve an ``.lp`` / ``.mps`` file with HiGHS and, with ``verify``, the independent solver;
    ``time_limit`` covers both (HiGHS gets HIGHS_SHARE_WHEN_VERIFYING of it when verifying)."""
    source = Path(path)
    budget = TimeBudget(time_limit)
    share = time_limit if time_limit is None or not verify else time_limit * HIGHS_SHARE_WHEN_VERIFYING
    h = read_model_file(source, share)
    model = ModelArrays.of(h.getLp())
    tick = time.perf_counter()
    run_watched(h)
    seconds = time.perf_counter() - tick
    own = solvers.highs_file_solve(h, "highs")
    other = solvers.solve_lp_file(source, budget.share()) if verify else None
    return _reconcile(model, own, other, seconds)


def read_model_file(source: Path, time_limit: float | None) -> Any:
    """A HiGHS instance holding the model of ``source``, or a UsageError naming what is wrong."""
    import highspy

    if not source.is_file():
        raise UsageError(f"{source}: file not found")
    if source.suffix.lower() not in (".lp", ".mps"):
        raise UsageError(f"{source}: model files end in .lp or .mps")
    _require_model_header(source)
    h = solvers.exact_highs(time_limit)
    if h.readModel(str(source)) != highspy.HighsStatus.kOk:
        raise UsageError(f"{source}: HiGHS cannot read this model file")
    if h.getModel().hessian_.dim_ > 0:
        raise UsageError(f"{source}: the objective is quadratic; mlsched solves linear and integer-linear model files")
    lp = h.getLp()
    try:
        columns, rows = list(lp.col_names_), list(lp.row_names_)
    except UnicodeDecodeError:   # HiGHS takes any bytes as a name
        raise UsageError(f"{source}: a column or row name is not UTF-8 text") from None
    problem = _number_problem(lp, columns, rows)
    if problem:
        raise UsageError(f"{source}: {problem}")
    return h


def _require_model_header(source: Path) -> None:
    """An empty file, or text that does not open like a model file, is no model (HiGHS reads a
    blank ``.lp`` file as an empty model and SCIP reads garbage as one)."""
    first = _first_word(source)
    if first is None:
        raise UsageError(f"{source}: is empty (no model)")
    if source.suffix.lower() == ".lp":
        if first.rstrip(":").lower() not in LP_SENSES:
            raise UsageError(f"{source}: not a model file: an .lp file opens with its objective sense, "
                             "maximize or minimize")
    elif first.upper() not in MPS_SECTIONS:
        raise UsageError(f"{source}: not a model file: an .mps file opens with a NAME, ROWS or OBJSENSE section")


def _first_word(source: Path) -> str | None:
    """The first word of a model file outside comments (``\\`` to the end of the line and
    ``\\* ... *\\`` blocks in .lp files, lines starting with ``*`` in .mps files); None if there is none."""
    lp = source.suffix.lower() == ".lp"
    in_block = False
    with source.open(encoding="utf-8", errors="replace") as text:
        for line in text:
            if not lp:
                words = [] if line.startswith("*") else line.split()
                if words:
                    return words[0]
                continue
            while line:
                if in_block:
                    _, closed, line = line.partition("*\\")
                    in_block = not closed
                    continue
                content, backslash, rest = line.partition("\\")
                if content.split():
                    return content.split()[0]
                in_block = bool(backslash) and rest.startswith("*")
                line = rest[1:] if in_block else ""
    return None


def _number_problem(lp: Any, names: list[str], rows: list[str]) -> str | None:
    """The first coefficient or bound a solver cannot take, described; None when all are usable."""
    usable = "coefficients must be finite numbers below 1e20 in magnitude"
    cost = np.asarray(lp.col_cost_, dtype=float)
    bad = np.flatnonzero(~(np.abs(cost) < SOLVER_INF))
    if bad.size:
        return f"objective coefficient of {names[bad[0]]} is {_described(cost[bad[0]])}; {usable}"
    if not abs(lp.offset_) < SOLVER_INF:
        return f"objective constant is {_described(lp.offset_)}; {usable}"
    start, value = np.asarray(lp.a_matrix_.start_), np.asarray(lp.a_matrix_.value_, dtype=float)
    bad = np.flatnonzero(~(np.abs(value) < SOLVER_INF))
    if bad.size:
        column = names[int(np.searchsorted(start, bad[0], side="right") - 1)]
        row = rows[int(np.asarray(lp.a_matrix_.index_)[bad[0]])]
        return f"coefficient of {column} in row {row} is {_described(value[bad[0]])}; {usable}"
    for side, what in (("col_lower_", "lower bound"), ("col_upper_", "upper bound"),
                       ("row_lower_", "lower side"), ("row_upper_", "upper side")):
        bound = np.asarray(getattr(lp, side), dtype=float)
        bad = np.flatnonzero(np.isnan(bound) | (bound == (np.inf if what.startswith("lower") else -np.inf)))
        if bad.size:
            where = (names if side.startswith("col") else rows)[bad[0]]
            return f"{what} of {where} is {_described(bound[bad[0]])}"
    return None


def _described(value: float) -> str:
    if np.isnan(value):
        return "NaN"
    return f"{value:g}" if np.isfinite(value) else "infinite (HiGHS reads magnitudes of 1e20 and more so)"


@dataclass
class ModelArrays:
    """What a solution of a model file is checked against: the columns (by name, in the file's
    order), their bounds and kinds, the rows in compressed-column form and the objective."""

    sense: str
    names: list[str]
    cost: np.ndarray
    offset: float
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    nz_column: np.ndarray
    nz_row: np.ndarray
    nz_value: np.ndarray
    kind: np.ndarray   # HiGHS's variable types: 0 continuous, 1 integer, 2 semi-continuous, 3 semi-integer

    @classmethod
    def of(cls, lp: Any) -> ModelArrays:
        import highspy

        start = np.asarray(lp.a_matrix_.start_)
        kind = np.array([int(k) for k in lp.integrality_], dtype=int) if len(lp.integrality_) else np.zeros(lp.num_col_, int)
        return cls(sense="max" if lp.sense_ == highspy.ObjSense.kMaximize else "min", names=list(lp.col_names_),
                   cost=np.asarray(lp.col_cost_, dtype=float), offset=float(lp.offset_),
                   col_lower=np.asarray(lp.col_lower_, dtype=float), col_upper=np.asarray(lp.col_upper_, dtype=float),
                   row_lower=np.asarray(lp.row_lower_, dtype=float), row_upper=np.asarray(lp.row_upper_, dtype=float),
                   nz_column=np.repeat(np.arange(lp.num_col_), np.diff(start)),
                   nz_row=np.asarray(lp.a_matrix_.index_, dtype=np.int64), nz_value=np.asarray(lp.a_matrix_.value_, dtype=float),
                   kind=kind)

    @property
    def relaxed(self) -> bool:
        return not self.kind.any()

    def problems(self, claim: FileSolve) -> int:
        """How many ways ``claim``'s solution fails the model: a column without a value, a bound,
        row or integrality violated, or an objective other than the one claimed."""
        values = claim.values
        missing = sum(1 for name in self.names if name not in values)
        x = np.array([values.get(name, 0.0) for name in self.names], dtype=float)
        activity = np.bincount(self.nz_row, weights=self.nz_value * x[self.nz_column], minlength=len(self.row_lower))
        bad = _outside(activity, self.row_lower, self.row_upper)
        semi = (self.kind == 2) | (self.kind == 3)
        off_bounds = (x < self.col_lower - ROW_TOL * np.maximum(1, np.abs(self.col_lower))) | \
                     (x > self.col_upper + ROW_TOL * np.maximum(1, np.abs(self.col_upper)))
        bad += int(np.sum(off_bounds & ~(semi & (np.abs(x) <= ROW_TOL))))
        integer = (self.kind == 1) | (self.kind == 3) | (self.kind == 4)
        bad += int(np.sum(integer & (np.abs(x - np.round(x)) > ROW_TOL)))
        rescored = float(self.cost @ x + self.offset)
        return missing + bad + int(claim.objective is None or not close(rescored, claim.objective))


def _outside(values: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> int:
    with np.errstate(invalid="ignore"):
        return int(np.sum(values < lower - ROW_TOL * np.maximum(1, np.abs(lower)))
                   + np.sum(values > upper + ROW_TOL * np.maximum(1, np.abs(upper))))


def _reconcile(model: ModelArrays, own: FileSolve, other: FileSolve | None, seconds: float) -> SolveReport:
    """One report from HiGHS's claim and the verifier's (None without verification)."""
    status, verified, message = (own.status, None, own.message) if other is None else _verdict(own, other)
    claims = [own] if other is None else [own, other]
    best = None
    for claim in claims:
        if claim.status in SOLVED and model.problems(claim) == 0 and (
                best is None or better(model.sense, claim.objective, best.objective)):
            best = claim
    if status in SOLVED and best is None:
        status, message = Status.ERROR, "no solver's solution holds the file's rows, bounds and integrality"
    objective = best.objective if best is not None and status in (*SOLVED, Status.DISAGREE) else None
    no_bound = status in NO_FINITE_OPTIMUM or any(
        c.status in (Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED) for c in claims)
    bound = None if no_bound else safer_bound(model.sense, *(c.bound for c in claims))
    gap = relative_gap(objective, bound)
    if status is Status.OPTIMAL and gap is not None and gap > EXACT_REL_GAP:
        status, verified = Status.FEASIBLE, False
        message = message or f"proven interval has relative gap {gap:.2g}"
    fields: dict[str, Any] = {}
    if other is not None:
        fields = dict(verified=verified, verifier=other.solver, verifier_objective=other.objective,
                      verifier_bound=other.bound)
    return SolveReport(status, objective, bound, gap, 0.0, seconds, "highs", relaxed=model.relaxed,
                       message=message, **fields)


def _verdict(own: FileSolve, other: FileSolve) -> tuple[Status, bool, str]:
    """The joint status of two claims, whether they confirm each other, and the message."""
    mine, theirs = own.status, other.status
    disagree = (Status.DISAGREE, False, f"solvers disagree: {own.solver} says {_claim(own)}, "
                                        f"{other.solver} says {_claim(other)}")
    if mine in NO_FINITE_OPTIMUM and theirs in NO_FINITE_OPTIMUM:
        joint = _both_without_optimum(mine, theirs)
        return disagree if joint is None else (joint, True, "")
    if mine in NO_FINITE_OPTIMUM or theirs in NO_FINITE_OPTIMUM:
        if mine in SOLVED or theirs in SOLVED:
            return disagree
        claim = own if mine in NO_FINITE_OPTIMUM else other
        return claim.status, False, f"{claim.solver} alone: {claim.status.value}"
    if mine in SOLVED and theirs in SOLVED:
        if mine is theirs is Status.OPTIMAL:
            return (Status.OPTIMAL, True, "") if close(own.objective, other.objective) else disagree
        return Status.FEASIBLE, False, own.message or other.message
    if theirs in SOLVED:
        return theirs, False, f"{other.solver}'s solution; {own.solver}: {own.message or mine.value}"
    note = f"verifier {other.solver}: {other.message or theirs.value}"
    return mine, False, f"{own.message}; {note}" if own.message else note


def _both_without_optimum(a: Status, b: Status) -> Status | None:
    """Two claims of no finite optimum together: the more specific, or None if they contradict."""
    if a is b:
        return a
    if Status.INFEASIBLE_OR_UNBOUNDED in (a, b):
        return b if a is Status.INFEASIBLE_OR_UNBOUNDED else a
    return None


def _claim(claim: FileSolve) -> str:
    return f"{claim.objective:.10g}" if claim.objective is not None else claim.status.value
