"""A cell under a wall-clock limit: run in a child process that is killed when the limit passes.

A solver deep in C code does not return to Python to notice a timer, so the only limit that
always holds is a process that can be killed. :func:`execute` runs the cell in a child process
when a limit is given (in the calling process otherwise, where a debugger can follow it):

- the child sends its :class:`~mlsched.sweep.cells.Outcome` back through a pipe;
- past ``wall_limit`` seconds it is killed and the outcome is ``timeout``;
- a child that dies before answering (out of memory, a crash in native code) gives ``lost``
  with its exit code;
- on Linux a child dies with the process that started it, so a worker killed by its executor
  leaves no cell running.

The child comes from a forkserver (:func:`cell_context`): forking a process whose solver already
started threads -- HiGHS keeps a pool of native threads after its first solve, invisible to
:mod:`threading` -- can leave the child deadlocked or with a broken solver. The forkserver has
every system's modules loaded (:mod:`mlsched.sweep.warm`), so a child starts in milliseconds.
A process-pool worker, which never solves anything itself when cells run under a limit, forks
its children directly (``fork=True``). Dask runs its workers as daemonic processes, which
:mod:`multiprocessing` forbids to have children; the child here never outlives the call that
starts it, so the rule's purpose holds and it is lifted for the start.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any

from mlsched.sweep.cells import LOST, TIMEOUT, Outcome, run_cell, worker_name
from mlsched.sweep.spec import Cell

PRELOAD = ["mlsched.sweep.warm"]
PR_SET_PDEATHSIG = 1   # prctl(2)


def execute(cell: Cell, wall_limit: float | None, solver_threads: int | None, fork: bool = False) -> Outcome:
    """The cell's outcome, run in a killable child process when ``wall_limit`` is set."""
    if wall_limit is None:
        return run_cell(cell, solver_threads)
    context = multiprocessing.get_context("fork") if fork else cell_context()
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_child, args=(sender, cell, solver_threads), name=f"cell-{cell.key}")
    started = time.perf_counter()
    with _children_allowed():
        child.start()
    sender.close()
    try:
        if receiver.poll(wall_limit):
            try:
                return receiver.recv()
            except EOFError:
                child.join()
                return Outcome(LOST, error=f"the cell's process ended without an answer (exit code {child.exitcode})",
                               seconds=time.perf_counter() - started, worker=worker_name())
        return Outcome(TIMEOUT, error=f"over the cell's wall limit of {wall_limit:g} s; stopped",
                       seconds=wall_limit, worker=worker_name())
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        receiver.close()


def _child(sender: Connection, cell: Cell, solver_threads: int | None) -> None:
    _die_with_parent()
    own_output_capture_lock()
    sender.send(run_cell(cell, solver_threads))
    sender.close()


def own_output_capture_lock() -> None:
    """Give this process a lock of its own for Pyomo's output capture.

    Pyomo serialises ``capture_output`` (every HiGHS solve runs inside one) with a lock that becomes a
    :mod:`multiprocessing` semaphore once multiprocessing is imported, and processes forked from one
    server share it. A process killed while a solver's output is captured (a pool worker lost
    mid-cell, a cell past its wall limit) leaves it held for good, and every later solve of its
    siblings then waits 200 s for it and fails. A cell's process captures only its own file
    descriptors, so a lock local to the process is all the capture needs."""
    from pyomo.common import dependencies

    dependencies.capture_output_lock = threading.Lock()


def _die_with_parent() -> None:
    """On Linux, have the kernel kill this process when the process that started it ends (a worker
    killed by its executor, a forkserver whose owner is gone), so no cell runs on unobserved."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    parent = os.getppid()
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:   # it ended while the request was made
        os._exit(1)


def cell_context() -> Any:
    """The forkserver context whose server has every system's modules loaded."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


@contextmanager
def _children_allowed() -> Iterator[None]:
    config = multiprocessing.current_process()._config   # noqa: SLF001 -- see the module docstring
    daemon = config.get("daemon", False)
    config["daemon"] = False
    try:
        yield
    finally:
        config["daemon"] = daemon
