"""The sweep loop: skip the cells a results store already holds, run the others on an executor,
store every attempt as it finishes, retry failures, and report progress and a summary.

A cell whose attempt fails (an exception, its wall limit, a lost worker) is stored with its
status and error at once, then tried again, up to ``retries`` more times in the same run; one
bad cell never stops the sweep. Running the same sweep again skips the finished cells and tries
the failed ones again. Ctrl-C stops the executor (running cells included) and returns the rows
stored so far, with ``attrs["interrupted"]`` set.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter, deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pandas as pd

from mlsched.sweep.cells import cell_frame
from mlsched.sweep.executors import local_cores, make_executor
from mlsched.sweep.spec import Execution, SweepSpec, as_spec
from mlsched.sweep.store import ResultStore

IN_FLIGHT_PER_WORKER = 2   # cells handed to the executor ahead of need, per worker
POLL_SECONDS = 1.0


@dataclass
class Summary:
    cells: int
    skipped: int = 0     # finished before this run
    ok: int = 0
    failed: Counter[str] = field(default_factory=Counter)   # by final status
    retried: int = 0     # attempts that failed and were tried again
    interrupted: bool = False

    def line(self) -> str:
        failed = sum(self.failed.values())
        detail = f" ({', '.join(f'{n} {status}' for status, n in sorted(self.failed.items()))})" if failed else ""
        return (f"{self.cells} cells: {self.ok} ok, {failed} failed{detail}, {self.skipped} finished before; "
                f"{self.retried} retried attempt(s)" + ("; interrupted" if self.interrupted else ""))


def sweep(spec: SweepSpec | str | Path | dict[str, Any], *, results: str | Path | None = None,
          executor: str | None = None, workers: int | None = None, scheduler: str | None = None,
          scheduler_file: str | None = None, cell_time_limit: float | None = None, retries: int | None = None,
          force: bool = False, progress: bool = True) -> pd.DataFrame:
    """Run a sweep (a :class:`~mlsched.sweep.spec.SweepSpec`, a sweep file or its parsed dict)
    and return its rows (:mod:`mlsched.sweep.cells` lists the columns).

    ``results`` is the store directory (resumable; see :mod:`mlsched.sweep.store`); without it
    the rows live in a temporary one. Arguments left None take the sweep's ``execution``
    section; ``executor`` is ``serial``, ``processes`` (default) or ``dask``. The frame's
    ``attrs["summary"]`` is a :class:`Summary`."""
    spec = as_spec(spec)
    execution = _execution(spec.execution, executor=executor, workers=workers, scheduler=scheduler,
                           scheduler_file=scheduler_file, cell_time_limit=cell_time_limit, retries=retries)
    if results is None:
        with tempfile.TemporaryDirectory(prefix="mlsched-sweep-") as tmp:
            return _run(spec, execution, ResultStore(tmp), force=force, progress=progress)
    return _run(spec, execution, ResultStore(results), force=force, progress=progress)


def _execution(base: Execution, **overrides: Any) -> Execution:
    chosen = {k: v for k, v in overrides.items() if v is not None}
    if "scheduler" in chosen or "scheduler_file" in chosen:
        chosen.setdefault("executor", "dask")
        chosen.setdefault("scheduler", None)
        chosen.setdefault("scheduler_file", None)
    return replace(base, **chosen)


def _run(spec: SweepSpec, execution: Execution, store: ResultStore, *, force: bool, progress: bool) -> pd.DataFrame:
    store.open(spec, force=force)
    finished = store.finished()
    todo = deque(cell for cell in spec.cells if cell.key not in finished)
    summary = Summary(cells=len(spec.cells), skipped=len(spec.cells) - len(todo))
    bar = _Progress(len(todo)) if progress and todo else None
    attempts: Counter[str] = Counter()
    in_flight: dict[Any, Any] = {}
    pool = make_executor(execution.executor, workers=execution.workers, wall_limit=execution.cell_time_limit,
                         scheduler=execution.scheduler, scheduler_file=execution.scheduler_file) if todo else None
    try:
        while todo or in_flight:
            assert pool is not None
            while todo and len(in_flight) < IN_FLIGHT_PER_WORKER * pool.workers:
                cell = todo.popleft()
                in_flight[pool.submit(cell)] = cell
            for future in pool.wait(in_flight, POLL_SECONDS):
                cell = in_flight.pop(future)
                outcome = pool.outcome(future)
                attempts[cell.key] += 1
                store.write(cell.key, cell_frame(cell, outcome, sweep=spec.name, attempts=attempts[cell.key]),
                            ok=outcome.ok)
                if outcome.ok:
                    summary.ok += 1
                elif attempts[cell.key] <= execution.retries:
                    summary.retried += 1
                    todo.append(cell)
                    continue
                else:
                    summary.failed[outcome.status] += 1
                if bar is not None:
                    bar.cell_done(summary)
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        if pool is not None:
            pool.close()
        if bar is not None:
            bar.close()
    frame = _in_cell_order(store.read(), spec)
    frame.attrs["summary"] = summary
    frame.attrs["interrupted"] = summary.interrupted
    return frame


def _in_cell_order(frame: pd.DataFrame, spec: SweepSpec) -> pd.DataFrame:
    """The rows in the order of the sweep's cells (each cell's rows in algorithm order)."""
    if frame.empty:
        return frame
    position = {cell.key: i for i, cell in enumerate(spec.cells)}
    order = frame["cell"].map(position).to_numpy()
    return frame.iloc[order.argsort(kind="stable")].reset_index(drop=True)


@dataclass
class Plan:
    """What running a sweep would do, without running it."""

    cells: int
    finished: int
    algorithms: int
    workers: int
    exact: bool
    exact_time_limit: float | None
    cell_time_limit: float | None
    measured_seconds: float | None   # mean wall time of the finished cells, when there are some

    @property
    def to_run(self) -> int:
        return self.cells - self.finished

    def lines(self) -> list[str]:
        out = [f"{self.cells} cells ({self.finished} finished, {self.to_run} to run), "
               f"{self.to_run * self.algorithms} rows to compute; each cell runs {self.algorithms} algorithm(s)"
               + (" and one exact solve" if self.exact else "")]
        if self.exact and self.exact_time_limit is not None:
            out.append(f"exact solves: at most {self.exact_time_limit:g} s each (plus their overshoot), "
                       f"{_duration(self.to_run * self.exact_time_limit / self.workers)} on {self.workers} worker(s)")
        if self.cell_time_limit is not None:
            out.append(f"cell wall limit {self.cell_time_limit:g} s per attempt (a bound of "
                       f"{_duration(self.to_run * self.cell_time_limit / self.workers)} on {self.workers} worker(s))")
        if self.measured_seconds is not None:
            out.append(f"measured: {self.measured_seconds:.3g} s per finished cell; about "
                       f"{_duration(self.to_run * self.measured_seconds / self.workers)} left on "
                       f"{self.workers} worker(s)")
        return out


def plan(spec: SweepSpec | str | Path | dict[str, Any], *, results: str | Path | None = None,
         workers: int | None = None, executor: str | None = None) -> Plan:
    """The cell count and a work estimate of a sweep (cells already in ``results`` count as
    finished, and their mean wall time gives the estimate)."""
    spec = as_spec(spec)
    kind = executor or spec.execution.executor
    count = 1 if kind == "serial" else (workers or spec.execution.workers or local_cores())
    finished: set[str] = set()
    measured = None
    if results is not None:
        store = ResultStore(results)
        if store.holds(spec):
            finished = store.finished() & {cell.key for cell in spec.cells}
            frame = store.read()
            done = frame[frame["status"] == "ok"].drop_duplicates("cell") if not frame.empty else frame
            measured = float(done["cell_seconds"].mean()) if len(done) else None
    return Plan(cells=len(spec.cells), finished=len(finished), algorithms=len(spec.algorithms), workers=count,
                exact=spec.exact.enabled, exact_time_limit=spec.exact.time_limit,
                cell_time_limit=spec.execution.cell_time_limit, measured_seconds=measured)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class _Progress:
    """Cells done of the whole sweep on stderr, with failures and the estimated time left."""

    def __init__(self, total: int) -> None:
        from tqdm.auto import tqdm

        self.bar = tqdm(total=total, desc="sweep", unit="cell", file=sys.stderr, leave=False,
                        bar_format="{desc} {n_fmt}/{total_fmt} cells [{elapsed} elapsed, ~{remaining} left]{postfix}")

    def cell_done(self, summary: Summary) -> None:
        self.bar.update(1)
        self.bar.set_postfix_str(f"{sum(summary.failed.values())} failed, {summary.retried} retried", refresh=True)

    def close(self) -> None:
        self.bar.close()
