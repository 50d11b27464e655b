"""Property figures of Astraea on random small instances (spec §4.2, §7.6; U <= 3, S <= 6, N <= 10):

* invariants: FEAS, batching, rounds, mu > 0, BSI-1, GC, NFR, ACCT and determinism on every run, and
  on every replayed A_maxIrev call the posted prices (never falling within a round, in [0, theta - 1],
  summing to the cost) and PE-op; BSI-2 (g_u against the tenant's exclusive partition run: pass rate,
  worst ratio) on the same runs;
* SP-1 over random misreports of five kinds at frozen prices (the W_eff rule), 0 profitable expected;
* SP-2: one misreport per kind (D only, B only, utility scale) per instance, profitable ones counted
  (some expected: Theorem 4 fails at the tenant level, A17);
* Lemma 2 gaps: the enumeration's mu against the optimum of problem (9) on random frozen rounds;
* PD and LEM1 (reports): each A_maxIrev call's admitted ideal revenue P_alg and the dual value D_alg
  of (6) at its final prices against OPT of IRMP(call's jobs, tau_l), P_alg >= OPT / sigma (Lemma 3)
  and D_alg >= OPT (weak duality, which quotas and fragmentation may break); with lambda from Lemma 1,
  each batch's admitted ideal revenue against OPT of IRMP(J_l, tau_l);
* THM1 (report): with lambda from Lemma 1 and absolute time, OPT(P-OFF admission) - ALG against
  Theorem 1 (i)'s bound.

    python tools/astraea_properties.py [--instances 2000] [--misreports 100000] [--sp2 400]
        [--pricing 500] [--pd 40] [--lem1 40] [--thm1 40] [--part invariants,sp1,sp2,pricing,pd,lem1,thm1]

Each part prints its counts with wall and CPU seconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter

import numpy as np

from mlsched.baselines.batchsche import exclusive_gains
from mlsched.exact import exact_astraea
from mlsched.formulations.astraea import irmp
from mlsched.formulations.astraea_pricing import pricing_optimum
from mlsched.instance.generators.astraea import tiny_astraea
from mlsched.instance.multi_tenant import MultiTenantInstance, duration
from mlsched.online.astraea import Astraea, best_candidate, job_shape
from mlsched.online.astraea.bounds import theorem1_bound
from mlsched.online.astraea.invariants import (
    MISREPORTS, misreport, random_view, replay_calls, replay_violations, sp1_surplus, violations)
from mlsched.sim.multi_tenant_check import realized_utilities
from mlsched.tenant_metrics import tenant_gains

PARTS = ("invariants", "sp1", "sp2", "pricing", "pd", "lem1", "thm1")


class Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.wall:.0f} s wall, {time.process_time() - self.cpu:.0f} s CPU"


def invariants(instances: int) -> None:
    clock = Clock()
    total: Counter[str] = Counter()
    pairs = passed = 0
    worst = np.inf
    for seed in range(instances):
        inst = tiny_astraea(seed)
        policy = Astraea()
        run = policy.run(inst)
        total += violations(inst, run, Astraea().run(inst))
        total += replay_violations(inst, run, policy)
        gains, alone = run.gains(inst), exclusive_gains(inst)
        for u in range(len(inst.tenants)):
            if np.isnan(alone[u]) or not any(job.owner == u for job in inst.jobs):
                continue
            pairs += 1
            passed += bool(gains[u] >= alone[u] - 1e-6)
            if alone[u] > 0:
                worst = min(worst, gains[u] / alone[u])
    print(f"invariants on {instances} instances ({clock}): violations {dict(total) or 'none'}")
    print(f"BSI-2: {passed} of {pairs} (instance, tenant) pairs gain at least their exclusive partition run "
          f"({passed / max(pairs, 1):.2%}); worst g_u / g_u^excl {worst:.4g}")


def sp1(count: int) -> None:
    clock = Clock()
    rng = np.random.default_rng(0)
    tried, beaten = Counter(), Counter()
    seed = 0
    while sum(tried.values()) < count:
        inst = tiny_astraea(100_000 + seed, max_jobs=3)
        seed += 1
        bandwidth = (inst.worker_bandwidth, inst.ps_bandwidth)
        for _ in range(50):
            job = inst.jobs[int(rng.integers(inst.num_jobs))]
            kind = MISREPORTS[int(rng.integers(len(MISREPORTS)))]
            result = sp1_surplus(job, misreport(rng, job, kind), random_view(rng, inst, int(2 ** rng.integers(1, 5))),
                                 bandwidth)
            tried[kind] += 1
            beaten[kind] += result is not None and result[1] > result[0] + 1e-9
    print(f"SP-1 ({clock}): {sum(tried.values())} misreports {dict(tried)}, profitable {dict(+beaten) or 'none'}")


def sp2(instances: int) -> None:
    clock = Clock()
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
    print(f"SP-2 over {instances} instances, one misreport per kind each ({clock}): profitable "
          f"{dict(found) or 'none'}, largest gain {largest:.4g}")


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


def pricing(cases: int) -> None:
    """Lemma 2 holds only over the two greedy placements: count rounds where (9) does better."""
    clock = Clock()
    rng = np.random.default_rng(2)
    above = ties = 0
    worst = 0.0
    for n in range(cases):
        inst = tiny_astraea(300_000 + n, max_jobs=4)
        job = inst.jobs[int(rng.integers(inst.num_jobs))]
        view = random_view(rng, inst, int(2 ** rng.integers(1, 4)))
        best = best_candidate(job_shape(job), view, bandwidth=(inst.worker_bandwidth, inst.ps_bandwidth))
        mu = 0.0 if best is None else best.mu
        optimum = pricing_optimum(inst, job, view).objective
        above += int(mu > optimum + 1e-6)
        ties += int(abs(mu - optimum) <= 1e-6)
        worst = max(worst, optimum - mu)
    print(f"Lemma 2 on {cases} frozen rounds ({clock}): the enumeration's mu equals (9) in {ties}, exceeds it in "
          f"{above} (must be 0); largest shortfall {worst:.4g}")


def pd(instances: int) -> None:
    clock = Clock()
    calls = lemma3 = weak = 0
    for seed in range(instances):
        inst = tiny_astraea(seed)
        policy = Astraea()
        run = policy.run(inst)
        sigma, cw, cp = run.constants.sigma, int(inst.worker_capacity.sum()), int(inst.ps_capacity.sum())
        for call in replay_calls(inst, run, policy):
            if not call.jobs:
                continue
            p_alg = float(run.ideal[call.admitted].sum())
            eta_w, eta_p = call.state.prices()
            d_alg = float(run.mu[call.admitted].sum() + (eta_w * cw + eta_p * cp).sum())
            opt = exact_astraea(irmp(inst, call.jobs, call.state.tau), verify=False).objective
            calls += 1
            lemma3 += bool(p_alg >= opt / sigma - 1e-6)
            weak += bool(d_alg >= opt - 1e-6)
    print(f"PD over {calls} A_maxIrev calls of {instances} instances ({clock}): P_alg >= OPT_IRMP / sigma in "
          f"{lemma3} ({lemma3 / max(calls, 1):.2%}); D_alg >= OPT_IRMP in {weak} ({weak / max(calls, 1):.2%})")


def lem1(instances: int) -> None:
    clock = Clock()
    batches = held = 0
    for seed in range(instances):
        inst = tiny_astraea(seed)
        policy = Astraea(lambda_mode="theory")
        run = policy.run(inst)
        first_calls = {}
        for call in replay_calls(inst, run, policy):
            if call.round == 1 and call.phase == 1 and call.jobs:
                first_calls[call.batch] = list(call.jobs)      # J_l: what is pending when batch l starts
        for batch, jobs in first_calls.items():
            admitted = [j for j in jobs if run.batch[j] == batch]
            opt = exact_astraea(irmp(inst, jobs, 2 ** batch), verify=False).objective
            batches += 1
            held += bool(run.ideal[admitted].sum() >= opt - 1e-6)
    print(f"LEM1 over {batches} batches of {instances} instances, lambda from Lemma 1 ({clock}): "
          f"A_round's ideal revenue >= OPT of IRMP(J_l, tau_l) in {held} ({held / max(batches, 1):.2%})")


def thm1(instances: int) -> None:
    clock = Clock()
    checked = held = 0
    largest = -np.inf
    for seed in range(instances):
        inst = dataclasses.replace(tiny_astraea(seed, slope=(2.0, 6.0)), time_origin="absolute")
        run = Astraea(lambda_mode="theory").run(inst)
        alg = float(run.utilities(inst).sum())
        opt = exact_astraea(inst, verify=False)
        if opt.status.value != "optimal":
            continue
        kind, bound = theorem1_bound(inst, run.batches, run.constants.rounds)
        checked += 1
        held += bool(opt.objective - alg <= bound + 1e-6)
        largest = max(largest, (opt.objective - alg) / bound if bound > 0 else np.inf)
    print(f"THM1 (i) on {checked} instances, absolute time, lambda from Lemma 1 ({clock}): OPT - ALG within the "
          f"bound in {held}; largest (OPT - ALG) / bound {largest:.4g}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=int, default=2000)
    parser.add_argument("--misreports", type=int, default=100_000)
    parser.add_argument("--sp2", type=int, default=400)
    parser.add_argument("--pricing", type=int, default=500)
    parser.add_argument("--pd", type=int, default=40)
    parser.add_argument("--lem1", type=int, default=40)
    parser.add_argument("--thm1", type=int, default=40)
    parser.add_argument("--part", default=",".join(PARTS))
    args = parser.parse_args()
    parts = set(args.part.split(","))
    steps = {"invariants": lambda: invariants(args.instances), "sp1": lambda: sp1(args.misreports),
             "sp2": lambda: sp2(args.sp2), "pricing": lambda: pricing(args.pricing), "pd": lambda: pd(args.pd),
             "lem1": lambda: lem1(args.lem1), "thm1": lambda: thm1(args.thm1)}
    for name in PARTS:
        if name in parts:
            steps[name]()


if __name__ == "__main__":
    main()
