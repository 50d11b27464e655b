"""Property figures of the adversarial SoW mechanism on random small instances (truthful SoW spec
§10, T9, T11): counts of profitable misreports with the exact oracle per menu and signal, the
thresholded sampled oracle's gains against 2V(eps0 + gamma + zeta), and accounting invariants.

    python tools/sow_properties.py [--agents 2500] [--runs 1000] [--sampled-agents 200] [--quick]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from dataclasses import replace

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.generators.sow import generate_sow, tiny_sow
from mlsched.instance.sow import Realization
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.online.sow.truthfulness import best_gain
from mlsched.sim.sow_run import realizations, run_sow

MENUS = {"Alg. 3 (L, mu of eq. 7)": {}, "Alg. 3 (cheap: L = 0.01, mu = 2)": {"low": 0.01, "mu": 2.0}}


def small(seed: int, signal: str):   # the spec's small instances: 4 jobs, C <= 3.. 5, d_max <= 2, D <= 3, Delta 4
    return tiny_sow(seed, jobs=4, capacity=3 + seed % 3, d_max=1 + seed % 2, births=2, signal=signal)


def exact_truthfulness(agents: int) -> None:
    for signal in ("l", "const"):
        for menu, options in MENUS.items():
            mech = SowMechanism(oracle="exact", eps=0.05, eps0=0.0, **options)
            tried = gained = 0
            kinds: Counter[str] = Counter()
            worst, worst_kind = 0.0, ""
            seed = 0
            while tried < agents:
                inst = small(10_000 + seed, signal)
                seed += 1
                for j in range(inst.num_jobs):
                    best, kind = best_gain(inst, j, mech)
                    tried += 1
                    if best > 1e-9:
                        gained += 1
                        kinds[kind.split()[0]] += 1
                        if best > worst:
                            worst, worst_kind = best, kind
            print(f"exact oracle, sigma = {signal:5s}, {menu}: {tried} agents, {gained} with a profitable "
                  f"misreport (by kind {dict(kinds)}), largest gain {worst:.6g} ({worst_kind or '-'})")


def sampled_truthfulness(agents: int) -> None:
    for eps0 in (0.1, 0.25):
        mech = SowMechanism(eps=0.2, eps0=eps0, seed=1)
        red = None
        tried = above = 0
        worst = 0.0
        seed = 0
        while tried < agents:
            inst = small(20_000 + seed, "l")
            seed += 1
            red = mech.reduction(inst)
            bound = 2 * inst.max_value * (red.threshold + red.accuracy + red.confidence)
            for j in range(inst.num_jobs):
                best, _ = best_gain(inst, j, mech)
                worst = max(worst, best)
                above += best > bound
                tried += 1
        print(f"sampled oracle (M = {red.samples if red else '-'}), eps0 = {eps0}: {tried} agents, largest gain "
              f"{worst:.6g}, {above} above 2V(eps0 + gamma + zeta)")


def accounting(runs: int) -> None:
    done = problems = ir = identity = over = claim = 0
    tick = time.perf_counter()
    seed = 0
    while done < runs:
        signal = "l" if seed % 2 else "const"
        inst = tiny_sow(30_000 + seed, jobs=6, capacity=2 + seed % 5, d_max=1 + seed % 2, births=3, signal=signal)
        mech = SowMechanism(eps=0.1 + 0.1 * (seed % 3), seed=seed, oracle="exact" if seed % 4 == 1 else "sampled",
                            eps0=0.0 if seed % 4 == 1 else None,
                            **(MENUS["Alg. 3 (cheap: L = 0.01, mu = 2)"] if seed % 2 else {}))
        seed += 1
        result = run_sow(inst, mech)
        problems += len(result.problems)
        cap = mech.reduction(inst).relaxed_capacity
        for out in result.outcomes:
            done += 1
            identity += abs(out.welfare - out.revenue - sum(j.utility for j in out.jobs)) > 1e-9
            over += bool(np.any(out.relaxed_usage > cap + 1e-9))
            for j in out.jobs:
                ir += j.estimated_utility < 0 or (signal == "l" and j.status == "completed"
                                                  and j.payment > j.value + 1e-9)
                claim += j.switched and j.max_estimate == 0          # Claim 4.2: all qt = 0 => not switched
    print(f"accounting: {done} runs ({seed} instances) in {time.perf_counter() - tick:.0f} s: checker problems "
          f"{problems}, IR violations {ir}, W != R + sum u {identity}, relaxed usage above C' {over}, "
          f"switched with all estimates 0 (Claim 4.2) {claim}")


def later_births(instances: int) -> None:
    """Lemma 3.1 pathwise (T5): jobs born later change nothing for the jobs born before them."""
    differing = compared = 0
    for seed in range(instances):
        base = tiny_sow(40_000 + seed, jobs=4, births=2)
        extra = tiny_sow(50_000 + seed, jobs=3, births=2)
        shift = 2
        later = tuple(replace(j, id=f"x{n}", birth=j.birth + shift, sow=replace(
            j.sow, support=tuple(replace(p, arrival=p.arrival + shift) for p in j.sow.support)))
            for n, j in enumerate(extra.jobs))
        grown = base.with_jobs(base.jobs + later)
        mech = SowMechanism(eps=0.2, seed=seed)
        reals = realizations(grown, samples=50, seed=seed)
        for m in range(len(reals)):
            real = reals.row(m)
            short = Realization(real.arrival[:4], real.duration[:4], real.signal[:4], real.sow_index[:4])
            a, b = mech.simulate(base, short, m), mech.simulate(grown, real, m)
            for x, y in zip(a.jobs, b.jobs[:4], strict=True):
                compared += 1
                differing += (x.plan, x.start, x.status, x.completion, x.payment, x.max_estimate) != (
                    y.plan, y.start, y.status, y.completion, y.payment, y.max_estimate)
    print(f"Lemma 3.1 pathwise: {compared} (job, realization) pairs, {differing} changed by later births")


def bundle_fills(runs: int) -> None:
    """The stochastic mechanism: fills <= 2 d_max and relaxed usage <= C' in every run (Lemma E.3)."""
    done = seed = fills = usage = problems = 0
    while done < runs:
        inst = generate_sow(jobs=12, capacity=8 + 4 * (seed % 4), d_max=1 + seed % 2, variant="stochastic", seed=seed)
        mech = SowMechanism(menu="bundles", eps=0.2, seed=seed)
        seed += 1
        try:
            result = run_sow(inst, mech, samples=50)
        except UsageError:      # FUA infeasible at this supply: the mechanism does not run (spec §6.2)
            continue
        problems += len(result.problems)
        cap = mech.reduction(inst).relaxed_capacity
        for out in result.outcomes:
            done += 1
            fills += out.extra["max_fill"] > 2 * inst.d_max + 1e-9
            usage += bool(np.any(out.relaxed_usage > cap + 1e-9))
    print(f"bundle menu: {done} runs ({seed} instances): checker problems {problems}, fills above 2 d_max {fills}, "
          f"relaxed usage above C' {usage}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=2500)
    parser.add_argument("--sampled-agents", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="accounting, Lemma 3.1 and bundle fills only")
    args = parser.parse_args()
    accounting(args.runs)
    later_births(100)
    bundle_fills(args.runs)
    if args.quick:
        return
    exact_truthfulness(args.agents)
    sampled_truthfulness(args.sampled_agents)


if __name__ == "__main__":
    main()
