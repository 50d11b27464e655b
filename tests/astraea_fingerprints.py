"""Fingerprints of multi-tenant runs: the exact speed-ups of Astraea's enumeration and of the
baselines must reproduce, bit for bit, what the code wrote before them (Astraea's and BatchSche's
start slots, placements, phases, batches, rounds, mu, ideal utilities, costs, Eq. (2) payments and
dropped jobs; Gandiva_fair's and HiveD's allocation blocks and completions).

    python tests/astraea_fingerprints.py     # rewrite tests/data/astraea-run-fingerprints.json

The stored file was written before the vectorised enumeration (commit 231689b); rewrite it only for
a change that is meant to change schedules, and say so.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORE = ROOT / "tests" / "data" / "astraea-run-fingerprints.json"
POLICIES = ("astraea", "astraea-theory", "batchsche", "gandiva_fair", "hived")


def fingerprint(run) -> str:
    """SHA-256 over the exact values of the run record (repr is exact for floats)."""
    digest = hashlib.sha256()
    if hasattr(run, "schedule"):
        s = run.schedule
        fields = [s.start, s.workers, s.ps, run.phase, run.batch, run.round, run.mu, run.ideal, run.cost,
                  run.payments, sorted(run.dropped), run.batches]
        for j in sorted(run.shared):
            fields.append((j, run.shared[j].slots, run.shared[j].rho))
    else:
        fields = [run.first, run.last, run.job, run.server, run.workers, run.ps, run.completion, run.slots]
    for value in fields:
        digest.update(repr(value.tolist() if hasattr(value, "tolist") else value).encode())
    return digest.hexdigest()


def cases() -> Iterator[tuple[str, object]]:
    """(label, instance): 20 generated instances over both profiles and utility kinds, 2-11 tenants,
    10-40 jobs and 3-12 servers."""
    from mlsched.instance.generators.astraea import generate_astraea

    sizes = [(10, 4, 2), (20, 6, 2), (30, 10, 3), (40, 12, 4), (25, 8, 3), (15, 12, None), (12, 3, 3)]
    n = 0
    for profile in ("paper", "small"):
        for utility in ("linear", "convex"):
            for jobs, servers, users in sizes[n % 3: n % 3 + 5]:
                if n == 20:
                    return
                yield (f"{profile}-{utility}-n{jobs}-s{servers}-u{users}-seed{n}",
                       generate_astraea(jobs=jobs, servers=servers, users=users, utility=utility, profile=profile,
                                        seed=n))
                n += 1


def policies(instance) -> tuple[str, ...]:
    """The policies fingerprinted on ``instance``: lambda from Lemma 1 only up to 12 jobs (the store
    was written when its many rounds per batch made it slow; tests/test_astraea_lazy.py checks it on
    larger instances against the full re-scan)."""
    return POLICIES if instance.num_jobs <= 12 else tuple(p for p in POLICIES if p != "astraea-theory")


def compute() -> dict[str, str]:
    from mlsched.systems import get_system

    system = get_system("astraea")
    out = {}
    for label, inst in cases():
        for name in policies(inst):
            out[f"{label}/{name}"] = fingerprint(system.execute(inst, system.policy(name)))
    return out


if __name__ == "__main__":
    result = compute()
    STORE.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(f"{len(result)} fingerprints written to {STORE}", file=sys.stderr)
