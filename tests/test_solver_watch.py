"""Ctrl-C stops an exact solve at once, and a long solve says how far it is.

Each case runs in a fresh interpreter that installs Python's own SIGINT handler (a test runner
may have SIGINT ignored) and interrupts itself once the solve has reported progress, so the
signal lands while HiGHS searches. The program is OASiS's on 30 jobs and 30 slots, which HiGHS
does not prove within minutes; its time limit (300 s) is what a plain ``h.run()`` would wait for.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest

from mlsched.solver_watch import SolverProgress, solver_progress

ROOT = Path(__file__).resolve().parents[1]

HARD_PROGRAM = """
import os, signal, sys, threading
signal.signal(signal.SIGINT, signal.default_int_handler)
from mlsched.formulations import oasis, oasis_arrays
from mlsched.instance.generators.oasis import generate_oasis
from mlsched.solver_watch import solver_progress
instance = generate_oasis(jobs=30, horizon=30, seed=1)
heard = []
def interrupt_once_searching(progress):
    heard.append(progress)
    if len(heard) == 2:   # the solve is under way: the user's Ctrl-C
        os.kill(os.getpid(), signal.SIGINT)
"""


def run_script(body: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", HARD_PROGRAM + textwrap.dedent(body)], capture_output=True,
                          text=True, timeout=600)


def test_ctrl_c_stops_the_pyomo_solve_and_raises_keyboard_interrupt() -> None:
    done = run_script("""
        from mlsched.solve import solve
        built = oasis.build(instance)
        with solver_progress(interrupt_once_searching):
            try:
                solve(built, time_limit=300)
            except KeyboardInterrupt:
                print("interrupted after", len(heard), "reports, at", round(heard[-1].seconds, 1), "s")
                sys.exit(0)
        print("the solve ended without the interrupt")
        sys.exit(1)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.startswith("interrupted after 2 reports")


def test_ctrl_c_stops_the_array_solve_which_reports_its_search() -> None:
    done = run_script("""
        import highspy
        from mlsched import solve as solvers
        from mlsched.solver_watch import run_watched
        program = oasis_arrays.build_arrays(instance).program
        h = solvers.load_arrays(program, time_limit=300)
        seen = []
        def searching_then_interrupt(progress):
            seen.append(progress)
            if progress.mip and progress.incumbent is not None and not heard:
                interrupt_once_searching(progress)
                interrupt_once_searching(progress)
        with solver_progress(searching_then_interrupt):
            try:
                run_watched(h)
            except KeyboardInterrupt:
                status = h.getModelStatus()
                last = seen[-1]
                print(status == highspy.HighsModelStatus.kInterrupt, last.incumbent <= last.bound,
                      all(a.seconds < b.seconds for a, b in zip(seen, seen[1:])), last.describe())
                sys.exit(0)
        print("the solve ended without the interrupt", h.modelStatusToString(h.getModelStatus()))
        sys.exit(1)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    interrupted, ordered, rising, line = done.stdout.split(" ", 3)
    assert (interrupted, ordered, rising) == ("True", "True", "True")
    assert line.startswith("HiGHS: incumbent ") and ", bound " in line and ", gap " in line


def test_keyboard_interrupt_is_raised_only_once_highs_has_returned() -> None:
    """The signal from another thread, landing while the caller waits: Thread.join interrupted by
    KeyboardInterrupt marks the thread ended (Python 3.11), and the interrupt used to be raised with
    HiGHS still searching."""
    done = run_script("""
        from mlsched import solve as solvers
        from mlsched.solver_watch import run_watched
        h = solvers.load_arrays(oasis_arrays.build_arrays(instance).program, time_limit=300)
        returned = []
        def run():
            try:
                return h.run()
            finally:
                returned.append(True)
        threading.Timer(3.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
        try:
            run_watched(h, run)
        except KeyboardInterrupt:
            print("returned before the raise:", bool(returned),
                  h.modelStatusToString(h.getModelStatus()))
            sys.exit(0)
        sys.exit(1)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "returned before the raise: True Interrupted by user"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process's children from /proc")
def test_ctrl_c_ends_the_solve_in_a_child_process() -> None:
    done = run_script("""
        from pathlib import Path
        from mlsched.solve import HARD_STOP_GRACE, solve_arrays_by_deadline
        program = oasis_arrays.build_arrays(instance).program
        def children():
            return [c for task in Path("/proc/self/task").iterdir() for c in (task / "children").read_text().split()]
        with solver_progress(interrupt_once_searching):
            try:
                solve_arrays_by_deadline(program, time_limit=300, grace=HARD_STOP_GRACE)
            except KeyboardInterrupt:
                print(heard[-1].where, "interrupted; children left:", len(children()))
                sys.exit(0)
        print("the solve ended without the interrupt")
        sys.exit(1)
    """)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "HiGHS (own process) interrupted; children left: 0"


@pytest.mark.parametrize("progress, expected", [
    (SolverProgress(0.5), "HiGHS: 0.5 s"),
    (SolverProgress(0.0, where="SCIP", note="verifying"), "SCIP: verifying"),
    (SolverProgress(2.0, iterations=25366), "HiGHS: LP, 25,366 simplex iterations"),
    (SolverProgress(2.0, mip=True), "HiGHS: no incumbent yet"),
    (SolverProgress(2.0, mip=True, incumbent=716.637, bound=780.994, nodes=1234),
     "HiGHS: incumbent 716.637, bound 780.994, gap 8.98 %, 1,234 nodes"),
    (SolverProgress(2.0, mip=True, incumbent=-0.5, bound=0.0), "HiGHS: incumbent -0.5, bound 0, gap 50 %"),
])
def test_progress_describes_what_the_solver_reported(progress, expected) -> None:
    assert progress.describe() == expected


def test_each_thread_hears_its_own_solves_and_blocks_may_end_in_any_order() -> None:
    """The listener was one module-wide setting: a solve in one thread reported to another thread's
    listener, and blocks ending out of order left a listener installed for good."""
    from concurrent.futures import ThreadPoolExecutor

    from mlsched import solver_watch
    from mlsched.solve import ArrayProgram, solve_arrays

    program = ArrayProgram(cost=np.array([1.0]), col_lower=np.zeros(1), col_upper=np.ones(1),
                           row_lower=np.zeros(0), row_upper=np.zeros(0), a_start=np.zeros(2, dtype=np.int32),
                           a_index=np.zeros(0, dtype=np.int32), a_value=np.zeros(0))
    entered, heard = threading.Barrier(2), {"A": [], "B": []}
    first_out = threading.Event()

    def job(name: str) -> float | None:
        with solver_progress(lambda p: heard[name].append(threading.current_thread().name)):
            entered.wait()
            if name == "A":
                first_out.wait()   # B's block ends first
            solver_watch.report_progress(SolverProgress(1.0))
            value = solve_arrays(program).objective
        if name == "B":
            first_out.set()
        return value

    with ThreadPoolExecutor(2) as pool:
        a, b = pool.submit(job, "A"), pool.submit(job, "B")
        assert a.result(60) == b.result(60) == 1.0
    assert len(heard["A"]) == len(heard["B"]) == 1 and heard["A"] != heard["B"]
    assert solver_watch._listener.get() is None


def test_a_quiet_study_leaves_the_callers_listener_in_place(monkeypatch) -> None:
    """study(progress=False) used to set no listener for its exact solve, silencing the caller's."""
    from mlsched import solver_watch
    from mlsched.study import study

    monkeypatch.setattr(solver_watch, "PROGRESS_SECONDS", 0.001)   # a short solve reports too
    heard: list[SolverProgress] = []
    with solver_progress(heard.append):
        study([ROOT / "instances" / "oasis" / "fig5-small-seed0.json"], ["fifo"], progress=False)
    assert any(p.where == "HiGHS" for p in heard) and {p.where for p in heard} <= {"HiGHS", "SCIP"}


def test_listener_is_restored_after_the_block() -> None:
    from mlsched import solver_watch

    outer, inner = [], []
    with solver_progress(outer.append):
        with solver_progress(inner.append):
            solver_watch.report_progress(SolverProgress(1.0))
        solver_watch.report_progress(SolverProgress(2.0))
    solver_watch.report_progress(SolverProgress(3.0))
    assert [p.seconds for p in inner] == [1.0] and [p.seconds for p in outer] == [2.0]


@pytest.fixture(scope="module")
def hard_file(tmp_path_factory) -> Path:
    """OASiS's 30 x 30 program as an instance file, named with a lone surrogate (JSON accepts it;
    a strict stream cannot write it)."""
    import json

    from mlsched.instance import save
    from mlsched.instance.generators.oasis import generate_oasis

    path = tmp_path_factory.mktemp("hard") / "hard.json"
    save(generate_oasis(jobs=30, horizon=30, seed=1), path)
    doc = json.loads(path.read_text())
    doc["name"] = "hard-\udcff"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize("stderr", ["closed", "reader gone"])
def test_a_progress_line_that_cannot_be_written_does_not_stop_the_solve(hard_file, stderr) -> None:
    """No stderr (2>&-), or its reader gone (2> >(head -c 60)), or a name the strict copy of
    stderr could not encode: the solve used to end in a traceback (exit 1), or with exit 0 and
    nothing printed (the BrokenPipeError taken for stdout's)."""
    import os

    command = [sys.executable, "-m", "mlsched", "solve", str(hard_file), "--time-limit", "3", "--no-verify"]
    if stderr == "closed":
        child = subprocess.Popen(command, stdout=subprocess.PIPE, preexec_fn=lambda: os.close(2))
    else:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        child.stderr.close()
    out, _ = child.communicate(timeout=300)
    assert child.returncode == 0 and out.startswith(b"status feasible, objective "), out


def test_a_name_the_terminal_cannot_encode_is_escaped_in_the_progress_line(hard_file) -> None:
    done = subprocess.run([sys.executable, "-m", "mlsched", "solve", str(hard_file), "--time-limit", "3",
                           "--no-verify"], capture_output=True, timeout=300)
    assert done.returncode == 0 and done.stdout.startswith(b"status feasible, objective ")
    assert b"running hard-\\udcff (HiGHS: " in done.stderr, done.stderr


def test_solve_command_shows_highs_progress_on_the_terminal_during_pyomo_solves(tmp_path) -> None:
    """`mlsched solve` names the instance and what HiGHS last reported, once the solve has gone a
    second. With --verify the program goes through Pyomo, which points descriptor 2 at a pipe
    while HiGHS runs: the line is written to a copy of the terminal's descriptor made before, and
    reaches it. While SCIP verifies, the line says so and its elapsed time is redrawn each second
    (it used to stand still). --quiet shows nothing."""
    from mlsched.instance import save
    from mlsched.instance.generators.oasis import generate_oasis

    path = tmp_path / "hard.json"
    save(generate_oasis(jobs=30, horizon=30, seed=1), path)
    command = [sys.executable, "-m", "mlsched", "solve", str(path), "--verify", "--time-limit", "10"]
    shown = subprocess.run(command, capture_output=True, timeout=300)   # bytes: the frames end in \r
    assert shown.returncode == 0 and shown.stdout.startswith(b"status feasible, objective ")
    frames = shown.stderr.decode().split("\r")
    searching = [frame for frame in frames if "running oasis-feasible-j30-t30-s1 (HiGHS: " in frame
                 and ("incumbent" in frame)]   # the MIP's search: the Pyomo solve (the others are LPs)
    assert searching, frames
    # SCIP's half of the limit: it reports nothing, the line says so and its clock still moves
    verifying = {frame.split("]")[0] for frame in frames if frame.rstrip().endswith("(SCIP: verifying)")}
    assert len(verifying) >= 2, frames
    assert frames[-1].strip() == "" and frames[-2].strip() == ""   # wiped at the end
    quiet = subprocess.run([*command, "--quiet"], capture_output=True, text=True, timeout=300)
    assert quiet.returncode == 0 and quiet.stderr == ""
