"""Themis's O1 at growing sizes: `mlsched compare --time-limit S` on the first N single-job apps
(by arrival; O1 is defined for apps of one job, and 51 of the 60 are) of the shipped W1 workload
(themis/w1-16gpu-first60, 16 GPUs), as a user runs it: whole-command
wall and CPU time, peak memory, the exact solve's wall time (its overshoot past S) and the rest (the
runs and start-up), O1's status, its interval [bound, incumbent] of the least max rho beside the best algorithm's
slot-rounded max rho, and per algorithm the width high / low of ALG / O1 ("-" an empty column).

    python benchmarks/themis_o1_scale.py [--apps 10 20 30 40 51] [--time-limit 60] [--algorithms ...]

Each command runs in its own process (see benchmarks/oasis_scale.py).
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from oasis_scale import run

from mlsched.resources import shipped_instance

WORKLOAD = "themis/w1-16gpu-first60"


def first_apps(document: dict, count: int) -> dict:
    """The instance document cut to its first ``count`` single-job apps by arrival (ties in file
    order): O1 is defined for apps of one job (spec §5.6)."""
    single = [(n, app) for n, app in enumerate(document["apps"]) if len(app["phases"]) == 1
              and len(app["phases"][0]) == 1]
    apps = sorted(single, key=lambda item: (item[1]["arrival"], item[0]))[:count]
    kept = {k: v for k, v in document.items() if k not in ("apps", "expected")}
    return {**kept, "name": f"{document['name']}-apps{count}", "apps": [app for _, app in apps]}


def width(row: dict) -> str:
    low, high = row.get("ratio_low"), row.get("ratio_high")
    if low is None or high is None:
        return "-"
    return "inf" if low == 0 else f"{high / low:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, nargs="+", default=[10, 20, 30, 40, 51])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--algorithms", help="comma-separated (default: compare's Themis set)")
    args = parser.parse_args()
    source = shipped_instance(WORKLOAD)
    assert source is not None, WORKLOAD
    document = json.loads(source.read_text())
    extra = ["--algorithms", args.algorithms] if args.algorithms else []
    print(f"compare --time-limit {args.time_limit:g} on the first N single-job apps of {WORKLOAD}")
    header = None
    with tempfile.TemporaryDirectory() as tmp:
        for count in args.apps:
            path = Path(tmp) / f"apps{count}.json"
            path.write_text(json.dumps(first_apps(document, count)))
            done, seconds, cpu, peak = run(["compare", str(path), "--time-limit", str(args.time_limit),
                                            "--json", "--quiet", *extra])
            if done.returncode not in (0, 1):
                print(f"{count:4}  compare exit {done.returncode}: {done.stderr.strip()[:300]}", flush=True)
                continue
            rows = json.loads(done.stdout)
            if header is None:
                header = [row["algorithm"] for row in rows]
                print(f"{'apps':>4} {'wall s':>7} {'cpu s':>7} {'peak MB':>7} {'rest s':>7} {'exact s':>7} "
                      f"{'over s':>6}  {'O1 status':10} {'O1 low':>7} {'O1 high':>7} {'min ALG':>7}  "
                      + " ".join(f"{a[:8]:>8}" for a in header) + "  (width high/low)")
            first = rows[0]
            exact = first.get("opt_seconds") or float("nan")
            runs = seconds - exact   # the runs with the command's start-up (Themis runs report no wall time)
            low = "-" if first.get("opt_bound") is None else f"{first['opt_bound']:.3f}"
            high = "-" if first.get("opt") is None else f"{first['opt']:.3f}"
            best = min(row.get("max_rho_slotted") or float("inf") for row in rows)
            print(f"{count:4} {seconds:7.1f} {cpu:7.1f} {peak:7.0f} {runs:7.1f} {exact:7.1f} "
                  f"{exact - args.time_limit:6.1f}  {first['opt_status']:10} {low:>7} {high:>7} {best:7.3f}  "
                  + " ".join(f"{width(row):>8}" for row in rows), flush=True)


if __name__ == "__main__":
    main()
