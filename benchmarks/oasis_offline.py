"""OASiS exact optimum: time for Fig. 5's setting (10 jobs, T = 10, "small" profile), and the
largest jobs x slots instance solved to proven optimality within 60 s, with Pyomo build time vs
HiGHS solve time.

    python benchmarks/oasis_offline.py [--seeds 0 1 2 3 4] [--limit 60]
"""

from __future__ import annotations

import argparse

from mlsched.formulations import oasis
from mlsched.instance.generators import generate_oasis
from mlsched.solve import Status, solve


def timed(jobs: int, horizon: int, seed: int, limit: float, variant: str = "paper") -> tuple:
    inst = generate_oasis(jobs=jobs, horizon=horizon, seed=seed, profile="small")
    built = oasis.build(inst, variant=variant)
    report = solve(built, time_limit=limit)
    return built, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--limit", type=float, default=60.0)
    args = parser.parse_args()
    print("Fig. 5 setting: 10 jobs, T = 10, small profile (2 worker + 2 PS servers)")
    for seed in args.seeds:
        for variant in ("paper", "chunk"):
            built, r = timed(10, 10, seed, args.limit, variant)
            print(f"  seed {seed} OPT_{variant}: {r.status.value} {r.objective:.4f}, build {r.build_seconds:.2f} s, "
                  f"solve {r.solve_seconds:.2f} s, {built.size['integer_variables']} integer variables")
    print(f"Scaling (T = jobs, small profile, seed 0; stop at the first size not proven within {args.limit:g} s)")
    largest = None
    for size in (10, 15, 20, 25, 30, 40, 50, 60, 80, 100):
        built, r = timed(size, size, 0, args.limit)
        print(f"  {size} jobs x {size} slots: {r.status.value}, build {r.build_seconds:.2f} s, "
              f"solve {r.solve_seconds:.2f} s, gap {r.gap if r.gap is not None else float('nan'):.2g}, "
              f"{built.size['integer_variables']} integer variables")
        if r.status is not Status.OPTIMAL:
            break
        largest = (size, r.build_seconds, r.solve_seconds)
    if largest:
        print(f"largest proven within {args.limit:g} s: {largest[0]} jobs x {largest[0]} slots "
              f"(build {largest[1]:.2f} s, solve {largest[2]:.2f} s)")


if __name__ == "__main__":
    main()
