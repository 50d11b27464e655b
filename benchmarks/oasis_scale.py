"""Competitive ratios at scale: `mlsched compare --time-limit S` on the feasible profile, as a user
runs it, per size and seed: whole-command wall time, peak memory, OPT's status and the bound it
came from, and per algorithm the interval width high / low of OPT / ALG (1 is a point ratio).

    python benchmarks/oasis_scale.py [--sizes 10x10 30x30 50x50 100x100 200x100] [--seeds 0 1 2]
        [--time-limit 60] [--algorithms oasis,fifo,drf,rrh,dorm]

Goals: 30 x 30 proven optimal; at 100 x 100 the whole compare under 3 minutes and 2 GB, every
interval width at most 1.25. Each command runs in its own process (peak memory is its maxrss).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


MEASURED = ("import resource, sys\nfrom mlsched.cli import main\ncode = 1\ntry:\n    code = main(sys.argv[1:])\n"
            "finally:\n    print(f'PEAK_KB {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}', file=sys.stderr)\n"
            "sys.exit(code)\n")


def run(argv: list[str]) -> tuple[subprocess.CompletedProcess, float, float]:
    """One mlsched command in its own process: the result, wall seconds and peak memory (MB)."""
    tick = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", MEASURED, *argv], capture_output=True, text=True)
    seconds = time.perf_counter() - tick
    peak = [line for line in done.stderr.splitlines() if line.startswith("PEAK_KB ")]
    return done, seconds, int(peak[-1].split()[1]) / 1024.0 if peak else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["10x10", "30x30", "50x50", "100x100", "200x100"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--algorithms", default="oasis,fifo,drf,rrh,dorm")
    args = parser.parse_args()
    print(f"compare --time-limit {args.time_limit:g}, feasible profile, algorithms {args.algorithms}")
    print("size      seed  wall s  peak MB  OPT status  bound source     " + "  ".join(
        f"{a:>7}" for a in args.algorithms.split(",")) + "   (interval width high/low)")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes:
            jobs, horizon = (int(v) for v in size.split("x"))
            for seed in args.seeds:
                path = Path(tmp) / f"{size}-{seed}.json"
                extra = ["--workers", "50", "--ps-servers", "50"] if jobs >= 200 else []
                gen, _, _ = run(["generate", "oasis", "--jobs", str(jobs), "--horizon", str(horizon), "--seed",
                                 str(seed), "--profile", "feasible", *extra, "-o", str(path)])
                if gen.returncode:
                    print(f"{size:9} {seed:4}  generate failed: {gen.stderr.strip()}")
                    continue
                done, seconds, peak = run(["compare", str(path), "--time-limit", str(args.time_limit),
                                           "--algorithms", args.algorithms, "--json", "--quiet"])
                if done.returncode not in (0, 1):
                    print(f"{size:9} {seed:4}  compare exit {done.returncode}: {done.stderr.strip()[:200]}")
                    continue
                rows = json.loads(done.stdout)
                widths = []
                for row in rows:
                    low, high = row.get("ratio_low"), row.get("ratio_high")
                    widths.append("      -" if not low or high is None else f"{high / low:7.3f}")
                first = rows[0]
                print(f"{size:9} {seed:4}  {seconds:6.1f}  {peak:7.0f}  {first['opt_status']:10}  "
                      f"{str(first.get('opt_bound_source')):15}  " + "  ".join(widths))


if __name__ == "__main__":
    main()
