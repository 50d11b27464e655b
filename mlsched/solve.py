"""The one module that talks to solvers.

``solve(built)`` runs HiGHS through Pyomo's ``pyomo.contrib.solver`` interface and returns a
typed :class:`SolveReport`; solver trouble (time limit, infeasibility, numerical failure) is a
status in the report, never an exception. ``verify=True`` re-solves the same model with an
independent solver (SCIP via ``pyscipopt``; HiGHS with presolve off when SCIP is missing) and
reports ``DISAGREE`` when the two optima differ, since a solver's "optimal" is a claim
(HiGHS 1.15.1 with presolve returns a wrong optimum on a 4-job OASiS model).

Exactness: MIPs are solved with ``mip_rel_gap = 0`` and ``mip_abs_gap = 0``; a solve is reported
``OPTIMAL`` only when the final relative gap is at most ``EXACT_REL_GAP`` (1e-9). Otherwise the
incumbent and bound are reported with status ``FEASIBLE`` and studies use the interval.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from enum import Enum
from pathlib import Path
from typing import Any

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.common.results import SolutionStatus, TerminationCondition
from pyomo.contrib.solver.solvers.highs import Highs
from pyomo.core.base.var import VarData

from mlsched.errors import UsageError
from mlsched.fileio import write_text_atomic
from mlsched.solver_watch import PROGRESS_SECONDS, SolverProgress, report_progress, run_watched

EXACT_REL_GAP = 1e-9
AGREE_REL_TOL = 1e-7
VERIFY_MAX_INTEGERS = 5000   # verify="auto": cross-certify integer models up to this many integer variables
HIGHS_SHARE_WHEN_VERIFYING = 0.5   # of a time limit, when a verifier must run within the same limit
MIN_VERIFY_SECONDS = 1.0   # the verifier's floor when HiGHS used up the limit (the stated overshoot)
CLARABEL_RETRY = {"iterative_refinement_reltol": 1e-14}   # Clarabel's default 1e-13, for an inaccurate solve's retry
CROSSED_BOUND_TOL = 1e-6   # HiGHS's bound may sit this far past its own incumbent (its tolerances are 1e-7..1e-6)
_THREADS: int | None = None   # HiGHS threads of every solve in this process (set_solver_threads)
_POOL_THREADS: int | None = None   # the thread count HiGHS's process-wide pool was last started with here


def set_solver_threads(threads: int | None) -> None:
    """Run every later HiGHS solve of this process on ``threads`` threads (None: HiGHS's default).

    Sweeps set 1 in each worker when several workers share the cores. HiGHS keeps one thread pool
    per calling thread and refuses a solve that asks for another thread count than that pool has;
    the next plain solve here restarts the pool with the new count (:func:`_pool_for`). Watched
    solves (:mod:`mlsched.solver_watch`) start a pool of their own each time."""
    global _THREADS
    _THREADS = threads


@contextmanager
def solver_threads(threads: int | None) -> Iterator[None]:
    """HiGHS solves inside the block run on ``threads`` threads (None: the process's setting); the
    process's setting is restored after it."""
    if threads is None:
        yield
        return
    before = _THREADS
    set_solver_threads(threads)
    try:
        yield
    finally:
        set_solver_threads(before)


def _pool_for(threads: int | None) -> None:
    """Restart this thread's HiGHS pool when a plain solve asks for another thread count than it
    was last started with here (HiGHS would refuse the solve, or keep the old pool for None)."""
    global _POOL_THREADS
    if threads != _POOL_THREADS:
        import highspy

        highspy.Highs.resetGlobalScheduler(True)
        _POOL_THREADS = threads


class Status(str, Enum):
    OPTIMAL = "optimal"
    FEASIBLE = "feasible"
    INFEASIBLE = "infeasible"
    UNBOUNDED = "unbounded"
    INFEASIBLE_OR_UNBOUNDED = "infeasible_or_unbounded"   # a solver proved there is no finite optimum, not which case
    NO_SOLUTION = "no_solution"
    ERROR = "error"
    DISAGREE = "disagree"


NO_FINITE_OPTIMUM = (Status.INFEASIBLE, Status.UNBOUNDED, Status.INFEASIBLE_OR_UNBOUNDED)


@dataclass
class Built:
    """A built optimisation model and how to read a schedule back from its loaded solution."""

    model: pyo.ConcreteModel
    name: str
    sense: str
    relaxed: bool
    build_seconds: float
    extract: Callable[[], Any] | None = None
    validate: Callable[[Any], list[str]] | None = None
    load_start: Callable[[Any], None] | None = None   # sets the variables from a feasible schedule (a MIP start)

    @property
    def size(self) -> dict[str, int]:
        variables = list(self.model.component_data_objects(pyo.Var, active=True))
        return {
            "variables": len(variables),
            "integer_variables": sum(1 for v in variables if not v.is_continuous()),
            "constraints": sum(1 for _ in self.model.component_data_objects(pyo.Constraint, active=True)),
        }


@dataclass
class SolveReport:
    status: Status
    objective: float | None
    bound: float | None
    gap: float | None
    build_seconds: float
    solve_seconds: float
    solver: str
    relaxed: bool
    message: str = ""
    verified: bool | None = None
    verifier: str | None = None
    verifier_objective: float | None = None
    verifier_bound: float | None = None
    bound_source: str | None = None      # which bound ``bound`` is: the MILP's own, the LP relaxation, a dual bound
    steps: list[BudgetStep] = field(default_factory=list)   # where a time-limited call spent its time
    schedule: Any = field(default=None, repr=False)

    @property
    def has_solution(self) -> bool:
        return self.objective is not None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(replace(self, schedule=None))
        d.pop("schedule")
        d["status"] = self.status.value
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}


@dataclass
class BudgetStep:
    """One step of a time-limited call: the seconds handed to its solver (None for a step
    without a limit of its own: a build, a check) and the wall seconds it took."""

    name: str
    granted: float | None
    seconds: float


@dataclass
class TimeBudget:
    """The seconds left of one time limit that covers several steps (build, solves, verification),
    with the log of the steps run within it."""

    limit: float | None
    started: float = field(default_factory=time.perf_counter)
    log: list[BudgetStep] = field(default_factory=list)

    def left(self) -> float | None:
        return None if self.limit is None else self.limit - (time.perf_counter() - self.started)

    def share(self, fraction: float = 1.0) -> float | None:
        """``fraction`` of what is left, at least MIN_VERIFY_SECONDS (the stated overshoot)."""
        left = self.left()
        return None if left is None else max(MIN_VERIFY_SECONDS, left * fraction)

    @contextmanager
    def step(self, name: str, fraction: float | None = None) -> Iterator[float | None]:
        """Run a step within the budget, logged: with ``fraction`` it is a solver's step and is
        handed ``share(fraction)`` seconds (yielded); without, a step that has no limit."""
        granted = None if fraction is None else self.share(fraction)
        tick = time.perf_counter()
        try:
            yield granted
        finally:
            self.log.append(BudgetStep(name, granted, time.perf_counter() - tick))

    def granted(self) -> float:
        """The seconds handed to solvers so far."""
        return sum(step.granted for step in self.log if step.granted is not None)


def relative_gap(objective: float | None, bound: float | None) -> float | None:
    if objective is None or bound is None or not math.isfinite(bound):
        return None
    return abs(bound - objective) / max(1.0, abs(objective))


def solve(
    built: Built,
    *,
    time_limit: float | None = None,
    verify: bool | str = False,
    presolve: bool = True,
    threads: int | None = None,
    mip_gap: float = 0.0,
    warm_start: bool = False,
    node_limit: int | None = None,
) -> SolveReport:
    """Solve ``built`` with HiGHS; optionally cross-certify with an independent solver.

    ``warm_start`` hands the values the model's variables hold (see ``Built.load_start``) to
    HiGHS as its first incumbent; HiGHS ignores a start that is not feasible.

    ``verify="auto"`` cross-certifies integer models of at most VERIFY_MAX_INTEGERS integer
    variables; a relaxation is never cross-certified under "auto".

    ``mip_gap`` > 0 lets HiGHS stop at that relative gap (heuristic uses such as the Dorm
    baseline); such a solve is reported FEASIBLE unless its gap is within EXACT_REL_GAP.
    ``node_limit`` stops the branch-and-bound after that many nodes: unlike a time limit, the
    same model then gives the same answer on any machine.
    """
    if time_limit is not None and not time_limit > 0:
        raise UsageError(f"time limit must be > 0 seconds, got {time_limit}")
    started = time.perf_counter()
    if verify == "auto":
        verify = not built.relaxed and built.size["integer_variables"] <= VERIFY_MAX_INTEGERS
    # the time limit covers both solvers: HiGHS gets a share, the verifier what is left
    highs_limit = time_limit if time_limit is None or not verify else time_limit * HIGHS_SHARE_WHEN_VERIFYING
    options: dict[str, Any] = {"mip_rel_gap": mip_gap, "mip_abs_gap": 0.0, "presolve": "on" if presolve else "off"}
    threads = _THREADS if threads is None else threads
    _pool_for(threads)
    if threads is not None:
        options["threads"] = threads
    if node_limit is not None:
        options["mip_max_nodes"] = node_limit
    solver = _WatchedHighs()
    solver.hand_start = warm_start
    tick = time.perf_counter()
    try:
        result = solver.solve(built.model, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                              time_limit=highs_limit, solver_options=options)
    except Exception as exc:  # a solver crash is a status, not a crash of ours
        return SolveReport(Status.ERROR, None, None, None, built.build_seconds, time.perf_counter() - tick,
                           "highs", built.relaxed, message=f"HiGHS failed: {exc}")
    seconds = time.perf_counter() - tick
    report = _report_from_pyomo(built, result, seconds, "highs" + ("" if presolve else "(presolve off)"))
    if verify and report.status in (Status.OPTIMAL, Status.FEASIBLE):
        left = None if time_limit is None else max(MIN_VERIFY_SECONDS, time_limit - (time.perf_counter() - started))
        report = _cross_certify(built, report, left)
    return report


class _WatchedHighs(Highs):
    """Pyomo's HiGHS interface, its solve run by :func:`mlsched.solver_watch.run_watched` (Ctrl-C
    stops it, an active listener hears its progress) and, with ``hand_start``, handed the
    variables' current values as a MIP start."""

    hand_start = False

    def _solve(self):  # type: ignore[no-untyped-def]
        import highspy

        columns = getattr(self, "_pyomo_var_to_solver_var_map", None)
        variables = getattr(self, "_vars", None)
        if self.hand_start and columns and variables:
            values = [0.0] * len(columns)
            for var_id, column in columns.items():
                value = variables[var_id][0].value
                values[column] = 0.0 if value is None else float(value)
            start = highspy.HighsSolution()
            start.col_value = values
            self._solver_model.setSolution(start)
        model = self._solver_model
        plain = model.run
        model.run = lambda: run_watched(model, plain)   # Pyomo's _solve calls run() on it
        try:
            return super()._solve()
        finally:
            del model.run


def _report_from_pyomo(built: Built, result: Any, seconds: float, solver_name: str) -> SolveReport:
    tc = result.termination_condition
    has_incumbent = result.solution_status in (SolutionStatus.optimal, SolutionStatus.feasible)
    objective = result.incumbent_objective if has_incumbent else None
    bound = result.objective_bound
    if bound is not None and not math.isfinite(bound):
        bound = None
    if built.relaxed and tc == TerminationCondition.convergenceCriteriaSatisfied:
        bound = objective
    gap = relative_gap(objective, bound)
    base = dict(build_seconds=built.build_seconds, solve_seconds=seconds, solver=solver_name, relaxed=built.relaxed)
    if tc in (TerminationCondition.provenInfeasible, TerminationCondition.locallyInfeasible):
        return SolveReport(Status.INFEASIBLE, None, None, None, message="the model is infeasible", **base)
    if tc == TerminationCondition.unbounded:
        return SolveReport(Status.UNBOUNDED, None, None, None, message="the model is unbounded", **base)
    if tc == TerminationCondition.infeasibleOrUnbounded:
        return SolveReport(Status.INFEASIBLE_OR_UNBOUNDED, None, None, None,
                           message="the model is infeasible or unbounded", **base)
    if objective is None:
        stop = "time limit" if tc == TerminationCondition.maxTimeLimit else tc.name
        return SolveReport(Status.NO_SOLUTION, None, bound, None, bound_source=None if bound is None else "milp",
                           message=f"stopped ({stop}) without a solution", **base)
    result.solution_loader.load_vars()
    schedule = built.extract() if built.extract else None
    proven = tc == TerminationCondition.convergenceCriteriaSatisfied and (gap is None or gap <= EXACT_REL_GAP)
    if proven:
        bound = objective if bound is None else bound
        return SolveReport(Status.OPTIMAL, objective, bound, gap, schedule=schedule, bound_source="milp", **base)
    stop = "time limit" if tc == TerminationCondition.maxTimeLimit else tc.name
    return SolveReport(Status.FEASIBLE, objective, bound, gap, schedule=schedule,
                       bound_source=None if bound is None else "milp",
                       message=f"stopped ({stop}) with gap {gap if gap is not None else float('nan'):.3g}", **base)


def write_model(built: Built, path: str | Path, *, force: bool = False) -> Path:
    """Write the built model as ``.lp`` or ``.mps`` (by suffix), atomically."""
    target = Path(path)
    suffix = target.suffix.lower()
    if suffix not in (".lp", ".mps"):
        raise UsageError(f"{target}: model files must end in .lp or .mps")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp) / f"model{suffix}"
        built.model.write(str(scratch), io_options={"symbolic_solver_labels": True})
        return write_text_atomic(target, scratch.read_text(), force=force)


def _cross_certify(built: Built, report: SolveReport, time_limit: float | None) -> SolveReport:
    """Re-solve with an independent solver and reconcile the two answers."""
    with tempfile.TemporaryDirectory() as tmp:
        lp = Path(tmp) / "model.lp"
        _, symbol_map_id = built.model.write(str(lp), io_options={"symbolic_solver_labels": True})
        symbol_map = built.model.solutions.symbol_map[symbol_map_id]
        try:
            other = solve_lp_file(lp, time_limit)
        except UsageError:   # the verifier cannot read what Pyomo wrote (coefficients beyond its infinity)
            other = FileSolve(Status.ERROR, None, None, "scip" if scip_available() else "highs(presolve off)", {},
                              message="cannot read the model")
        if other.status is not Status.OPTIMAL and other.status is not Status.FEASIBLE:
            contradicts = other.status in NO_FINITE_OPTIMUM
            return replace(report, status=Status.DISAGREE if contradicts else report.status, verified=False,
                           verifier=other.solver,
                           message=(report.message + f"; verifier {other.solver}: {other.status.value}").lstrip("; "))
        agree = close(report.objective, other.objective) and report.status == other.status == Status.OPTIMAL
        if agree or report.status is Status.FEASIBLE or other.status is Status.FEASIBLE:
            return _merge(built, report, other, symbol_map, agree=agree)
        return _disagree(built, report, other, symbol_map)


def close(a: float | None, b: float | None) -> bool:
    return a is not None and b is not None and abs(a - b) <= AGREE_REL_TOL * max(1.0, abs(a), abs(b))


def better(sense: str, a: float, b: float) -> bool:
    return a > b if sense == "max" else a < b


def _load_other(built: Built, other: FileSolve, symbol_map: Any) -> tuple[Any, list[str]]:
    """Load the verifier's solution into the Pyomo model and check it independently: it must give
    every variable a value, score what the verifier claims, and its schedule must pass the checker."""
    loaded = 0
    for name, value in other.values.items():
        var = symbol_map.bySymbol.get(name)
        if var is not None:
            var.set_value(value, skip_validation=True)
            loaded += 1
    expected = sum(1 for obj in symbol_map.bySymbol.values() if isinstance(obj, VarData))
    if loaded < expected:
        return None, [f"{other.solver} gave values for {loaded} of {expected} variables"]
    objective = next(built.model.component_data_objects(pyo.Objective, active=True))
    rescored = pyo.value(objective)
    if other.objective is None or not close(rescored, other.objective):
        return None, [f"{other.solver}'s solution scores {rescored:.10g}, not the {other.objective} it claims"]
    schedule = built.extract() if built.extract else None
    problems = built.validate(schedule) if built.validate and schedule is not None else []
    return schedule, problems


SOLVER_INF = 1e20  # HiGHS and SCIP report unbounded values at or beyond this magnitude


def safer_bound(sense: str, *bounds: float | None) -> float | None:
    """The loosest of the solvers' bounds: valid as long as either solver's bound is. A solver's
    infinity (magnitude >= SOLVER_INF) is no bound and never replaces a finite one."""
    known = [b for b in bounds if b is not None and abs(b) < SOLVER_INF]
    if not known:
        return None
    return max(known) if sense == "max" else min(known)


def _adopt_if_better(built: Built, report: SolveReport, other: FileSolve, symbol_map: Any) -> SolveReport:
    """Take the verifier's solution when it is better and its schedule passes the checker."""
    assert report.objective is not None and other.objective is not None
    if better(built.sense, other.objective, report.objective):
        schedule, problems = _load_other(built, other, symbol_map)
        if not problems:
            return replace(report, objective=other.objective, schedule=schedule)
    return report


def _merge(built: Built, report: SolveReport, other: FileSolve, symbol_map: Any, *, agree: bool) -> SolveReport:
    """Both solvers found solutions that do not contradict each other (``agree``: both claim the
    same optimum within AGREE_REL_TOL). Keep the better checked solution and the safer bound; the
    result is OPTIMAL only if they are within EXACT_REL_GAP and both solvers proved optimality."""
    report = _adopt_if_better(built, report, other, symbol_map)
    safer = safer_bound(built.sense, report.bound, other.bound)
    gap = relative_gap(report.objective, safer)
    proven = agree and (gap is None or gap <= EXACT_REL_GAP)
    message = "" if proven else (report.message or f"proven interval has relative gap {gap if gap is not None else float('nan'):.2g}")
    return replace(report, status=Status.OPTIMAL if proven else Status.FEASIBLE, bound=safer, gap=gap,
                   verified=agree, verifier=other.solver, verifier_objective=other.objective,
                   verifier_bound=other.bound, message=message)


def _disagree(built: Built, report: SolveReport, other: FileSolve, symbol_map: Any) -> SolveReport:
    """Both claim different optima: report the best solution that passes the checker (either
    solver's) and the safer bound, with status DISAGREE."""
    assert report.objective is not None and other.objective is not None
    claimed = report.objective
    own_ok = report.schedule is not None and not (built.validate(report.schedule) if built.validate else [])
    if not own_ok:
        report = replace(report, objective=None, schedule=None)
    other_schedule, other_problems = _load_other(built, other, symbol_map)
    if not other_problems and (report.objective is None or better(built.sense, other.objective, report.objective)):
        report = replace(report, objective=other.objective, schedule=other_schedule)
    safer = safer_bound(built.sense, report.bound, other.bound)
    message = (f"solvers disagree: {report.solver} says {claimed:.10g}, "
               f"{other.solver} says {other.objective:.10g}")
    return replace(report, status=Status.DISAGREE, bound=safer, gap=relative_gap(report.objective, safer),
                   verified=False, verifier=other.solver, verifier_objective=other.objective,
                   verifier_bound=other.bound, message=message)


@dataclass
class FileSolve:
    """One solver's claim about a model file: a status, an incumbent with its values by column
    name, and a bound; a solver's infinity is never a value here (it reads as None)."""

    status: Status
    objective: float | None
    bound: float | None
    solver: str
    values: dict[str, float]
    message: str = ""


def finite(value: float | None) -> float | None:
    """``value``, or None when it is missing, NaN or a solver's infinity (magnitude >= SOLVER_INF)."""
    return value if value is not None and math.isfinite(value) and abs(value) < SOLVER_INF else None


def scip_available() -> bool:
    try:
        import pyscipopt  # noqa: F401
    except ImportError:
        return False
    return True


def solve_lp_file(path: Path, time_limit: float | None) -> FileSolve:
    """The independent solver's answer on a model file: SCIP, or HiGHS with presolve off."""
    import highspy

    if scip_available():
        report_progress(SolverProgress(0.0, where="SCIP", note="verifying"))   # SCIP reports nothing as it runs
        return scip_file_solve(path, time_limit)
    h = exact_highs(time_limit, presolve=False)
    if h.readModel(str(path)) != highspy.HighsStatus.kOk:
        raise UsageError(f"{path}: HiGHS cannot read this model file")
    run_watched(h)
    return highs_file_solve(h, "highs(presolve off)")


_SCIP_NO_FINITE_OPTIMUM = {"infeasible": Status.INFEASIBLE, "unbounded": Status.UNBOUNDED,
                           "inforunbd": Status.INFEASIBLE_OR_UNBOUNDED}


def scip_file_solve(path: Path, time_limit: float | None) -> FileSolve:
    """SCIP on a model file (gaps 0). Its solution is read in one pass over the columns."""
    import pyscipopt

    model = pyscipopt.Model()
    model.hideOutput()
    with _silenced(2) as said:   # SCIP prints its parser's complaints on stderr
        try:
            model.readProblem(str(path))
            read = True
        except OSError:
            read = False
    if not read:
        raise UsageError(f"{path}: SCIP cannot read this model file{_first_error(said)}")
    model.setParam("limits/gap", 0.0)
    model.setParam("limits/absgap", 0.0)
    if time_limit is not None:
        model.setParam("limits/time", float(time_limit))
    # a caught Ctrl-C is announced on stdout (which would corrupt --json output), errors on stderr
    with _silenced(1), _silenced(2) as said:
        try:
            model.optimize()
            solved = True
        except Exception:   # pyscipopt raises a bare Exception for SCIP's error codes
            solved = False
            del model   # freed here, where its complaints about the aborted solve stay silent
    if not solved:
        raise UsageError(f"{path}: SCIP rejects the model's data{_first_error(said)}")
    status = model.getStatus()
    if status == "userinterrupt":  # SCIP caught the user's Ctrl-C: an interrupt, not a result
        raise KeyboardInterrupt
    if status in _SCIP_NO_FINITE_OPTIMUM:
        return FileSolve(_SCIP_NO_FINITE_OPTIMUM[status], None, None, "scip", {})
    bound = finite(model.getDualbound())
    objective = finite(model.getObjVal()) if model.getNSols() else None
    if objective is None:
        return FileSolve(Status.NO_SOLUTION, None, bound, "scip", {}, message=f"stopped ({status}) without a solution")
    best = model.getBestSol()
    values = {v.name: best[v] for v in model.getVars()}
    gap = relative_gap(objective, bound)
    proven = status == "optimal" and (gap is None or gap <= EXACT_REL_GAP)
    return FileSolve(Status.OPTIMAL if proven else Status.FEASIBLE, objective, bound, "scip", values,
                     message="" if proven else f"stopped ({status})")


def highs_file_solve(h: Any, name: str) -> FileSolve:
    """The claim of a HiGHS instance that has run. Every model status maps to a :class:`Status`:
    infeasible, unbounded and infeasible-or-unbounded as they are; an empty model (no columns) has
    the objective's constant as its optimum when its rows hold 0, else it is infeasible; a
    solver error is ERROR. The solution is read in one call (names and values, once each)."""
    import highspy

    status = h.getModelStatus()
    kinds = highspy.HighsModelStatus
    verdict = _without_a_point(h)
    if verdict is not None:
        return FileSolve(verdict[0], verdict[1], verdict[1], name, {}, message=verdict[2])
    text = h.modelStatusToString(status)
    if status in (kinds.kModelError, kinds.kLoadError, kinds.kPresolveError, kinds.kSolveError,
                  kinds.kPostsolveError, kinds.kMemoryLimit):
        return FileSolve(Status.ERROR, None, None, name, {}, message=f"HiGHS: {text}")
    info = h.getInfo()
    ran_mip = info.mip_node_count >= 0
    bound = finite(info.mip_dual_bound) if ran_mip else None
    objective = finite(info.objective_function_value)
    if info.primal_solution_status != highspy.SolutionStatus.kSolutionStatusFeasible or objective is None:
        return FileSolve(Status.NO_SOLUTION, None, bound, name, {}, message=f"stopped ({text}) without a solution")
    if not ran_mip and status == kinds.kOptimal:
        bound = objective
    values = dict(zip(h.getLp().col_names_, h.getSolution().col_value))
    gap = relative_gap(objective, bound)
    proven = status == kinds.kOptimal and (gap is None or gap <= EXACT_REL_GAP)
    return FileSolve(Status.OPTIMAL if proven else Status.FEASIBLE, objective, bound, name, values,
                     message="" if proven else f"stopped ({text})")


def _without_a_point(h: Any) -> tuple[Status, float | None, str] | None:
    """(status, objective, message) of a HiGHS run that has no point to read: infeasible,
    unbounded and infeasible-or-unbounded as they are; an empty model (no columns, every row's
    activity 0) optimal at its objective's constant when its rows hold 0, else infeasible (HiGHS's
    "empty model" checks no row). None otherwise."""
    import highspy

    status = h.getModelStatus()
    kinds = highspy.HighsModelStatus
    no_finite = {kinds.kInfeasible: Status.INFEASIBLE, kinds.kUnbounded: Status.UNBOUNDED,
                 kinds.kUnboundedOrInfeasible: Status.INFEASIBLE_OR_UNBOUNDED}
    if status in no_finite:
        return no_finite[status], None, ""
    if status == kinds.kModelEmpty:
        lp = h.getLp()
        if np.all(np.asarray(lp.row_lower_) <= 0) and np.all(np.asarray(lp.row_upper_) >= 0):
            return Status.OPTIMAL, float(lp.offset_), ""
        return Status.INFEASIBLE, None, "a row without columns excludes 0"
    return None


@dataclass
class ArrayProgram:
    """A linear program in arrays for HiGHS's direct interface (hot per-round re-solves where
    Pyomo's per-solve overhead dominates; the Pyomo model stays the inspectable form):
    optimise ``cost @ x + offset`` s.t. ``row_lower <= A x <= row_upper`` and
    ``col_lower <= x <= col_upper``, with A in compressed-column form (``a_start``, ``a_index``,
    ``a_value``). ``integer`` False is the LP (every column continuous); True makes the columns
    integer, all of them or, when ``integer_columns`` is given, those it marks (a mixed program;
    ``replace(program, integer=False)`` is still its LP relaxation)."""

    cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    a_start: np.ndarray
    a_index: np.ndarray
    a_value: np.ndarray
    integer: bool = True
    sense: str = "max"
    integer_columns: np.ndarray | None = None   # bool per column, read only when ``integer``
    offset: float = 0.0

    @property
    def integrality(self) -> np.ndarray:
        """Per column: True where the column is integer."""
        if not self.integer:
            return np.zeros(len(self.cost), dtype=bool)
        if self.integer_columns is None:
            return np.ones(len(self.cost), dtype=bool)
        return np.asarray(self.integer_columns, dtype=bool)

    @property
    def matrix(self) -> Any:
        """A as a SciPy compressed-column matrix (one row per row, one column per column)."""
        import scipy.sparse as sp

        return sp.csc_matrix((self.a_value, self.a_index, self.a_start), shape=(len(self.row_lower), len(self.cost)))

    def with_rows(self, rows: Any, lower: Any, upper: Any) -> ArrayProgram:
        """This program with ``rows`` (a SciPy sparse matrix, one column per column) after its own
        rows, bounded by ``lower`` and ``upper``."""
        import scipy.sparse as sp

        matrix = sp.vstack([self.matrix, rows]).tocsc()
        return replace(self, row_lower=np.concatenate([self.row_lower, lower]),
                       row_upper=np.concatenate([self.row_upper, upper]),
                       a_start=matrix.indptr, a_index=matrix.indices, a_value=matrix.data)

    @property
    def is_mip(self) -> bool:
        """Some column is integer (HiGHS then reports a MIP bound)."""
        if not self.integer or not len(self.cost):
            return False
        return self.integer_columns is None or bool(np.any(self.integer_columns))


@contextmanager
def _silenced(fd: int) -> Iterator[list[str]]:
    """The process's file descriptor ``fd`` (1 stdout, 2 stderr) diverted meanwhile: solver
    libraries print from C, past Python's sys.stdout and sys.stderr. What they wrote is appended
    to the yielded list once the block ends."""
    (sys.stdout if fd == 1 else sys.stderr).flush()
    said: list[str] = []
    saved = os.dup(fd)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), fd)
        try:
            yield said
        finally:
            os.dup2(saved, fd)
            os.close(saved)
            sink.seek(0)
            said.append(sink.read().decode("utf-8", "replace"))


def _first_error(said: list[str]) -> str:
    """`` (what SCIP's first ERROR line says)``, or nothing."""
    for line in "".join(said).splitlines():
        if "ERROR:" in line:
            return f" ({line.split('ERROR:', 1)[1].strip()})"
    return ""


_BANNER_SHOWN = False


def _quiet_highs() -> Any:
    """A new ``highspy.Highs``. HiGHS prints its banner on stdout when the first one of a process
    is made, which would corrupt ``--json`` output; that first construction runs with the
    process's stdout silenced."""
    global _BANNER_SHOWN
    import highspy

    if _BANNER_SHOWN:
        return highspy.Highs()
    with _silenced(1):
        h = highspy.Highs()
    _BANNER_SHOWN = True
    return h


def exact_highs(time_limit: float | None, *, presolve: bool = True) -> Any:
    """A silent HiGHS instance with zero MIP gaps (and ``presolve`` off on request)."""
    h = _quiet_highs()
    h.setOptionValue("output_flag", False)
    if not presolve:
        h.setOptionValue("presolve", "off")
    h.setOptionValue("mip_rel_gap", 0.0)
    h.setOptionValue("mip_abs_gap", 0.0)
    _pool_for(_THREADS)
    if _THREADS is not None:
        h.setOptionValue("threads", _THREADS)
    if time_limit is not None:
        h.setOptionValue("time_limit", float(time_limit))
    return h


def settle_crossed_bound(sense: str, objective: float, bound: float) -> float:
    """A dual bound just past the solver's own feasible incumbent (within CROSSED_BOUND_TOL,
    relative) is a tolerance artefact: the bound is the incumbent and the gap is zero. A bound
    further past it is returned unchanged."""
    crossed = (objective - bound) if sense == "max" else (bound - objective)
    if 0 < crossed <= CROSSED_BOUND_TOL * max(1.0, abs(objective)):
        return objective
    return bound


def load_arrays(program: ArrayProgram, *, time_limit: float | None = None, presolve: bool = True,
                **options: Any) -> Any:
    """A silent HiGHS instance (zero gaps, extra HiGHS ``options``) holding ``program``, for
    :func:`solve_arrays` and for callers that re-solve one program with changed bounds."""
    import highspy

    h = exact_highs(time_limit, presolve=presolve)
    for name, value in options.items():
        h.setOptionValue(name, value)
    sense = highspy.ObjSense.kMaximize if program.sense == "max" else highspy.ObjSense.kMinimize
    if program.is_mip:   # the arrays straight in: filling a HighsLp converts the matrix entry by entry (4x slower)
        integrality = np.where(program.integrality, int(highspy.HighsVarType.kInteger), int(highspy.HighsVarType.kContinuous))
        h.passModel(len(program.cost), len(program.row_lower), len(program.a_index), int(highspy.MatrixFormat.kColwise),
                    int(sense), float(program.offset), *(np.asarray(a, dtype=np.float64) for a in (
                        program.cost, program.col_lower, program.col_upper, program.row_lower, program.row_upper)),
                    *(np.asarray(a, dtype=np.int32) for a in (program.a_start, program.a_index)),
                    np.asarray(program.a_value, dtype=np.float64), integrality.astype(np.int32))
        return h
    lp = highspy.HighsLp()   # an LP keeps no integrality (HiGHS's array entry takes one, and would keep it)
    lp.num_col_, lp.num_row_ = len(program.cost), len(program.row_lower)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = program.cost, program.col_lower, program.col_upper
    lp.row_lower_, lp.row_upper_ = program.row_lower, program.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = program.a_start, program.a_index, program.a_value
    lp.sense_ = sense
    lp.offset_ = float(program.offset)
    h.passModel(lp)
    return h


def solve_arrays(program: ArrayProgram, *, time_limit: float | None = None, presolve: bool = True,
                 start: np.ndarray | None = None, watched: bool = True, **options: Any) -> SolveReport:
    """Solve an :class:`ArrayProgram` with HiGHS (gaps 0 unless ``options`` set HiGHS's own, e.g.
    ``mip_rel_gap``, ``mip_max_nodes``); ``schedule`` holds the solution vector. ``start`` is a
    feasible solution handed to HiGHS as its first incumbent. ``watched`` runs it through
    :func:`mlsched.solver_watch.run_watched` (Ctrl-C stops it; progress to the active listener;
    about 0.3 ms more per solve): the small programs solved thousands of times in a run (the
    Themis auctions) turn it off."""
    import highspy

    tick = time.perf_counter()
    h = load_arrays(program, time_limit=time_limit, presolve=presolve, **options)
    if start is not None:
        initial = highspy.HighsSolution()
        initial.col_value = list(map(float, start))
        h.setSolution(initial)
    if watched:
        run_watched(h)
    else:
        h.run()
    status = h.getModelStatus()
    info = h.getInfo()
    seconds = time.perf_counter() - tick
    verdict = _without_a_point(h)
    if verdict is not None:
        status_of, objective, message = verdict
        return SolveReport(status_of, objective, objective, None if objective is None else 0.0, 0.0, seconds,
                           solver="highs", relaxed=not program.is_mip, message=message,
                           schedule=None if objective is None else np.zeros(0))
    if info.primal_solution_status != highspy.SolutionStatus.kSolutionStatusFeasible:   # none, or an infeasible point
        bound = info.mip_dual_bound if program.is_mip and abs(info.mip_dual_bound) < highspy.kHighsInf else None
        return SolveReport(Status.NO_SOLUTION, None, bound, None, 0.0, seconds, solver="highs",
                           relaxed=not program.is_mip, bound_source=None if bound is None else "milp",
                           message="stopped without a solution")
    objective = info.objective_function_value
    if program.is_mip:
        bound = finite(info.mip_dual_bound)   # None: stopped before a bound
    else:   # an LP's objective bounds it only at its optimum; a stopped simplex has a feasible point, no bound
        bound = objective if status == highspy.HighsModelStatus.kOptimal else None
    if bound is not None:
        bound = settle_crossed_bound(program.sense, objective, bound)
    gap = relative_gap(objective, bound)
    proven = status == highspy.HighsModelStatus.kOptimal and (gap is None or gap <= EXACT_REL_GAP)
    return SolveReport(Status.OPTIMAL if proven else Status.FEASIBLE, objective, bound, gap, 0.0, seconds,
                       solver="highs", relaxed=not program.is_mip, bound_source=None if bound is None else "milp",
                       message="" if proven else f"stopped ({h.modelStatusToString(status)}) with gap {gap if gap is not None else float('nan'):.3g}",
                       schedule=np.array(h.getSolution().col_value))


HARD_STOP_GRACE = 2.0   # seconds a deadline child may run past its limit before it is ended
HIGHS_PROBING_RULE = 1 << 15   # probing's bit in HiGHS's presolve_rule_off


def solve_arrays_by_deadline(program: ArrayProgram, *, time_limit: float, grace: float,
                             start: np.ndarray | None = None, **options: Any) -> SolveReport:
    """:func:`solve_arrays` in a fresh interpreter that must answer within ``time_limit`` seconds
    from now and is ended ``grace`` seconds later when it has not: HiGHS looks at its clock only
    between steps, and on programs of a few hundred thousand columns its presolve and MIP set-up
    run for tens of seconds without looking. The child is a new ``python`` process that imports
    only this module (not the caller's ``__main__``, so scripts need no main guard, and no forked
    HiGHS thread pool); the program goes in on its standard input and the report comes back in a
    file. Its start-up counts within the limit. An ended solve is NO_SOLUTION (no incumbent, no
    bound). An active progress listener (:func:`mlsched.solver_watch.solver_progress`) hears the
    elapsed time; Ctrl-C ends the child at once and is raised here."""
    import pickle
    import subprocess

    deadline = time.monotonic() + time_limit          # the system-wide clock: the child reads it too
    tick = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="mlsched-highs-") as folder:
        answer = Path(folder) / "report.pickle"
        child = subprocess.Popen([sys.executable, "-c", "from mlsched.solve import solve_arrays_child; "
                                  "solve_arrays_child()", str(answer)],
                                 stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        request: bytes | None = pickle.dumps((program, deadline, start, options, _THREADS))
        try:
            while True:
                left = deadline + grace - time.monotonic()
                try:
                    _, stderr = child.communicate(request, timeout=max(0.0, min(left, PROGRESS_SECONDS)))
                    break
                except subprocess.TimeoutExpired:
                    if left <= PROGRESS_SECONDS:
                        raise
                    request = None   # sent: a later call only waits
                    report_progress(SolverProgress(time.perf_counter() - tick, where="HiGHS (own process)"))
            if child.returncode == 0 and answer.exists():
                return pickle.loads(answer.read_bytes())
            last = stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            message = f"HiGHS's process ended without an answer (exit code {child.returncode}) {last[0]}".strip()
        except subprocess.TimeoutExpired:
            message = f"HiGHS had not stopped {grace:g} s after its time limit and was ended"
        finally:   # past its time, or the caller interrupted: the child does not run on
            if child.poll() is None:
                child.kill()
                child.communicate()
    return SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, time.perf_counter() - tick, "highs",
                       relaxed=not program.is_mip, message=message)


def solve_arrays_child() -> None:
    """The child of :func:`solve_arrays_by_deadline`: read the request from standard input, solve
    by the deadline, write the pickled report to the path given as the first argument."""
    import pickle

    program, deadline, start, options, threads = pickle.load(sys.stdin.buffer)
    set_solver_threads(threads)
    left = deadline - time.monotonic()
    if left <= 0:
        report = SolveReport(Status.NO_SOLUTION, None, None, None, 0.0, 0.0, "highs", relaxed=not program.is_mip,
                             message="the time limit had passed when HiGHS's process was ready")
    else:
        report = solve_arrays(program, time_limit=left, start=start, **options)
    Path(sys.argv[1]).write_bytes(pickle.dumps(report))


def solve_cvxpy(problem: Any, *, extract: Callable[[], Any] | None = None, build_seconds: float = 0.0,
                solver: str = "CLARABEL", **options: Any) -> SolveReport:
    """Solve a cvxpy problem (convex continuous programs); statuses map to :class:`Status`;
    ``options`` go to the solver (e.g. Clarabel's tolerances). A Clarabel solve that ends
    "optimal_inaccurate" is solved once more with stricter iterative refinement (CLARABEL_RETRY;
    it proved 3 of 3 such programs of the OgaSched benchmarks optimal); one still inaccurate is
    FEASIBLE, with no bound, and cvxpy's warning about it is left out (the status says it)."""
    import warnings

    import cvxpy as cp

    tick = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Solution may be inaccurate", category=UserWarning)
            problem.solve(solver=solver, **options)
            if solver.upper() == "CLARABEL" and problem.status == cp.OPTIMAL_INACCURATE:
                problem.solve(solver=solver, **{**options, **CLARABEL_RETRY})
    except cp.error.SolverError as exc:
        return SolveReport(Status.ERROR, None, None, None, build_seconds, time.perf_counter() - tick,
                           solver.lower(), relaxed=True, message=f"{solver} failed: {exc}")
    seconds = time.perf_counter() - tick
    status = problem.status
    base = dict(build_seconds=build_seconds, solve_seconds=seconds, solver=solver.lower(), relaxed=True)
    if status == cp.INFEASIBLE:
        return SolveReport(Status.INFEASIBLE, None, None, None, message=status, **base)
    if status == cp.UNBOUNDED:
        return SolveReport(Status.UNBOUNDED, None, None, None, message=status, **base)
    if status in (cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED_INACCURATE):   # suspected, not proven
        return SolveReport(Status.NO_SOLUTION, None, None, None, message=status, **base)
    if problem.value is None:
        return SolveReport(Status.NO_SOLUTION, None, None, None, message=str(status), **base)
    value = float(problem.value)
    proven = status == cp.OPTIMAL
    return SolveReport(Status.OPTIMAL if proven else Status.FEASIBLE, value, value if proven else None,
                       0.0 if proven else None, schedule=extract() if extract else None,
                       message="" if proven else str(status), **base)
