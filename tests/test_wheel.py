"""The package works from a wheel installed outside the source tree.

The test builds a wheel from a copy of the repository, installs it into a fresh virtual
environment and runs the README's tour from an empty temporary folder: for every family,
generate, validate, solve, run and compare, plus the shipped instances by name. The new
environment takes mlsched from the wheel alone; its third-party dependencies are those of the
environment running the tests (a ``.pth`` line), so the test needs no network beyond the build
backend. Set ``MLSCHED_WHEEL_FULL_INSTALL=1`` to install the dependencies from the index too.
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("wheel")   # one wheel build, on one worker


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The ``bin`` folder of a fresh virtual environment holding the wheel."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "source"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis",
        ".ruff_cache", ".ipynb_checkpoints"))
    dist = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(source), "-w", str(dist)],
                   check=True, capture_output=True, text=True)
    wheel = next(dist.glob("mlsched-*.whl"))
    env = work / "env"
    venv.create(env, with_pip=True)
    bin_dir = env / "bin"
    python = bin_dir / "python"
    full = os.environ.get("MLSCHED_WHEEL_FULL_INSTALL") == "1"
    if not full:
        purelib = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                 check=True, capture_output=True, text=True).stdout.strip()
        (Path(purelib) / "mlsched-test-dependencies.pth").write_text(
            "\n".join(site.getsitepackages()) + "\n")
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", *([] if full else ["--no-deps"]), str(wheel)],
                   check=True, capture_output=True, text=True)
    return bin_dir


def test_wheel_carries_the_data_the_code_reads():
    # the data folders are package data, not files beside the source tree
    from mlsched.resources import data_file, shipped_instances

    assert data_file("models", "resnet50.json").is_file()
    assert data_file("traces", "philly-2017-10-01-to-15-le2gpu.csv.gz").is_file()
    assert "oasis/fig5-small-seed0" in shipped_instances()


def test_wheel_contents(installed):
    wheel = next((installed.parent.parent / "dist").glob("mlsched-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "mlsched/data/models/resnet50.json" in names
    assert "mlsched/data/traces/philly-2017-10-01-to-15-le2gpu.csv.gz" in names
    assert "mlsched/data/traces/gavel-model-mix.csv" in names
    assert "mlsched/data/instances/oasis/fig5-small-seed0.json" in names
    assert "mlsched/data/sweeps/oasis-fig5.yaml" in names
    assert not any(name.startswith(("tests/", "instances/", "models/", "notebooks/")) for name in names)


def tour_commands() -> list[list[str]]:
    return [
        ["instances"],
        ["compare", "oasis/fig5-small-seed0", "--quiet"],
        ["generate", "oasis", "--jobs", "4", "--horizon", "4", "--profile", "small", "--seed", "1", "-o", "oasis.json"],
        ["validate", "oasis.json"],
        ["solve", "oasis.json", "--verify"],
        ["run", "oasis.json", "-a", "oasis"],
        ["compare", "oasis.json", "--quiet"],
        ["generate", "ogasched", "--preset", "default", "--horizon", "5", "--seed", "1", "-o", "oga.json"],
        ["validate", "oga.json"],
        ["solve", "oga.json"],
        ["run", "oga.json", "-a", "ogasched"],
        ["compare", "oga.json", "--quiet"],
        ["generate", "themis", "--gpus", "16", "--apps", "6", "--seed", "1", "-o", "themis.json"],
        ["validate", "themis.json"],
        ["run", "themis.json", "-a", "themis"],
        ["compare", "themis.json", "--no-exact", "--quiet"],
        ["solve", "themis/o1-small"],
        ["validate", "multi-tenant/ex-share"],
        ["solve", "multi-tenant/o3", "--variant", "all-jobs"],
        ["sweep", "oasis-fig5", "--dry-run"],
    ]


def test_readme_tour_from_an_empty_folder(installed, tmp_path):
    python = installed / "python"
    where = subprocess.run([str(python), "-c", "import mlsched; print(mlsched.__file__)"], cwd=tmp_path,
                           check=True, capture_output=True, text=True).stdout.strip()
    assert Path(where).is_relative_to(installed.parent) and "site-packages" in where
    clean_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MLSCHED_MODELS")}
    for command in tour_commands():
        done = subprocess.run([str(installed / "mlsched"), *command], cwd=tmp_path, capture_output=True, text=True,
                              env=clean_env)
        assert done.returncode == 0, f"mlsched {' '.join(command)}: exit {done.returncode}\n{done.stderr}"
        assert "Traceback" not in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["oasis.json", "oga.json", "themis.json"]
