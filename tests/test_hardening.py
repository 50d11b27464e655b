"""Regression tests for hostile inputs and solver edge cases."""
from mlsched.solve import _safer_bound


def test_safer_bound_ignores_a_solvers_infinity() -> None:
    # A verifier that proves nothing reports its infinity; the other solver's valid bound stands.
    assert _safer_bound("max", 1155.88, 1e20) == 1155.88
    assert _safer_bound("max", 1155.88, float("inf")) == 1155.88
    assert _safer_bound("min", 3.0, -1e20) == 3.0
    assert _safer_bound("min", 3.0, 2.5) == 2.5
    assert _safer_bound("max", 1e20, float("inf")) is None


def test_dangling_symlink_at_output_counts_as_existing(tmp_path) -> None:
    import pytest

    from mlsched.errors import UsageError
    from mlsched.fileio import write_text_atomic
    link = tmp_path / "out.json"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(UsageError, match="exists"):
        write_text_atomic(link, "x")
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_file_created_during_the_write_is_not_overwritten(tmp_path, monkeypatch) -> None:
    import os

    import pytest

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
    import pytest

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
    import pytest

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
    import pytest

    pyscipopt = pytest.importorskip("pyscipopt")
    from mlsched.solve import _solve_with_scip

    class Interrupted(pyscipopt.Model):
        def getStatus(self) -> str:  # what SCIP reports after catching SIGINT
            return "userinterrupt"
    monkeypatch.setattr(pyscipopt, "Model", Interrupted)
    lp = tmp_path / "m.lp"
    lp.write_text("maximize\n obj: x\nsubject to\n c: x <= 1\nend\n")
    with pytest.raises(KeyboardInterrupt):
        _solve_with_scip(lp, None)
