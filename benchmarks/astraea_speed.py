"""Astraea's running time per job (wall / N, the metric of the paper's Figs. 9-10) and the
median and p95 time of one A_maxIrev call, with BatchSche beside it.

    python benchmarks/astraea_speed.py [--jobs 500] [--servers 100] [--users U] [--seeds 1]
"""

from __future__ import annotations

import argparse

from mlsched.instance.generators.astraea import generate_astraea
from mlsched.systems import get_system


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=500)
    parser.add_argument("--servers", type=int, default=100)
    parser.add_argument("--users", type=int, help="default: every virtual cluster of the trace window")
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    sysm = get_system("astraea")
    for seed in range(args.seeds):
        inst = generate_astraea(jobs=args.jobs, servers=args.servers, users=args.users, seed=seed)
        for name in ("astraea", "batchsche"):
            row = sysm.evaluate(inst, sysm.execute(inst, sysm.policy(name)))
            print(f"seed {seed} {name:10s} N={inst.num_jobs} S={len(inst.servers)} U={len(inst.tenants)}: "
                  f"wall {row['wall_seconds']:.2f} s, {1000 * row['seconds_per_job']:.1f} ms/job, "
                  f"A_maxIrev median {1000 * row['call_median_seconds']:.2f} ms, "
                  f"p95 {1000 * row['call_p95_seconds']:.2f} ms, revenue {row['revenue']:.1f}, "
                  f"batches {row['batches']}")


if __name__ == "__main__":
    main()
