"""The §8 report of the truthful SoW spec, scaled down (the paper has no experiments to match).

For each configuration: E[W] of the adversarial mechanism (LIFO), its FIFO-eviction variant and the
greedy baseline, E[OPT] = E[H] over the same realizations, the ratio of means E[OPT] / E[W] with a
95% interval (paired delta method), eviction / cancellation / switched rates, W_R, and the bounds
(alpha_3, B_evict) with whether the capacity conditions hold.

    python benchmarks/sow_reproduction.py [--jobs 40] [--samples 200] [--seeds 1] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

from mlsched.baselines.sow import GreedyStart
from mlsched.exact import exact_sow
from mlsched.instance.generators.sow import generate_sow
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.sim.sow_run import run_sow


def ratio_interval(opt: np.ndarray, alg: np.ndarray, weights: np.ndarray) -> tuple[float, float]:
    """E[OPT] / E[W] and the half-width of its 95% interval (delta method on paired draws)."""
    mo, ma = float(weights @ opt), float(weights @ alg)
    if ma <= 0:
        return math.inf, math.nan
    r = mo / ma
    resid = (opt - r * alg) / ma
    return r, 1.96 * float(np.sqrt((weights @ (resid - weights @ resid) ** 2) / len(weights)))


def configuration(jobs: int, capacity: int, d_max: int, signal: str, eps: float, samples: int,
                  seed: int) -> list[dict]:
    inst = generate_sow(jobs=jobs, capacity=capacity, d_max=d_max, max_duration=3, window=6, max_value=8.0,
                        signal=signal, seed=seed)
    opt = exact_sow(inst, samples=samples, verify=False)
    lp_r = exact_sow(inst, variant="lp-r").objective
    rows = []
    for policy in (SowMechanism(eps=eps, seed=seed), SowMechanism(eps=eps, eviction="fifo", seed=seed, name="sow-fifo"),
                   GreedyStart()):
        tick = time.perf_counter()
        runs = run_sow(inst, policy, samples=samples)
        s = runs.summary(inst)
        r, half = ratio_interval(opt.schedule, runs.welfare(), runs.realizations.weights)
        const = policy.constants(inst) if hasattr(policy, "constants") else {}
        rows.append({"C": capacity, "d_max": d_max, "signal": signal, "eps": eps, "seed": seed,
                     "algorithm": runs.name, "E[W]": s["welfare"], "E[OPT]": opt.objective, "LP-R": lp_r,
                     "ratio": r, "ratio_ci": half, "W_R": s["relaxed_welfare"], "evicted": s["evicted_rate"],
                     "cancelled": s["cancelled_rate"], "switched": s["switched_rate"], "revenue": s["revenue"],
                     "alpha_3": const.get("alpha_3"), "B_evict": const.get("b_evict"),
                     "price_cond": bool(const.get("price_condition", 0)),
                     "reduction_cond": bool(const.get("reduction_condition", 0)),
                     "problems": s["check_problems"], "seconds": time.perf_counter() - tick})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--csv")
    args = parser.parse_args()
    grid = [(c, d, sig, 0.2) for c in (2, 4, 8, 16, 32, 64) for d in (1, 2) for sig in ("l", "const")]
    grid += [(16, 2, "l", e) for e in (0.05, 0.1)]
    rows = []
    for seed in range(args.seeds):
        for c, d, sig, eps in grid:
            rows.extend(configuration(args.jobs, c, d, sig, eps, args.samples, seed))
            last = rows[-3]
            print(f"C {c:2d} d_max {d} sigma {sig:5s} eps {eps}: OPT/W {last['ratio']:.3f} +- {last['ratio_ci']:.3f} "
                  f"(FIFO {rows[-2]['ratio']:.3f}, greedy {rows[-1]['ratio']:.3f}), evicted {last['evicted']:.3f}, "
                  f"switched {last['switched']:.3f}, B_evict {last['B_evict']:.3g}, conditions "
                  f"{last['price_cond']}/{last['reduction_cond']}", flush=True)
    frame = pd.DataFrame(rows)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
