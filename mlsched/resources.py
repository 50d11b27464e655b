"""Data shipped inside the package, read through :mod:`importlib.resources`.

Everything the code reads at run time lives under ``mlsched/data/`` and is installed with the
wheel, so the toolkit works the same from a source checkout, an editable install or a wheel
installed anywhere:

- ``models/``    DNN workload profiles (``<name>.json``) that instances reference by name;
- ``traces/``    trimmed trace samples the generators default to;
- ``instances/`` shipped instance files, ``<family-folder>/<name>.json``, reachable by the name
  ``<family-folder>/<name>`` (see :func:`shipped_instance`);
- ``sweeps/``    sweep files of the papers' figures, reachable by their stem
  (:func:`mlsched.sweep.spec.shipped_sweeps`).

In a source checkout the top-level ``models/``, ``instances/`` and ``sweeps/`` folders are links to these.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable

_DATA = "data"


def data_root() -> Traversable:
    return files("mlsched") / _DATA


def data_file(*parts: str) -> Traversable:
    """A file or folder under ``mlsched/data`` (it may not exist: check ``is_file()``)."""
    node = data_root()
    for part in parts:
        node = node / part
    return node


def shipped_instances() -> list[str]:
    """Names ``<folder>/<stem>`` of every shipped instance file, sorted."""
    root = data_file("instances")
    return sorted(f"{folder.name}/{entry.name.removesuffix('.json')}"
                  for folder in root.iterdir() if folder.is_dir()
                  for entry in folder.iterdir() if entry.name.endswith(".json"))


def shipped_instance(name: str) -> Traversable | None:
    """The shipped instance called ``name`` (``oasis/fig5-small-seed0``, with or without
    ``.json``), or ``None`` when there is none of that name."""
    folder, sep, stem = name.removesuffix(".json").partition("/")
    if not sep or not folder or not stem or "/" in stem or folder.startswith(".") or stem.startswith("."):
        return None
    node = data_file("instances", folder, f"{stem}.json")
    return node if node.is_file() else None
