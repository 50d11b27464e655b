"""The benchmark and tool scripts are run by hand, not by the suite: each must at least compile on
the oldest supported Python (a 3.12-only f-string once reached a benchmark unnoticed)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = sorted(p for folder in ("benchmarks", "tools") for p in (ROOT / folder).glob("*.py"))


def test_scripts_are_found():
    assert {p.parent.name for p in SCRIPTS} == {"benchmarks", "tools"} and len(SCRIPTS) > 20


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_script_compiles(script):
    compile(script.read_text(encoding="utf-8"), str(script), "exec")
