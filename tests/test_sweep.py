"""Sweeps: validation of sweep files, executors giving the same rows as a study, the results
store (resume, --force, interrupted runs), failures as data (errors, wall limits, lost workers),
and the plot command."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from mlsched.cli import main
from mlsched.errors import SweepFileError
from mlsched.instance.generators import generate_oasis
from mlsched.study import study, sweep
from mlsched.sweep import load_spec, spec_from_dict
from mlsched.sweep.spec import shipped_sweeps

ROOT = Path(__file__).resolve().parents[1]
TIMING = ["cell_seconds", "cell_cpu_seconds", "worker", "finished_at", "wall_seconds", "opt_seconds"]
TINY = {"name": "tiny", "system": "oasis",
        "fixed": {"jobs": 4, "horizon": 4, "profile": "small", "workers": 1, "ps_servers": 1},
        "grid": {"gamma1_range": [[50, 100], [1, 100]]}, "seeds": [0, 1], "algorithms": ["oasis", "fifo"],
        "exact": {"time_limit": 30}}

pytestmark = pytest.mark.xdist_group("sweep")


def comparable(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows without what depends on timing or the worker, in a fixed order."""
    return frame.drop(columns=[c for c in TIMING if c in frame]).sort_values(["cell", "algorithm"]) \
        .reset_index(drop=True)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The tiny sweep run serially into a store."""
    results = tmp_path_factory.mktemp("reference") / "results"
    frame = sweep(TINY, executor="serial", results=results, progress=False)
    return frame, results


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


# --- sweep files ---------------------------------------------------------------------------


@pytest.mark.parametrize("change, expected", [
    ({"system": "borg"}, "system: must be one of oasis, ogasched, themis, astraea, sow; got 'borg'"),
    ({"fixed": {"jobs": 4, "horizon": 4, "colour": 1}},
     "fixed.colour: unknown parameter of the oasis generator, its runs or the chosen algorithms; expected one of:"),
    ({"algorithms": ["oasis", "nope"]}, "algorithms[1]: unknown algorithm 'nope' for oasis; choose from"),
    ({"grid": {"gamma1_range": []}}, "grid.gamma1_range: must be a non-empty list of values, got a list"),
    ({"fixed": {"jobs": "four", "horizon": 4}}, "fixed.jobs: must be an integer, got the string 'four'"),
    ({"fixed": {"horizon": 4}}, "jobs: the oasis generator needs it: set it in fixed, grid or every case"),
    ({"seeds": [0, 0]}, "seeds: must not repeat a seed"),
    ({"exact": {"variant": "best"}}, "exact.variant: unknown variant 'best' of oasis; choose from paper, chunk"),
    ({"execution": {"executor": "slurm"}}, "execution.executor: must be one of serial, processes, dask; got 'slurm'"),
    ({"instances": ["no/such/*.json"], "fixed": {}, "grid": {}}, "instances[0]: 'no/such/*.json' matches no file (nor a shipped instance)"),
])
def test_bad_sweep_file_is_one_line_per_problem_and_exit_2(capsys, tmp_path, change, expected):
    doc = {**TINY, **change}
    path = tmp_path / "bad.yaml"
    path.write_text(json.dumps(doc))
    code, out, err = cli(capsys, "sweep", path, "-o", tmp_path / "results")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: {expected}")
    assert not (tmp_path / "results").exists()


def test_every_problem_is_reported(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("system: oasis\nfixed: {horizon: x}\nalgorithms: [oasis, nope]\nseeds: [-1]\n")
    with pytest.raises(SweepFileError) as info:
        load_spec(path)
    assert info.value.problems == [
        "algorithms[1]: unknown algorithm 'nope' for oasis; choose from oasis, oasis-ws, fifo, drf, rrh, dorm",
        "seeds[0]: must be an integer >= 0, got the number -1",
        "fixed.horizon: must be an integer, got the string 'x'",
        "jobs: the oasis generator needs it: set it in fixed, grid or every case"]


@pytest.mark.parametrize("algorithms, refused", [
    (["sow-adversarial", "greedy"], "fixed.eps: a run option that greedy refuses"),
    (["greedy", "reservation", "sow-fifo"], "fixed.eps: a run option that greedy, reservation refuse"),
    (["sow-adversarial", "sow-fifo"], None),
])
def test_run_option_a_chosen_algorithm_refuses_is_caught_before_any_cell(tmp_path, algorithms, refused):
    path = tmp_path / "sow.yaml"
    path.write_text(json.dumps({"system": "sow", "fixed": {"jobs": 3, "eps": 0.1}, "seeds": [0],
                                "algorithms": algorithms}))
    if refused is None:
        assert all(cell.run_options == {"eps": 0.1} for cell in load_spec(path).cells)
        return
    with pytest.raises(SweepFileError) as info:
        load_spec(path)
    assert info.value.problems == [f"{refused}: leave it out or choose algorithms that take it"]


@pytest.mark.parametrize("text, expected", [
    ("system: oasis\nfixed: {jobs: 4\n", "line 3 column 1: invalid YAML"),
    ("system: oasis\nsystem: themis\n", "line 2 column 1: repeats the key 'system'"),
    ("- just\n- a list\n", "(top level): must be an object, got a list"),
])
def test_malformed_sweep_file(capsys, tmp_path, text, expected):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    code, out, err = cli(capsys, "sweep", path, "--dry-run")
    assert code == 2 and out == "" and err.startswith(f"{path}: {expected}") and err.count("\n") == 1


def test_cells_expand_cases_grid_and_seeds():
    spec = spec_from_dict({"system": "themis", "fixed": {"workload": "W1", "apps": 5},
                           "cases": [{"gpus": 8, "load": 4}, {"gpus": 16, "load": 2}],
                           "grid": {"lease": [300, 600], "fairness_knob": [0.2, 0.8]},
                           "seeds": {"start": 3, "count": 2}, "algorithms": ["themis", "gandiva"],
                           "exact": {"enabled": False}})
    assert len(spec.cells) == 2 * 2 * 2 * 2
    first = spec.cells[0]
    assert first.generator == {"workload": "W1", "apps": 5, "gpus": 8, "load": 4.0}
    assert first.run_options == {"lease": 300.0} and first.policy_options == {"fairness_knob": 0.2}
    assert [c.seed for c in spec.cells[:2]] == [3, 4]
    assert spec.cells[2].policy_options == {"fairness_knob": 0.8} and spec.cells[4].run_options == {"lease": 600.0}
    assert len({c.key for c in spec.cells}) == len(spec.cells)


def test_shipped_sweep_files_are_valid(capsys):
    names = shipped_sweeps()
    assert {"oasis-fig3", "oasis-fig5", "ogasched-tab3", "themis-fig19", "astraea-fig5", "sow-ratio",
            "themis-where-wins"} <= set(names)
    for name in names:
        code, out, err = cli(capsys, "sweep", name, "--dry-run")
        assert code == 0 and err == "" and " cells (0 finished, " in out, name
        assert "Expected wall time on 2 cores" in (ROOT / "sweeps" / f"{name}.yaml").read_text()


# --- results -------------------------------------------------------------------------------


def test_sweep_rows_are_the_study_rows(reference):
    frame, _ = reference
    assert len(frame) == 4 * 2 and (frame["status"] == "ok").all() and (frame["attempts"] == 1).all()
    for seed in (0, 1):
        instances = [generate_oasis(4, 4, seed, profile="small", workers=1, ps_servers=1, gamma1_range=g)
                     for g in ((50, 100), (1, 100))]
        expected = study(instances, ["oasis", "fifo"], time_limit=30, seed=seed, progress=False)
        got = frame[frame["seed"] == seed]
        for column in ("instance", "algorithm", "total_utility", "opt", "opt_status", "ratio_low", "ratio_high",
                       "admitted", "two_alpha"):
            assert sorted(map(str, got[column])) == sorted(map(str, expected[column])), column
    assert (frame["opt_status"] == "optimal").all() and (frame["ratio_low"] >= 1 - 1e-9).all()
    assert frame["instance_hash"].str.fullmatch("[0-9a-f]{64}").all()
    assert set(frame["gamma1_range"]) == {"[50, 100]", "[1, 100]"} and (frame["jobs_setting"] == 4).all()


def test_store_reads_back_in_one_pandas_call(reference):
    frame, results = reference
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(results)), comparable(frame))
    assert not list(results.glob(".*"))   # no temporary file left


def test_processes_executor_gives_the_serial_rows(reference, tmp_path):
    frame = sweep(TINY, executor="processes", workers=2, results=tmp_path / "r", progress=False)
    pd.testing.assert_frame_equal(comparable(frame), comparable(reference[0]))
    assert frame["worker"].nunique() >= 1 and (frame["attempts"] == 1).all()


def test_dask_local_cluster_gives_the_serial_rows(reference, tmp_path):
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        # cells under a wall limit run in their own processes (the workers here are threads of this one)
        frame = sweep(TINY, results=tmp_path / "r", scheduler=cluster.scheduler_address, cell_time_limit=120,
                      progress=False)
    pd.testing.assert_frame_equal(comparable(frame), comparable(reference[0]))


def test_resume_skips_finished_cells_and_force_recomputes(reference, tmp_path, capsys):
    results = tmp_path / "r"
    spec = tmp_path / "tiny.yaml"
    spec.write_text(json.dumps(TINY))
    code, out, _ = cli(capsys, "sweep", spec, "-o", results, "--executor", "serial", "--quiet")
    assert code == 0 and out.startswith("4 cells: 4 ok, 0 failed, 0 finished before")
    stamps = {p.name: p.stat().st_mtime_ns for p in results.glob("ok-*.parquet")}
    assert len(stamps) == 4
    removed = sorted(stamps)[0]
    (results / removed).unlink()
    code, out, _ = cli(capsys, "sweep", spec, "-o", results, "--executor", "serial", "--quiet")
    assert code == 0 and out.startswith("4 cells: 1 ok, 0 failed, 3 finished before")
    after = {p.name: p.stat().st_mtime_ns for p in results.glob("ok-*.parquet")}
    assert {k: v for k, v in after.items() if k != removed} == {k: v for k, v in stamps.items() if k != removed}
    code, out, _ = cli(capsys, "sweep", spec, "--dry-run", "-o", results)
    assert out.startswith("4 cells (4 finished, 0 to run), 0 rows to compute") and "measured:" in out
    code, out, _ = cli(capsys, "sweep", spec, "-o", results, "--executor", "serial", "--quiet", "--force")
    assert code == 0 and out.startswith("4 cells: 4 ok, 0 failed, 0 finished before")
    forced = {p.name: p.stat().st_mtime_ns for p in results.glob("ok-*.parquet")}
    assert forced.keys() == stamps.keys() and all(forced[k] != stamps[k] for k in forced if k != removed)
    pd.testing.assert_frame_equal(comparable(pd.read_parquet(results)), comparable(reference[0]))


def test_another_sweep_is_refused_in_the_same_directory(reference, tmp_path, capsys):
    _, results = reference
    other = tmp_path / "other.yaml"
    other.write_text(json.dumps({**TINY, "seeds": [5]}))
    code, out, err = cli(capsys, "sweep", other, "-o", results, "--executor", "serial")
    assert code == 2 and "holds the results of another sweep" in err and "--force" in err
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep")
    code, _, err = cli(capsys, "sweep", other, "-o", foreign, "--executor", "serial")
    assert code == 2 and "not the results of a sweep" in err and (foreign / "notes.txt").read_text() == "keep"


def test_failing_cell_is_recorded_retried_and_counted(tmp_path, capsys):
    good = tmp_path / "good.json"
    good.write_text((ROOT / "tests" / "data" / "t1.json").read_text())
    bad = tmp_path / "bad.json"
    doc = json.loads(good.read_text())
    doc["jobs"][0]["arrival"] = "soon"
    bad.write_text(json.dumps(doc))
    spec = tmp_path / "files.yaml"
    spec.write_text("system: oasis\ninstances: ['*.json']\nalgorithms: [oasis]\nexecution: {retries: 2}\n")
    code, out, _ = cli(capsys, "sweep", spec, "-o", tmp_path / "r", "--executor", "serial", "--quiet")
    assert code == 1 and out.startswith("2 cells: 1 ok, 1 failed (1 error), 0 finished before; 2 retried attempt(s)")
    frame = pd.read_parquet(tmp_path / "r")
    failed = frame[frame["status"] == "error"].iloc[0]
    assert failed["attempts"] == 3 and failed["instance_file"] == str(bad)
    assert "jobs[0].arrival: must be" in failed["error"] and "Traceback" in failed["traceback"]
    ok = frame[frame["status"] == "ok"].iloc[0]
    assert ok["instance"] == "T1" and ok["opt"] == pytest.approx(27) and ok["total_utility"] == pytest.approx(27)


def test_cell_over_its_wall_limit_is_a_timeout(tmp_path):
    spec = {"system": "themis", "fixed": {"workload": "W1", "gpus": 64}, "algorithms": ["themis"],
            "exact": {"enabled": False}, "execution": {"cell_time_limit": 1, "retries": 1}}
    frame = sweep(spec, executor="serial", results=tmp_path / "r", progress=False)
    summary = frame.attrs["summary"]
    assert summary.failed == {"timeout": 1} and summary.retried == 1
    row = frame.iloc[0]
    assert row["status"] == "timeout" and row["attempts"] == 2 and "wall limit of 1 s" in row["error"]
    assert multiprocessing.active_children() == []


def test_lost_worker_process_is_recorded_and_retried(reference, tmp_path):
    """A pool worker killed mid-sweep: its cells come back lost, run again on a fresh pool."""
    spec = {**TINY, "fixed": {**TINY["fixed"], "jobs": 8, "horizon": 8}}
    result: dict[str, pd.DataFrame] = {}
    runner = threading.Thread(target=lambda: result.update(frame=sweep(
        spec, executor="processes", workers=1, results=tmp_path / "r", progress=False)))
    runner.start()
    while not list((tmp_path / "r").glob("ok-*.parquet")) and runner.is_alive():   # a cell done: others in flight
        time.sleep(0.05)
    victims = multiprocessing.active_children()
    assert victims
    for process in victims:
        os.kill(process.pid, signal.SIGKILL)
    runner.join(1800)       # a bound for a hung pool only: on a loaded machine the retries take minutes
    assert not runner.is_alive()
    frame = result["frame"]
    summary = frame.attrs["summary"]
    assert summary.ok == 4 and not summary.failed and summary.retried >= 1
    assert (frame["status"] == "ok").all() and (frame["attempts"] >= 2).any()


def _hold_output_capture_lock_and_die() -> None:
    """A cell process killed while a solver's output is captured: Pyomo's capture lock stays held."""
    from pyomo.common import dependencies

    dependencies.capture_output_lock.acquire()
    os.kill(os.getpid(), signal.SIGKILL)


def _output_capture_lock_free() -> bool:
    from pyomo.common import dependencies

    acquired = dependencies.capture_output_lock.acquire(timeout=5)
    if acquired:
        dependencies.capture_output_lock.release()
    return acquired


def test_a_process_killed_inside_output_capture_does_not_stall_the_next_cells():
    """Pyomo's capture lock is a semaphore that processes forked from the cell forkserver share; a
    sibling killed holding it must not leave the pool's later solves waiting for it."""
    from mlsched.sweep.executors import ProcessExecutor
    from mlsched.sweep.guard import cell_context

    context = cell_context()
    holder = context.Process(target=_hold_output_capture_lock_and_die)
    holder.start()
    holder.join(60)
    assert holder.exitcode == -signal.SIGKILL
    executor = ProcessExecutor(1, None)
    cell = spec_from_dict(TINY).cells[0]
    try:
        first = executor.submit(cell)              # starts the pool and its worker
        lock_free = executor.pool.submit(_output_capture_lock_free).result(60)
        outcome = executor.outcome(first)
    finally:
        executor.close()
    assert lock_free
    assert outcome.ok, outcome.error


def test_dask_worker_killed_mid_sweep_loses_nothing(reference, tmp_path):
    """A Dask worker process killed while cells run: Dask reruns its cells on the other worker
    (or on the worker its nanny restarts) and the store ends equal to the serial run's."""
    distributed = pytest.importorskip("dask.distributed")
    results = tmp_path / "r"
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        client.run(lambda: __import__("mlsched.sweep.warm"))   # both workers loaded before the clock starts
        outcome: dict[str, pd.DataFrame] = {}
        runner = threading.Thread(target=lambda: outcome.update(frame=sweep(
            TINY, results=results, scheduler=cluster.scheduler_address, progress=False)))
        runner.start()
        deadline = time.monotonic() + 120
        while not any(client.processing().values()) and time.monotonic() < deadline:
            time.sleep(0.01)
        busy = next(address for address, tasks in client.processing().items() if tasks)
        pid = client.run(os.getpid, workers=[busy])[busy]
        os.kill(pid, signal.SIGKILL)
        runner.join(300)
    frame = outcome["frame"]
    assert frame.attrs["summary"].ok == 4 and not frame.attrs["summary"].failed
    pd.testing.assert_frame_equal(comparable(frame), comparable(reference[0]))


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_interrupted_sweep_resumes_to_the_uninterrupted_result(reference, tmp_path, sig):
    spec = tmp_path / "tiny.yaml"
    seeds = list(range(12))      # 24 cells: far more than can finish between two polls, even under load
    spec.write_text(json.dumps({**TINY, "seeds": seeds}))
    cells = 2 * len(seeds)
    results = tmp_path / "r"
    command = [sys.executable, "-m", "mlsched", "sweep", str(spec), "-o", str(results), "--executor", "serial",
               "--quiet"]
    # started with SIGINT ignored, as a job a script puts in the background is (CI runners among
    # them): the command installs its own handler and still answers the interrupt
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    deadline = time.monotonic() + 120
    while len(list(results.glob("ok-*.parquet"))) < 2 and time.monotonic() < deadline and child.poll() is None:
        time.sleep(0.02)
    child.send_signal(sig)
    out, err = child.communicate(timeout=120)
    assert child.returncode == (130 if sig == signal.SIGINT else -signal.SIGKILL), err
    before = {p.name: p.stat().st_mtime_ns for p in results.glob("ok-*.parquet")}
    assert 2 <= len(before) < cells
    for path in results.glob("*.parquet"):
        pd.read_parquet(path)   # every stored file is whole
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"{cells} cells: {cells - len(before)} ok, 0 failed, {len(before)} finished before")
    assert {p.name: p.stat().st_mtime_ns for p in results.glob("ok-*.parquet") if p.name in before} == before
    assert not list(results.glob(".*.tmp"))
    final = comparable(pd.read_parquet(results))
    first_half = final[final["seed"] < 2].reset_index(drop=True)
    pd.testing.assert_frame_equal(first_half.drop(columns=["sweep"]),
                                  comparable(reference[0]).drop(columns=["sweep"]), check_like=True)


# --- plots ---------------------------------------------------------------------------------


def test_plot_writes_images(reference, tmp_path, capsys):
    _, results = reference
    for kind, extra in (("line", ["--x", "gamma1_range"]), ("box", []), ("ecdf", [])):
        figure = tmp_path / f"{kind}.png"
        code, out, _ = cli(capsys, "plot", results, "--y", "ratio", "--kind", kind, *extra, "-o", figure)
        assert code == 0 and out == f"wrote {figure} (8 rows)\n"
        assert figure.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and figure.stat().st_size > 10_000
    code, _, err = cli(capsys, "plot", results, "--x", "gamma1_range", "-o", tmp_path / "line.png")
    assert code == 2 and "exists; pass --force" in err
    code, _, err = cli(capsys, "plot", results, "--x", "colour", "-o", tmp_path / "new.png")
    assert code == 2 and err.startswith(f"{results}: no column 'colour'; columns: sweep, cell,")
    assert not (tmp_path / "new.png").exists()


def test_line_of_a_score_follows_its_mean_per_point(reference):
    """A score without an interval (total utility) is drawn as its mean per x, one line per algorithm."""
    import matplotlib

    matplotlib.use("Agg")
    from mlsched import plot

    frame, _ = reference
    ax = plot.sweep_line(frame, "seed", "total_utility")
    expected = frame.groupby(["algorithm", "seed"])["total_utility"].mean()
    lines = {line.get_label(): line for line in ax.get_lines()}
    assert set(lines) == set(frame["algorithm"])
    for name, line in lines.items():
        assert list(line.get_xdata()) == list(expected[name].index)
        assert list(line.get_ydata()) == pytest.approx(list(expected[name]))
