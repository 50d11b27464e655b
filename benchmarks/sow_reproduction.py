"""The §8 report of the truthful SoW spec, scaled down (the paper has no experiments to match).

For each configuration: E[W] of the adversarial mechanism (LIFO), its FIFO-eviction variant and the
greedy baseline, E[OPT] = E[H] over the same realizations, the ratio of means E[OPT] / E[W] with a
95% interval (paired delta method), eviction / cancellation / switched rates, W_R, and the bounds
(alpha_3, B_evict) with whether the capacity conditions hold.

    python benchmarks/sow_reproduction.py [--jobs 40] [--samples 200] [--eps-samples 200] [--seeds 1]
                                          [--csv out.csv]

Grid: C in {2, 4, 8, 16, 32, 64} x d_max in {1, 2} x signal in {l, const} at eps = 0.2; eps in {0.05,
0.1} at C = 16, d_max = 2, sigma = l (``--eps-samples`` realizations: the oracle draws M ~ 1/eps^2
futures per birth); the stochastic variant (sigma = l) over the same C x d_max.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import pandas as pd

from mlsched.baselines.sow import GreedyStart
from mlsched.errors import UsageError
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


def policies(variant: str, eps: float, seed: int) -> list:
    if variant == "stochastic":
        return [SowMechanism(menu="bundles", eps=eps, seed=seed, name="sow-stochastic"), SowMechanism(eps=eps, seed=seed),
                GreedyStart()]
    return [SowMechanism(eps=eps, seed=seed), SowMechanism(eps=eps, eviction="fifo", seed=seed, name="sow-fifo"),
            GreedyStart()]


def configuration(jobs: int, capacity: int, d_max: int, signal: str, eps: float, samples: int,
                  seed: int, variant: str = "adversarial") -> list[dict]:
    inst = generate_sow(jobs=jobs, capacity=capacity, d_max=d_max, max_duration=3, window=6, max_value=8.0,
                        signal=signal, variant=variant, seed=seed)
    opt = exact_sow(inst, samples=samples, verify=False)
    lp_r = exact_sow(inst, variant="lp-e").objective
    rows = []
    for policy in policies(variant, eps, seed):
        tick = time.perf_counter()
        try:
            runs = run_sow(inst, policy, samples=samples)
        except UsageError as exc:     # FUA infeasible at this supply: the stochastic mechanism does not run
            rows.append({"variant": variant, "C": capacity, "d_max": d_max, "signal": signal, "eps": eps,
                         "seed": seed, "algorithm": policy.name, "note": str(exc)})
            continue
        s = runs.summary(inst)
        r, half = ratio_interval(opt.schedule, runs.welfare(), runs.realizations.weights)
        const = policy.constants(inst) if hasattr(policy, "constants") else {}
        rows.append({"variant": variant, "C": capacity, "d_max": d_max, "signal": signal, "eps": eps, "seed": seed,
                     "algorithm": runs.name, "E[W]": s["welfare"], "E[OPT]": opt.objective, "LP-E": lp_r,
                     "ratio": r, "ratio_ci": half, "W_R": s["relaxed_welfare"], "evicted": s["evicted_rate"],
                     "cancelled": s["cancelled_rate"], "switched": s["switched_rate"], "revenue": s["revenue"],
                     "overload": s["max_overload_frequency"], "B_switch": const.get("b_switch"),
                     "eta": const.get("eta"), "kappa": const.get("kappa"), "fua_loss": const.get("fua_loss"),
                     "alpha_3": const.get("alpha_3"), "B_evict": const.get("b_evict"),
                     "price_cond": bool(const.get("price_condition", 0)),
                     "reduction_cond": bool(const.get("reduction_condition", 0)),
                     "problems": s["check_problems"], "seconds": time.perf_counter() - tick})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=40)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--eps-samples", type=int, default=200)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--csv")
    args = parser.parse_args()
    sizes = [(c, d) for c in (2, 4, 8, 16, 32, 64) for d in (1, 2)]
    grid = [("adversarial", c, d, sig, 0.2, args.samples) for c, d in sizes for sig in ("l", "const")]
    grid += [("adversarial", 16, 2, "l", e, args.eps_samples) for e in (0.05, 0.1)]
    grid += [("stochastic", c, d, "l", 0.2, args.samples) for c, d in sizes]
    rows = []
    for seed in range(args.seeds):
        for variant, c, d, sig, eps, samples in grid:
            block = configuration(args.jobs, c, d, sig, eps, samples, seed, variant)
            rows.extend(block)
            print(f"{variant:11s} C {c:2d} d_max {d} sigma {sig:5s} eps {eps}: " + "; ".join(
                f"{r['algorithm']} " + (f"OPT/W {r['ratio']:.3f} +- {r['ratio_ci']:.3f}" if "ratio" in r else "not run")
                for r in block) + f"; evicted {block[0].get('evicted', float('nan')):.3f}, switched "
                f"{block[0].get('switched', float('nan')):.3f}, B_evict {block[0].get('B_evict') or float('nan'):.3g}, "
                f"conditions {block[0].get('price_cond')}/{block[0].get('reduction_cond')}", flush=True)
    frame = pd.DataFrame(rows)
    if args.csv:
        frame.to_csv(args.csv, index=False)
    print(frame.to_string(index=False, float_format=lambda x: f"{x:.4g}"))


if __name__ == "__main__":
    main()
