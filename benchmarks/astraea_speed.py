"""Astraea's running time per job (wall / N, the metric of the paper's Figs. 9-10; the paper: about
1.56 s per job) and the median and p95 time of one A_maxIrev call, with each baseline's run time
beside it. CPU time (time.process_time) is printed beside wall time: on a shared machine the wall
time includes waiting for a core.

    python benchmarks/astraea_speed.py [--jobs 500] [--servers 100] [--users U] [--seeds 1]
        [--algorithms astraea,batchsche,gandiva_fair,hived]
"""

from __future__ import annotations

import argparse
import time

from mlsched.instance.generators.astraea import generate_astraea
from mlsched.systems import get_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--users", type=int, help="default: every virtual cluster of the trace window")
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--trace", help="Philly job CSV (default: the shipped window)")
    parser.add_argument("--algorithms", default="astraea,batchsche,gandiva_fair,hived")
    args = parser.parse_args()
    sysm = get_system("astraea")
    for seed in range(args.seeds):
        inst = generate_astraea(jobs=args.jobs, servers=args.servers, users=args.users, seed=seed, trace=args.trace)
        for name in args.algorithms.split(","):
            wall, cpu = time.perf_counter(), time.process_time()
            result = sysm.execute(inst, sysm.policy(name))
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            row = result.summary(inst)
            calls = (f", A_maxIrev median {1000 * row['call_median_seconds']:.2f} ms, "
                     f"p95 {1000 * row['call_p95_seconds']:.2f} ms, batches {row['batches']}"
                     if "call_median_seconds" in row else "")
            print(f"seed {seed} {name:12s} N={inst.num_jobs} S={len(inst.servers)} U={len(inst.tenants)}: "
                  f"wall {wall:.2f} s ({1000 * wall / inst.num_jobs:.1f} ms/job), CPU {cpu:.2f} s "
                  f"({1000 * cpu / inst.num_jobs:.1f} ms/job){calls}, revenue {row['revenue']:.1f}", flush=True)


if __name__ == "__main__":
    main()
