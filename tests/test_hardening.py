"""Regression tests for hostile inputs and solver edge cases."""
from pathlib import Path

import pytest

from mlsched.solve import safer_bound


def test_safer_bound_ignores_a_solvers_infinity() -> None:
    # A verifier that proves nothing reports its infinity; the other solver's valid bound stands.
    assert safer_bound("max", 1155.88, 1e20) == 1155.88
    assert safer_bound("max", 1155.88, float("inf")) == 1155.88
    assert safer_bound("min", 3.0, -1e20) == 3.0
    assert safer_bound("min", 3.0, 2.5) == 2.5
    assert safer_bound("max", 1e20, float("inf")) is None


def test_dangling_symlink_at_output_counts_as_existing(tmp_path) -> None:
    from mlsched.errors import UsageError
    from mlsched.fileio import write_text_atomic
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="exists"):
        write_text_atomic(link, "x")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_file_created_during_the_write_is_not_overwritten(tmp_path, monkeypatch) -> None:
    import os

    from mlsched import fileio
    from mlsched.errors import UsageError
    target = tmp_path / "out.json"
    real_chmod = os.chmod

    def chmod_then_race(path, mode):  # a user's file appears after the start check
        real_chmod(path, mode)
        target.write_text("user's file")
    monkeypatch.setattr(fileio.os, "chmod", chmod_then_race)
    with pytest.raises(UsageError, match="exists"):
        fileio.write_text_atomic(target, "ours")
    assert target.read_text() == "user's file"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_repeated_server_names_rejected_one_line_each() -> None:
    from mlsched.errors import InstanceError
    from mlsched.instance import from_dict
    from builders import job
    doc = {"format": "mlsched/v1", "family": "cluster-jobs", "name": "t", "horizon": 2, "resources": ["cpu"],
           "worker_servers": [{"name": "w", "capacity": {"cpu": 2}}, {"name": "w", "capacity": {"cpu": 2}}],
           "ps_servers": [{"name": "p", "capacity": {"cpu": 2}}], "jobs": [job("1")]}
    with pytest.raises(InstanceError) as caught:
        from_dict(doc)
    assert caught.value.problems == ["worker_servers[1].name: repeats the name of worker_servers[0] ('w')"]


def test_model_field_accepts_names_only_and_bad_profiles_are_one_line(tmp_path, monkeypatch) -> None:
    from mlsched import profiles
    from mlsched.errors import UsageError
    (tmp_path / "secret.json").write_text("{}")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "broken.json").write_text("{not json")
    (tmp_path / "models" / "partial.json").write_text('{"name": "partial"}')
    monkeypatch.setenv("MLSCHED_MODELS", str(tmp_path / "models"))
    profiles.load_profile.cache_clear()
    for hostile in ("../secret", str(tmp_path / "secret"), "..", "a/b", ""):
        with pytest.raises(UsageError, match="must be a profile name"):
            profiles.load_profile(hostile)
    for bad in ("broken", "partial"):
        with pytest.raises(UsageError, match="not a valid model profile"):
            profiles.load_profile(bad)
    profiles.load_profile.cache_clear()


def test_scip_user_interrupt_is_an_interrupt_not_a_result(tmp_path, monkeypatch) -> None:
    pyscipopt = pytest.importorskip("pyscipopt")
    from mlsched.solve import scip_file_solve

    class Interrupted(pyscipopt.Model):
        def getStatus(self) -> str:  # what SCIP reports after catching SIGINT
            return "userinterrupt"
    monkeypatch.setattr(pyscipopt, "Model", Interrupted)
    lp = tmp_path / "m.lp"
    lp.write_text("maximize\n obj: x\nsubject to\n c: x <= 1\nend\n")
    with pytest.raises(KeyboardInterrupt):
        scip_file_solve(lp, None)


HOSTILE = Path(__file__).resolve().parent / "data" / "hostile" / "instances"

# file: what `validate` says (a fragment of its one line per problem), or None for a valid file whose
# solve must then refuse in one line (the fragment under SOLVE_REFUSES) before allocating anything
VALIDATE_REJECTS = {
    "themis-slot-of-1e9-gpus.json": "cluster.machines[0].slots[0]: must be an integer in [1, 64]",
    "themis-arrival-1e308.json": "apps[5].arrival: must be <= 1e+15",
    "themis-arrival-1e15.json": "apps[0].phases[0][0]: runs 3e+03 s at its fastest, less than 1e-11",
    "themis-work-1e-300.json": "apps[5].phases[0][0]: runs 5e-301 s at its fastest",
    "themis-slowdown-1e308.json": "apps[0].profile: slowdowns must be at most 100",
    "model-path-traversal.json": "jobs[0].model: model profile '../../etc/passwd': must be a profile name",
    "model-absolute-path.json": "jobs[0].model: model profile '/etc/hostname': must be a profile name",
    "repeated-server-names.json": "worker_servers[1].name: repeats the name of worker_servers[0]",
    "oasis-chunks-1e5.json": "jobs[0]: its subproblem's DP (Algorithm 2) needs (N + 1 + T)(units + 1) = 3e+10 cells",
    "oasis-capacity-1e308.json": "worker_servers[0].capacity.gpu: must be <= 1e+12",
    "oasis-sigmoid-1e308.json": "jobs[0].utility.gamma2: must be <= 1e+06",
    "oasis-epochs-2e53.json": "jobs[0]: workload E*N*W = 1.27834e+16 worker-slots",
    "ogasched-alpha-1e308.json": "nodes[0].alpha.vcpu: must be <= 1e+06",
    "ogasched-request-1e308.json": "ports[0].request.vcpu: must be <= 1e+12",
    "ogasched-arrivals-2e8-cells.json": "horizon: 10000000 slots x 20 ports exceed 1e+08",
    "tenant-rates-1e12.json": "jobs[0].rates.centralized: must be <= 1e+06",
    "tenant-rates-1e-300.json": "jobs[0]: takes 4e+300 slots on one worker, more than 1e+15",
    "tenant-affine-1e308.json": "jobs[0].utility.k: must be >= -1e+12",
    "tenant-convex-1e308.json": "jobs[0].utility: f(1) = e^kappa",
    "sow-rounds-1e5.json": "max_duration: T x D = 200001 x 100000 rounds exceeds 1e+07",
    "nested-100000-deep.json": "nested 100000 levels deep",
    "repeated-key.json": "duplicate key 'format'",
}
SOLVE_REFUSES = {
    "oasis-horizon-1e5.json": "the exact program would hold 5e+10 terms in rows (3)+(8)",
    "themis-arrival-1e12.json": "app 'a5' cannot finish within the slotted programs' 1000000 slots",
    "themis-tid-spread.json": "O1's default horizon would be 1.25e+07 slots",
}


def test_every_hostile_instance_file_has_an_expected_answer() -> None:
    assert {p.name for p in HOSTILE.iterdir()} == set(VALIDATE_REJECTS) | set(SOLVE_REFUSES)


@pytest.mark.parametrize("name", sorted(VALIDATE_REJECTS))
def test_hostile_instance_files_are_rejected_one_line_per_problem(name, capsys) -> None:
    from mlsched.cli import main
    path = HOSTILE / name
    assert main(["validate", str(path)]) == 2
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert out == "" and lines and all(line.startswith(f"{path}: ") for line in lines)
    assert any(line.startswith(f"{path}: {VALIDATE_REJECTS[name]}") for line in lines)


@pytest.mark.parametrize("name", sorted(SOLVE_REFUSES))
def test_valid_files_too_large_for_the_exact_programs_are_refused_in_one_line(name, capsys) -> None:
    from mlsched.cli import main
    path = HOSTILE / name
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    assert main(["solve", str(path), "--time-limit", "5"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and SOLVE_REFUSES[name] in err


def test_out_of_memory_is_one_line_and_exit_2(monkeypatch, capsys) -> None:
    from mlsched import cli

    def allocate(args):
        raise MemoryError("Unable to allocate 373. GiB")
    monkeypatch.setattr(cli, "_validate", allocate)
    assert cli.main(["validate", "x.json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == ("x.json: out of memory in `mlsched validate` (Unable to allocate 373. GiB); the "
                                 "instance is too large for this machine\n")


def test_a_verifier_that_cannot_read_the_model_is_no_verification(monkeypatch) -> None:
    from mlsched import solve as solve_module
    from mlsched.errors import UsageError
    from mlsched.formulations import oasis
    from mlsched.instance import load

    def unreadable(path, time_limit):
        raise UsageError(f"{path}: SCIP cannot read this model file")
    monkeypatch.setattr(solve_module, "solve_lp_file", unreadable)
    report = solve_module.solve(oasis.build(load(Path(__file__).resolve().parent / "data" / "t1.json")), verify=True)
    assert report.status is solve_module.Status.OPTIMAL and report.objective == pytest.approx(27)
    assert report.verified is False and report.message.endswith(": error")


def _run_entry(code: str, *args: str, env: dict[str, str] | None = None):
    import os
    import subprocess
    import sys
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(env or {})})


INTERRUPT_WHILE_IMPORTING = """
import builtins, os, signal, sys
import mlsched.entry as entry
real_import = builtins.__import__
def importing(name, *args, **kwargs):
    if name == "mlsched.cli":   # Ctrl-C while the command's modules load
        os.kill(os.getpid(), signal.SIGINT)
    return real_import(name, *args, **kwargs)
builtins.__import__ = importing
sys.exit(entry.main(sys.argv[1:]))
"""


def test_ctrl_c_while_the_command_loads_is_one_line_and_exit_130() -> None:
    done = _run_entry(INTERRUPT_WHILE_IMPORTING, "validate", "oasis/fig5-small-seed0")
    assert done.returncode == 130 and done.stderr == "interrupted\n" and done.stdout == ""


INTERRUPT_WHILE_RUNNING = """
import os, signal, sys
import mlsched.entry as entry
import mlsched.cli as cli
def validate_then_interrupt(args):
    os.kill(os.getpid(), signal.SIGINT)
    return 0
cli._validate = validate_then_interrupt
sys.exit(entry.main(sys.argv[1:]))
"""


def test_ctrl_c_while_the_command_runs_is_its_own_handling_and_exit_130() -> None:
    done = _run_entry(INTERRUPT_WHILE_RUNNING, "validate", "oasis/fig5-small-seed0")
    assert done.returncode == 130 and done.stderr == "interrupted\n" and "Traceback" not in done.stdout


INTERRUPT_SCIP = """
import os, signal, sys
import pyscipopt

class InterruptOnce(pyscipopt.Eventhdlr):
    def eventinit(self):
        self.model.catchEvent(pyscipopt.SCIP_EVENTTYPE.PRESOLVEROUND | pyscipopt.SCIP_EVENTTYPE.SOLFOUND, self)
    def eventexec(self, event):
        if not getattr(self, "sent", False):
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)   # the user's Ctrl-C, while SCIP solves

class Model(pyscipopt.Model):
    calls = 0
    def optimize(self):
        Model.calls += 1
        if Model.calls == int(os.environ["INTERRUPT_SCIP_CALL"]):
            self.includeEventhdlr(InterruptOnce(), "interrupt", "Ctrl-C during the solve")
        super().optimize()
        with open(os.environ["SCIP_LOG"], "a") as log:   # stderr is SCIP's own while it solves
            log.write(f"SCIP call {Model.calls}: status {self.getStatus()}\\n")

pyscipopt.Model = Model
from mlsched.entry import main
sys.exit(main(sys.argv[1:]))
"""


def test_ctrl_c_while_scip_verifies_a_study_is_an_interrupt_end_to_end(tmp_path) -> None:
    """Ctrl-C reaches SCIP during the second instance's --verify: exit 130, the first instance's
    rows printed, the second instance's solve reported as nothing (SCIP once said 'feasible')."""
    pytest.importorskip("pyscipopt")
    first, second = "oasis/fig5-small-seed0", "oasis/fig5-small-8servers-seed0"
    log = tmp_path / "scip.log"
    done = _run_entry(INTERRUPT_SCIP, "study", first, second, "--algorithms", "oasis,fifo", "-q",
                      env={"INTERRUPT_SCIP_CALL": "2", "SCIP_LOG": str(log)})
    assert log.read_text().splitlines() == ["SCIP call 1: status optimal", "SCIP call 2: status userinterrupt"]
    assert done.stderr == "interrupted: 2 row(s) finished\n"
    assert done.returncode == 130
    rows = done.stdout.splitlines()
    assert len(rows) == 3 and rows[0].split()[:2] == ["algorithm", "total_utility"]
    assert [r.split()[0] for r in rows[1:]] == ["oasis", "fifo"] and all("473.1848" in r for r in rows[1:])
