"""Where cells run: in this process, on local processes, or on a Dask cluster -- one interface.

Each executor runs :func:`mlsched.sweep.guard.execute` on a cell and hands back its
:class:`~mlsched.sweep.cells.Outcome`; the sweep loop (:mod:`mlsched.sweep.runner`) is the same
for all three:

- ``serial``: in the calling process, one cell at a time (for debugging);
- ``processes``: a :class:`concurrent.futures.ProcessPoolExecutor` with one worker per core. It
  is the standard library (no extra dependency), its workers fork from a server with every module
  loaded (:func:`mlsched.sweep.guard.cell_context`) and a task costs about a millisecond, where a
  Dask ``LocalCluster`` takes seconds to start and several milliseconds per task for nothing a
  single machine needs. A worker process that dies breaks the pool: its cells come back ``lost``
  and the next submission starts a fresh pool;
- ``dask``: a :class:`dask.distributed.Client` on a scheduler address or scheduler file (a
  ``dask-jobqueue`` Slurm cluster, Kubernetes, workstations running ``dask worker``), or on a
  ``LocalCluster`` of ``workers`` processes when neither is given. Workers need mlsched
  installed; a worker lost mid-cell has its cell rescheduled by Dask, and a cell that kills
  workers repeatedly comes back ``lost`` (Dask's ``KilledWorker``).

Solver threads: with more than one worker on a machine each cell's HiGHS runs on one thread, so
the workers do not oversubscribe the cores (Dask workers: start them with ``--nthreads 1``).
"""

from __future__ import annotations

import os
from collections.abc import Collection
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor
from concurrent.futures import wait as wait_futures
from typing import Any, Protocol

from mlsched.errors import UsageError
from mlsched.sweep.cells import LOST, Outcome
from mlsched.sweep.guard import cell_context, execute, own_output_capture_lock
from mlsched.sweep.spec import Cell


class Executor(Protocol):
    workers: int

    def submit(self, cell: Cell) -> Any: ...

    def wait(self, futures: Collection[Any], timeout: float) -> set[Any]: ...

    def outcome(self, future: Any) -> Outcome: ...

    def close(self) -> None: ...


def local_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


class SerialExecutor:
    """Cells run in the calling process as they are submitted."""

    workers = 1

    def __init__(self, wall_limit: float | None) -> None:
        self.wall_limit = wall_limit

    def submit(self, cell: Cell) -> Future[Outcome]:
        future: Future[Outcome] = Future()
        future.set_result(execute(cell, self.wall_limit, None))
        return future

    def wait(self, futures: Collection[Future[Outcome]], timeout: float) -> set[Future[Outcome]]:
        return set(futures)

    def outcome(self, future: Future[Outcome]) -> Outcome:
        return future.result()

    def close(self) -> None:
        pass


class ProcessExecutor:
    """Cells on a local process pool; see the module docstring."""

    def __init__(self, workers: int | None, wall_limit: float | None) -> None:
        self.workers = workers or local_cores()
        self.wall_limit = wall_limit
        self.threads = 1 if self.workers > 1 else None
        self.pool: ProcessPoolExecutor | None = None

    def submit(self, cell: Cell) -> Future[Outcome]:
        if self.pool is not None and getattr(self.pool, "_broken", False):
            self.pool.shutdown(wait=False)
            self.pool = None
        if self.pool is None:
            self.pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=cell_context(),
                                            initializer=own_output_capture_lock)
        return self.pool.submit(execute, cell, self.wall_limit, self.threads, True)

    def wait(self, futures: Collection[Future[Outcome]], timeout: float) -> set[Future[Outcome]]:
        return set(wait_futures(futures, timeout=timeout, return_when=FIRST_COMPLETED).done)

    def outcome(self, future: Future[Outcome]) -> Outcome:
        try:
            return future.result()
        except Exception as exc:   # BrokenProcessPool: a worker process died under the cell
            return Outcome(LOST, error=f"worker process lost ({type(exc).__name__}: {exc})")

    def close(self) -> None:
        """Stop the pool now, running cells included (their results are not awaited)."""
        if self.pool is None:
            return
        processes = list(getattr(self.pool, "_processes", {}).values())   # no public handle on them
        self.pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            if process.is_alive():
                process.kill()
        for process in processes:
            process.join()
        self.pool = None


class DaskExecutor:
    """Cells on a Dask distributed cluster; see the module docstring."""

    def __init__(self, workers: int | None, wall_limit: float | None, *, scheduler: str | None = None,
                 scheduler_file: str | None = None) -> None:
        try:
            from dask.distributed import Client, LocalCluster
        except ImportError:
            raise UsageError("the dask executor needs dask.distributed: pip install 'mlsched[cluster]'") from None
        self.wall_limit = wall_limit
        self.cluster = None
        if scheduler is not None:
            self.client = Client(scheduler)
        elif scheduler_file is not None:
            if not os.path.isfile(scheduler_file):
                raise UsageError(f"{scheduler_file}: scheduler file not found")
            self.client = Client(scheduler_file=scheduler_file)
        else:
            self.cluster = LocalCluster(n_workers=workers or local_cores(), threads_per_worker=1, processes=True,
                                        dashboard_address=None)
            self.client = Client(self.cluster)
        self.workers = max(1, sum(self.client.nthreads().values()))
        self.threads = 1

    def submit(self, cell: Cell) -> Any:
        return self.client.submit(execute, cell, self.wall_limit, self.threads, pure=False)

    def wait(self, futures: Collection[Any], timeout: float) -> set[Any]:
        from dask.distributed import wait

        try:
            return set(wait(list(futures), timeout=timeout, return_when="FIRST_COMPLETED").done)
        except TimeoutError:
            return set()

    def outcome(self, future: Any) -> Outcome:
        try:
            return future.result()
        except Exception as exc:   # KilledWorker, a lost connection
            return Outcome(LOST, error=f"Dask lost the cell ({type(exc).__name__}: {exc})")

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def make_executor(kind: str, *, workers: int | None = None, wall_limit: float | None = None,
                  scheduler: str | None = None, scheduler_file: str | None = None) -> Executor:
    if kind == "serial":
        return SerialExecutor(wall_limit)
    if kind == "processes":
        return ProcessExecutor(workers, wall_limit)
    if kind == "dask":
        return DaskExecutor(workers, wall_limit, scheduler=scheduler, scheduler_file=scheduler_file)
    raise UsageError(f"unknown executor {kind!r}; choose serial, processes or dask")
