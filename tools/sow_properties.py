"""Property figures of the adversarial SoW mechanism on random small instances (truthful SoW spec
§10, T9, T11): counts of profitable misreports with the exact oracle per menu and signal, the
thresholded sampled oracle's gains against 2V(eps0 + gamma + zeta), and accounting invariants.

    python tools/sow_properties.py [--agents 2500] [--runs 1000] [--sampled-agents 250] [--oracle-seeds 3]
                                   [--sections accounting births bundles exact sampled]

Times are CPU seconds (time.process_time).
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import pandas as pd

from mlsched.errors import UsageError
from mlsched.instance.generators.sow import generate_sow, tiny_sow
from mlsched.instance.sow import Realization, SowInstance
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.online.sow.truthfulness import GAIN_TOLERANCE, gain_table
from mlsched.sim.sow_run import realizations, run_sow

CHEAP = {"low": 0.01, "mu": 2.0}      # Alg. 3 with cheap prices: many launches, some overloads
MENUS = {"fixed": {"menu": "fixed"}, "Alg. 3": {}}


def small(seed: int, signal: str) -> SowInstance:
    """The spec's small instances: 4 jobs, C in {1, 2, 3}, d_max = 2, D = 3, Delta = 4, V = 6."""
    return tiny_sow(seed, jobs=4, capacity=1 + seed % 3, d_max=2, max_duration=3, window=4, births=2,
                    signal=signal)


def gains_over_instances(agents: int, gains: Callable[[int], pd.DataFrame]) -> tuple[pd.DataFrame, int]:
    """``gains(seed)`` for seed = 0, 1, ... until the tables hold ``agents`` agents; (table, instances)."""
    tables: list[pd.DataFrame] = []
    while sum(len(t) for t in tables) < agents:
        tables.append(gains(len(tables)))
    return pd.concat(tables, ignore_index=True), len(tables)


def exact_truthfulness(agents: int) -> None:
    """Every T9 misreport of every agent, the exact oracle, no threshold: per menu and signal."""
    for signal in ("l", "const"):
        for menu, options in MENUS.items():
            tick = time.process_time()

            def exact(seed: int, options: dict = options, signal: str = signal) -> pd.DataFrame:
                price = {"unit_price": (0.5, 1.0, 2.0)[seed % 3]} if options.get("menu") == "fixed" else {}
                mech = SowMechanism(oracle="exact", eps=0.05, eps0=0.0, **options, **price)
                return gain_table([small(10_000 + seed, signal)], mech)

            table, seed = gains_over_instances(agents, exact)
            gained = table[table.gain > GAIN_TOLERANCE]
            kinds = Counter(k.split()[0] for k in gained.kind)
            worst = table.loc[table.gain.idxmax()]
            print(f"exact oracle, sigma = {signal:5s}, {menu:6s} menu: {len(table)} agents ({seed} instances, "
                  f"{int(table.misreports.sum())} misreports), {len(gained)} agents with a profitable misreport "
                  f"on {gained.instance.nunique()} instances (best kind: {dict(kinds)}), largest gain "
                  f"{worst.gain:.6g} = {worst.gain_over_v:.4g} V ({worst.kind or '-'}); "
                  f"{time.process_time() - tick:.0f} s CPU", flush=True)


def sampled_truthfulness(agents: int, seeds: int) -> None:
    """The sampled oracle (M of Lemma F.1) with threshold eps0: every misreport's gain, averaged over
    ``seeds`` oracle streams, against 2V(eps0 + gamma + zeta) + 3 standard errors."""
    for eps0 in (0.1, 0.25):
        tick = time.process_time()
        mech = SowMechanism(eps=0.2, eps0=eps0)
        table, _ = gains_over_instances(
            agents, lambda seed, mech=mech: gain_table([small(20_000 + seed, "l")], mech, seeds=range(seeds)))
        worst = table.loc[table.gain.idxmax()]
        print(f"sampled oracle (M = {mech.reduction(small(20_000, 'l')).samples}, {seeds} oracle streams), "
              f"eps0 = {eps0}: {len(table)} agents, {int(table.misreports.sum())} misreports, largest gain "
              f"{worst.gain:.4g} (s.e. {worst.se:.2g}; bound 2V(eps0 + gamma + zeta) = {worst.truthful_bound:g}), "
              f"{int((~table.within_bound).sum())} agents with a misreport above bound + 3 s.e.; "
              f"{time.process_time() - tick:.0f} s CPU", flush=True)


def accounting(runs: int) -> None:
    """T11 and the invariants over Alg. 3 runs (both signals, sampled and exact oracles): checker problems,
    individual rationality (U_hat >= 0; ex post with sigma = l), W = R + sum u, u <= C', Claim 4.2."""
    done = problems = ir = identity = over = claim = 0
    tick = time.process_time()
    seed = 0
    while done < runs:
        signal = "l" if seed % 2 else "const"
        inst = tiny_sow(30_000 + seed, jobs=6, capacity=2 + seed % 5, d_max=1 + seed % 2, births=3, signal=signal)
        mech = SowMechanism(eps=0.1 + 0.1 * (seed % 3), seed=seed, oracle="exact" if seed % 4 == 1 else "sampled",
                            eps0=0.0 if seed % 4 == 1 else None,
                            **(CHEAP if seed % 2 else {}))
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
    print(f"accounting: {done} runs ({seed} instances) in {time.process_time() - tick:.0f} s CPU: checker problems "
          f"{problems}, IR violations {ir}, W != R + sum u {identity}, relaxed usage above C' {over}, "
          f"switched with all estimates 0 (Claim 4.2) {claim}", flush=True)


def later_births(runs: int) -> None:
    """Lemma 3.1 pathwise (T5): jobs born later change nothing for the jobs born before them."""
    differing = compared = done = seed = 0
    tick = time.process_time()
    while done < runs:
        base = tiny_sow(40_000 + seed, jobs=4, births=2)
        extra = tiny_sow(50_000 + seed, jobs=3, births=2)
        shift = 2
        later = tuple(replace(j, id=f"x{n}", birth=j.birth + shift, sow=replace(
            j.sow, support=tuple(replace(p, arrival=p.arrival + shift) for p in j.sow.support)))
            for n, j in enumerate(extra.jobs))
        grown = base.with_jobs(base.jobs + later)
        mech = SowMechanism(eps=0.2, seed=seed)
        reals = realizations(grown, seed=seed)
        seed += 1
        for m in range(len(reals)):
            real = reals.row(m)
            short = Realization(real.arrival[:4], real.duration[:4], real.signal[:4], real.sow_index[:4])
            a, b = mech.simulate(base, short, m), mech.simulate(grown, real, m)
            done += 1
            for x, y in zip(a.jobs, b.jobs[:4], strict=True):
                compared += 1
                differing += (x.plan, x.start, x.status, x.completion, x.payment, x.max_estimate) != (
                    y.plan, y.start, y.status, y.completion, y.payment, y.max_estimate)
    print(f"Lemma 3.1 pathwise: {done} runs ({seed} instances), {compared} (job, realization) pairs, {differing} "
          f"changed by later births; {time.process_time() - tick:.0f} s CPU", flush=True)


def bundle_fills(runs: int) -> None:
    """The stochastic mechanism: fills <= 2 d_max and relaxed usage <= C' in every run (Lemma E.3)."""
    done = seed = fills = usage = problems = skipped = 0
    tick = time.process_time()
    while done < runs:
        inst = generate_sow(jobs=12, capacity=8 + 4 * (seed % 4), d_max=1 + seed % 2, variant="stochastic", seed=seed)
        mech = SowMechanism(menu="bundles", eps=0.2, seed=seed)
        seed += 1
        try:
            result = run_sow(inst, mech, samples=50)
        except UsageError:      # FUA infeasible at this supply: the mechanism does not run (spec §6.2)
            skipped += 1
            continue
        problems += len(result.problems)
        cap = mech.reduction(inst).relaxed_capacity
        for out in result.outcomes:
            done += 1
            fills += out.extra["max_fill"] > 2 * inst.d_max + 1e-9
            usage += bool(np.any(out.relaxed_usage > cap + 1e-9))
    print(f"bundle menu: {done} runs ({seed} instances, {skipped} without a FUA): checker problems {problems}, "
          f"fills above 2 d_max {fills}, relaxed usage above C' {usage}; {time.process_time() - tick:.0f} s CPU",
          flush=True)


SECTIONS = ("accounting", "births", "bundles", "exact", "sampled")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agents", type=int, default=2500, help="per menu and signal, exact oracle")
    parser.add_argument("--sampled-agents", type=int, default=250, help="per eps0, sampled oracle")
    parser.add_argument("--oracle-seeds", type=int, default=3, help="oracle streams averaged per sampled gain")
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=SECTIONS)
    args = parser.parse_args()
    run = {"accounting": lambda: accounting(args.runs), "births": lambda: later_births(args.runs),
           "bundles": lambda: bundle_fills(args.runs), "exact": lambda: exact_truthfulness(args.agents),
           "sampled": lambda: sampled_truthfulness(args.sampled_agents, args.oracle_seeds)}
    for section in args.sections:
        run[section]()


if __name__ == "__main__":
    main()
