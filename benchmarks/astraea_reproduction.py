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

``--rows FILE`` keeps every run of the jobs, servers, users and theta parts as a line of FILE, written
as the run finishes; runs already in FILE (same part, sizes, seed, scheduler and theta scale) are read
back instead of run again, so a long sweep survives an interruption and can be split across processes
(``--seed-list``, ``--algorithms``), each writing its own file, and summarised at the end from all of
them (``--rows a.csv --rows b.csv``; new runs go to the first file).

    python benchmarks/astraea_reproduction.py [--seeds 5 | --seed-list 0,3] [--scale 1]
        [--part jobs,servers,pr,users,theta] [--algorithms astraea,batchsche] [--trace PATH]
        [--time-limit 60] [--rows runs.csv ...] [--csv out.csv]
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


KEY = ("sweep", "jobs", "servers", "users", "seed", "algorithm", "theta_scale")


class RunStore:
    """Every run of the jobs, servers, users and theta parts as a CSV line, written as it finishes; runs
    already stored (same KEY) are read back instead of run again."""

    def __init__(self, paths: list[str], wanted: set[str] | None) -> None:
        self.path = paths[0] if paths else None
        self.wanted = wanted
        frames = [pd.read_csv(p) for p in paths if _has_rows(p)]
        self.rows: list[dict] = pd.concat(frames).to_dict("records") if frames else []
        self.done = {self._key(r) for r in self.rows}

    @staticmethod
    def _key(row: dict) -> tuple:
        theta = row.get("theta_scale")
        return (*(row[k] for k in KEY[:-1]), None if theta is None or pd.isna(theta) else float(theta))

    def _store(self, row: dict) -> None:
        self.rows.append(row)
        self.done.add(self._key(row))
        if self.path:
            pd.DataFrame([row], columns=STORED).to_csv(self.path, mode="a", index=False,
                                                       header=not _has_rows(self.path))

    def run(self, sweep: str, make, sizes: dict, seed: int, algorithms=ALGORITHMS, **options) -> None:
        """Run each of ``algorithms`` (less those not wanted or stored) on ``make()``, the instance of ``sizes``."""
        theta = options.get("theta_scale")
        todo = [a for a in algorithms if (self.wanted is None or a in self.wanted)
                and self._key({"sweep": sweep, **sizes, "seed": seed, "algorithm": a, "theta_scale": theta})
                not in self.done]
        if not todo:
            return
        inst = make()
        system = get_system("astraea")
        for name in todo:
            cpu = time.process_time()
            result = system.execute(inst, system.policy(name), **options)
            seconds = time.process_time() - cpu
            row = system.evaluate(inst, result)
            print(f"  {sweep}: N = {inst.num_jobs}, S = {len(inst.servers)}, U = {len(inst.tenants)}, seed {seed}, "
                  f"{name}{''.join(f', {k} {v}' for k, v in options.items())}: revenue {row['revenue']:.1f} "
                  f"({seconds:.1f} s CPU)", flush=True)
            admitted = result.phase > 0 if hasattr(result, "phase") else None
            self._store({"sweep": sweep, **sizes, "seed": seed, "algorithm": name, "theta_scale": theta,
                         "tenants": len(inst.tenants),
                         **{k: row.get(k, np.nan) for k in COLUMNS},
                         "ideal_above_cost": (float(np.mean(result.ideal[admitted] > result.cost[admitted]))
                                              if admitted is not None and admitted.any() else np.nan),
                         "cpu_seconds": seconds})

    def frame(self, sweep: str) -> pd.DataFrame:
        f = pd.DataFrame([r for r in self.rows if r["sweep"] == sweep], columns=STORED)
        return f if self.wanted is None else f[f["algorithm"].isin(self.wanted)]


STORED = (*KEY, "tenants", *COLUMNS, "ideal_above_cost", "cpu_seconds")


def _has_rows(path: str) -> bool:
    try:
        with open(path) as handle:
            return bool(handle.readline().strip())
    except FileNotFoundError:
        return False


def versus(frame: pd.DataFrame, key: str) -> pd.DataFrame:
    """Mean revenue per (key, algorithm), and Astraea's over each baseline's when both are > 0."""
    mean = frame.groupby([key, "algorithm"])["revenue"].mean().unstack()
    for astraea in ("astraea", "astraea-theory"):
        for base in BASELINES:
            if astraea not in mean or base not in mean:
                continue
            both = (mean[astraea] > 0) & (mean[base] > 0)
            mean[f"{astraea}/{base}"] = (mean[astraea] / mean[base]).where(both)
    return mean


def shape(frame: pd.DataFrame) -> pd.DataFrame:
    """Per algorithm: mean Var_alpha (Fig. 8), utilization, makespan and Astraea's makespan over it
    (Fig. 13), and the share of admitted jobs with ideal revenue above cost (Fig. 12)."""
    table = frame.groupby("algorithm")[["var_alpha", "si_mean", "utilization", "makespan", "ideal_above_cost"]].mean()
    if "astraea" in table.index:
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
    parser.add_argument("--seed-list", help="comma-separated seeds to run instead of 0..--seeds-1")
    parser.add_argument("--part", default="jobs,servers,pr,users,theta")
    parser.add_argument("--algorithms", help="comma-separated schedulers to run and summarise (default: every one)")
    parser.add_argument("--trace", help="Philly job CSV for the users part (default: the shipped window, 11 VCs)")
    parser.add_argument("--time-limit", type=float, default=60.0, help="P-OFF's limit per instance (pr part)")
    parser.add_argument("--scale", type=float, default=1.0, help="job and server counts x this (not the pr part)")
    parser.add_argument("--rows", action="append", default=[],
                        help="CSV of the runs: read back, and new runs appended to the first (repeatable)")
    parser.add_argument("--csv")
    args = parser.parse_args()
    parts = set(args.part.split(","))
    wanted = set(args.algorithms.split(",")) if args.algorithms else None
    unknown = (wanted or set()) - set(ALGORITHMS)
    if unknown:
        parser.error(f"--algorithms: unknown {', '.join(sorted(unknown))} (known: {', '.join(ALGORITHMS)})")
    store = RunStore(args.rows, wanted)
    frames = []
    seeds = [int(s) for s in args.seed_list.split(",")] if args.seed_list else range(args.seeds)
    pd.set_option("display.width", 200)

    def scaled(count: int) -> int:
        return max(1, round(count * args.scale))

    def sweep(name: str, points, algorithms=ALGORITHMS, users: int | None = None, **options) -> None:
        for jobs, servers in points:
            for s in seeds:
                store.run(name, lambda jobs=jobs, servers=servers, s=s: generate_astraea(jobs=jobs, servers=servers, users=users, seed=s,
                                                         trace=args.trace if users else None),
                          {"jobs": jobs, "servers": servers, "users": users or 0}, s, algorithms, **options)

    def stored(name: str) -> pd.DataFrame:
        f = store.frame(name)
        f = f[f["seed"].isin(list(seeds))]
        frames.append(f)
        return f

    if "jobs" in parts:
        clock = Clock()
        sweep("jobs", [(scaled(n), scaled(100)) for n in (100, 200, 300, 400, 500)])
        f = stored("jobs")
        print(f"Fig. 4 (vs #jobs, S = {scaled(100)}; {clock}); paper: Astraea / baseline =", PAPER_FIG4["jobs"])
        print(versus(f, "jobs").round(3).to_string())
        print(f"Figs. 8, 12, 13 over the #jobs sweep; paper: Astraea's Var_alpha smallest, ideal > cost for every "
              f"admitted job, Astraea's makespan / baseline's = {PAPER_FIG13}")
        print(shape(f).round(3).to_string(), flush=True)
    if "servers" in parts:
        clock = Clock()
        sweep("servers", [(scaled(300), scaled(m)) for m in (60, 80, 100, 120, 140)])
        f = stored("servers")
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
        for u in (5, 8, 11, 14):
            sweep("users", [(scaled(300), scaled(100))], ("astraea", "astraea-theory"), users=u)
        f = stored("users")
        table = f.groupby(["users", "algorithm"]).agg(revenue=("revenue", "mean"),
                                                      var_alpha=("var_alpha", "mean")).unstack()
        if ("revenue", "astraea") in table:
            table[("revenue_per_job", "astraea")] = table[("revenue", "astraea")] / scaled(300)
        table[("paper", "revenue_per_job")] = [PAPER_TABLE2[u][0] for u in table.index]
        table[("paper", "var_alpha")] = [PAPER_TABLE2[u][1] for u in table.index]
        print(f"Table 2 (N = {scaled(300)}, S = {scaled(100)}; {clock})")
        print(table.round(4).to_string(), flush=True)
    if "theta" in parts:
        clock = Clock()
        for x in (0.6, 0.8, 1.0, 1.2, 1.4):
            sweep("theta", [(scaled(500), scaled(60))], ("astraea",), theta_scale=x)
        f = stored("theta")
        print(f"Fig. 11 (theta x scale under high load: N = {scaled(500)}, S = {scaled(60)}; {clock}); "
              f"paper: 80% beats overestimates")
        print(f.groupby("theta_scale")[["revenue", "scheduled"]].mean().round(1).to_string(), flush=True)
    if args.csv:
        pd.concat(frames, ignore_index=True).to_csv(args.csv, index=False)


if __name__ == "__main__":
    main()
