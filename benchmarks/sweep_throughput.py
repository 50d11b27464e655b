"""Sweep throughput: the OASiS Fig. 5 setting (10 jobs, T = 10, small profile, OASiS and the exact
solve of every cell) run serially, on local processes and on a Dask LocalCluster.

Prints, per executor, wall and CPU time of the whole sweep, cells per second, the speed-up over
serial, and the overhead per cell: (sweep wall x workers - sum of the cells' own wall time) /
cells, i.e. what the executor, the store and the loop add on top of the cells' compute. CPU time
is this process's (the coordinator's); the cells' CPU is summed from the stored rows.

    python benchmarks/sweep_throughput.py [--seeds 100] [--workers 2] [--executors serial processes dask]

With the default 100 seeds the sweep has 2 x 2 x 100 = 400 cells (servers 4 and 8, gamma1
ranges [10, 100] and [1, 100]).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from mlsched.sweep import sweep


def spec(seeds: int) -> dict:
    return {"name": "oasis-fig5-throughput", "system": "oasis",
            "fixed": {"jobs": 10, "horizon": 10, "profile": "small"},
            "cases": [{"workers": 2, "ps_servers": 2}, {"workers": 4, "ps_servers": 4}],
            "grid": {"gamma1_range": [[10, 100], [1, 100]]}, "seeds": {"start": 0, "count": seeds},
            "algorithms": ["oasis"], "exact": {"time_limit": 60}}


def measure(executor: str, seeds: int, workers: int, folder: Path) -> dict:
    wall, cpu = time.perf_counter(), time.process_time()
    frame = sweep(spec(seeds), executor=executor, workers=workers, results=folder / executor, progress=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    cells = frame.drop_duplicates("cell")
    used = 1 if executor == "serial" else workers
    return {"executor": executor, "workers": used, "cells": len(cells), "ok": int((cells["status"] == "ok").sum()),
            "wall": wall, "coordinator_cpu": cpu, "cell_wall_sum": float(cells["cell_seconds"].sum()),
            "cell_cpu_sum": float(cells["cell_cpu_seconds"].sum()),
            "overhead_ms": 1000 * (wall * used - float(cells["cell_seconds"].sum())) / len(cells)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--executors", nargs="+", default=["serial", "processes", "dask"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        rows = [measure(kind, args.seeds, args.workers, Path(tmp)) for kind in args.executors]
    serial = next((r for r in rows if r["executor"] == "serial"), None)
    print(f"load average (1, 5, 15 min) at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())} on "
          f"{os.cpu_count()} cores")
    print(f"{'executor':<10} {'workers':>7} {'cells':>5} {'ok':>4} {'wall s':>8} {'coord cpu s':>11} "
          f"{'cells wall s':>12} {'cells cpu s':>11} {'cells/s':>8} {'speed-up':>8} {'overhead ms/cell':>16}")
    for r in rows:
        speedup = f"{serial['wall'] / r['wall']:.2f}x" if serial else "-"
        print(f"{r['executor']:<10} {r['workers']:>7} {r['cells']:>5} {r['ok']:>4} {r['wall']:>8.1f} "
              f"{r['coordinator_cpu']:>11.1f} {r['cell_wall_sum']:>12.1f} {r['cell_cpu_sum']:>11.1f} "
              f"{r['cells'] / r['wall']:>8.2f} {speedup:>8} {r['overhead_ms']:>16.1f}")


if __name__ == "__main__":
    main()
