"""Every shipped instance validates, round-trips, and reproduces the optima and LP bound it
carries; every algorithm's schedule on it passes the checker and stays below OPT."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsched.instance import from_dict, load
from mlsched.study import solve_exact, study

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "instances").rglob("*.json"))


def test_instances_are_shipped():
    assert len(SHIPPED) >= 5


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_expected_values_reproduce(path):
    inst = load(path)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    expected = inst.expected
    for variant in ("paper", "chunk"):
        report = solve_exact(inst, variant=variant, verify=True)
        assert report.status.value == "optimal" and report.verified
        assert report.objective == pytest.approx(expected[f"opt_{variant}"], rel=1e-9)
    lp = solve_exact(inst, variant="paper", relax=True)
    assert lp.objective == pytest.approx(expected["lp_bound"], rel=1e-7)
    assert expected["opt_chunk"] <= expected["opt_paper"] * (1 + 1e-12) <= expected["lp_bound"] * (1 + 1e-9)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_algorithms_stay_below_opt(path):
    inst = load(path)
    frame = study([inst], ["oasis", "oasis-ws", "fifo", "drf", "rrh", "dorm"], progress=False)
    opt = inst.expected["opt_paper"]
    assert (frame["opt"] - opt).abs().max() <= 1e-9 * opt
    assert (frame["total_utility"] <= opt * (1 + 1e-9)).all()
    assert (frame["ratio"] >= 1 - 1e-9).all()
    oasis = frame.set_index("algorithm").loc["oasis", "total_utility"]
    assert oasis <= inst.expected["opt_chunk"] * (1 + 1e-9)
