"""OASiS online decision latency at the paper's scale (spec §5.1): 50 worker + 50 PS servers,
T = 100, "feasible" profile. Prints the median and p95 time per arriving job and the wall time
of a 200-job run end to end (goals: median < 50 ms, p95 < 250 ms, 200 jobs < 30 s).

    python benchmarks/oasis_online_latency.py [--jobs 200] [--horizon 100] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlsched import sim
from mlsched.instance.generators import generate_oasis
from mlsched.metrics import total_utility
from mlsched.online.oasis import OASiS


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=200)
    parser.add_argument("--horizon", type=int, default=100)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--granularity", default="chunk", choices=["chunk", "worker_slot"])
    args = parser.parse_args()
    latencies = []
    for seed in args.seeds:
        inst = generate_oasis(jobs=args.jobs, horizon=args.horizon, seed=seed, profile="feasible")
        policy = OASiS(granularity=args.granularity)
        tick = time.perf_counter()
        result = sim.run(inst, policy)
        wall = time.perf_counter() - tick
        per_job = np.array([r.seconds for r in policy.records])
        latencies.append(per_job)
        passes = np.array([j.epochs * j.chunks for j in inst.jobs])
        print(f"seed {seed}: {args.jobs} jobs, T = {args.horizon}, {len(inst.worker_servers)}+{len(inst.ps_servers)} "
              f"servers, E*N median {np.median(passes):.0f} max {passes.max()}: end to end {wall:.2f} s, "
              f"admitted {int(result.schedule.admitted.sum())}, utility {total_utility(inst, result.schedule):.1f}, "
              f"per-job median {1e3 * np.median(per_job):.1f} ms, p95 {1e3 * np.percentile(per_job, 95):.1f} ms, "
              f"max {1e3 * per_job.max():.1f} ms")
    every = np.concatenate(latencies)
    print(f"all seeds ({every.size} arrivals, granularity {args.granularity}): median "
          f"{1e3 * np.median(every):.1f} ms, p95 {1e3 * np.percentile(every, 95):.1f} ms")


if __name__ == "__main__":
    main()
