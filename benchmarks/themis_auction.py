"""Themis PA auction speed: one auction with hidden payments on a 64-GPU cluster with 20 bidding
apps (goal: median < 100 ms, p95 < 500 ms; the paper: 354 ms median, 1398 ms p95 with Gurobi).

With count-only valuations (S = 1 profiles) the exact DP over bidders and GPU counts solves the
auction over all bundles (spec §2.3); placement-sensitive valuations need canonical bundles and
the integer program, timed by ``benchmarks/themis_speed.py``.

    python benchmarks/themis_auction.py [--auctions 50]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlsched.formulations.themis import pa_count_auction
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.online.themis.rho import App, rho


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auctions", type=int, default=50)
    args = parser.parse_args()
    topology = GpuTopology.uniform(racks=2, machines_per_rack=8, slots_per_machine=2, gpus_per_slot=2)
    seconds = []
    for seed in range(args.auctions):
        rng = np.random.default_rng(seed)
        rows = []
        for _ in range(20):
            app = App.single_job(float(rng.uniform(1e3, 1e5)), int(rng.choice([1, 2, 4, 8, 16])), cluster_gpus=64,
                                 n_avg=float(rng.integers(5, 25)), elapsed=float(rng.uniform(0, 5e3)))
            rows.append([rho(app, list(range(k)), topology) for k in range(app.demand + 1)])
        tick = time.perf_counter()
        result = pa_count_auction(rows, topology.num_gpus)
        seconds.append(time.perf_counter() - tick)
        assert sum(result.counts) <= topology.num_gpus
    ms = 1e3 * np.array(seconds)
    print(f"{args.auctions} auctions, 64 GPUs, 20 bidders, count-only valuations (exact DP with hidden payments): "
          f"median {np.median(ms):.2f} ms, p95 {np.percentile(ms, 95):.2f} ms")


if __name__ == "__main__":
    main()
