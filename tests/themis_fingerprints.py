"""Fingerprints of Themis-family run records: the simulator's fast paths must reproduce, bit for
bit, the record the straightforward path wrote (finish times, T_id, every holding and every job
interval with its GPUs, resume time and slowdown).

    python tests/themis_fingerprints.py     # rewrite tests/data/themis-run-fingerprints.json

The stored file was written by the simulator before its fast paths existed (commit 203a61a); the
records with a restart overhead were added later, written by the simulator of commit ad09857 (whose
records without it are those of 203a61a). Rewrite it only for a change that is meant to change run
records, and say so.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "tests" / "data" / "themis-run-fingerprints.json"
POLICIES = ("themis", "themis-floor", "themis-uncapped", "themis-running", "gavel-ftf",
            "gandiva", "tiresias", "optimus", "slaq", "srtf", "srsf")
RESTART_OVERHEAD = 30.0   # seconds; the second set of records pays it at every change of a job's GPUs (A18)


def fingerprint(run) -> str:
    """SHA-256 over the exact float values of the run record (repr is exact for floats)."""
    digest = hashlib.sha256()
    digest.update(repr(run.finish.tolist()).encode())
    digest.update(repr(run.t_id.tolist()).encode())
    for h in run.holdings:
        digest.update(repr((h.app, h.gpu, h.start, h.end)).encode())
    for iv in run.jobs:
        digest.update(repr((iv.app, iv.phase, iv.job, iv.start, iv.end, iv.resume, sorted(iv.gpus),
                            iv.slowdown)).encode())
    return digest.hexdigest()


def cases() -> Iterator[tuple[str, object]]:
    """(label, instance): the shipped Themis instances, a W2 slice (multi-phase apps) and a
    contended one: 16 network-intensive W2 apps arriving 120 s apart with 30x their iterations on
    two racks of 8 GPUs, so that rounds hold canonical auctions."""
    from dataclasses import replace

    from mlsched.instance import load
    from mlsched.instance.generators.themis import generate_themis
    from mlsched.instance.gpu_topology import GpuTopology

    for path in sorted((ROOT / "instances" / "themis").glob("*.json")):
        yield path.stem, load(path)
    yield "w2-16gpu-first20", generate_themis(workload="W2", gpus=16, apps=20)
    base = generate_themis(workload="W2", gpus=16, p_net=1.0, apps=16)
    apps = tuple(replace(a, arrival=120.0 * i, phases=tuple(tuple(replace(j, iterations=30 * j.iterations) for j in p)
                                                             for p in a.phases)) for i, a in enumerate(base.apps))
    yield "w2-2racks-burst", replace(base, name="w2-2racks-burst", apps=apps,
                                     topology=GpuTopology.uniform(racks=2, machines_per_rack=2, slots_per_machine=2,
                                                                  gpus_per_slot=2))


def key(label: str, policy: str, restart_overhead: float = 0.0) -> str:
    return f"{label}/{policy}" + (f"/restart-{restart_overhead:g}" if restart_overhead else "")


def compute() -> dict[str, str]:
    from mlsched.sim.event_engine import SimOptions, simulate
    from mlsched.systems import get_system

    system = get_system("themis")
    out = {}
    for label, inst in cases():
        for name in POLICIES:
            for overhead in (0.0, RESTART_OVERHEAD):
                run = simulate(inst, system.policy(name), SimOptions(restart_overhead=overhead), check=False)
                out[key(label, name, overhead)] = fingerprint(run)
    return out


if __name__ == "__main__":
    result = compute()
    STORE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"{len(result)} fingerprints written to {STORE}", file=sys.stderr)
