"""How large a P-OFF (spec §2.5, admission variant) is proven optimal within a time limit.

1. The Fig. 5 points (2 tenants; 5, 10, 15 jobs on 20 servers; 10 jobs on 5, 15, 25, 35, 45
   servers) in the ``paper`` and ``small`` profiles, seeds 0..``--seeds``-1: ``exact_astraea``
   (UB-POOL, the UB-POOL-guided schedule, the MILP, the fallback bounds) with the time limit.
2. Per profile and seed, the largest job count on 20 servers proven within the limit (5, 10, 15,
   20, 30, 40, 60, 80 jobs, stopping at the first size not proven).
3. ``--compare-tightenings``: instead, on the Fig. 5 points, P-OFF's LP bound and the MILP alone
   (HiGHS, and SCIP when pyscipopt is installed; no start, no fallback) with each set of
   tightenings (``none``, the default set, the default set with ``symmetry``).

Limits are wall-clock; CPU time (time.process_time) is printed beside them (SCIP runs in this
process, so it is counted). A program with more than ``--max-starts`` start columns x_jkt0, or
more than ``--max-cells`` (job, server, slot) cells (each carries y_jst, z_jst and two rows of
(O7)), is reported and not built.

    python benchmarks/astraea_offline.py [--time-limit 60] [--seeds 3] [--profiles paper,small]
        [--max-starts 150000] [--max-cells 300000] [--compare-tightenings]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mlsched.exact import exact_astraea
from mlsched.formulations import astraea
from mlsched.instance.generators.astraea import generate_astraea
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.solve import scip_available, scip_file_solve, solve

FIG5_POINTS = [(n, 20) for n in (5, 10, 15)] + [(10, m) for m in (5, 15, 25, 35, 45)]
GROWTH = (5, 10, 15, 20, 30, 40, 60, 80)
TIGHTENING_SETS = {"none": (), "default": astraea.DEFAULT_TIGHTENINGS,
                   "default+symmetry": (*astraea.DEFAULT_TIGHTENINGS, "symmetry")}


def program_size(inst: MultiTenantInstance, max_starts: int, max_cells: int) -> tuple[str, bool]:
    """A line's head naming the program's size, and whether it is within the limits."""
    horizon = astraea.offline_horizon(inst, "admission")
    columns = astraea.column_count(inst, "admission")
    cells = inst.num_jobs * len(inst.servers) * horizon
    head = f"{inst.name}: T = {horizon}, {columns} start columns, {cells} (job, server, slot) cells"
    if columns > max_starts or cells > max_cells:
        return f"{head}: not built (limits {max_starts} columns, {max_cells} cells)", False
    return head, True


def attempt(inst: MultiTenantInstance, time_limit: float, max_starts: int, max_cells: int) -> bool:
    """Solve P-OFF with ``exact_astraea``, print the outcome; whether it was proven optimal."""
    head, fits = program_size(inst, max_starts, max_cells)
    if not fits:
        print(head, flush=True)
        return False
    wall, cpu = time.perf_counter(), time.process_time()
    report = exact_astraea(inst, time_limit=time_limit, verify=False)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{head}: {report.status.value}, objective {report.objective}, bound {report.bound} "
          f"({report.bound_source}), gap {report.gap}; {wall:.1f} s wall, {cpu:.1f} s CPU", flush=True)
    return report.status.value == "optimal"


def compare_tightenings(inst: MultiTenantInstance, time_limit: float, max_starts: int, max_cells: int) -> None:
    """P-OFF's LP bound and the bare MILP (HiGHS, SCIP) per set of tightenings, one line each."""
    head, fits = program_size(inst, max_starts, max_cells)
    print(head, flush=True)
    if not fits:
        return
    for name, tightenings in TIGHTENING_SETS.items():
        cpu = time.process_time()
        lp = solve(astraea.build(inst, relax=True, tightenings=tightenings), time_limit=time_limit)
        line = f"  {name}: LP bound {lp.objective} ({time.process_time() - cpu:.1f} s CPU)"
        for solver in ("highs", "scip") if scip_available() else ("highs",):
            wall, cpu = time.perf_counter(), time.process_time()
            built = astraea.build(inst, tightenings=tightenings)
            if solver == "highs":
                r = solve(built, time_limit=time_limit)
                status, objective, bound = r.status.value, r.objective, r.bound
            else:
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "p-off.mps"
                    built.model.write(str(path), io_options={"symbolic_solver_labels": False})
                    f = scip_file_solve(path, time_limit)
                    status, objective, bound = f.status.value, f.objective, f.bound
            line += (f"; {solver} {status}, objective {objective}, bound {bound}, "
                     f"{time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")
        print(line, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--profiles", default="paper,small")
    parser.add_argument("--max-starts", type=int, default=150_000)
    parser.add_argument("--max-cells", type=int, default=300_000)
    parser.add_argument("--compare-tightenings", action="store_true")
    args = parser.parse_args()
    profiles = args.profiles.split(",")
    limits = (args.time_limit, args.max_starts, args.max_cells)
    for profile in profiles:
        for n, m in FIG5_POINTS:
            for seed in range(args.seeds):
                inst = generate_astraea(jobs=n, servers=m, users=2, profile=profile, seed=seed)
                if args.compare_tightenings:
                    compare_tightenings(inst, *limits)
                else:
                    attempt(inst, *limits)
    if args.compare_tightenings:
        return
    for profile in profiles:
        for seed in range(args.seeds):
            largest = 0
            for jobs in GROWTH:
                if not attempt(generate_astraea(jobs=jobs, servers=20, users=2, profile=profile, seed=seed), *limits):
                    break
                largest = jobs
            print(f"{profile} profile, seed {seed}: the largest P-OFF (2 tenants, 20 servers) proven within "
                  f"{args.time_limit:g} s has {largest} jobs (sizes tried: {', '.join(map(str, GROWTH))})", flush=True)


if __name__ == "__main__":
    main()
