"""The themis instance family: file reader and round trip, cluster presets, the Philly trace
loader and app grouping, and workloads W1 and W2 (Themis spec §1.1-1.3, §5.2-5.3, A22-A25, A29)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from tests_support import with_field

from mlsched.cli import main
from mlsched.errors import InstanceError, UsageError
from mlsched.instance import ThemisApp, ThemisInstance, ThemisJob, dumps, from_dict, load, save
from mlsched.instance.generators.themis import (
    ATTRIBUTION,
    DEFAULT_TRACE,
    generate_themis,
    group_apps,
    read_model_mix,
    read_philly,
    window_jobs,
)
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, NETWORK_PROFILE, UNKNOWN_PROFILE
from mlsched.instance.themis_clusters import sim_256, sim_hetero, truth64
from mlsched.instance.themis_clusters import testbed as like_testbed
from mlsched.instance.themis_clusters import testbed64 as the_testbed
from mlsched.profiles import load_profile
from mlsched.resources import shipped_instance

FULL_TRACE = Path(__file__).resolve().parents[2] / "shared" / "traces" / "philly-jobs.csv"

DOC = {
    "format": "mlsched/v1", "family": "themis", "name": "tiny",
    "cluster": {"machines": [{"rack": 0, "slots": [2, 2]}, {"rack": 1, "slots": [1]}]},
    "apps": [
        {"name": "sh", "arrival": 0, "profile": [1, 1, 1.5, 2], "model": "resnet50",
         "phases": [[{"iterations": 8, "tau": 80, "cap": 8}, {"iterations": 8, "tau": 120, "cap": 8}],
                    [{"iterations": 36.5, "tau": 100, "cap": 8}]]},
        {"arrival": 12.5, "phases": [[{"iterations": 3, "tau": 0.25, "cap": 1}]]},
    ],
    "meta": {"note": "hand-made"},
}


def problems_of(doc):
    with pytest.raises(InstanceError) as info:
        from_dict(doc, "f.json")
    return str(info.value).splitlines()


def mutate(path, value):
    return with_field(DOC, path, value)


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def w1():
    return generate_themis(workload="W1", seed=3)


@pytest.fixture(scope="module")
def w2():
    return generate_themis(workload="W2", seed=3)


# --- file format ---------------------------------------------------------------------------------

def test_reader_builds_the_instance_and_defaults():
    inst = from_dict(DOC)
    assert isinstance(inst, ThemisInstance) and inst.num_gpus == 5
    assert inst.topology.machines == ((0, (2, 2)), (1, (1,)))
    sh, single = inst.apps
    assert sh.phases[0] == (ThemisJob(8.0, 80.0, 8), ThemisJob(8.0, 120.0, 8))
    assert sh.profile == NETWORK_PROFILE and sh.model == "resnet50" and sh.demand == 16
    assert sh.work == pytest.approx(8 * 80 + 8 * 120 + 36.5 * 100)
    assert (single.name, single.profile, single.model, single.arrival) == ("a1", UNKNOWN_PROFILE, None, 12.5)
    assert inst.describe() == "2 apps (4 jobs), 5 GPUs on 2 machines in 2 racks"


def test_round_trip_is_lossless(tmp_path):
    inst = from_dict(DOC)
    again = from_dict(inst.to_dict())
    assert again == inst and again.to_dict() == inst.to_dict()
    built = ThemisInstance("x", GpuTopology(((0, (1, 1)),)), (
        ThemisApp("p", 0.1, ((ThemisJob(1 / 3, 0.7, 2), ThemisJob(2.0, 0.7, 1)),), COMPUTE_PROFILE, "lm"),))
    path = save(built, tmp_path / "x.json")
    assert load(path) == built and dumps(load(path)) == path.read_text()


def test_generated_instances_round_trip(w1, w2, tmp_path):
    for inst in (w1, w2):
        again = load(save(inst, tmp_path / f"{inst.name}.json"))
        assert again == inst


@pytest.mark.parametrize("path,value,expected", [
    (("cluster", "machines"), [], "f.json: cluster.machines: must have at least 1 item(s), got 0"),
    (("cluster", "machines", 0, "rack"), -1, "f.json: cluster.machines[0].rack: must be >= 0, got -1"),
    (("cluster", "machines", 0, "rack"), 0.5, "f.json: cluster.machines[0].rack: must be an integer, got 0.5"),
    (("cluster", "machines", 1, "slots"), [2, 0],
     "f.json: cluster.machines[1].slots[1]: must be an integer in [1, 64] (GPUs in the slot), got the number 0"),
    (("cluster", "machines", 1, "slots"), [],
     "f.json: cluster.machines[1].slots: must be a non-empty list of GPU counts per slot"),
    (("cluster", "machines", 1, "gpus"), 4,
     "f.json: cluster.machines[1].gpus: unknown field (expected one of: gpu_type, rack, slots)"),
    (("apps",), [], "f.json: apps: must have at least 1 item(s), got 0"),
    (("apps", 1, "arrival"), -1, "f.json: apps[1].arrival: must be >= 0, got -1"),
    (("apps", 1, "arrival"), KeyError, "f.json: apps[1].arrival: is required"),
    (("apps", 0, "profile"), [1.1, 1.1, 1.5, 2], "f.json: apps[0].profile: s0 (one slot) must be 1, got 1.1"),
    (("apps", 0, "profile"), [1, 1.5, 1.2, 2], "f.json: apps[0].profile: must be non-decreasing, got 1, 1.5, 1.2, 2"),
    (("apps", 0, "profile"), [1, 1, 2],
     "f.json: apps[0].profile: must be a list of 4 finite numbers (slowdown by placement level)"),
    (("apps", 0, "model"), 5, "f.json: apps[0].model: must be a non-empty string, got the number 5"),
    (("apps", 0, "name"), "a1", "f.json: apps[1].name: repeats the name 'a1'"),
    (("apps", 0, "deadline"), 3,
     "f.json: apps[0].deadline: unknown field (expected one of: arrival, model, name, phases, profile, speeds)"),
    (("apps", 0, "phases"), [], "f.json: apps[0].phases: must be a non-empty list of phases (each a non-empty list of jobs)"),
    (("apps", 0, "phases", 1), [], "f.json: apps[0].phases[1]: must be a non-empty list of jobs"),
    (("apps", 0, "phases", 0, 1, "iterations"), 0, "f.json: apps[0].phases[0][1].iterations: must be > 0, got 0"),
    (("apps", 0, "phases", 1, 0, "tau"), KeyError, "f.json: apps[0].phases[1][0].tau: is required"),
    (("apps", 1, "phases", 0, 0, "cap"), 1.5, "f.json: apps[1].phases[0][0].cap: must be an integer, got 1.5"),
    (("apps", 1, "phases", 0, 0, "cap"), 0, "f.json: apps[1].phases[0][0].cap: must be >= 1, got 0"),
    (("apps", 0, "phases", 0, 0, "iterations"), 1e300,
     "f.json: apps[0].phases[0][0]: iterations x tau = 8e+301 GPU-seconds; it must lie in (0, 1e+15]"),
    (("apps", 0, "phases"), None, "f.json: apps[0].phases: must be a non-empty list of phases (each a non-empty list of jobs)"),
    (("apps", 0, "speeds"), {"v100": 1.0},
     "f.json: apps[0].speeds: the cluster names no GPU types (cluster.machines[].gpu_type)"),
    (("cluster", "machines", 0, "gpu_type"), "v100",
     "f.json: cluster.machines: machine 1 has no gpu_type: name the GPU type of every machine or of none"),
    (("meta",), [], "f.json: meta: must be an object"),
    (("horizon",), 5, "f.json: horizon: unknown field (expected one of: apps, cluster, expected, family, format, meta, name)"),
])
def test_each_problem_is_one_line(path, value, expected):
    assert problems_of(mutate(path, value)) == [expected]



@pytest.mark.parametrize("speeds, expected", [
    ("fast", "f.json: apps[0].speeds: must be an object of speeds by GPU type (v100, p100, k80), got the string 'fast'"),
    ({"v100": 1.0, "p100": "fast", "k80": 0.5},
     "f.json: apps[0].speeds.p100: must be a finite number >= 0 (the app's speed on p100 GPUs), got the string 'fast'"),
    ({"v100": 1.0, "k80": 0.5},
     "f.json: apps[0].speeds.p100: must be a finite number >= 0 (the app's speed on p100 GPUs), got null"),
])
def test_malformed_speeds_on_a_typed_cluster_are_one_line(speeds, expected):
    """The shipped Gavel slice (V100, P100 and K80 machines) with one app's speeds broken (the
    fuzzer's find: these lines raised NameError)."""
    doc = json.loads(shipped_instance("themis/gavel-philly-first24").read_text())
    assert problems_of(with_field(doc, ("apps", 0, "speeds"), speeds)) == [expected]

def test_all_problems_are_reported_together():
    doc = mutate(("cluster", "machines", 0, "rack"), -2)
    doc["apps"][0]["phases"][0][0]["tau"] = -1
    doc["apps"][1]["profile"] = [0.5, 1, 1, 1]
    doc["expected"] = 3
    assert problems_of(doc) == [
        "f.json: cluster.machines[0].rack: must be >= 0, got -2",
        "f.json: apps[0].phases[0][0].tau: must be > 0, got -1",
        "f.json: apps[1].profile: s0 (one slot) must be 1, got 0.5",
        "f.json: expected: must be an object",
    ]


def test_cli_validate(capsys, tmp_path):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(DOC))
    code, out, _ = cli(capsys, "validate", good)
    assert (code, out) == (0, f"{good}: valid themis instance 'tiny': 2 apps (4 jobs), 5 GPUs on 2 machines in 2 racks\n")
    bad = tmp_path / "bad.json"
    doc = mutate(("apps", 1, "phases", 0, 0, "cap"), 0)
    doc["apps"][0]["arrival"] = "soon"
    bad.write_text(json.dumps(doc))
    code, out, err = cli(capsys, "validate", bad)
    assert code == 2 and out == ""
    assert err.splitlines() == [f"{bad}: apps[0].arrival: must be a number, got the string 'soon'",
                                f"{bad}: apps[1].phases[0][0].cap: must be >= 1, got 0"]


# --- clusters ------------------------------------------------------------------------------------

def test_presets():
    assert [t.num_gpus for t in (the_testbed(), sim_hetero(), sim_256(), truth64())] == [64, 168, 256, 64]
    assert the_testbed().machines == ((0, (1, 1)),) * 8 + ((0, (1, 1, 1, 1)),) * 12
    hetero = sim_hetero().machines
    assert [slots for _, slots in hetero] == [(2, 2, 2, 2)] * 16 + [(1, 1, 1, 1)] * 6 + [(1,)] * 16
    assert [rack for rack, _ in hetero] == [m // 4 for m in range(38)]
    big = sim_256().machines
    assert len(big) == 32 and {s for _, s in big} == {(2, 2, 2, 2)} and [r for r, _ in big] == [m // 4 for m in range(32)]
    assert truth64().machines == ((0, (2, 2, 2, 2)),) + ((0, (2,)),) * 28
    # placement levels: the testbed's 2-GPU machine spans two slots; truth64's shares one slot
    assert the_testbed().level([0, 1]) == 1 and the_testbed().level([1, 2]) == 2
    assert truth64().level([8, 9]) == 0 and truth64().level([0, 2]) == 1 and sim_hetero().level([0, 8]) == 2
    assert sim_hetero().level([0, 40]) == 3


def test_testbed_like_clusters_keep_the_machine_mix():
    def mix(t):
        return (sum(s == (1, 1) for _, s in t.machines), sum(s == (1, 1, 1, 1) for _, s in t.machines))

    assert like_testbed(64) == the_testbed()
    assert [(mix(like_testbed(n)), like_testbed(n).num_gpus) for n in (64, 32, 16)] == [((8, 12), 64), ((4, 6), 32), ((2, 3), 16)]
    assert mix(like_testbed(10)) == (1, 2) and mix(like_testbed(2)) == (1, 0)
    assert {r for r, _ in like_testbed(40).machines} == {0}
    for bad in (0, 7, -4):
        with pytest.raises(UsageError, match="even number of GPUs"):
            like_testbed(bad)


# --- trace loading and grouping --------------------------------------------------------------------

def write_csv(path, rows, header="timestamp,duration,num_gpus,gpu_time,cluster"):
    path.write_text(header + "\n" + "".join(r + "\n" for r in rows))
    return path


def test_grouping_rule(tmp_path):
    def row(seconds, gpus, cluster, duration=10):
        stamp = (pd.Timestamp("2017-10-01") + pd.Timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")
        return f"{stamp},{duration},{gpus},{duration * gpus},{cluster}"

    rows = [row(0, 1, "A"), row(30, 1, "A"), row(90, 1, "A"), row(151, 1, "A"),   # 60 s chains, 61 s splits
            row(10, 2, "A"), row(40, 2, "A"),                                     # other GPU count
            row(20, 1, "B"),                                                      # other cluster
            row(-5, 1, "A", 3), row(3 * 86400 * 5, 1, "A"), row(35, 4, "A")]     # outside window / > 2 GPUs
    jobs = window_jobs(read_philly(write_csv(tmp_path / "t.csv", rows)))
    assert len(jobs) == 7
    key = [f"{c}{g}@{s - jobs['submit'].min()}" for c, g, s in zip(jobs["cluster"], jobs["num_gpus"], jobs["submit"])]
    chains = dict(zip(key, group_apps(jobs)))
    assert chains == {"A1@0": 0, "A2@10": 1, "B1@20": 2, "A1@30": 0, "A2@40": 1, "A1@90": 0, "A1@151": 3}
    firsts = dict(zip(key, group_apps(jobs, from_first=True)))
    assert firsts == {"A1@0": 0, "A2@10": 1, "B1@20": 2, "A1@30": 0, "A2@40": 1, "A1@90": 3, "A1@151": 4}


def test_shipped_sample_app_counts():
    jobs = read_philly(DEFAULT_TRACE)
    assert len(jobs) == len(window_jobs(jobs)) == 23_599 and jobs["num_gpus"].max() == 2
    assert jobs["gpu_time"].sum() / (14 * 86400) == pytest.approx(155.63, abs=0.01)
    assert group_apps(jobs).max() + 1 == 3378
    assert group_apps(jobs, from_first=True).max() + 1 == 5951
    names, weights = read_model_mix()
    assert names == ("a3c", "cyclegan", "lm", "recommendation", "resnet18", "resnet50", "transformer")
    assert weights * 1181 == pytest.approx([42, 53, 213, 223, 259, 154, 237])


@pytest.mark.parametrize("rows,header,expected", [
    (["2017-10-02 00:00:00,5,1,5"], "timestamp,duration,num_gpus,gpu_time",
     ["column 'cluster': missing (columns found: timestamp, duration, num_gpus, gpu_time)"]),
    (["2017-10-02 00:00:00,5,two,10,A"], None, ["column 'num_gpus', line 2: must be an integer >= 1, got 'two'"]),
    (["2017-10-02 00:00:00,5,1,5,A", "2017-10-32 00:00:00,5,1,5,A"], None,
     ["column 'timestamp', line 3: must be a time like 2017-10-01 00:00:00, got '2017-10-32 00:00:00'"]),
    (["2017-10-02 00:00:00,5,2,5,A"], None, ["column 'gpu_time', line 2: must equal duration * num_gpus = 10, got '5'"]),
    (["2017-10-02 00:00:00,0,1,0,A", "2017-10-02 00:00:00,-1,1,x,"], None,
     ["column 'duration', line 2: must be a number > 0 (seconds), got '0' (1 more rows like it)",
      "column 'gpu_time', line 2: must be a number > 0 (GPU-seconds), got '0' (1 more rows like it)",
      "column 'cluster', line 3: must be a non-empty cluster id, got ''"]),
])
def test_trace_problems_are_one_line_naming_file_and_column(tmp_path, rows, header, expected):
    path = write_csv(tmp_path / "t.csv", rows, header or "timestamp,duration,num_gpus,gpu_time,cluster")
    with pytest.raises(InstanceError) as info:
        generate_themis(trace=path)
    assert str(info.value).splitlines() == [f"{path}: {line}" for line in expected]


def test_missing_or_empty_trace(capsys, tmp_path):
    code, _, err = cli(capsys, "generate", "themis", "--trace", tmp_path / "none.csv", "-o", tmp_path / "x.json")
    assert (code, err) == (2, f"{tmp_path / 'none.csv'}: file not found\n")
    outside = write_csv(tmp_path / "old.csv", ["2017-09-30 23:59:59,5,1,5,A", "2017-10-15 00:00:00,5,1,5,A"])
    with pytest.raises(UsageError, match="no jobs with <= 2 GPUs submitted in"):
        generate_themis(trace=outside)
    assert not (tmp_path / "x.json").exists()


# --- workloads -------------------------------------------------------------------------------------

def test_w1_from_the_shipped_sample(w1):
    meta = w1.meta
    p = 64 / 156
    assert w1.topology == the_testbed() and meta["keep_probability"] == pytest.approx(p)
    assert meta["apps_total"] == 3378 and meta["apps_kept"] == len(w1.apps)
    assert abs(len(w1.apps) - p * 3378) < 4 * math.sqrt(3378 * p * (1 - p))
    assert meta["attribution"] == ATTRIBUTION and meta["window"] == ["2017-10-01 00:00:00", "2017-10-15 00:00:00"]
    arrivals = [a.arrival for a in w1.apps]
    assert arrivals[0] == 0 and arrivals == sorted(arrivals) and arrivals[-1] < 14 * 86400
    assert all(len(a.phases) == 1 for a in w1.apps)
    jobs = [j for a in w1.apps for j in a.phases[0]]
    assert {j.cap for j in jobs} == {1, 2} and min(j.work for j in jobs) > 0
    for a in w1.apps:
        assert {j.tau for j in a.phases[0]} == {load_profile(a.model).iteration_seconds["k80"]}
    network = sum(a.profile == NETWORK_PROFILE for a in w1.apps)
    assert network + sum(a.profile == COMPUTE_PROFILE for a in w1.apps) == len(w1.apps)
    assert abs(network - len(w1.apps) / 2) < 4 * math.sqrt(len(w1.apps) / 4)


def test_w1_keeps_all_work_when_everything_is_kept():
    inst = generate_themis(gpus=156, p_net=1.0)
    jobs = window_jobs(read_philly(DEFAULT_TRACE))
    assert inst.meta["keep_probability"] == 1 and len(inst.apps) == 3378
    assert sum(a.num_jobs for a in inst.apps) == len(jobs) == 23_599
    assert sum(a.work for a in inst.apps) == pytest.approx(jobs["gpu_time"].sum(), rel=1e-12)
    assert {a.profile for a in inst.apps} == {NETWORK_PROFILE}
    assert inst.meta["time_origin"] == jobs["timestamp"].iloc[0] == "2017-10-01 00:00:45"


def test_w2_successive_halving(w1, w2):
    assert [(a.name, a.arrival, a.model, a.profile) for a in w2.apps] == \
        [(a.name, a.arrival, a.model, a.profile) for a in w1.apps]
    fractional = 0
    for a1, a2 in zip(w1.apps, w2.apps):
        n = len(a2.phases[0])
        count = len(a2.phases)
        assert n in (4, 8, 16, 32) and count == int(math.log2(n)) + 1
        assert [len(ph) for ph in a2.phases] == [n >> p for p in range(count)]
        first = a2.phases[0][0].cap
        assert first in (1, 2, 4)
        assert [ph[0].cap for ph in a2.phases] == [min(8, first * 2**p) for p in range(count)]
        assert all(len({(j.cap, j.iterations, j.tau) for j in ph}) == 1 for ph in a2.phases)
        budget = a1.work
        assert a2.work == pytest.approx(budget, rel=1e-9)
        for ph in a2.phases[:-1]:
            share = (budget / count) / (len(ph) * ph[0].tau)
            if share >= 1:
                assert ph[0].iterations == math.floor(share)
            else:
                assert ph[0].iterations == pytest.approx(share, rel=1e-12)
                fractional += 1
        assert sum(j.work for ph in a2.phases[:-1] for j in ph) <= budget * (count - 1) / count * (1 + 1e-12)
        assert a2.phases[-1][0].iterations > 0
    assert fractional == w2.meta["w2_fractional_phases"] > 0


def test_seeds_are_reproducible_and_app_sets_nest(w1):
    assert dumps(generate_themis(workload="W1", seed=3)) == dumps(w1)
    other = generate_themis(workload="W1", seed=4)
    assert [a.name for a in other.apps] != [a.name for a in w1.apps]
    half = generate_themis(workload="W1", seed=3, gpus=32, load=2.0)
    assert half.num_gpus == 32 and half.topology == like_testbed(32)
    assert half.apps == w1.apps
    fewer = generate_themis(workload="W1", seed=3, load=0.5)
    assert {a.name for a in fewer.apps} < {a.name for a in w1.apps}
    hetero = generate_themis(workload="W1", seed=3, cluster="sim_hetero")
    assert hetero.meta["keep_probability"] == 1 and len(hetero.apps) == 3378


@pytest.mark.skipif(not FULL_TRACE.is_file(), reason="the shared full trace is not present")
def test_full_trace_gives_the_same_instance(w1):
    full = generate_themis(workload="W1", seed=3, trace=FULL_TRACE)
    assert full.apps == w1.apps and full.meta["trace"] == "philly-jobs.csv"
    assert group_apps(window_jobs(read_philly(FULL_TRACE))).max() + 1 == 3378


@pytest.mark.parametrize("kwargs,message", [
    ({"workload": "W3"}, "unknown workload 'W3'"),
    ({"load": 0}, "load must be a number > 0"),
    ({"p_net": 1.5}, r"p_net must lie in \[0, 1\]"),
    ({"seed": -1}, "seed must be an integer >= 0"),
    ({"cluster": "sim_hetero", "gpus": 64}, "cluster sim_hetero has 168 GPUs, not 64"),
    ({"cluster": "big"}, "unknown cluster 'big'"),
    ({"gpus": 33}, "even number of GPUs"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(UsageError, match=message):
        generate_themis(**kwargs)


def test_cli_generate_end_to_end(capsys, tmp_path):
    target = tmp_path / "w2.json"
    args = ("generate", "themis", "--workload", "W2", "--gpus", "32", "--seed", "5", "--load", "0.25",
            "--p-net", "0", "-o", target)
    code, out, _ = cli(capsys, *args)
    assert code == 0 and out.startswith(f"wrote {target}: themis instance 'themis-w2-testbed32-s5-load0.25', ")
    inst = load(target)
    assert inst == generate_themis(workload="W2", gpus=32, seed=5, load=0.25, p_net=0)
    assert inst.num_gpus == 32 and {a.profile for a in inst.apps} == {COMPUTE_PROFILE}
    assert inst.meta["keep_probability"] == pytest.approx(0.25 * 32 / 156)
    code, out, _ = cli(capsys, "validate", target)
    assert code == 0 and out.startswith(f"{target}: valid themis instance 'themis-w2-testbed32-s5-load0.25': ")
    before = target.read_bytes()
    code, out, err = cli(capsys, "generate", "themis", "-o", target)
    assert (code, out, err) == (2, "", f"{target}: exists; pass --force to overwrite it\n")
    assert target.read_bytes() == before
    code, _, _ = cli(capsys, "generate", "themis", "--cluster", "truth64", "--force", "-o", target)
    assert code == 0 and load(target).topology == truth64() and target.read_bytes() != before


def test_generated_arrivals_and_works_are_plain_numbers(w1):
    doc = w1.to_dict()
    assert doc["apps"][0]["arrival"] == 0.0 and doc["cluster"]["machines"][0] == {"rack": 0, "slots": [1, 1]}
    assert np.all(np.diff([a["arrival"] for a in doc["apps"]]) >= 0)
