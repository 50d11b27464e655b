"""The §8 protocol of the truthful SoW spec (the paper has no experiments: these are measurements).

Per configuration (variant x C x d_max x eps x signal): one generated instance (``--jobs`` jobs with
at most ``--support`` (a, l) points per SoW, D = 3, Delta = 6, V = 8, ``--load``; stochastic: two SoWs
per job), its realizations (enumerated up to ``--exact-limit`` points, 20,000 by default, else
``--samples`` paired draws, 2,000 by default) and, over the same realizations, E[OPT] = E[H],
LP-R(C) (fixed SoWs), LP-E(C), and per algorithm E[W], E[OPT] / E[W] with its 95% interval,
Theorem 4.1's bound (alpha (1 + delta) / ((1 - B_evict)(1 - B_switch)), alpha = alpha_3 or alpha_E)
and whether the
capacity conditions hold, eviction / cancellation rates (split by switched and non-switched jobs)
against B_evict, the switched fraction against B_switch, the largest per-round overload frequency
against eta, W_R - E[W], revenue, utilization, kappa, the FUA loss and bundle fills. Algorithms:
the mechanism (``sow-adversarial``, or ``sow-stochastic`` on the stochastic variant) and the
baselines ``sow-fifo``, ``sow-evict-all``, ``greedy``, ``reservation`` (the stochastic variant also
runs ``sow-adversarial``). A configuration whose FUA does not fit C_E (§6.2) is reported as not run.

Truthfulness (§8 item 4) is measured on small instances (4 jobs, C in {4, 5, 6}, d_max = 2, D = 3,
Delta = 4: about 60% of the jobs complete, against 15-35% at C <= 3) per eps and signal: every T9 misreport of every agent under the sampled oracle with
threshold eps0 = eps / 2, averaged over ``--oracle-seeds`` streams, against 2V(eps0 + gamma + zeta).

    python benchmarks/sow_reproduction.py [--jobs 8] [--support 2] [--samples 2000] [--capacities 2 4 8 16 32 64]
        [--dmax 1 2] [--eps 0.05 0.1 0.2] [--signals l const] [--variants adversarial stochastic]
        [--algorithms ...] [--load 1] [--truth-instances 2] [--oracle-seeds 2] [--csv rows.csv]
        [--truth-csv gains.csv] [--exact-limit 20000]

Times are CPU seconds (time.process_time) beside wall seconds.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import pandas as pd

from mlsched.baselines.sow import GreedyStart, UpFrontReservation
from mlsched.errors import UsageError
from mlsched.exact import exact_sow
from mlsched.instance.generators.sow import generate_sow, tiny_sow
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.online.sow.truthfulness import gain_table
from mlsched.sim.sow_run import EXACT_LIMIT, run_sow
from mlsched.sow_metrics import benchmark_columns, paired_columns, ratio_bound

REPORTED = ("welfare", "welfare_se", "revenue", "utilization", "relaxed_welfare", "eviction_cost", "completed_rate",
            "evicted_rate", "cancelled_rate", "switched_rate", "removed_switched", "removed_not_switched",
            "max_overload_frequency", "eta", "b_switch", "b_evict", "truthful_bound", "alpha_3", "alpha_e",
            "price_condition", "reduction_condition", "kappa", "fua_loss", "halving_ratio", "max_fill",
            "realizations", "exact_expectation", "check_problems")


ALGORITHMS = ("sow-stochastic", "sow-adversarial", "sow-fifo", "sow-evict-all", "greedy", "reservation")


def policies(variant: str, eps: float, seed: int, algorithms: tuple[str, ...] = ALGORITHMS) -> list[Any]:
    """The mechanism of the variant (and, on the stochastic one, also Alg. 3) and the baselines chosen."""
    made = {"sow-stochastic": lambda: SowMechanism(menu="bundles", eps=eps, seed=seed, name="sow-stochastic"),
            "sow-adversarial": lambda: SowMechanism(eps=eps, seed=seed, name="sow-adversarial"),
            "sow-fifo": lambda: SowMechanism(eps=eps, eviction="fifo", seed=seed, name="sow-fifo"),
            "sow-evict-all": lambda: SowMechanism(eps=eps, eviction="all", seed=seed, name="sow-evict-all"),
            "greedy": GreedyStart, "reservation": UpFrontReservation}
    return [made[name]() for name in algorithms if name != "sow-stochastic" or variant == "stochastic"]


def configuration(jobs: int, support: int, capacity: int, d_max: int, signal: str, eps: float, samples: int,
                  seed: int, variant: str, algorithms: tuple[str, ...] = ALGORITHMS, load: float = 1.0,
                  exact_limit: int = EXACT_LIMIT) -> list[dict[str, Any]]:
    key = {"variant": variant, "jobs": jobs, "load": load, "C": capacity, "d_max": d_max, "signal": signal,
           "eps": eps, "seed": seed}
    inst = generate_sow(jobs=jobs, capacity=capacity, d_max=d_max, max_duration=3, window=6, max_value=8.0,
                        signal=signal, support=support, load=load, variant=variant, sows=2, seed=seed)
    tick, cpu = time.perf_counter(), time.process_time()
    opt = exact_sow(inst, samples=samples, verify=False, exact_limit=exact_limit)
    common = {**key, "E[OPT]": opt.objective, "opt_status": opt.status.value, **benchmark_columns(inst),
              "opt_cpu": time.process_time() - cpu, "opt_wall": time.perf_counter() - tick}
    rows = []
    for policy in policies(variant, eps, seed, algorithms):
        tick, cpu = time.perf_counter(), time.process_time()
        try:
            runs = run_sow(inst, policy, samples=samples, exact_limit=exact_limit)
        except UsageError as exc:     # FUA infeasible at this supply: the stochastic mechanism does not run
            rows.append({**common, "algorithm": policy.name, "note": str(exc)})
            continue
        summary = runs.summary(inst)
        rows.append({**common, "algorithm": runs.name, **{k: summary.get(k) for k in REPORTED},
                     "ratio": opt.objective / summary["welfare"] if summary["welfare"] > 0 else float("inf"),
                     **paired_columns(opt, runs), "ratio_bound": ratio_bound(runs.constants),
                     "cpu": time.process_time() - cpu, "wall": time.perf_counter() - tick})
    return rows


def truthfulness(eps: float, signal: str, instances: int, oracle_seeds: int) -> pd.DataFrame:
    small = [tiny_sow(60_000 + k, jobs=4, capacity=4 + k % 3, d_max=2, max_duration=3, window=4, births=2,
                      signal=signal) for k in range(instances)]
    tick = time.process_time()
    table = gain_table(small, SowMechanism(eps=eps, seed=0), seeds=range(oracle_seeds))
    return table.assign(eps=eps, signal=signal, cpu=time.process_time() - tick)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--support", type=int, default=2)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--exact-limit", type=int, default=EXACT_LIMIT,
                        help="enumerate the realizations when there are at most this many (0: always sample)")
    parser.add_argument("--capacities", type=int, nargs="+", default=[2, 4, 8, 16, 32, 64])
    parser.add_argument("--dmax", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--eps", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    parser.add_argument("--signals", nargs="+", default=["l", "const"])
    parser.add_argument("--variants", nargs="*", default=["adversarial", "stochastic"], help="none: truthfulness only")
    parser.add_argument("--algorithms", nargs="+", default=list(ALGORITHMS), choices=ALGORITHMS)
    parser.add_argument("--load", type=float, default=1.0, help="expected demand over supply in the birth window")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--truth-instances", type=int, default=2, help="small instances per eps and signal (0: skip)")
    parser.add_argument("--oracle-seeds", type=int, default=2)
    parser.add_argument("--csv")
    parser.add_argument("--truth-csv")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    for variant in args.variants:
        for eps in args.eps:
            for signal in args.signals if variant == "adversarial" else ["l"]:    # stochastic: sigma = l (§6)
                for d_max in args.dmax:
                    for c in args.capacities:
                        block = configuration(args.jobs, args.support, c, d_max, signal, eps, args.samples,
                                              args.seed, variant, tuple(args.algorithms), args.load,
                                              args.exact_limit)
                        rows.extend(block)
                        print(f"{variant:11s} eps {eps:<4} sigma {signal:5s} d_max {d_max} C {c:2d}: E[OPT] "
                              f"{block[0]['E[OPT]']:.3f}; " + "; ".join(
                                  f"{r['algorithm']} " + (f"{r['ratio']:.3f} [{r['ratio_ci_low']:.3f}, "
                                                          f"{r['ratio_ci_high']:.3f}] ({r['cpu']:.0f} s CPU)"
                                                          if "ratio" in r else "not run")
                                  for r in block), flush=True)
                        if args.csv:
                            pd.DataFrame(rows).to_csv(args.csv, index=False)
    gains = []
    if args.truth_instances:
        for eps in args.eps:
            for signal in args.signals:
                table = truthfulness(eps, signal, args.truth_instances, args.oracle_seeds)
                gains.append(table)
                print(f"truthfulness eps {eps} sigma {signal}: {len(table)} agents, largest gain "
                      f"{table.gain.max():.4g} ({table.gain_over_v.max():.3g} V), bound 2V(eps0 + gamma + zeta) "
                      f"{table.truthful_bound.iloc[0]:.3g}, agents above bound + 3 s.e.: "
                      f"{int((~table.within_bound).sum())} ({table.cpu.iloc[0]:.0f} s CPU)", flush=True)
        if args.truth_csv:
            pd.concat(gains, ignore_index=True).to_csv(args.truth_csv, index=False)


if __name__ == "__main__":
    main()
