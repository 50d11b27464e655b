"""The SoW family from the command line: generate, validate, solve, run, compare, bad input."""

from __future__ import annotations

import json

import pytest

from mlsched.cli import main
from mlsched.errors import UsageError
from mlsched.instance import load
from mlsched.instance.generators.sow import generate_sow


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_generated_instances_follow_the_rules():
    for signal in ("l", "const"):
        inst = generate_sow(jobs=25, capacity=6, d_max=3, max_duration=4, window=7, signal=signal, seed=5)
        assert inst.num_jobs == 25 and inst.horizon == max(j.birth for j in inst.jobs) + 7 + 4
        for j in inst.jobs:
            assert 1 <= j.width <= 3 and len(j.sow.values) == 7
            assert all(a >= b for a, b in zip(j.sow.values, j.sow.values[1:]))
            assert all(p.arrival >= j.birth and 1 <= p.duration <= 4 for p in j.sow.support)
            assert all(p.signal == (p.duration if signal == "l" else 0) for p in j.sow.support)
            assert abs(sum(p.prob for p in j.sow.support) - 1) < 1e-12
        assert generate_sow(jobs=25, capacity=6, d_max=3, max_duration=4, window=7, signal=signal,
                            seed=5).to_dict() == inst.to_dict()
    with pytest.raises(UsageError, match="Delta"):
        generate_sow(max_duration=5, window=3)


def test_generate_solve_run_compare(tmp_path, capsys):
    f = tmp_path / "s.json"
    code, out, _ = cli(capsys, "generate", "sow", "--jobs", 6, "--capacity", 4, "--dmax", 1, "--seed", 2, "-o", f)
    assert code == 0 and "sow instance" in out
    code, out, _ = cli(capsys, "validate", f)
    assert code == 0 and "6 jobs on C = 4 nodes" in out
    code, out, _ = cli(capsys, "solve", f, "--variant", "lp-r", "--json")
    lp = json.loads(out)
    assert code == 0 and lp["status"] == "optimal"
    code, out, _ = cli(capsys, "solve", f, "--samples", 50, "--json")
    h = json.loads(out)
    assert code == 0 and h["status"] == "optimal" and h["objective"] <= lp["objective"] + 1e-7
    code, out, _ = cli(capsys, "run", f, "-a", "sow-adversarial", "--samples", 50, "--eps", 0.1, "--json")
    run = json.loads(out)
    assert code == 0 and run["check_problems"] == 0 and run["welfare"] <= h["objective"] + 1e-9
    code, out, _ = cli(capsys, "compare", f, "--samples", 50, "--json", "-q")
    rows = json.loads(out)
    assert code == 0 and {r["algorithm"] for r in rows} == {"sow-adversarial", "sow-fifo", "sow-evict-all", "greedy",
                                                             "reservation"}
    assert all(r["opt"] == pytest.approx(h["objective"]) and r["ratio"] >= 1 - 1e-9 for r in rows)
    code, _, err = cli(capsys, "solve", f, "--variant", "hindsight", "--write", tmp_path / "h.lp")
    assert code == 2 and "one program per realization" in err
    code, _, err = cli(capsys, "run", f, "-a", "greedy", "--eps", 0.1)
    assert code == 2 and "eps (--eps) applies to the SoW mechanisms" in err
    code, _, err = cli(capsys, "compare", f, "--eps", 0.1, "-q")
    assert code == 2 and ("greedy, reservation take no --eps option; run those that take it with "
                          "--algorithms sow-adversarial,sow-fifo,sow-evict-all") in err


def test_bad_sow_file_lists_every_problem(tmp_path, capsys):
    doc = {"format": "mlsched/v1", "family": "sow", "name": "bad", "capacity": 2, "d_max": 1, "max_duration": 2,
           "max_value": 4, "window": 2,
           "jobs": [{"id": "a", "birth": 3, "width": 2, "values": [4, 5, 1],
                     "support": [{"arrival": 2, "duration": 3, "prob": 0.5}, {"arrival": 3, "duration": 1, "prob": 0.4}]},
                    {"id": "a", "birth": 1, "width": 1, "values": [0.5],
                     "support": [{"arrival": 1, "duration": 1, "prob": 1}], "reported": {"widht": 1}}]}
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "validate", f)
    assert code == 2
    for expected in ("jobs[0].width", "jobs[0].values: lists 3 values", "jobs[0].values[1]",
                     "jobs[0].support[0].arrival", "jobs[0].support[0].duration", "probabilities sum to 0.9",
                     "jobs[1].values[0]", "jobs[1].reported.widht: unknown field", "jobs[1].id",
                     "jobs[1].birth"):
        assert expected in err, expected
    assert f.read_text() == json.dumps(doc)


def test_misreported_width_runs_on_the_reported_nodes(tmp_path):
    doc = {"format": "mlsched/v1", "family": "sow", "name": "mis", "capacity": 8, "d_max": 2, "max_duration": 1,
           "max_value": 8, "window": 2,
           "jobs": [{"id": "a", "birth": 1, "width": 2, "values": [8, 8],
                     "support": [{"arrival": 1, "duration": 1, "prob": 1}], "reported": {"width": 1}}]}
    f = tmp_path / "mis.json"
    f.write_text(json.dumps(doc))
    inst = load(f)
    from mlsched.online.sow.mechanism import SowMechanism
    from mlsched.sim.sow_run import run_sow
    runs = run_sow(inst, SowMechanism(eps=0.2))
    job = runs.outcomes[0].jobs[0]
    assert runs.problems == [] and job.status == "completed" and job.value == 0.0 and job.payment > 0


def test_every_algorithm_variant_and_sampling_option_end_to_end(tmp_path, capsys):
    f, st = tmp_path / "a.json", tmp_path / "st.json"
    assert cli(capsys, "generate", "sow", "--jobs", 5, "--capacity", 4, "--signal", "const", "--seed", 3, "-o", f)[0] == 0
    assert cli(capsys, "generate", "sow", "--variant", "stochastic", "--sows", 2, "--jobs", 4, "--capacity", 8,
               "--seed", 1, "-o", st)[0] == 0
    values = {}
    for variant in ("hindsight", "lp-r", "lp-rp", "lp-e"):
        code, out, _ = cli(capsys, "solve", f, "--variant", variant, "--json")
        values[variant] = json.loads(out)["objective"]
        assert code == 0 and json.loads(out)["status"] == "optimal"
    code, out, _ = cli(capsys, "solve", f, "--relax", "--json")
    assert code == 0 and values["hindsight"] - 1e-7 <= json.loads(out)["objective"] <= values["lp-r"] + 1e-7
    assert values["lp-rp"] <= values["lp-r"] + 1e-7 and values["lp-e"] == pytest.approx(values["lp-r"])
    code, out, _ = cli(capsys, "solve", f, "--exact-limit", 0, "--samples", 30, "--json")
    assert code == 0 and "30 sampled realizations, 95% CI" in json.loads(out)["message"]
    code, _, err = cli(capsys, "solve", st, "--variant", "lp-r")
    assert code == 2 and "lp-e" in err
    for algorithm in ("sow-adversarial", "sow-fifo", "sow-evict-all", "greedy", "reservation"):
        code, out, _ = cli(capsys, "run", f, "-a", algorithm, "--exact-limit", 0, "--samples", 25, "--json")
        run = json.loads(out)
        assert code == 0 and run["check_problems"] == 0 and run["realizations"] == 25, algorithm
        assert not run["exact_expectation"]
    code, out, _ = cli(capsys, "run", st, "-a", "sow-stochastic", "--eps", 0.1, "--json")
    run = json.loads(out)
    assert code == 0 and run["check_problems"] == 0 and run["exact_expectation"] and run["delta"] == 0.1
    assert 0 < run["fua_loss"] <= 1 + 1e-9 and run["alpha_e"] == pytest.approx(4 / run["fua_loss"])
    code, _, err = cli(capsys, "run", f, "-a", "sow-stochastic")
    assert code == 2 and "sigma = l" in err


def test_compare_reports_the_section_8_columns(tmp_path, capsys):
    f = tmp_path / "s.json"
    assert cli(capsys, "generate", "sow", "--jobs", 6, "--capacity", 4, "--seed", 2, "-o", f)[0] == 0
    code, out, _ = cli(capsys, "compare", f, "--exact-limit", 0, "--samples", 60, "--json", "-q")
    rows = json.loads(out)
    assert code == 0 and len(rows) == 5
    for row in rows:
        for column in ("welfare", "opt", "ratio", "ratio_ci_low", "ratio_ci_high", "lp_r", "lp_rp", "lp_e",
                       "relaxed_welfare", "eviction_cost", "evicted_rate", "cancelled_rate", "switched_rate",
                       "removed_not_switched", "max_overload_frequency", "revenue", "utilization"):
            assert column in row, column
        assert row["ratio_ci_low"] <= row["ratio"] <= row["ratio_ci_high"]
    assert any(row["ratio_ci_low"] < row["ratio_ci_high"] for row in rows)          # sampled: an interval
    mech = rows[0]
    assert mech["algorithm"] == "sow-adversarial" and mech["b_evict"] > 1 and mech["ratio_bound"] is None  # vacuous
    for column in ("eta", "b_switch", "truthful_bound", "alpha_3", "price_condition", "reduction_condition"):
        assert column in mech, column
    code, out, _ = cli(capsys, "run", f, "-a", "sow-adversarial", "--exact-limit", 0, "--samples", 60, "--json")
    run = json.loads(out)
    for column in ("delta", "relaxed_capacity", "oracle_samples", "eps0", "gamma", "zeta", "eta", "b_evict"):
        assert mech[column] == run[column], column      # the reduction's constants, as `run` reports them
