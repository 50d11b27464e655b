"""Running one cell where it is scheduled, and its rows.

The worker builds the instance itself -- from the generator's setting and seed, or from the
file -- so no instance travels over the network, then runs :func:`mlsched.study.study_instance`,
the same computation ``mlsched study`` makes: every algorithm, then the exact solve with the
runs as MIP starts, then the ratio columns. Whatever the cell raises becomes an outcome with
status ``error`` and the exception's text; it never stops the sweep.

Rows: one per (instance, algorithm), the study's columns plus

- ``sweep``, ``cell``, ``system``, ``seed``, the instance's ``instance_hash`` (SHA-256 of its
  canonical file text) and ``instance_file`` when it came from one;
- one column per parameter of the sweep (non-scalar values as JSON text); a parameter named like
  a study column (OASiS's ``jobs``) is stored as ``<name>_setting`` beside it;
- ``status`` (``ok``, ``error``, ``timeout``, ``lost``), ``error``, ``traceback``, ``attempts``,
  ``cell_seconds`` (wall), ``cell_cpu_seconds``, ``worker`` (host:pid), ``mlsched_version``,
  ``finished_at`` (UTC).

A failed cell has one row per algorithm with the status and error and no metrics.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import traceback
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from mlsched.sweep.spec import Cell

OK, ERROR, TIMEOUT, LOST = "ok", "error", "timeout", "lost"


@dataclass
class Outcome:
    """What one attempt at a cell gave."""

    status: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    traceback: str = ""
    instance_hash: str | None = None
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    worker: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


def run_cell(cell: Cell, solver_threads: int | None = None) -> Outcome:
    """Build the cell's instance and run the study on it in this process."""
    from mlsched.solve import set_solver_threads

    set_solver_threads(solver_threads)
    wall, cpu = time.perf_counter(), time.process_time()
    outcome = Outcome(OK, worker=worker_name())
    try:
        outcome.rows, outcome.instance_hash = _study(cell)
    except Exception as exc:   # failures are data: the cell's row says what happened
        outcome.status = ERROR
        outcome.error = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        outcome.traceback = traceback.format_exc()
    outcome.seconds, outcome.cpu_seconds = time.perf_counter() - wall, time.process_time() - cpu
    return outcome


def _study(cell: Cell) -> tuple[list[dict[str, Any]], str]:
    from mlsched.instance import dumps, load
    from mlsched.study import study_instance
    from mlsched.sweep.parameters import generator
    from mlsched.systems import get_system

    if cell.instance_file is not None:
        instance = load(cell.instance_file)
    else:
        instance = generator(cell.system)(seed=cell.seed, **(cell.generator or {}))
    sysm = get_system(cell.system, family=instance.family)
    digest = hashlib.sha256(dumps(instance).encode()).hexdigest()
    rows = study_instance(instance, sysm, cell.algorithms, variant=cell.exact.variant,
                          time_limit=cell.exact.time_limit, verify=cell.exact.verify, exact=cell.exact.enabled,
                          seed=cell.seed, run_options=dict(cell.run_options), policy_options=dict(cell.policy_options))
    return rows, digest


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def cell_frame(cell: Cell, outcome: Outcome, *, sweep: str, attempts: int) -> pd.DataFrame:
    """The rows the store keeps for ``cell`` after ``attempts`` attempts, the last giving ``outcome``."""
    from mlsched import __version__

    base: dict[str, Any] = {"sweep": sweep, "cell": cell.key, "system": cell.system, "seed": cell.seed,
                            "instance_hash": outcome.instance_hash, "instance_file": cell.instance_file}
    tail = {"status": outcome.status, "error": outcome.error or None, "traceback": outcome.traceback or None,
            "attempts": attempts, "cell_seconds": outcome.seconds, "cell_cpu_seconds": outcome.cpu_seconds,
            "worker": outcome.worker, "mlsched_version": __version__,
            "finished_at": datetime.now(UTC).isoformat(timespec="seconds")}
    rows = outcome.rows if outcome.ok else [{"algorithm": name} for name in cell.algorithms]
    records = []
    for row in rows:
        setting = {f"{name}_setting" if name in row else name: _column_value(value)
                   for name, value in cell.setting.items()}
        records.append({**base, **setting, **{k: _column_value(v) for k, v in row.items()}, **tail})
    return pd.DataFrame(records)


def _column_value(value: Any) -> Any:
    """A value a columnar file holds: non-scalars (lists, dicts) as JSON text."""
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value)
    if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:   # numpy scalars
        return value.item()
    return value
