"""Every shipped instance validates, round-trips, and reproduces the optima and LP bound it
carries; every algorithm's schedule on it passes the checker and stays below OPT."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlsched.instance import from_dict, load
from mlsched.study import solve_exact, study
from mlsched.systems import get_system

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "instances" / "oasis").glob("*.json"))
SHIPPED_OGASCHED = sorted((ROOT / "instances" / "ogasched").glob("*.json"))
SHIPPED_THEMIS = sorted((ROOT / "instances" / "themis").glob("*.json"))
SHIPPED_MULTI_TENANT = sorted((ROOT / "instances" / "multi-tenant").glob("*.json"))
SHIPPED_SOW = sorted((ROOT / "instances" / "sow").glob("*.json"))


def test_instances_are_shipped():
    assert len(SHIPPED) >= 5 and len(SHIPPED_OGASCHED) >= 2 and len(SHIPPED_THEMIS) >= 2
    assert {p.stem for p in SHIPPED_MULTI_TENANT} == {"ex", "ex-share", "o1", "o2", "o3", "philly-slice"}
    assert {p.stem for p in SHIPPED_SOW} == {"t2", "t3", "t4", "const-signal-n6", "section-3-4", "stochastic-n5"}
    assert {p.parent.name for p in (ROOT / "instances").rglob("*.json")} == {"oasis", "ogasched", "themis",
                                                                            "multi-tenant", "sow"}


@pytest.mark.parametrize("path", SHIPPED_SOW, ids=lambda p: p.stem)
def test_sow_benchmarks_reproduce(path):
    """Truthful SoW spec §2.3-2.5, T3 and T4: E[H] (exact enumeration), LP-R, LP-RP, LP-E, E[LP(H)]."""
    inst = load(path)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    expected = inst.expected
    hindsight = solve_exact(inst, verify=True)
    assert hindsight.status.value == "optimal" and hindsight.verified
    assert hindsight.objective == pytest.approx(expected["opt_hindsight"], rel=1e-9)
    variants = get_system("sow").variants_for(inst)
    assert set(variants) == ({"hindsight", "lp-e"} if inst.stochastic else {"hindsight", "lp-r", "lp-rp", "lp-e"})
    for variant in variants[1:]:
        assert solve_exact(inst, variant=variant).objective == pytest.approx(expected[f"opt_{variant}"], rel=1e-7)
    assert solve_exact(inst, relax=True).objective == pytest.approx(expected["lp_bound"], rel=1e-7)
    assert expected["opt_hindsight"] <= expected["lp_bound"] + 1e-9 <= expected["opt_lp-e"] + 2e-9   # (B1), (B3)
    if not inst.stochastic:
        assert expected["opt_lp-rp"] <= expected["opt_lp-r"] + 1e-9 and expected["opt_lp-e"] == pytest.approx(
            expected["opt_lp-r"], rel=1e-7)
    algorithms = ["sow-stochastic", "greedy"] if inst.stochastic else None
    frame = study([inst], algorithms, progress=False)
    assert (frame["check_problems"] == 0).all() and (frame["ratio"] >= 1 - 1e-9).all()


@pytest.mark.parametrize("path", SHIPPED_MULTI_TENANT, ids=lambda p: p.stem)
def test_multi_tenant_optima_reproduce(path):
    """Astraea spec §7.2, §7.3, §7.5: P-OFF's optima (both variants), its LP bound and UB-POOL."""
    inst = load(path)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    expected = inst.expected
    for variant in ("admission", "all-jobs"):
        report = solve_exact(inst, variant=variant, verify=True)
        assert report.status.value == "optimal" and report.verified
        assert report.objective == pytest.approx(expected[f"opt_{variant}"], rel=1e-9)
    assert solve_exact(inst, relax=True).objective == pytest.approx(expected["lp_bound"], rel=1e-7)
    assert solve_exact(inst, variant="ub-pool").objective == pytest.approx(expected["opt_ub-pool"], rel=1e-7)
    assert expected["opt_all-jobs"] <= expected["opt_admission"] <= expected["lp_bound"] + 1e-9
    assert expected["opt_admission"] <= expected["opt_ub-pool"] + 1e-9


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


@pytest.mark.parametrize("path", SHIPPED_OGASCHED, ids=lambda p: p.stem)
def test_ogasched_expected_values_and_ratios(path):
    inst = load(path)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    for variant in ("hindsight", "per_slot"):
        report = solve_exact(inst, variant=variant)
        assert report.status.value == "optimal" and report.verified is not False
        assert report.objective == pytest.approx(inst.expected[f"opt_{variant}"], rel=1e-6)
    frame = study([inst], ["ogasched", "drf", "fairness", "binpacking", "spreading"], progress=False)
    assert (frame["ratio"] >= 1 - 1e-7).all()          # per-slot optimum bounds every policy
    row = frame.set_index("algorithm").loc["ogasched"]
    assert row["hindsight_opt"] == pytest.approx(inst.expected["opt_hindsight"], rel=1e-6)
    assert row["regret"] == pytest.approx(row["hindsight_opt"] - row["reward"], rel=1e-12)


@pytest.mark.parametrize("path", SHIPPED_THEMIS, ids=lambda p: p.stem)
def test_themis_instances_reproduce_and_every_policy_runs_checked(path):
    inst = load(path)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    if "opt_o1" in inst.expected:
        report = solve_exact(inst, verify=True)
        assert report.status.value == "optimal" and report.verified
        assert report.objective == pytest.approx(inst.expected["opt_o1"], rel=1e-9)
        lp = solve_exact(inst, relax=True)
        assert lp.objective == pytest.approx(inst.expected["lp_bound"], rel=1e-7)
        assert lp.objective <= report.objective * (1 + 1e-9)
    frame = study([inst], exact="opt_o1" in inst.expected, progress=False)   # every run is checked inside
    assert set(frame["algorithm"]) == {"themis", "gandiva", "tiresias", "optimus", "slaq", "srtf", "srsf"}
    assert (frame["max_rho"] >= frame["median_rho"]).all() and (frame["jain"] <= 1 + 1e-12).all()
    if "opt_o1" in inst.expected:
        # holds on this instance (arrivals on slot boundaries); not a theorem in general (decisions, T11)
        assert (frame["max_rho_slotted"] >= inst.expected["opt_o1"] * (1 - 1e-9)).all()
