"""Astraea's experiments (spec §5.4-5.5) on the Philly trace, the paper's figures beside ours:

* jobs, servers: total revenue of Astraea (lambda fixed at 2 and from Lemma 1, A1) and its three
  baselines against the number of jobs (N = 100..500, S = 100) and of servers (S = 60..140,
  N = 300), Astraea's revenue over each baseline's (Fig. 4), Var_alpha (Fig. 8), utilization and
  makespan (Fig. 13) and the share of admitted jobs whose ideal revenue exceeds their cost (Fig. 12);
* pr: PR = ALG / OPT (P-OFF, admission variant, A22) of every scheduler on the `small` profile with
  2 tenants against the number of jobs (5, 10, 15; S = 20) and of servers (5..45; N = 10) (Figs. 5-6),
  an interval [ALG / UB, ALG / incumbent] when P-OFF is not proven within the time limit;
* users: revenue per job and Var_alpha for U = 5, 8, 11, 14 (Table 2; U = 14 needs the full trace,
  ``--trace``);
* theta: Astraea's revenue with theta at 60..140% of §3.1's value (Fig. 11).
Every point averages ``--seeds`` seeds; ``--scale x`` multiplies the jobs, servers, users and theta
parts' job and server counts by x (rounded, at least 1; the pr part keeps its small sizes). Ratios of revenues are printed only when both are positive
(the paper profile's linear utilities make long waits negative, §1.5). Wall and CPU time per part;
the pr part prints one line per instance as it finishes (P-OFF's status, time and Astraea's PR).

    python benchmarks/astraea_reproduction.py [--seeds 5] [--scale 1] [--part jobs,servers,pr,users,theta]
        [--trace PATH] [--time-limit 60] [--csv out.csv]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd

from mlsched.instance.generators.astraea import generate_astraea
from mlsched.study import study
from mlsched.systems import get_system

ALGORITHMS = ("astraea", "astraea-theory", "batchsche", "gandiva_fair", "hived")
BASELINES = ("batchsche", "gandiva_fair", "hived")
PAPER_FIG4 = {"jobs": {"batchsche": 1.58, "gandiva_fair": 1.24, "hived": 1.35},
              "servers": {"batchsche": 1.63, "gandiva_fair": 1.22, "hived": 1.46}}
PAPER_FIG13 = {"gandiva_fair": 0.83, "hived": 0.67}
PAPER_TABLE2 = {5: (599.64, 0.7053), 8: (571.55, 0.78126), 11: (611.28, 0.7979), 14: (581.06, 0.7388)}
COLUMNS = ("revenue", "alpha_mean", "var_alpha", "si_mean", "utilization", "makespan", "scheduled", "negative_jobs")


def rows_for(inst, seed: int, algorithms=ALGORITHMS, **options) -> list[dict]:
    system = get_system("astraea")
    out = []
    for name in algorithms:
        cpu = time.process_time()
        result = system.execute(inst, system.policy(name), **options)
        row = system.evaluate(inst, result)
        print(f"  N = {inst.num_jobs}, S = {len(inst.servers)}, U = {len(inst.tenants)}, seed {seed}, {name}"
              f"{''.join(f', {k} {v}' for k, v in options.items())}: revenue {row['revenue']:.1f} "
              f"({time.process_time() - cpu:.1f} s CPU)", flush=True)
        admitted = result.phase > 0 if hasattr(result, "phase") else None
        out.append({"jobs": inst.num_jobs, "servers": len(inst.servers), "users": len(inst.tenants), "seed": seed,
                    "algorithm": name, **{k: row[k] for k in COLUMNS if k in row},
                    "ideal_above_cost": (float(np.mean(result.ideal[admitted] > result.cost[admitted]))
                                         if admitted is not None and admitted.any() else np.nan), **options})
    return out


def versus(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """Mean revenue per (key, algorithm), and Astraea's over each baseline's when both are > 0."""
    mean = frame.groupby([key, "algorithm"])["revenue"].mean().unstack()
    for astraea in ("astraea", "astraea-theory"):
        for base in BASELINES:
            both = (mean[astraea] > 0) & (mean[base] > 0)
            mean[f"{astraea}/{base}"] = (mean[astraea] / mean[base]).where(both)
    return mean


def shape(frame: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: mean Var_alpha (Fig. 8), utilization, makespan and Astraea's makespan over it
    (Fig. 13), and the share of admitted jobs with ideal revenue above cost (Fig. 12)."""
    table = frame.groupby("algorithm")[["var_alpha", "si_mean", "utilization", "makespan", "ideal_above_cost"]].mean()
    table["astraea_makespan_over"] = table.loc["astraea", "makespan"] / table["makespan"]
    return table


class Clock:
    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __str__(self) -> str:
        return f"{time.perf_counter() - self.wall:.0f} s wall, {time.process_time() - self.cpu:.0f} s CPU"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--part", default="jobs,servers,pr,users,theta")
    parser.add_argument("--trace", help="Philly job CSV for the users part (default: the shipped window, 11 VCs)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="P-OFF's limit per instance (pr part)")
    parser.add_argument("--scale", type=float, default=1.0, help="job and server counts x this (not the pr part)")
    parser.add_argument("--csv")
    args = parser.parse_args()
    parts = set(args.part.split(","))
    frames = []
    seeds = range(args.seeds)
    pd.set_option("display.width", 200)

    def scaled(count: int) -> int:
        return max(1, round(count * args.scale))

    if "jobs" in parts:
        clock = Clock()
        f = pd.DataFrame([r for n in (100, 200, 300, 400, 500) for s in seeds
                          for r in rows_for(generate_astraea(jobs=scaled(n), servers=scaled(100), seed=s), s)])
        frames.append(f.assign(sweep="jobs"))
        print(f"Fig. 4 (vs #jobs, S = {scaled(100)}; {clock}); paper: Astraea / baseline =", PAPER_FIG4["jobs"])
        print(versus(f, "jobs").round(3).to_string())
        print(f"Figs. 8, 12, 13 over the #jobs sweep; paper: Astraea's Var_alpha smallest, ideal > cost for every "
              f"admitted job, Astraea's makespan / baseline's = {PAPER_FIG13}")
        print(shape(f).round(3).to_string(), flush=True)
    if "servers" in parts:
        clock = Clock()
        f = pd.DataFrame([r for m in (60, 80, 100, 120, 140) for s in seeds
                          for r in rows_for(generate_astraea(jobs=scaled(300), servers=scaled(m), seed=s), s)])
        frames.append(f.assign(sweep="servers"))
        print(f"Fig. 4 (vs #servers, N = {scaled(300)}; {clock}); paper:", PAPER_FIG4["servers"])
        print(versus(f, "servers").round(3).to_string())
        print(shape(f).round(3).to_string(), flush=True)
    if "pr" in parts:
        clock = Clock()
        points = [(n, 20) for n in (5, 10, 15)] + [(10, m) for m in (5, 15, 25, 35, 45)]
        insts = [generate_astraea(jobs=n, servers=m, users=2, profile="small", seed=s) for n, m in points for s in seeds]
        done = []
        for inst in insts:               # one instance at a time, its line printed as it finishes
            tick, cpu = time.perf_counter(), time.process_time()
            one = study([inst], ["astraea", "astraea-theory", *BASELINES], time_limit=args.time_limit,
                        progress=False)
            row = one.loc[one["algorithm"] == "astraea"].iloc[0]
            print(f"  {inst.name}: N = {inst.num_jobs}, S = {len(inst.servers)}, P-OFF {row['opt_status']} "
                  f"(bound {row['opt_bound']}, {row['opt_message'] or 'no message'}), Astraea PR in "
                  f"[{row.get('pr_low', np.nan):.3f}, {row.get('pr_high', np.nan):.3f}] "
                  f"({time.perf_counter() - tick:.0f} s wall, {time.process_time() - cpu:.0f} s CPU)", flush=True)
            done.append(one)
        f = pd.concat(done, ignore_index=True)
        for column in ("pr", "pr_low", "pr_high"):     # absent when no P-OFF found a schedule in time
            if column not in f:
                f[column] = np.nan
        size = {i.name: (i.num_jobs, len(i.servers)) for i in insts}
        f["jobs"] = [size[name][0] for name in f["instance"]]
        f["servers"] = [size[name][1] for name in f["instance"]]
        frames.append(f.assign(sweep="pr"))
        proven = f.drop_duplicates("instance")["opt_status"].eq("optimal")
        print(f"Figs. 5-6 (small profile, 2 tenants; {clock}); paper: Astraea's PR > 0.6, falling with jobs, rising "
              f"with servers, spread <= 0.22, highest of the four. P-OFF proven on {int(proven.sum())} of "
              f"{len(proven)} instances within {args.time_limit:g} s")
        for key, fixed in (("jobs", "servers == 20"), ("servers", "jobs == 10")):
            part = f.query(fixed)
            print(part.groupby([key, "algorithm"]).agg(pr=("pr", "mean"), pr_low=("pr_low", "mean"),
                                                       pr_high=("pr_high", "mean")).unstack().round(3).to_string())
        astraea_low = f.loc[f["algorithm"] == "astraea", "pr_low"].min()
        print(f"Astraea's PR: min {astraea_low:.3f} (lower ends)", flush=True)
    if "users" in parts:
        clock = Clock()
        f = pd.DataFrame([r for u in (5, 8, 11, 14) for s in seeds
                          for r in rows_for(generate_astraea(jobs=scaled(300), servers=scaled(100), users=u, seed=s,
                                                             trace=args.trace),
                                            s, ("astraea", "astraea-theory"))])
        frames.append(f.assign(sweep="users"))
        table = f.groupby(["users", "algorithm"]).agg(revenue=("revenue", "mean"),
                                                      var_alpha=("var_alpha", "mean")).unstack()
        table[("revenue_per_job", "astraea")] = table[("revenue", "astraea")] / scaled(300)
        table[("paper", "revenue_per_job")] = [PAPER_TABLE2[u][0] for u in table.index]
        table[("paper", "var_alpha")] = [PAPER_TABLE2[u][1] for u in table.index]
        print(f"Table 2 (N = {scaled(300)}, S = {scaled(100)}; {clock})")
        print(table.round(4).to_string(), flush=True)
    if "theta" in parts:
        clock = Clock()
        f = pd.DataFrame([r for x in (0.6, 0.8, 1.0, 1.2, 1.4) for s in seeds
                          for r in rows_for(generate_astraea(jobs=scaled(500), servers=scaled(60), seed=s), s, ("astraea",),
                                            theta_scale=x)])
        frames.append(f.assign(sweep="theta"))
        print(f"Fig. 11 (theta x scale under high load: N = {scaled(500)}, S = {scaled(60)}; {clock}); paper: 80% beats overestimates")
        print(f.groupby("theta_scale")[["revenue", "scheduled"]].mean().round(1).to_string(), flush=True)
    if args.csv:
        pd.concat(frames, ignore_index=True).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
