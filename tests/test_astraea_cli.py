"""Astraea from the command line and its BatchSche baseline: generate, run, compare, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from astraea_builders import ex

from mlsched.cli import main
from mlsched.errors import UsageError
from mlsched.instance.generators.astraea import deal_servers, generate_astraea
from mlsched.online.astraea import Astraea
from mlsched.sim.tenant_run import run_tenant
from mlsched.systems import get_system


def cli(capsys, *args):
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_servers_dealt_by_largest_remainder():
    assert deal_servers(np.array([6.0, 3.0, 1.0]), 10).tolist() == [5, 3, 2]
    with pytest.raises(UsageError, match="fewer than the 3 tenants"):
        deal_servers(np.ones(3), 2)


def test_generated_instances_split_the_cluster_by_partition():
    inst = generate_astraea(jobs=40, servers=30, users=4, seed=2)
    assert len(inst.tenants) == 4 and inst.num_jobs == 40
    held = sorted(s for t in inst.tenants for s in t.servers)
    assert held == list(range(30))
    assert sum(t.workers for t in inst.tenants) == int(inst.worker_capacity.sum())
    assert all(1 <= j.gpus for j in inst.jobs) and min(j.arrival for j in inst.jobs) == 0
    assert generate_astraea(jobs=40, servers=30, users=4, seed=2).to_dict() == inst.to_dict()


def test_batchsche_keeps_every_tenant_on_its_servers():
    inst = generate_astraea(jobs=12, servers=8, users=3, profile="small", seed=5)
    sysm = get_system("astraea")
    run = sysm.execute(inst, sysm.policy("batchsche"))          # checked against the whole cluster
    assert (run.phase != 2).all() and run.payments.sum() == 0
    for j, job in enumerate(inst.jobs):
        outside = np.setdiff1d(np.arange(len(inst.servers)), inst.tenants[job.owner].servers)
        assert run.schedule.workers[j, outside].sum() == 0 and run.schedule.ps[j, outside].sum() == 0


def test_batchsche_equals_astraea_with_one_tenant():
    inst = generate_astraea(jobs=10, servers=6, users=1, profile="small", seed=1)
    sysm = get_system("astraea")
    ours, theirs = sysm.execute(inst, Astraea()), sysm.execute(inst, sysm.policy("batchsche"))
    assert (ours.schedule.start == theirs.schedule.start).all()
    assert ours.summary(inst)["revenue"] == pytest.approx(theirs.summary(inst)["revenue"])


def test_batchsche_needs_partitions():
    with pytest.raises(UsageError, match="tenants\\[\\].servers"):
        run_tenant(ex(), get_system("astraea").policy("batchsche"))


def test_generate_run_compare(capsys, tmp_path):
    path = tmp_path / "a.json"
    code, out, _ = cli(capsys, "generate", "astraea", "--jobs", 6, "--servers", 5, "--users", 2, "--profile", "small",
                       "--seed", 4, "-o", path)
    assert code == 0 and "multi-tenant" in out
    code, out, _ = cli(capsys, "run", path, "-a", "astraea", "--json", "--lambda-mode", "theory")
    doc = json.loads(out)
    assert code == 0 and doc["lambda"] > 2 and doc["jobs"] == 6
    code, out, _ = cli(capsys, "run", path, "-a", "astraea", "--json", "--time-origin", "absolute")
    assert code == 0 and json.loads(out)["time_origin"] == "absolute"
    code, out, _ = cli(capsys, "compare", path, "--json", "-q")
    rows = json.loads(out)
    assert code == 0 and {r["algorithm"] for r in rows} == {"astraea", "batchsche", "gandiva_fair", "hived"}
    for row in rows:
        assert row["pr"] == pytest.approx(row["revenue"] / row["opt"]) and row["revenue"] <= row["opt"] + 1e-6
    code, _, err = cli(capsys, "run", path, "-a", "batchsche", "--lease", 5)
    assert code == 2 and "--lease" in err


def test_a_partition_that_does_not_hold_the_quota_is_one_line_and_exit_2(capsys, tmp_path):
    inst = generate_astraea(jobs=4, servers=4, users=2, profile="small", seed=0)
    doc = inst.to_dict()
    doc["tenants"][0]["servers"] = doc["tenants"][0]["servers"][:-1] or [doc["servers"][-1]["name"]]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    code, _, err = cli(capsys, "validate", bad)
    assert code == 2 and "tenants[0].servers" in err and str(bad) in err
