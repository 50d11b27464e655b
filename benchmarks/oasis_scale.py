"""Competitive ratios at scale: `mlsched compare --time-limit S` on the feasible profile, as a user
runs it, per size and seed: whole-command wall and CPU time, peak memory, the runs' and the exact
solve's wall time (its overshoot past S), OPT's status and the bound it came from, OPT's interval
beside the best algorithm's score, and per algorithm the interval width high / low of OPT / ALG
(1 is a point ratio; "-" an empty ratio column; "0!" an interval starting at 0 while the
algorithm scored above 0; "ALG=0" an algorithm that scored 0, whose ratio is infinite), then each
algorithm's total utility and each run's wall seconds.

    python benchmarks/oasis_scale.py [--sizes 10x10 30x30 50x50 100x100 200x100] [--seeds 0 1 2]
        [--time-limit 60] [--algorithms oasis,fifo,drf,rrh,dorm]

Goals: 30 x 30 proven optimal; at 100 x 100 the whole compare under 3 minutes and 2 GB, every
interval width at most 1.25. Each command runs in its own process (peak memory is its maxrss plus
the largest of its children's, the MILP's process at the largest sizes; CPU time its and its
children's user + system time). 200 jobs run on 50 worker and 50 PS servers, as in the paper.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


MEASURED = ("import resource, sys\nfrom mlsched.cli import main\ncode = 1\ntry:\n    code = main(sys.argv[1:])\n"
            "finally:\n    peak = sum(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, "
            "resource.RUSAGE_CHILDREN))\n    print(f'PEAK_KB {peak}', file=sys.stderr)\n"
            "sys.exit(code)\n")


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run(argv: list[str]) -> tuple[subprocess.CompletedProcess, float, float, float]:
    """One mlsched command in its own process: the result, wall and CPU seconds, peak memory (MB)."""
    tick, cpu = time.perf_counter(), children_cpu()
    done = subprocess.run([sys.executable, "-c", MEASURED, *argv], capture_output=True, text=True)
    seconds, cpu = time.perf_counter() - tick, children_cpu() - cpu
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK_KB ")]
    return done, seconds, cpu, int(peak[-1].split()[1]) / 1024.0 if peak else float("nan")


def width(row: dict) -> str:
    """high / low of the row's ratio interval."""
    low, high, score = row.get("ratio_low"), row.get("ratio_high"), row.get("total_utility") or 0.0
    if score == 0:
        return "ALG=0"   # OPT / 0: no finite ratio
    if low is None or high is None:
        return "-"
    if low == 0 and score > 0:
        return "0!"
    return "inf" if low == 0 else f"{high / low:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["10x10", "30x30", "50x50", "100x100", "200x100"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--algorithms", default="oasis,fifo,drf,rrh,dorm")
    args = parser.parse_args()
    algorithms = args.algorithms.split(",")
    print(f"compare --time-limit {args.time_limit:g}, feasible profile, algorithms {args.algorithms}")
    print(f"{'size':8} {'seed':>4} {'wall s':>7} {'cpu s':>7} {'peak MB':>7} {'runs s':>7} {'exact s':>7} "
          f"{'over s':>6}  {'OPT status':10} {'bound source':22} {'OPT low':>9} {'OPT high':>9} {'max ALG':>9}  "
          + " ".join(f"{a:>6}" for a in algorithms) + "  (width high/low)")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            jobs, horizon = (int(v) for v in size.split("x"))
            for seed in args.seeds:
                path = Path(tmp) / f"{size}-{seed}.json"
                extra = ["--workers", "50", "--ps-servers", "50"] if jobs >= 200 else []
                gen, _, _, _ = run(["generate", "oasis", "--jobs", str(jobs), "--horizon", str(horizon), "--seed",
                                    str(seed), "--profile", "feasible", *extra, "-o", str(path)])
                if gen.returncode:
                    print(f"{size:8} {seed:4}  generate failed: {gen.stderr.strip()}", flush=True)
                    continue
                done, seconds, cpu, peak = run(["compare", str(path), "--time-limit", str(args.time_limit),
                                                "--algorithms", args.algorithms, "--json", "--quiet"])
                if done.returncode not in (0, 1):
                    print(f"{size:8} {seed:4}  compare exit {done.returncode}: {done.stderr.strip()[:200]}", flush=True)
                    continue
                rows = json.loads(done.stdout)
                first = rows[0]
                exact = first.get("opt_seconds") or float("nan")
                runs = sum(row.get("wall_seconds") or 0.0 for row in rows)
                low = "-" if first.get("opt") is None else f"{first['opt']:.2f}"
                high = "-" if first.get("opt_bound") is None else f"{first['opt_bound']:.2f}"
                best = max(row.get("total_utility") or 0.0 for row in rows)
                print(f"{size:8} {seed:4} {seconds:7.1f} {cpu:7.1f} {peak:7.0f} {runs:7.1f} {exact:7.1f} "
                      f"{exact - args.time_limit:6.1f}  {first['opt_status']:10} "
                      f"{str(first.get('opt_bound_source')):22} {low:>9} {high:>9} {best:9.2f}  "
                      + " ".join(f"{width(row):>6}" for row in rows)
                      + "   ALG: " + ", ".join(f"{row['algorithm']} {row.get('total_utility') or 0:.2f}" for row in rows)
                      + "; run s: " + ", ".join(f"{row['algorithm']} {row.get('wall_seconds') or 0:.1f}" for row in rows),
                      flush=True)


if __name__ == "__main__":
    main()
