"""Astraea's experiments (spec §5.4-5.5) on the Philly window: revenue of Astraea and its three
baselines against the number of jobs and of servers (Fig. 4), fairness dispersion (Fig. 8), the
sensitivity to the number of tenants (Table 2), theta's scale (Fig. 11) and utilization and makespan
(Fig. 13). The paper's figures beside ours; ratios of revenues are printed only when both are
positive (the paper profile's linear utilities make long waits negative, §1.5).

    python benchmarks/astraea_reproduction.py [--seeds 5] [--part jobs,servers,users,theta] [--csv out.csv]
"""

from __future__ import annotations

import argparse

import pandas as pd

from mlsched.instance.generators.astraea import generate_astraea
from mlsched.systems import get_system

ALGORITHMS = ("astraea", "astraea-theory", "batchsche", "gandiva_fair", "hived")
PAPER_FIG4 = {"jobs": {"batchsche": 1.58, "gandiva_fair": 1.24, "hived": 1.35},
              "servers": {"batchsche": 1.63, "gandiva_fair": 1.22, "hived": 1.46}}
PAPER_TABLE2 = {5: (599.64, 0.7053), 8: (571.55, 0.78126), 11: (611.28, 0.7979), 14: (581.06, 0.7388)}


def rows_for(jobs: int, servers: int, users: int | None, seed: int, algorithms=ALGORITHMS, **options) -> list[dict]:
    system = get_system("astraea")
    inst = generate_astraea(jobs=jobs, servers=servers, users=users, seed=seed)
    out = []
    for name in algorithms:
        result = system.execute(inst, system.policy(name), **options)
        row = system.evaluate(inst, result)
        out.append({"jobs": jobs, "servers": servers, "users": len(inst.tenants), "seed": seed, "algorithm": name,
                    **{k: row[k] for k in ("revenue", "var_alpha", "utilization", "makespan", "scheduled",
                                           "negative_jobs") if k in row}, **options})
    return out


def versus(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """Mean revenue per (key, algorithm), and Astraea's revenue over each baseline's when both are > 0."""
    mean = frame.groupby([key, "algorithm"])["revenue"].mean().unstack()
    for base in ("batchsche", "gandiva_fair", "hived"):
        both = (mean["astraea"] > 0) & (mean[base] > 0)
        mean[f"astraea/{base}"] = (mean["astraea"] / mean[base]).where(both)
    return mean


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--part", default="jobs,servers,users,theta")
    parser.add_argument("--csv")
    args = parser.parse_args()
    parts = set(args.part.split(","))
    frames = []
    seeds = range(args.seeds)
    if "jobs" in parts:
        f = pd.DataFrame([r for n in (100, 200, 300, 400, 500) for s in seeds for r in rows_for(n, 100, None, s)])
        frames.append(f.assign(sweep="jobs"))
        print("Fig. 4 (vs #jobs, S = 100); paper: Astraea / baseline =", PAPER_FIG4["jobs"])
        print(versus(f, "jobs").round(3).to_string())
        print(f.groupby("algorithm")[["var_alpha", "utilization", "makespan"]].mean().round(3).to_string())
    if "servers" in parts:
        f = pd.DataFrame([r for m in (60, 80, 100, 120, 140) for s in seeds for r in rows_for(300, m, None, s)])
        frames.append(f.assign(sweep="servers"))
        print("Fig. 4 (vs #servers, N = 300); paper:", PAPER_FIG4["servers"])
        print(versus(f, "servers").round(3).to_string())
    if "users" in parts:
        f = pd.DataFrame([r for u in (5, 8, 11, 14) for s in seeds for r in rows_for(300, 100, u, s, ("astraea",))])
        frames.append(f.assign(sweep="users"))
        table = f.groupby("users").agg(revenue=("revenue", "mean"), var_alpha=("var_alpha", "mean"))
        table["revenue_per_job"] = table["revenue"] / 300
        table["paper_revenue_per_job"] = [PAPER_TABLE2[u][0] for u in table.index]
        table["paper_var_alpha"] = [PAPER_TABLE2[u][1] for u in table.index]
        print("Table 2 (N = 300, S = 100)")
        print(table.round(4).to_string())
    if "theta" in parts:
        f = pd.DataFrame([r for x in (0.6, 0.8, 1.0, 1.2, 1.4) for s in seeds
                          for r in rows_for(300, 100, None, s, ("astraea",), theta_scale=x)])
        frames.append(f.assign(sweep="theta"))
        print("Fig. 11 (theta x scale, N = 300, S = 100); paper: 80% beats overestimates under high load")
        print(f.groupby("theta_scale")["revenue"].mean().round(1).to_string())
    if args.csv:
        pd.concat(frames, ignore_index=True).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
