"""The stochastic variant (truthful SoW spec §1.4, §2.3 LP-E, §6, oracle T10): SoW distributions,
LP-E, FUA-Dyadic with the kappa fallback, the bundle menu inside Algorithm 2, and its invariants."""

import itertools
import json
import math

import numpy as np
import pytest

from mlsched.cli import main
from mlsched.errors import UsageError
from mlsched.exact import exact_sow
from mlsched.instance import dumps, loads
from mlsched.instance.generators.sow import generate_sow
from mlsched.online.sow.bundles import fua_violations
from mlsched.online.sow.fua import Piece, dyadic_kappas, fua_dyadic
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.online.sow.stochastic import lp_e_value
from mlsched.sim.sow_run import realizations, run_sow
from mlsched.solve import Status


def tiny_stochastic() -> object:
    job = {"birth": 1, "distribution": [
        {"prob": 0.5, "width": 1, "values": [4, 4, 2], "support": [{"arrival": 1, "duration": 1, "prob": 1}]},
        {"prob": 0.5, "width": 2, "values": [6, 6, 0], "support": [{"arrival": 1, "duration": 2, "prob": 0.5},
                                                                   {"arrival": 2, "duration": 1, "prob": 0.5}]}]}
    doc = {"format": "mlsched/v1", "family": "sow", "name": "tiny-stochastic", "capacity": 2, "d_max": 2,
           "max_duration": 2, "max_value": 6, "window": 3, "jobs": [{"id": "a", **job}, {"id": "b", **job}]}
    return loads(json.dumps(doc))


def test_distributions_load_draw_and_enumerate() -> None:
    inst = tiny_stochastic()
    assert inst.stochastic and loads(dumps(inst)) == inst
    reals = realizations(inst)
    assert reals.exact and len(reals) == 9 and math.isclose(reals.weights.sum(), 1.0)   # (1 + 2) points per job
    drawn = inst.concrete((1, 0))
    assert not drawn.stochastic and drawn.jobs[0].width == 2 and drawn.jobs[1].width == 1
    with pytest.raises(UsageError, match="lp-e"):
        exact_sow(inst, variant="lp-r")


def test_b3_expected_lp_r_is_at_most_lp_e() -> None:
    inst = tiny_stochastic()
    lp_e = exact_sow(inst, variant="lp-e").objective
    expected_lp_r = 0.0
    for draw in itertools.product(range(2), repeat=2):
        prob = math.prod(inst.sow_choices(j)[k][0] for j, k in enumerate(draw))
        expected_lp_r += prob * exact_sow(inst.concrete(draw), variant="lp-r").objective
    h = exact_sow(inst)
    assert h.status is Status.OPTIMAL
    assert h.objective <= expected_lp_r + 1e-9 <= lp_e + 2e-9                      # (B1) per draw, then (B3)
    fixed = generate_sow(jobs=5, capacity=4, seed=3)
    assert math.isclose(exact_sow(fixed, variant="lp-e").objective, exact_sow(fixed, variant="lp-r").objective,
                        rel_tol=1e-9)


def test_fua_dyadic_satisfies_f1_to_f3_and_the_kappa_list() -> None:
    assert dyadic_kappas()[:3] == pytest.approx([1, 2 ** -0.5, 0.5]) and dyadic_kappas()[-1] == pytest.approx(1 / 64)
    rng = np.random.default_rng(4)
    built = 0
    for _ in range(200):
        pieces = []
        for _ in range(int(rng.integers(1, 12))):
            first = int(rng.integers(1, 10))
            pieces.append(Piece(first, first + int(rng.integers(0, 5)), float(rng.uniform(0.05, 1.5)),
                                float(rng.uniform(0.1, 5))))
        d_max, supply = int(rng.integers(1, 3)), float(rng.integers(2, 12))
        fua = fua_dyadic(pieces, d_max, supply, rounds=20)
        if fua is None:
            continue
        built += 1
        assert fua_violations(fua.n, fua.outcomes, d_max, supply) == []
        assert math.isclose(fua.value, sum(p.value for p in pieces)) and math.isclose(
            fua.weights.sum(), sum(p.mass for p in pieces))
    assert built > 50


def test_bundle_mechanism_invariants_t10() -> None:
    inst = generate_sow(jobs=16, capacity=16, d_max=2, variant="stochastic", seed=2)
    mech = SowMechanism(menu="bundles", oracle="none", eps=0.2)
    runs = run_sow(inst, mech, samples=2000, exact_limit=0)       # T10: the mean over 2,000 draws
    assert runs.problems == []
    report = mech.constants(inst)
    cap = report["relaxed_capacity"]
    assert 0 < report["kappa"] <= 1 and 0 < report["fua_loss"] <= 1 + 1e-9
    assert report["lp_e_half"] <= report["lp_e_full"] + 1e-9
    for m, out in enumerate(runs.outcomes):
        assert out.extra["max_fill"] <= 2 * inst.d_max + 1e-9
        assert out.relaxed_usage.max(initial=0.0) <= cap + 1e-9
        drawn = inst.concrete(runs.realizations.row(m).sow_index)
        tables = [(j.prices, job.width) for j, job in zip(out.jobs, drawn.jobs, strict=True)]
        for (earlier, w1), (later, w2) in zip(tables, tables[1:]):
            if w1 == w2:
                finite = np.isfinite(earlier)
                assert np.all(later[finite] >= earlier[finite] - 1e-12)          # non-decreasing in tau
    welfare = np.array([o.relaxed_welfare for o in runs.outcomes])
    se = welfare.std(ddof=1) / math.sqrt(len(welfare))
    assert welfare.mean() >= report["fua_value"] / 2 - 3 * se                     # Lemma E.3
    h = exact_sow(inst, samples=2000, exact_limit=0, verify=False)
    assert np.all(runs.welfare() <= h.schedule + 1e-9)


def test_bundle_menu_needs_duration_signals_and_a_prepared_plan() -> None:
    const = generate_sow(jobs=4, capacity=8, signal="const", seed=1)
    with pytest.raises(UsageError, match="sigma = l"):
        run_sow(const, SowMechanism(menu="bundles"))
    inst = generate_sow(jobs=4, capacity=8, seed=1)
    with pytest.raises(UsageError, match="prepare"):
        SowMechanism(menu="bundles").simulate(inst, realizations(inst).row(0))
    value, pieces = lp_e_value(inst, 4.0)
    assert value > 0 and all(p.mass > 0 for p in pieces)


def test_stochastic_from_the_command_line(tmp_path, capsys) -> None:
    f = tmp_path / "st.json"
    assert main(["generate", "sow", "--variant", "stochastic", "--jobs", "6", "--capacity", "12", "-o", str(f)]) == 0
    capsys.readouterr()
    assert main(["compare", str(f), "--algorithms", "sow-stochastic,sow-adversarial", "--samples", "40",
                 "--json", "-q"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["algorithm"] for r in rows} == {"sow-stochastic", "sow-adversarial"}
    assert all(r["check_problems"] == 0 and r["ratio"] >= 1 - 1e-9 for r in rows)
    assert main(["solve", str(f), "--variant", "lp-e"]) == 0
    assert main(["generate", "sow", "--variant", "stochastic", "--signal", "const", "-o", str(tmp_path / "x.json")]) == 2


def test_compare_runs_the_stochastic_mechanism_by_default_on_stochastic_instances(tmp_path, capsys) -> None:
    """Without --algorithms a stochastic file gets its own mechanism first, with the same E[W] as
    `run`; an adversarial file does not; where no FUA fits the supply (C = 4, d_max = 2:
    C_E = 4 / 1.2 / 2 < d_max) it is skipped with the reason and the others still run, but named
    it stays an error (exit 2)."""
    st, tight, adv = tmp_path / "st.json", tmp_path / "tight.json", tmp_path / "adv.json"
    for f, variant, capacity in ((st, "stochastic", 12), (tight, "stochastic", 4), (adv, "adversarial", 12)):
        assert main(["generate", "sow", "--variant", variant, "--jobs", "5", "--capacity", str(capacity),
                     "--seed", "3", "-o", str(f)]) == 0
    capsys.readouterr()
    options = ["--samples", "30", "--exact-limit", "0", "--no-exact", "-q"]
    assert main(["compare", str(st), *options, "--json"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert [r["algorithm"] for r in rows] == ["sow-stochastic", "sow-adversarial", "sow-fifo", "sow-evict-all",
                                             "greedy", "reservation"] and "skipped" not in out.err
    assert main(["run", str(st), "-a", "sow-stochastic", *options[:4], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["welfare"] == rows[0]["welfare"]
    assert main(["compare", str(adv), *options, "--json"]) == 0
    out = capsys.readouterr()
    assert "sow-stochastic" not in {r["algorithm"] for r in json.loads(out.out)} and "skipped" not in out.err
    assert main(["compare", str(tight), *options, "--json"]) == 0
    out = capsys.readouterr()
    assert len(json.loads(out.out)) == 5 and "skipped sow-stochastic: FUA infeasible at supply C_E = 1.66667" in out.err
    assert main(["compare", str(tight), *options, "--algorithms", "sow-stochastic"]) == 2
    assert "FUA infeasible" in capsys.readouterr().err
