"""Studies: run algorithms and the exact optimum on instances, return a pandas DataFrame with
the empirical competitive ratio OPT / ALG.

When the exact solve stops before proving optimality (time limit) or its solvers disagree, the
ratio is the interval [incumbent / ALG, bound / ALG] (columns ``ratio_low``, ``ratio_high``);
``ratio`` holds a number only when both ends coincide. Exact solves are cross-certified by a
second solver (``verify``) by default when the model has at most
``mlsched.solve.VERIFY_MAX_INTEGERS`` integer variables.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, TextIO

import numpy as np
import pandas as pd

from mlsched.errors import NotRunnable, UsageError, option_flags
from mlsched.instance import Instance, load
from mlsched.metrics import cost_ratio as make_cost_ratio
from mlsched.metrics import ratio as make_ratio
from mlsched.solve import NO_FINITE_OPTIMUM, SolveReport, Status
from mlsched.solver_watch import SolverProgress, solver_progress
from mlsched.tenant_metrics import performance_ratio
from mlsched.systems import System, get_system

def solve_exact(instance: Instance, *, system: str | None = None, variant: str | None = None,
                relax: bool = False, time_limit: float | None = None, verify: bool | str = "auto",
                starts: Sequence[Any] = (), **paired: Any) -> SolveReport:
    """Solve a system's exact program for ``instance`` (see :mod:`mlsched.exact`); ``paired`` gives
    the options it shares with runs (the SoW family's ``samples``; None means the default).

    ``starts`` are runs' solutions (OASiS: ``sim.run(...).schedule``; Astraea: a run's
    ``schedule``, or a preemptive ``SlotRun`` itself, read by its unbroken jobs); the best that passes the
    checker is the MIP start and a floor on the incumbent, so OPT >= max ALG. Systems whose exact
    program takes no starts refuse them."""
    sysm = get_system(system, family=instance.family)
    if relax and not sysm.relaxable:
        raise UsageError(f"{sysm.name}'s exact program is already continuous; relax (--relax) does not apply")
    given = {k: v for k, v in paired.items() if v is not None}
    unknown = sorted(set(given) - set(sysm.paired_options))
    if unknown:
        raise UsageError(f"{sysm.name}'s exact program takes no {option_flags(given, unknown)} option")
    if starts:
        if sysm.start_of is None:
            raise UsageError(f"{sysm.name}'s exact program takes no MIP starts")
        given["starts"] = list(starts)
    return sysm.exact(instance, variant=variant or sysm.variants[0], relax=relax, time_limit=time_limit,
                      verify=verify, **given)


def _opt_interval(report: SolveReport) -> tuple[float, float]:
    if report.status is Status.OPTIMAL:
        return report.objective, report.objective  # type: ignore[return-value]
    low = report.objective if report.objective is not None else 0.0
    high = report.bound if report.bound is not None else math.inf
    return low, high


def study(
    instances: Iterable[Instance | str | Path],
    algorithms: Sequence[str] | None = None,
    *,
    system: str | None = None,
    variant: str | None = None,
    time_limit: float | None = 60.0,
    verify: bool | str = "auto",
    exact: bool = True,
    seed: int = 0,
    progress: bool = True,
    run_options: dict[str, Any] | None = None,
) -> pd.DataFrame:
    """One row per (instance, algorithm) with the score, OPT (interval) and OPT / ALG.

    Without ``algorithms``, each instance gets its system's default set for it (SoW's stochastic
    mechanism joins on stochastic instances) less the algorithms that cannot run on it (BatchSche
    without tenant partitions, the stochastic mechanism when no FUA fits the supply); those are
    listed with the reason in ``df.attrs["skipped"]`` (instance, algorithm, reason). Named
    ``algorithms`` all run, and one that cannot run raises its error. These stop the study before
    any run, with the reason: an unknown or repeated algorithm, a run option that some chosen
    algorithm does not take, and with ``exact`` an instance the system's exact program cannot
    take. Interrupting with Ctrl-C returns the rows finished so far with
    ``df.attrs["interrupted"] = True``.
    """
    loaded = [load(item) if isinstance(item, (str, Path)) else item for item in instances]
    items = [(inst, get_system(system, family=inst.family)) for inst in loaded]
    skipped: list[dict[str, str]] = []
    plans = [(inst, sysm, list(algorithms or _runnable_defaults(sysm, inst, skipped))) for inst, sysm in items]
    for inst, sysm, chosen in plans:   # every refusal before any run: a long study is not lost to the last instance
        for name in chosen:
            sysm.require(name)
        twice = sorted({name for name in chosen if chosen.count(name) > 1})
        if twice:
            raise UsageError(f"{', '.join(twice)} named more than once in the algorithms; a run with the same "
                             "seed gives the same row")
        if exact:
            refuse_exact(inst, sysm)
        refuse_run_options(sysm, chosen, run_options or {})
    rows: list[dict[str, Any]] = []
    interrupted = False
    bar = _progress(sum(len(chosen) + int(exact) for _, _, chosen in plans), progress)
    try:
        for inst, sysm, chosen in plans:
            rows.extend(study_instance(inst, sysm, chosen, variant=variant,
                                       time_limit=time_limit, verify=verify, exact=exact, seed=seed,
                                       run_options=run_options or {}, bar=bar,
                                       skipped=skipped if algorithms is None else None))
    except KeyboardInterrupt:
        interrupted = True
    finally:
        if bar is not None:
            bar.close()
    frame = pd.DataFrame(rows)
    frame.attrs["interrupted"] = interrupted
    frame.attrs["skipped"] = skipped
    return frame


def refuse_exact(inst: Instance, sysm: System) -> None:
    """Raises a UsageError naming why ``sysm``'s exact program cannot take ``inst``, if it cannot."""
    refusal = sysm.exact_refusal(inst) if sysm.exact_refusal is not None else None
    if refusal is not None:
        raise UsageError(f"{refusal}; compare the runs alone with --no-exact (exact=False)")


def refuse_run_options(sysm: System, algorithms: Sequence[str], run_options: dict[str, Any]) -> None:
    """Raises a UsageError when a given run option is one that some of ``algorithms``' runs refuse
    (SoW's ``eps`` with ``greedy``, Astraea's ``lambda_mode`` with ``gandiva_fair``), naming them
    and the algorithms of the set that take it, as a sweep file is refused (decisions SW2)."""
    sysm.check_run_options(run_options)
    for option in sysm.run_options:
        value = run_options.get(option)
        if value is None:
            continue
        refused_by = [name for name in algorithms if not sysm.takes_run_option(name, option)]
        if refused_by:
            taking = [name for name in algorithms if name not in refused_by]
            hint = f"; run those that take it with --algorithms {','.join(taking)}" if taking else ""
            raise UsageError(f"{', '.join(refused_by)} take{'s' if len(refused_by) == 1 else ''} "
                             f"no {option_flags(run_options, [option])} option{hint}")


def _runnable_defaults(sysm: System, inst: Instance, skipped: list[dict[str, str]]) -> list[str]:
    """The system's default algorithms for ``inst`` that can run on it; the others go to ``skipped``."""
    chosen = []
    for name in sysm.defaults_for(inst):
        reason = sysm.unavailable(name, inst)
        if reason is None:
            chosen.append(name)
        else:
            skipped.append({"instance": inst.name, "algorithm": name, "reason": reason})
    return chosen


def study_instance(inst: Instance, sysm: System, algorithms: Sequence[str], *, variant: str | None,
                   time_limit: float | None, verify: bool | str, exact: bool, seed: int,
                   run_options: dict[str, Any], policy_options: dict[str, Any] | None = None,
                   bar: _Progress | None = None, skipped: list[dict[str, str]] | None = None) -> list[dict[str, Any]]:
    """The rows of one instance: each algorithm's run scored, then the exact solve (given the
    runs as MIP starts) and the ratio columns. ``policy_options`` go to the policies that take
    them (:meth:`mlsched.systems.System.policy`); policies that solve programs inside (Dorm) get
    ``time_limit`` as their ``run_budget`` for the whole run unless ``policy_options`` set one.
    With a ``skipped`` list, a run that finds it cannot run (:class:`NotRunnable`) is left out and
    listed there with its reason; without one, that error propagates."""
    if exact:   # before any run: a long simulation is not lost to a refusal at its end
        refuse_exact(inst, sysm)
    fields = {k: run_options[k] for k in sysm.instance_options if run_options.get(k) is not None}
    if fields:   # e.g. Astraea's time origin: the runs and the exact optimum score the same instance
        inst = dataclasses.replace(inst, **fields)
    runs = []
    options = {"run_budget": time_limit, **(policy_options or {})}
    for name in algorithms:
        _step(bar, f"{inst.name}: {name}")
        policy = sysm.policy(name, seed=seed, options=options)
        try:
            result = sysm.execute(inst, policy, progress=None if bar is None else bar.within, **run_options)
        except NotRunnable as exc:
            if skipped is None:
                raise
            skipped.append({"instance": inst.name, "algorithm": name, "reason": str(exc)})
            continue
        runs.append((name, policy, result))
    opt = regret_opt = None
    benchmarks: dict[str, Any] = {}
    if exact:
        _step(bar, f"{inst.name}: exact optimum")
        opt_variant = variant or sysm.ratio_variant or sysm.variants[0]
        hints = _exact_hints(sysm, runs, opt_variant)
        hints.update({k: run_options[k] for k in sysm.paired_options if run_options.get(k) is not None})
        with nullcontext() if bar is None else solver_progress(bar.solver_listener):   # a caller's listener stays
            tick = time.perf_counter()
            opt = sysm.exact(inst, variant=opt_variant, time_limit=time_limit, verify=verify, **hints)
            opt_seconds = time.perf_counter() - tick
            if sysm.benchmark_columns is not None:
                benchmarks = sysm.benchmark_columns(inst)
            if sysm.regret_variant is not None:
                regret_opt = solve_exact(inst, system=sysm.name, variant=sysm.regret_variant, time_limit=time_limit,
                                         verify=verify)
    _step(bar, "")
    rows = []
    for name, policy, result in runs:
        row: dict[str, Any] = {"instance": inst.name, "algorithm": name, **sysm.evaluate(inst, result)}
        if hasattr(policy, "summary"):
            row["two_alpha"] = 2 * policy.summary()["alpha"]
        if hasattr(policy, "certified_bound"):
            row["dual_bound"] = policy.certified_bound()
        if hasattr(policy, "theorem_bound"):
            row["regret_bound"] = policy.theorem_bound()
        if opt is not None:
            row.update(_ratio_columns(opt, row.get(sysm.ratio_score or sysm.score_name, np.nan), sysm.minimize),
                       opt_seconds=opt_seconds)
            if sysm.performance_ratio and opt.objective is not None and opt.status in (
                    Status.OPTIMAL, Status.FEASIBLE, Status.DISAGREE):
                measured = performance_ratio(row[sysm.score_name], *_opt_interval(opt))
                row.update(pr=measured["pr"], pr_low=measured["pr_low"], pr_high=measured["pr_high"],
                           pr_note=measured["note"])
            if sysm.paired_columns is not None:
                row.update(sysm.paired_columns(opt, result))
        row.update(benchmarks)
        if regret_opt is not None and regret_opt.status is Status.OPTIMAL:   # an unproven one is no benchmark
            row["hindsight_opt"] = regret_opt.objective
            row["regret"] = regret_opt.objective - row[sysm.score_name]
        rows.append(row)
    return rows


def _exact_hints(sysm: System, runs: list[tuple[str, Any, Any]], variant: str) -> dict[str, Any]:
    """What the runs tell the exact solve: their solutions as MIP starts (a floor on OPT) and the
    certified dual bounds of policies that have one for ``variant`` (a ceiling)."""
    if sysm.start_of is None:
        return {}
    bounds = {f"dual bound ({name})": policy.certified_bound() for name, policy, _ in runs
              if hasattr(policy, "certified_bound_variants") and variant in policy.certified_bound_variants()}
    hints: dict[str, Any] = {"starts": [sysm.start_of(result) for _, _, result in runs]}
    if bounds:    # only policies of systems whose exact program takes dual bounds certify one
        hints["dual_bounds"] = bounds
    return hints


def _ratio_columns(opt: SolveReport, score: float, minimize: bool = False) -> dict[str, Any]:
    """OPT / ALG for values; ALG / OPT for costs (both >= 1 when ALG is no better than OPT)."""
    cols: dict[str, Any] = {"opt_status": opt.status.value, "opt": opt.objective, "opt_bound": opt.bound,
                            "opt_bound_source": opt.bound_source,
                            "opt_gap": opt.gap, "opt_solver": opt.solver, "opt_message": opt.message,
                            "opt_verified": opt.verified, "opt_verifier": opt.verifier}
    unusable = opt.status in (*NO_FINITE_OPTIMUM, Status.ERROR)
    if unusable or (opt.status is Status.NO_SOLUTION and opt.bound is None) or np.isnan(score):
        cols.update(ratio_low=np.nan, ratio_high=np.nan, ratio=np.nan)
        return cols
    if minimize:   # a cost: the incumbent is OPT's upper end, the bound its lower end
        if opt.status is Status.OPTIMAL:
            r = make_cost_ratio(opt.objective, opt.objective, score)  # type: ignore[arg-type]
        else:
            r = make_cost_ratio(opt.bound if opt.bound is not None else 0.0,
                                opt.objective if opt.objective is not None else math.inf, score)
    else:
        r = make_ratio(*_opt_interval(opt), score)
    cols.update(ratio_low=r.low, ratio_high=r.high, ratio=r.low if r.is_point else np.nan)
    return cols


REFRESH_SECONDS = 0.5   # the progress bar's fastest refresh inside one step
RUN_PROGRESS_DELAY = 1.0   # seconds a single run goes before its progress line appears
CLOCK_SECONDS = 1.0   # the progress line's elapsed time is redrawn at least this often


class _Progress:
    """A bar over the study's steps (each algorithm's run and each exact solve) on stderr, naming
    the step under way, with elapsed time and an estimate of the time left; with ``delay``, the
    bar opens only once that many seconds have passed (and is wiped when closed, as any other)."""

    def __init__(self, total: int, *, desc: str = "study", delay: float = 0.0) -> None:
        self.total, self.desc, self.done = total, desc, 0
        self.bar: Any = None
        self.running = ""
        self.shown = time.perf_counter()
        self.hidden_until = self.shown + delay
        self.started = time.time()   # tqdm's clock
        self.stream, self.own_stream = _stderr_copy()
        self.closed = threading.Event()
        self.clock: threading.Thread | None = None
        if delay <= 0:
            self._draw(self._open)

    def _open(self) -> None:
        from tqdm.auto import tqdm

        counts = ("{n_fmt}/{total_fmt} [{elapsed} elapsed, ~{remaining} left]" if self.total > 1
                  else "[{elapsed} elapsed]")
        self.bar = tqdm(total=self.total, initial=self.done, desc=self.desc, unit="step", file=self.stream,
                        leave=False, bar_format="{desc} " + counts + "{postfix}")
        self.bar.start_t = self.started   # elapsed since the study or run began, not since the bar opened
        self.clock = threading.Thread(target=self._tick, name="progress-clock", daemon=True)
        self.clock.start()

    def _tick(self) -> None:
        """Redraw every CLOCK_SECONDS, so that the elapsed time moves while a step reports nothing
        (SCIP verifying, a list schedule, a simulation between its counts)."""
        while not self.closed.wait(CLOCK_SECONDS):
            bar = self.bar
            if bar is not None:
                self._draw(bar.refresh)

    def step(self, running: str) -> None:
        """Count the step that just finished (if any) and show the one starting."""
        if self.running:
            self.done += 1
            if self.bar is not None:
                self._draw(self.bar.update, 1)
        self.running = running
        self.shown = time.perf_counter()
        self._show(f"running {running}" if running else "")

    def detail(self, text: str) -> None:
        """Show what the step under way reports of itself (a solver's incumbent and bound)."""
        self.shown = time.perf_counter()
        self._show(f"running {self.running} ({text})")

    def solver_listener(self, progress: SolverProgress) -> None:
        self.detail(progress.describe())

    def within(self, done: int, total: int) -> None:
        """Show how far the step under way is (e.g. slot 40/100), at most every REFRESH_SECONDS."""
        now = time.perf_counter()
        if done == total or now - self.shown >= REFRESH_SECONDS:
            self.shown = now
            self._show(f"running {self.running} ({done}/{total})")

    def _show(self, text: str) -> None:
        if self.bar is None:
            if time.perf_counter() < self.hidden_until:
                return
            self._draw(self._open)
        if self.bar is not None:
            self._draw(self.bar.set_postfix_str, text, refresh=True)

    def _draw(self, action: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Draw, unless the line cannot be written (no stderr, a reader gone, a closed stream): the
        line then stops, and the work it follows goes on."""
        if self.stream is None:
            return
        try:
            action(*args, **kwargs)
        except (OSError, ValueError):   # BrokenPipeError, a closed file, an encoding error
            self.stream, self.bar = None, None

    def close(self) -> None:
        self.closed.set()
        if self.clock is not None:
            self.clock.join()
        if self.bar is not None:
            self._draw(self.bar.close)
        if self.own_stream:
            try:
                self.own_stream.close()
            except OSError:   # its reader gone: nothing left to flush to
                pass


def _stderr_copy() -> tuple[TextIO | None, TextIO | None]:
    """The stream a progress line writes to (None: there is no stderr), and the copy to close if it
    is one: the process's stderr is copied (its file descriptor duplicated, with its encoding and
    error handler) before any solve, since Pyomo points descriptor 2 at a pipe while HiGHS solves
    (to keep its log) and the line must still reach the terminal then; a replaced ``sys.stderr``
    (a notebook, a test's capture) is used as it is."""
    if sys.stderr is None or sys.stderr is not sys.__stderr__:
        return sys.stderr, None
    try:
        copy = os.fdopen(os.dup(sys.stderr.fileno()), "w", buffering=1, encoding=sys.stderr.encoding,
                         errors=sys.stderr.errors)
    except (OSError, ValueError):   # no descriptor behind it
        return sys.stderr, None
    return copy, copy


@contextmanager
def run_progress(label: str, *, enabled: bool = True,
                 delay: float | None = None) -> Iterator[Callable[[int, int], None] | None]:
    """A line on stderr for one run that takes long: ``label`` and how far the run is (slot 40/100;
    apps finished 512/1181), shown once it has gone ``delay`` seconds (RUN_PROGRESS_DELAY). Yields
    the callback to hand the run as its progress (:meth:`mlsched.systems.System.execute`), or None
    when not ``enabled``."""
    if not enabled:
        yield None
        return
    with _one_step_line("run", label, delay) as bar:
        yield bar.within


@contextmanager
def solve_progress(label: str, *, enabled: bool = True, delay: float | None = None) -> Iterator[None]:
    """A line on stderr for a solve that takes long: ``label`` and what HiGHS last reported
    (incumbent, bound, gap, nodes; :mod:`mlsched.solver_watch`), shown once the solve has gone
    ``delay`` seconds (RUN_PROGRESS_DELAY)."""
    if not enabled:
        yield
        return
    with _one_step_line("solve", label, delay) as bar, solver_progress(bar.solver_listener):
        yield


@contextmanager
def _one_step_line(desc: str, label: str, delay: float | None) -> Iterator[_Progress]:
    """The line of one step named ``label`` (a run, a solve), opened after ``delay`` seconds
    (RUN_PROGRESS_DELAY) and wiped at the end."""
    bar = _Progress(1, desc=desc, delay=RUN_PROGRESS_DELAY if delay is None else delay)
    bar.step(label)
    try:
        yield bar
    finally:
        bar.close()


def _progress(total: int, enabled: bool) -> _Progress | None:
    """The study's bar; a study of one step shows one, as a run does, only once it takes long."""
    if not enabled:
        return None
    return _Progress(total) if total > 1 else _Progress(1, desc="study", delay=RUN_PROGRESS_DELAY)


def _step(bar: _Progress | None, running: str) -> None:
    if bar is not None:
        bar.step(running)


def sweep(spec: Any, *, executor: str | None = None, results: str | Path | None = None,
          **options: Any) -> pd.DataFrame:
    """A study declared as a sweep (a sweep file, its dict or a :class:`mlsched.sweep.SweepSpec`),
    run on ``executor`` (``serial``, ``processes``, ``dask``) and stored in ``results`` when
    given; the rows carry this module's columns. See :func:`mlsched.sweep.runner.sweep`."""
    from mlsched.sweep.runner import sweep as run_sweep

    return run_sweep(spec, executor=executor, results=results, **options)
