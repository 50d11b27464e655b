"""Every third-party module the package imports is a declared dependency (required, or optional
for the feature that imports it): scipy once came only through cvxpy."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DISTRIBUTION = {"yaml": "pyyaml"}   # import name -> distribution name, where they differ


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = project["dependencies"] + [r for extra in project["optional-dependencies"].values() for r in extra]
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def _imported() -> set[str]:
    names = set()
    for path in (ROOT / "mlsched").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names and n != "mlsched"}


def test_every_third_party_import_is_declared():
    imported = _imported()
    assert {"numpy", "scipy", "highspy", "pyomo"} <= imported   # the scan sees the package's imports
    assert {DISTRIBUTION.get(name, name) for name in imported} - _declared() == set()
