"""The mlsched command end to end: outputs, JSON keys, exit codes, nothing overwritten."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from mlsched.cli import main

ROOT = Path(__file__).resolve().parents[1]
T1 = ROOT / "tests" / "data" / "t1.json"


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate(capsys):
    code, out, _ = cli(capsys, "validate", T1)
    assert code == 0 and "valid cluster-jobs instance 'T1': 4 jobs, horizon 3" in out


def test_bad_file_is_one_line_and_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    doc = json.loads(T1.read_text())
    doc["jobs"][3]["utility"] = {"kind": "sigmoid", "gamma1": 5, "gamma2": -1, "gamma3": 1}
    bad.write_text(json.dumps(doc))
    for command in ("validate", "solve", "compare"):
        code, out, err = cli(capsys, command, bad)
        assert code == 2 and out == ""
        assert err == f"{bad}: jobs[3].utility.gamma2: must be >= 0, got -1\n"


def test_solve_json_and_model_export(capsys, tmp_path):
    code, out, _ = cli(capsys, "solve", T1, "--json", "--verify")
    doc = json.loads(out)
    assert code == 0
    assert {"status", "objective", "bound", "gap"} <= set(doc)
    assert doc["status"] == "optimal" and doc["objective"] == pytest.approx(27) and doc["verified"] is True
    code, out, _ = cli(capsys, "solve", T1, "--relax")
    assert code == 0 and "objective 28" in out
    model = tmp_path / "m.mps"
    code, _, _ = cli(capsys, "solve", T1, "--write", model)
    assert code == 0 and model.read_text().startswith(("NAME", "*"))
    model.write_text("keep me")
    code, _, err = cli(capsys, "solve", T1, "--write", model)
    assert code == 2 and "exists" in err and model.read_text() == "keep me"


def test_run_and_compare(capsys):
    code, out, _ = cli(capsys, "run", T1, "--algorithm", "oasis", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["algorithm"] == "oasis" and doc["total_utility"] == pytest.approx(27)
    code, out, _ = cli(capsys, "compare", T1, "--algorithms", "oasis,fifo", "--json", "--quiet")
    rows = json.loads(out)
    assert code == 0 and [r["algorithm"] for r in rows] == ["oasis", "fifo"]
    assert rows[0]["ratio"] == pytest.approx(1.0) and rows[0]["opt"] == pytest.approx(27)
    assert rows[0]["opt_verified"] is True
    code, out, _ = cli(capsys, "compare", T1, "--algorithms", "oasis", "--quiet")
    assert code == 0 and "oasis" in out and "27.0000" in out and "ratio" in out
    code, out, _ = cli(capsys, "compare", T1, "--algorithms", "oasis", "--csv", "--quiet")
    assert out.splitlines()[0].startswith("instance,algorithm,total_utility")


def test_same_seed_same_json(capsys):
    def strip(doc):
        if isinstance(doc, list):
            return [strip(d) for d in doc]
        return {k: v for k, v in doc.items() if "seconds" not in k}
    outs = []
    for _ in range(2):
        _, out, _ = cli(capsys, "compare", T1, "--algorithms", "oasis,fifo,drf,rrh", "--json", "--quiet", "--seed", "3")
        outs.append(strip(json.loads(out)))
    assert outs[0] == outs[1]


def test_unknown_algorithm_and_bad_flags(capsys, monkeypatch):
    code, _, err = cli(capsys, "run", T1, "--algorithm", "nope")
    assert code == 2 and err.startswith("unknown algorithm 'nope' for oasis")
    from mlsched.systems import System

    executed = []
    monkeypatch.setattr(System, "execute", lambda self, instance, policy, **options: executed.append(policy))
    code, _, err = cli(capsys, "compare", T1, "--algorithms", "oasis,nope", "-q")   # before oasis runs
    assert code == 2 and err.startswith("unknown algorithm 'nope' for oasis") and executed == []
    code, _, err = cli(capsys, "compare", T1, "--algorithms", "fifo,oasis,fifo", "-q")   # two equal rows before
    assert code == 2 and err.startswith("fifo named more than once") and executed == []
    for empty in ("", " , "):   # an unset variable in a script: it used to run the whole default set
        code, _, err = cli(capsys, "compare", T1, "--algorithms", empty, "-q")
        assert code == 2 and err == f"--algorithms {empty!r} names no algorithm; leave it out for the " \
                                    "system's comparison set\n" and executed == []
    with pytest.raises(SystemExit) as info:
        main(["solve", str(T1), "--time-limit", "-3"])
    assert info.value.code == 2


def test_generate_refuses_to_overwrite(capsys, tmp_path):
    target = tmp_path / "g.json"
    code, out, _ = cli(capsys, "generate", "oasis", "--jobs", "5", "--horizon", "10", "--seed", "1",
                       "--profile", "small", "-o", target)
    assert code == 0 and target.exists()
    before = target.read_text()
    code, _, err = cli(capsys, "generate", "oasis", "--jobs", "6", "--horizon", "10", "-o", target)
    assert code == 2 and "exists" in err and target.read_text() == before
    code, _, _ = cli(capsys, "validate", target)
    assert code == 0


def test_console_script_runs():
    done = subprocess.run([sys.executable, "-m", "mlsched.cli", "validate", str(T1)], capture_output=True, text=True)
    assert done.returncode == 0 and "valid" in done.stdout
    done = subprocess.run([sys.executable, "-m", "mlsched.cli", "validate", "/nonexistent.json"],
                          capture_output=True, text=True)
    assert done.returncode == 2 and done.stderr == "/nonexistent.json: file not found (nor a shipped instance: `mlsched instances` lists them)\n"


def test_interrupted_study_prints_finished_rows_and_exits_130(capsys, monkeypatch):
    import mlsched.sim as sim_module

    real_run = sim_module.run
    calls = {"n": 0}

    def run_then_interrupt(instance, policy, **kwargs):
        calls["n"] += 1
        if calls["n"] > 1:
            raise KeyboardInterrupt
        return real_run(instance, policy, **kwargs)

    monkeypatch.setattr(sim_module, "run", run_then_interrupt)
    code, out, err = cli(capsys, "study", T1, ROOT / "tests" / "regressions" / "highs-presolve-wrong-optimum.json",
                         "--algorithms", "oasis", "--quiet")
    assert code == 130
    assert "interrupted: 1 row(s) finished" in err
    lines = out.splitlines()
    assert len(lines) == 2 and lines[1].split()[:2] == ["oasis", "27.0000"]


OGA = ROOT / "instances" / "ogasched" / "default-t200-seed0.json"


def test_multi_server_family_end_to_end(capsys, tmp_path):
    code, out, _ = cli(capsys, "validate", OGA)
    assert code == 0 and "10 job types, 128 nodes" in out
    code, out, _ = cli(capsys, "solve", OGA, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["status"] == "optimal" and doc["verified"] is True
    code, out, _ = cli(capsys, "run", OGA, "--algorithm", "fairness", "--json")
    assert code == 0 and json.loads(out)["reward"] > 0
    code, out, _ = cli(capsys, "compare", OGA, "--algorithms", "ogasched,fairness,drf", "--json", "--quiet")
    rows = json.loads(out)
    assert [r["algorithm"] for r in rows] == ["ogasched", "fairness", "drf"]
    assert all(r["ratio"] >= 1 - 1e-9 and "regret" in r for r in rows)
    code, _, err = cli(capsys, "solve", OGA, "--relax")
    assert code == 2 and "already continuous" in err
    target = tmp_path / "o.json"
    code, out, _ = cli(capsys, "generate", "ogasched", "--preset", "fig7-poly", "--horizon", "20", "-o", target)
    assert code == 0 and json.loads(target.read_text())["nodes"][0]["utility"]["gpu"] == "poly"
    code, _, err = cli(capsys, "generate", "ogasched", "--preset", "fig99", "-o", tmp_path / "p.json", "--force")
    assert code == 2 and err.startswith("unknown preset 'fig99'")


def test_interrupted_study_with_no_finished_row_writes_no_file(capsys, monkeypatch, tmp_path):
    import mlsched.sim as sim_module

    def interrupt(instance, policy, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(sim_module, "run", interrupt)
    target = tmp_path / "out.csv"
    code, _, err = cli(capsys, "study", T1, "--algorithms", "oasis", "--quiet", "-o", target)
    assert code == 130 and not target.exists()
    assert f"no row finished; {target} not written" in err


@pytest.mark.parametrize("text, problem", [
    ("[" * 200_000 + "]" * 200_000, "nested 200000 levels deep; instance files nest at most 64"),
    ('{"format": "mlsched/v1", "format": "mlsched/v1"}', "duplicate key 'format' in one object"),
])
def test_hostile_json_is_one_line_and_exit_2(capsys, tmp_path, text, problem):
    bad = tmp_path / "bad.json"
    bad.write_text(text)
    code, out, err = cli(capsys, "validate", bad)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"{bad}: {problem}")


def test_brackets_inside_strings_do_not_count_as_nesting(capsys, tmp_path):
    doc = json.loads(T1.read_text())
    doc["name"] = "[" * 100 + '"{'
    target = tmp_path / "deep-name.json"
    target.write_text(json.dumps(doc))
    code, out, _ = cli(capsys, "validate", target)
    assert code == 0 and "valid cluster-jobs instance" in out


def test_shipped_instances_by_name_from_any_folder(capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(capsys, "instances")
    names = [line.split()[0] for line in out.splitlines()]
    assert code == 0 and "oasis/fig5-small-seed0" in names and "themis/o1-small" in names
    assert all(name.count("/") == 1 for name in names)
    code, out, _ = cli(capsys, "validate", "oasis/fig5-small-seed0")
    assert code == 0 and "valid cluster-jobs instance" in out
    code, _, err = cli(capsys, "validate", "oasis/../oasis/fig5-small-seed0")
    assert code == 2 and "file not found" in err


def test_multi_server_file_without_channels_is_rejected(capsys, tmp_path):
    doc = json.loads(OGA.read_text())
    doc["channels"] = []
    bad = tmp_path / "no-channels.json"
    bad.write_text(json.dumps(doc))
    code, out, err = cli(capsys, "solve", bad)
    assert code == 2 and out == ""
    assert err == f"{bad}: channels: must list at least one [port, node] pair (no port could be served)\n"


def test_generate_themis_slice(capsys, tmp_path):
    from mlsched.instance import load
    from mlsched.instance.generators.themis import generate_themis

    target = tmp_path / "slice.json"
    code, out, _ = cli(capsys, "generate", "themis", "--gpus", "16", "--apps", "5", "--start", "3600", "-o", target)
    assert code == 0 and "5 apps" in out
    sliced = load(target)
    assert sliced.meta["slice"] == {"start_seconds": 3600.0, "apps": 5}
    whole = generate_themis(gpus=16)
    later = sorted((a for a in whole.apps if a.arrival >= 3600), key=lambda a: a.arrival)[:5]
    first = later[0].arrival
    assert [(a.name, a.arrival - first, a.phases, a.profile) for a in sorted(later, key=lambda a: a.name)] == \
        [(a.name, a.arrival, a.phases, a.profile) for a in sorted(sliced.apps, key=lambda a: a.name)]


def test_json_output_is_pure_json_in_a_fresh_process():
    """HiGHS prints a banner when a process makes its first solver object; it must not reach the
    JSON on stdout (the solve without verification goes straight to HiGHS)."""
    done = subprocess.run([sys.executable, "-m", "mlsched.cli", "solve", str(T1), "--no-verify", "--json"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["status"] == "optimal" and doc["objective"] == pytest.approx(27)


THEMIS_SMALL = ROOT / "instances" / "themis" / "o1-small.json"


@pytest.mark.parametrize("change, problem", [
    (lambda d: d["cluster"]["machines"][0].update(slots=[1_000_000_000]),
     "cluster.machines[0].slots[0]: must be an integer in [1, 64] (GPUs in the slot), got the number 1000000000"),
    (lambda d: d["cluster"].update(machines=[{"rack": 0, "slots": [64] * 16}] * 1000),
     "cluster.machines: hold 1024000 GPUs in all, more than the 1000000 a cluster may have"),
    (lambda d: d["apps"][0].update(arrival=1e308), "apps[0].arrival: must be <= 1e+15"),
])
def test_themis_sizes_are_bounded_before_allocating(capsys, tmp_path, change, problem):
    doc = json.loads(THEMIS_SMALL.read_text())
    change(doc)
    bad = tmp_path / "huge.json"
    bad.write_text(json.dumps(doc))
    code, out, err = cli(capsys, "validate", bad)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert err.startswith(f"{bad}: {problem}")


def test_compare_shows_the_algorithm_running_and_its_slot(capsys):
    """The progress line names the run under way and how many of its slots are done."""
    inst = ROOT / "instances" / "oasis" / "fig5-small-seed0.json"
    assert main(["compare", str(inst), "--algorithms", "fifo,dorm", "--no-exact"]) == 0
    err = capsys.readouterr().err
    horizon = json.loads(inst.read_text())["horizon"]
    for name in ("fifo", "dorm"):
        assert f"running oasis-small-j10-t10-s0: {name} ({horizon}/{horizon})" in err
    assert main(["compare", str(inst), "--algorithms", "fifo,dorm", "--no-exact", "--quiet"]) == 0
    assert "running" not in capsys.readouterr().err


def test_run_shows_its_progress_once_it_takes_long(capsys, monkeypatch):
    """`run` names the run under way and how far it is (here each slot), once the run has gone
    RUN_PROGRESS_DELAY seconds; --quiet shows nothing."""
    from mlsched import study

    inst = ROOT / "instances" / "oasis" / "fig5-small-seed0.json"
    horizon = json.loads(inst.read_text())["horizon"]
    monkeypatch.setattr(study, "RUN_PROGRESS_DELAY", 0.0)
    code, out, err = cli(capsys, "run", inst, "-a", "dorm", "--json")
    assert code == 0 and json.loads(out)["algorithm"] == "dorm"
    assert f"running oasis-small-j10-t10-s0: dorm ({horizon}/{horizon})" in err
    code, out, err = cli(capsys, "run", inst, "-a", "dorm", "--json", "--quiet")
    assert code == 0 and err == ""
    monkeypatch.setattr(study, "RUN_PROGRESS_DELAY", 3600.0)
    code, out, err = cli(capsys, "run", inst, "-a", "dorm", "--json")
    assert code == 0 and err == ""


def test_a_progress_line_shown_after_its_delay_is_wiped_when_the_run_ends(capsys):
    # it was left on the terminal, and the result printed after it was glued onto it
    from mlsched.study import run_progress

    with run_progress("inst: alg", delay=0.05) as heard:
        time.sleep(0.1)
        heard(10, 10)
    frames = capsys.readouterr().err.split("\r")
    assert any("running inst: alg (10/10)" in frame for frame in frames)
    assert frames[-1] == "" and frames[-2].strip() == ""   # the last frame drawn is blank


def test_a_study_refuses_an_option_that_one_of_its_systems_takes_nowhere_before_any_run(monkeypatch):
    from mlsched.errors import UsageError
    from mlsched.study import study
    from mlsched.systems import System

    executed = []
    monkeypatch.setattr(System, "execute", lambda self, instance, policy, **options: executed.append(policy))
    with pytest.raises(UsageError, match="oasis runs take no --lease option"):   # Themis's seven runs came first
        study([THEMIS_SMALL, T1], exact=False, progress=False, run_options={"lease": 300.0})
    assert executed == []


@pytest.mark.parametrize(("name", "algorithm", "unit"), [
    ("multi-tenant", "astraea", "jobs"), ("multi-tenant", "batchsche", "tenants"), ("multi-tenant", "hived", "jobs"),
    ("multi-tenant", "gandiva_fair", "jobs"), ("sow", "sow-adversarial", "realizations"), ("sow", "greedy", "realizations"),
    ("themis/gavel-philly-first24", "gavel-ftf", "apps"), ("ogasched/default-t200-seed0", "ogasched", "slots")])
def test_runs_report_how_far_they_are_and_run_the_same(name, algorithm, unit):
    """Every family's run reports (done, in all), the count never falling, and here ending at all of
    them (Astraea: the jobs admitted or dropped; a job that never completes would leave the count
    short), and the run is the one without a listener."""
    from mlsched.instance import load
    from mlsched.instance.generators.astraea import generate_astraea
    from mlsched.systems import get_system

    if name == "multi-tenant":
        inst = generate_astraea(jobs=30, servers=10, users=3, profile="small", seed=2)
    elif name == "sow":
        inst = load(ROOT / "instances" / "sow" / "const-signal-n6.json")
    else:
        inst = load(ROOT / "instances" / f"{name}.json")
    sysm = get_system(None, family=inst.family)
    heard: list[tuple[int, int]] = []
    result = sysm.execute(inst, sysm.policy(algorithm), progress=lambda done, total: heard.append((done, total)))
    done, totals = [d for d, _ in heard], {t for _, t in heard}
    expected = {"jobs": inst.num_jobs if name == "multi-tenant" else None, "tenants": 3, "apps": 24,
                "realizations": len(getattr(result, "realizations", ())), "slots": 200}[unit]
    if algorithm == "astraea":
        expected = int((result.batch > 0).sum()) + len(result.dropped)
    assert totals == {inst.num_jobs if unit == "jobs" else expected} and done == sorted(done) and done[-1] == expected
    assert all(0 <= d <= t for d, t in heard)
    plain = sysm.evaluate(inst, sysm.execute(inst, sysm.policy(algorithm)))
    heard_row = sysm.evaluate(inst, result)
    same = [k for k in plain if "seconds" not in k and "_ms" not in k]   # all but the timings
    assert pd.Series({k: heard_row[k] for k in same}).equals(pd.Series({k: plain[k] for k in same}))


def test_run_time_limit_is_the_budget_of_the_policies_that_take_one(capsys, monkeypatch):
    from mlsched.baselines.dorm import Dorm

    inst = ROOT / "instances" / "oasis" / "fig5-small-seed0.json"
    seen = []
    real = Dorm.__init__

    @functools.wraps(real)
    def spy(self, *args, **kwargs):
        seen.append(kwargs.get("run_budget"))
        real(self, *args, **kwargs)

    monkeypatch.setattr(Dorm, "__init__", spy)
    code, out, _ = cli(capsys, "run", inst, "-a", "dorm", "--time-limit", 7, "--json", "-q")
    assert code == 0 and seen == [7.0] and json.loads(out)["total_utility"] > 0
    code, _, err = cli(capsys, "run", inst, "-a", "oasis", "--time-limit", 7)
    assert code == 2 and "oasis takes no --time-limit" in err and "that take one: dorm" in err
    code, _, err = cli(capsys, "run", "themis/o1-small", "-a", "themis", "--time-limit", 7)
    assert code == 2 and "themis algorithms that take one: none" in err


def test_compare_refuses_an_instance_o1_cannot_take_before_any_run(capsys, monkeypatch):
    """O1 is defined for single-job apps: `compare` on the shipped multi-job W1 slice says so, with
    the way out, before it simulates anything (a long run is not lost to a refusal at its end), and
    a study does before its first instance; with --no-exact the runs are compared."""
    from mlsched.errors import UsageError
    from mlsched.study import study
    from mlsched.systems import System

    inst = ROOT / "instances" / "themis" / "w1-16gpu-first60.json"
    executed = []
    monkeypatch.setattr(System, "execute", lambda self, instance, policy, **options: executed.append(policy))
    code, out, err = cli(capsys, "compare", inst, "--algorithms", "themis", "--quiet")
    assert code == 2 and out == "" and executed == []
    assert "app 'a59' has 1 phase(s) and 2 jobs; O1 (spec §5.6) is defined for single-job apps" in err
    assert "--no-exact" in err
    with pytest.raises(UsageError, match="defined for single-job apps.*--no-exact"):   # a study: before the first instance
        study([THEMIS_SMALL, inst], ["themis"], progress=False)
    assert executed == []
    monkeypatch.undo()
    code, out, _ = cli(capsys, "compare", inst, "--algorithms", "themis", "--no-exact", "--quiet", "--json")
    assert code == 0 and json.loads(out)[0]["algorithm"] == "themis"
