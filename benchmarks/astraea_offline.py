"""How large a P-OFF (spec §2.5, admission variant) HiGHS proves optimal within a time limit: first
the Fig. 5 instance (2 tenants, 10 jobs, 20 servers) in the paper's profile, then in the `small`
profile, then the `small` profile with 2 tenants and 20 servers at growing job counts until a size
is not proven. The limit is HiGHS's, on wall-clock time; CPU time (time.process_time) is printed
beside it. A program with more than ``--max-starts`` start columns x_jkt0, or more than
``--max-cells`` (job, server, slot) cells (each carries y_jst, z_jst and six rows of (O7)), is
reported and not built.

    python benchmarks/astraea_offline.py [--time-limit 60] [--seeds 3] [--max-starts 150000] [--max-cells 300000]
"""

from __future__ import annotations

import argparse
import time

from mlsched.exact import exact_astraea
from mlsched.formulations.astraea import configurations, offline_horizon, start_slots
from mlsched.instance.generators.astraea import generate_astraea
from mlsched.instance.multi_tenant import MultiTenantInstance


def start_columns(inst: MultiTenantInstance) -> tuple[int, int]:
    """(P-OFF's horizon T, the number of x_jkt0 columns) without building the program."""
    horizon = offline_horizon(inst, "admission")
    columns = sum(len(start_slots(inst, job, c, horizon)) for job in inst.jobs for c in configurations(inst, job))
    return horizon, columns


def attempt(inst: MultiTenantInstance, time_limit: float, max_starts: int, max_cells: int) -> bool:
    """Solve P-OFF, print the outcome; whether it was proven optimal."""
    horizon, columns = start_columns(inst)
    cells = inst.num_jobs * len(inst.servers) * horizon
    head = f"{inst.name}: T = {horizon}, {columns} start columns, {cells} (job, server, slot) cells"
    if columns > max_starts or cells > max_cells:
        print(f"{head}: not built (limits {max_starts} columns, {max_cells} cells)", flush=True)
        return False
    wall, cpu = time.perf_counter(), time.process_time()
    report = exact_astraea(inst, time_limit=time_limit, verify=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{head}: {report.status.value}, objective {report.objective}, bound {report.bound}, gap {report.gap}; "
          f"{wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return report.status.value == "optimal"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--max-starts", type=int, default=150_000)
    parser.add_argument("--max-cells", type=int, default=300_000)
    args = parser.parse_args()
    for profile in ("paper", "small"):
        for seed in range(args.seeds):
            attempt(generate_astraea(jobs=10, servers=20, users=2, profile=profile, seed=seed), args.time_limit,
                    args.max_starts, args.max_cells)
    for seed in range(args.seeds):
        largest = 0
        for jobs in range(2, 41, 2):
            if not attempt(generate_astraea(jobs=jobs, servers=20, users=2, profile="small", seed=seed),
                           args.time_limit, args.max_starts, args.max_cells):
                break
            largest = jobs
        print(f"seed {seed}: the largest small-profile P-OFF (2 tenants, 20 servers) proven within "
              f"{args.time_limit:g} s has {largest} jobs", flush=True)


if __name__ == "__main__":
    main()
