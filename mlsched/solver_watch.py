"""HiGHS solves that Ctrl-C stops and that say how far they are.

A plain ``h.run()`` holds the calling thread in native code for the whole solve, and Python runs
its signal handlers only between bytecodes of the main thread: Ctrl-C during an exact solve used
to wait for the time limit (or the optimum), and nothing could be shown meanwhile.
:func:`run_watched` runs ``h.run()`` on a thread of its own while the caller's thread waits:

- Ctrl-C (KeyboardInterrupt in the waiting thread) asks HiGHS to stop through its interrupt
  callbacks (simplex, IPM, MIP), waits until it has (HiGHS checks between steps: within a second
  or so in the search, a few seconds in some root-node phases), then raises KeyboardInterrupt, so
  commands print what finished and exit 130;
- the listener of :func:`solver_progress`, if one is active in the calling thread, hears a
  :class:`SolverProgress` every PROGRESS_SECONDS from that thread (not HiGHS's), with the
  incumbent, bound and node count the MIP callbacks last reported.

Each watched solve starts HiGHS's thread pool on its own thread and shuts it down after (HiGHS's
scheduler is per thread), so no solver thread outlives the solve. Starting the pool is most of the
cost: about 0.3 ms per solve with HiGHS's default thread count on two cores, 1 ms with eight
threads. Every solve of mlsched is watched except the Themis auction programs, solved thousands
of times in a run, which keep the plain ``h.run()``.

A listener called during a solve through Pyomo (:func:`mlsched.solve.solve`) runs while Pyomo
captures the process's output (descriptors 1 and 2, for HiGHS's log): what it prints goes to that
log. :func:`mlsched.study.solve_progress` writes its line through a copy of descriptor 2 made
before the solve.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

PROGRESS_SECONDS = 0.5   # how often an active listener hears from a solve


@dataclass(frozen=True)
class SolverProgress:
    """How far a solve is: seconds since it started; in a MIP's search (``mip``), the best
    objective found and HiGHS's dual bound (None until it has one) and the branch-and-bound nodes;
    in an LP, the simplex iterations. Before either has reported, only the seconds."""

    seconds: float
    mip: bool = False
    incumbent: float | None = None
    bound: float | None = None
    nodes: int = 0
    iterations: int = 0
    where: str = "HiGHS"
    note: str = ""   # what the solver does, when it reports nothing else (SCIP verifying)

    @property
    def gap(self) -> float | None:
        if self.incumbent is None or self.bound is None:
            return None
        return abs(self.bound - self.incumbent) / max(1.0, abs(self.incumbent))

    def describe(self) -> str:
        """``HiGHS: incumbent 716.64, bound 807.84, gap 12.7 %, 1,234 nodes``; ``HiGHS: LP, 25,366
        simplex iterations``; ``HiGHS: 3.0 s``; ``SCIP: verifying``."""
        if self.note:
            return f"{self.where}: {self.note}"
        if not self.mip:
            done = f"LP, {self.iterations:,} simplex iterations" if self.iterations else f"{self.seconds:.1f} s"
            return f"{self.where}: {done}"
        parts = [f"incumbent {self.incumbent:.6g}" if self.incumbent is not None else "no incumbent yet"]
        if self.bound is not None:
            parts.append(f"bound {self.bound:.6g}")
        if self.gap is not None:
            parts.append(f"gap {100 * self.gap:.3g} %")
        if self.nodes:
            parts.append(f"{self.nodes:,} nodes")
        return f"{self.where}: {', '.join(parts)}"


Listener = Callable[[SolverProgress], None]
_listener: ContextVar[Listener | None] = ContextVar("mlsched_solver_listener", default=None)


@contextmanager
def solver_progress(listener: Listener | None) -> Iterator[None]:
    """Watched solves started inside the block, in this thread, report to ``listener`` (None: to
    nobody); the listener active before is restored after it. Other threads keep their own."""
    token = _listener.set(listener)
    try:
        yield
    finally:
        _listener.reset(token)


def report_progress(progress: SolverProgress) -> None:
    """Hand ``progress`` to the active listener, if any (for solves watched another way, e.g. a
    solve in a child process, whose progress is its elapsed time)."""
    listener = _listener.get()
    if listener is not None:
        listener(progress)


def run_watched(h: Any, run: Callable[[], Any] | None = None) -> None:
    """``h.run()`` for a ``highspy.Highs`` ``h`` (or ``run()``, when given, a call that runs it),
    stoppable by Ctrl-C and reporting to the active listener (see the module docstring). Whatever
    the run raises is raised here."""
    import highspy

    stop = threading.Event()
    latest: dict[str, float] = {}

    def check(event: Any) -> None:   # on HiGHS's thread, at each of its interrupt checks
        if stop.is_set():
            event.interrupt()

    def record_lp(event: Any) -> None:
        latest["iterations"] = event.data_out.simplex_iteration_count
        check(event)

    def record_mip(event: Any) -> None:
        data = event.data_out
        latest.update(mip=1, incumbent=data.mip_primal_bound, bound=data.mip_dual_bound, nodes=data.mip_node_count)
        check(event)

    failure: list[BaseException] = []
    finished = threading.Event()   # not Thread.join: one interrupted by Ctrl-C can mark the thread ended

    def solve_here() -> None:
        try:
            (run or h.run)()
        except BaseException as exc:   # handed to the waiting thread, which raises it
            failure.append(exc)
        finally:
            highspy.Highs.resetThreadScheduler(False)
            finished.set()

    subscriptions = [(h.cbSimplexInterrupt, record_lp), (h.cbIpmInterrupt, check), (h.cbMipInterrupt, record_mip)]
    for callback, handler in subscriptions:
        callback.subscribe(handler)
    started = time.perf_counter()
    solver = threading.Thread(target=solve_here, name="highs-solve", daemon=True)
    solver.start()
    try:
        while not finished.wait(PROGRESS_SECONDS):
            report_progress(_progress(time.perf_counter() - started, latest))
    except BaseException:   # Ctrl-C, or a listener's error: HiGHS stops before the caller goes on
        stop.set()
        _wait_through_interrupts(finished)
        raise
    finally:
        for callback, handler in subscriptions:
            callback.unsubscribe(handler)
    if failure:
        raise failure[0]


def _progress(seconds: float, latest: dict[str, float]) -> SolverProgress:
    def finite(name: str) -> float | None:
        value = latest.get(name)
        return value if value is not None and abs(value) < float("inf") else None

    return SolverProgress(seconds, "mip" in latest, finite("incumbent"), finite("bound"), int(latest.get("nodes", 0)),
                          int(latest.get("iterations", 0)))


def _wait_through_interrupts(finished: threading.Event) -> None:
    """Wait until the solve has ``finished``; a further Ctrl-C meanwhile does not cut the wait short
    (HiGHS, asked to stop, answers at its next check, and the caller must not go on while it runs)."""
    while True:
        try:
            finished.wait()
            return
        except KeyboardInterrupt:
            continue
