"""Instance files: validation names file and field in one line per problem; lossless round trips."""

from __future__ import annotations

import copy
import json

import pytest
from builders import job
from tests_support import with_field

from mlsched.errors import InstanceError
from mlsched.instance import dumps, from_dict, load, loads, save

BASE = {
    "format": "mlsched/v1", "family": "cluster-jobs", "name": "demo", "horizon": 4,
    "resources": ["gpu", "cpu", "bandwidth"],
    "worker_servers": [{"name": "w1", "capacity": {"gpu": 2, "cpu": 8, "bandwidth": 10000}}],
    "ps_servers": [{"name": "p1", "capacity": {"cpu": 8, "bandwidth": 20000}}],
    "jobs": [
        {"id": "a", "arrival": 1, "epochs": 2, "chunks": 3, "minibatches": 2, "minibatch_time": 0.1,
         "gradient_mb": 100, "worker_demand": {"gpu": 1, "cpu": 2, "bandwidth": 1000},
         "ps_demand": {"cpu": 1, "bandwidth": 4000},
         "utility": {"kind": "sigmoid", "gamma1": 50, "gamma2": 0.5, "gamma3": 2}},
        job("b", arrival=2, worker={"gpu": 1}, ps={"cpu": 1}, bandwidth=(500, 1000)),
    ],
}


def mutate(path, value):
    return with_field(BASE, path, value)


def problems_of(doc):
    with pytest.raises(InstanceError) as info:
        from_dict(doc, "f.json")
    return str(info.value).splitlines()


def test_valid_instance_and_derived_quantities():
    inst = from_dict(BASE)
    a = inst.jobs[0]
    # W = M (tau + 2 e * 8 / b / slot_seconds) = 2 (0.1 + 1600 / 1000 / 3600)
    assert inst.chunk_time[0] == pytest.approx(2 * (0.1 + 1600 / 1000 / 3600))
    assert inst.workload[0] == pytest.approx(2 * 3 * inst.chunk_time[0])
    assert inst.min_duration[0] == 1
    assert (a.worker_bandwidth, a.ps_bandwidth) == (1000, 4000) and a.ps_needed(5) == 2
    assert inst.jobs[1].worker_bandwidth == 500 and inst.jobs[1].ps_needed(3) == 2


def test_round_trip_is_lossless(tmp_path):
    inst = from_dict(BASE)
    path = save(inst, tmp_path / "x.json")
    again = load(path)
    assert again.to_dict() == inst.to_dict()
    assert dumps(again) == dumps(inst)


@pytest.mark.parametrize("path,value,expected", [
    (("jobs", 0, "utility", "gamma2"), -1, "f.json: jobs[0].utility.gamma2: must be >= 0, got -1"),
    (("jobs", 1, "arrival"), 9, "f.json: jobs[1].arrival: must be <= horizon (4), got 9"),
    (("jobs", 1, "chunks"), 1.5, "f.json: jobs[1].chunks: must be an integer, got 1.5"),
    (("jobs", 1, "chunks"), "3", "f.json: jobs[1].chunks: must be an integer, got the string '3'"),
    (("jobs", 0, "epochs"), KeyError, "f.json: jobs[0].epochs: is required"),
    (("horizon",), 0, "f.json: horizon: must be >= 1, got 0"),
    (("family",), "nope", "f.json: family: must be one of cluster-jobs, multi-server, themis, multi-tenant, sow; got 'nope'"),
    (("format",), "mlsched/v9", "f.json: format: unsupported format 'mlsched/v9' (this version reads 'mlsched/v1')"),
    (("worker_servers",), [], "f.json: worker_servers: must have at least 1 item(s), got 0"),
    (("jobs", 1, "bandwidth"), {"worker": 5, "ps": 1},
     "f.json: jobs[1].bandwidth: worker bandwidth b = 5 must be <= PS bandwidth B = 1 (else no PS count satisfies eq. 6 and 7)"),
    (("jobs", 0, "utility", "kind"), "cubic", "f.json: jobs[0].utility.kind: must be one of sigmoid, linear, constant, table; got 'cubic'"),
    (("jobs", 0, "worker_demand", "tpu"), 1, "f.json: jobs[0].worker_demand.tpu: unknown field (expected one of: bandwidth, cpu, gpu)"),
])
def test_each_problem_is_one_line(path, value, expected):
    assert problems_of(mutate(path, value)) == [expected]


def test_all_problems_are_reported_together():
    doc = mutate(("jobs", 0, "utility", "gamma2"), -1)
    doc["jobs"][1]["minibatch_time"] = 0
    doc["jobs"][1]["id"] = "a"
    lines = problems_of(doc)
    assert lines == [
        "f.json: jobs[0].utility.gamma2: must be >= 0, got -1",
        "f.json: jobs[1].id: repeats the id 'a'",
        "f.json: jobs[1].minibatch_time: must be > 0, got 0",
    ]


@pytest.mark.parametrize("text,expected", [
    ("{", "f.json: line 1 column 2: invalid JSON (Expecting property name enclosed in double quotes)"),
    ('{"horizon": NaN}', "f.json: NaN is not a number JSON allows (use a finite value)"),
    ("[]", "f.json: (top level): must be an object, got a list"),
])
def test_unreadable_text(text, expected):
    with pytest.raises(InstanceError) as info:
        loads(text, "f.json")
    assert str(info.value).splitlines()[0] == expected


def test_files_that_cannot_be_read(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_bytes(b'{"a": "\xff"}')
    with pytest.raises(InstanceError, match=r"bad.json: byte 7: not UTF-8 text"):
        load(bad)
    with pytest.raises(InstanceError, match=r"missing.json: file not found"):
        load(tmp_path / "missing.json")


def test_save_never_overwrites_without_force(tmp_path):
    target = tmp_path / "x.json"
    target.write_text("precious")
    inst = from_dict(BASE)
    from mlsched.errors import UsageError
    with pytest.raises(UsageError, match="exists"):
        save(inst, target)
    assert target.read_text() == "precious"
    save(inst, target, force=True)
    assert json.loads(target.read_text())["name"] == "demo"


MULTI = {
    "format": "mlsched/v1", "family": "multi-server", "name": "m", "horizon": 2, "resources": ["cpu"],
    "ports": [{"name": "l1", "request": {"cpu": 2}}],
    "nodes": [{"name": "r1", "capacity": {"cpu": 3}, "alpha": {"cpu": 1.2}, "utility": {"cpu": "log"}}],
    "channels": [[0, 0]], "beta": {"cpu": 0.5}, "arrivals": {"kind": "bernoulli", "rho": 0.5, "seed": 3},
}


@pytest.mark.parametrize("key,value,expected", [
    ("channels", [[0, 4]], "f.json: channels[0]: must be [port index < 1, node index < 1]"),
    ("beta", {"cpu": 1.5}, "f.json: beta.cpu: must be <= 1, got 1.5"),
    ("arrivals", {"kind": "explicit", "slots": [[0]]}, "f.json: arrivals.slots: must be a list of 2 lists of port indices (one per slot)"),
    ("arrivals", {"kind": "bernoulli", "rho": 2, "seed": 1}, "f.json: arrivals.rho: must be <= 1, got 2"),
    ("nodes", [{"capacity": {"cpu": 3}, "utility": {"cpu": "cubic"}}],
     "f.json: nodes[0].utility.cpu: must be one of linear, log, reciprocal, poly; got 'cubic'"),
])
def test_multi_server_problems(key, value, expected):
    doc = copy.deepcopy(MULTI)
    doc[key] = value
    assert problems_of(doc) == [expected]


def test_multi_server_round_trip_and_graph():
    inst = from_dict(MULTI)
    assert from_dict(inst.to_dict()).to_dict() == inst.to_dict()
    assert inst.graph.number_of_edges() == 1 and inst.arrivals().shape == (2, 1)
    assert (inst.arrivals() == from_dict(MULTI).arrivals()).all()
