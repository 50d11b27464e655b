"""OgaSched reproduction figures beside the paper's: improvement of OgaSched over each baseline
on the Fig. 2 setting (paper: +11.33% DRF, +7.75% Fairness, +13.89% BinPacking, +13.44%
Spreading), the Tab. III columns, and the regret growth exponent.

    python benchmarks/ogasched_reproduction.py [--seeds 0 1 2 3 4] [--quick]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

import numpy as np
import pandas as pd

from mlsched.exact import exact_ogasched
from mlsched.instance.generators.ogasched import generate_ogasched
from mlsched.online.ogasched import OgaSched
from mlsched.sim.multi_engine import run_slots
from mlsched.systems import get_system

ALGORITHMS = ("ogasched", "ogasched-lookahead", "drf", "fairness", "binpacking", "spreading")
PAPER_FIG2 = {"drf": 11.33, "fairness": 7.75, "binpacking": 13.89, "spreading": 13.44}


def averages(preset: str, seeds: list[int], horizon: int | None = None) -> pd.Series:
    system = get_system("ogasched")
    rows = []
    for seed in seeds:
        inst = generate_ogasched(seed, preset_name=preset, horizon=horizon)
        rows.append({name: run_slots(inst, system.policy(name)).rewards.mean() for name in ALGORITHMS})
    return pd.DataFrame(rows).mean()


def improvement(avg: pd.Series, ours: str = "ogasched") -> dict[str, float]:
    return {b: 100 * (avg[ours] / avg[b] - 1) for b in PAPER_FIG2}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--quick", action="store_true", help="T = 2000 for Fig. 2 and fewer Tab. III columns")
    args = parser.parse_args()
    fig2 = averages("fig2", args.seeds, 2000 if args.quick else None)
    print(f"Fig. 2 setting, {len(args.seeds)} seeds: average reward per slot")
    print(fig2.round(1).to_string())
    for ours in ("ogasched", "ogasched-lookahead"):
        imp = improvement(fig2, ours)
        print(f"{ours} improvement: " + ", ".join(f"{b} {imp[b]:+.2f}% (paper {PAPER_FIG2[b]:+.2f}%)" for b in PAPER_FIG2))
    columns = ["tab3-T-1000", "tab3-T-2000", "tab3-rho-0.3", "tab3-rho-0.9", "tab3-dense-2", "tab3-dense-3"]
    if not args.quick:
        columns += ["tab3-T-5000", "tab3-rho-0.5", "tab3-rho-0.7", "tab3-dense-2.5"]
    table = pd.DataFrame({c: averages(c, args.seeds) for c in columns})
    print("Tab. III columns: average reward per slot (mean over seeds)")
    print(table.round(1).to_string())
    print("ordering per column: " + "; ".join(f"{c}: {' > '.join(table[c].sort_values(ascending=False).index)}"
                                               for c in table))
    small = generate_ogasched(7, ports=3, nodes=4, horizon=8000, density=2.5, contention=0.3)
    for label, inst in (("small graph (3 job types, 4 nodes)", small), ("default setting", generate_ogasched(0))):
        horizons, regrets, slope = regret_curve(inst, [250, 500, 1000, 2000, 4000, 8000])
        print(f"regret, {label}, theory step, exact projection: "
              + ", ".join(f"T={t}: {r:.4g}" for t, r in zip(horizons, regrets)) + f"; log-log slope {slope:.3f}")


def regret_curve(inst, horizons: list[int]) -> tuple[list[int], list[float], float]:
    """R_T = Q(y*) - Q_OgaSched for each T (a fresh constant step per T) and the log-log slope."""
    regrets = []
    for horizon in horizons:
        cut = replace(inst, horizon=horizon)
        regrets.append(exact_ogasched(cut).objective - run_slots(cut, OgaSched(step="theory")).total)
    slope = float(np.polyfit(np.log(horizons), np.log(np.maximum(regrets, 1e-9)), 1)[0])
    return horizons, regrets, slope


if __name__ == "__main__":
    main()
