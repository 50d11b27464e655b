"""Property figures of Astraea on random small instances (spec §4.2, §7.6): hard invariants (FEAS,
batching, BSI-1, GC, NFR, ACCT, mu > 0, determinism) on every run, SP-1 over random misreports of five
kinds at frozen prices, the BSI-2 pass rate against each tenant alone on a synthetic partition, and an
SP-2 search for profitable tenant-level misreports (expected to find some: A17).

    python tools/astraea_properties.py [--instances 2000] [--misreports 100000] [--sp2 400]
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter

import numpy as np

from mlsched.instance.generators.astraea import tiny_astraea
from mlsched.instance.multi_tenant import MultiTenantInstance, Tenant, TenantServer, duration
from mlsched.online.astraea import Astraea
from mlsched.online.astraea.invariants import MISREPORTS, misreport, random_view, sp1_surplus, violations
from mlsched.sim.multi_tenant_check import realized_utilities
from mlsched.tenant_metrics import tenant_gains


def invariants(instances: int) -> None:
    tick = time.perf_counter()
    total: Counter[str] = Counter()
    for seed in range(instances):
        inst = tiny_astraea(seed)
        total += violations(inst, Astraea().run(inst), Astraea().run(inst))
    print(f"invariants on {instances} instances ({time.perf_counter() - tick:.0f} s): "
          f"violations {dict(total) or 'none'}")


def sp1(count: int) -> None:
    rng = np.random.default_rng(0)
    tried, beaten = Counter(), Counter()
    seed = 0
    while sum(tried.values()) < count:
        inst = tiny_astraea(100_000 + seed, max_jobs=3)
        seed += 1
        ratio = inst.worker_bandwidth / inst.ps_bandwidth
        for _ in range(50):
            job = inst.jobs[int(rng.integers(inst.num_jobs))]
            kind = MISREPORTS[int(rng.integers(len(MISREPORTS)))]
            result = sp1_surplus(job, misreport(rng, job, kind), random_view(rng, inst, int(2 ** rng.integers(1, 5))),
                                 ratio)
            tried[kind] += 1
            beaten[kind] += result is not None and result[1] > result[0] + 1e-9
    print(f"SP-1: {sum(tried.values())} misreports {dict(tried)}, profitable {dict(beaten)}")


def alone(instance: MultiTenantInstance, u: int) -> MultiTenantInstance:
    """Tenant u's jobs on a synthetic partition: one server holding its quotas (BSI-2)."""
    t = instance.tenants[u]
    return dataclasses.replace(instance, servers=(TenantServer("own", t.workers, t.ps),),
                               tenants=(Tenant(t.name, t.workers, t.ps),), expected={},
                               jobs=tuple(dataclasses.replace(j, owner=0) for j in instance.jobs if j.owner == u))


def bsi2(instances: int) -> None:
    pairs = passed = 0
    worst = np.inf
    for seed in range(instances):
        inst = tiny_astraea(seed)
        gains = Astraea().run(inst).gains(inst)
        for u, tenant in enumerate(inst.tenants):
            mine = alone(inst, u)
            if not mine.jobs or tenant.workers == 0 or tenant.ps == 0:
                continue
            run = Astraea(sharing=False).run(mine)
            own = float(run.gains(mine).sum())
            pairs += 1
            passed += gains[u] >= own - 1e-6
            if own > 0:
                worst = min(worst, gains[u] / own)
    print(f"BSI-2: {passed} of {pairs} (instance, tenant) pairs gain at least what they gain alone "
          f"({passed / max(pairs, 1):.1%}); worst g_u / g_u(alone) {worst:.4g}")


def sp2(instances: int) -> None:
    rng = np.random.default_rng(1)
    found: Counter[str] = Counter()
    largest = 0.0
    kinds = {"D only": ("chunks below", "chunks above"), "B only": ("epochs", "minibatches"),
             "utility scale": ("utility scale",)}
    for seed in range(instances):
        inst = tiny_astraea(200_000 + seed)
        base = Astraea().run(inst).gains(inst)
        for label, options in kinds.items():
            j = int(rng.integers(inst.num_jobs))
            lie = misreport(rng, inst.jobs[j], options[int(rng.integers(len(options)))])
            reported = dataclasses.replace(inst, jobs=inst.jobs[:j] + (lie,) + inst.jobs[j + 1:])
            gain = true_gains(inst, reported, Astraea().run(reported), j)[inst.jobs[j].owner]
            if gain > base[inst.jobs[j].owner] + 1e-6:
                found[label] += 1
                largest = max(largest, gain - base[inst.jobs[j].owner])
    print(f"SP-2 over {instances} instances: profitable misreports {dict(found) or 'none'}, largest gain {largest:.4g}")


def true_gains(instance: MultiTenantInstance, reported: MultiTenantInstance, run, j: int) -> np.ndarray:
    """Tenant gains when job j lied: the other jobs as scheduled; job j runs W_eff = min(W, D_j) workers
    in its window and earns f_j only if it finishes there (spec SP-1's rule); payments as charged."""
    s = run.schedule
    utilities = realized_utilities(reported, s)
    if s.start[j]:
        job = instance.jobs[j]
        needed = duration(job, int(min(s.workers[j].sum(), job.chunks)), bool(s.centralized()[j]))
        fits = needed <= int(s.durations(reported)[j])
        utilities[j] = instance.realized(job, int(s.start[j]) + needed - 1) if fits else 0.0
    return tenant_gains(instance, utilities, run.paid, run.payments)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=2000)
    parser.add_argument("--misreports", type=int, default=100_000)
    parser.add_argument("--sp2", type=int, default=400)
    args = parser.parse_args()
    invariants(args.instances)
    sp1(args.misreports)
    bsi2(min(args.instances, 500))
    sp2(args.sp2)


if __name__ == "__main__":
    main()
