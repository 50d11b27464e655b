"""Differential testing of mlsched's exact programs (HiGHS vs SCIP vs brute force).

    python tools/differential.py [--count 500] [--seed 0] [--program NAME ...]

Prints, per program, the number of instances, agreements and disagreements by kind, and the
instance indices of every disagreement (re-create one with
``mlsched.differential.GENERATORS[program](numpy.random.default_rng([seed, index]))``).
"""

from __future__ import annotations

import argparse
import time

from mlsched.differential import PROGRAMS, differential


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--program", nargs="+", default=list(PROGRAMS), choices=list(PROGRAMS))
    args = parser.parse_args()
    for program in args.program:
        tick = time.perf_counter()
        tally = differential(program, args.count, seed=args.seed)
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(tally.disagreements.items())) or "none"
        print(f"{program}: {tally.instances} instances, {tally.agreements} agreements, disagreements {kinds} "
              f"({time.perf_counter() - tick:.1f} s)")
        for index, kind in tally.cases:
            print(f"  instance {index}: {kind}")


if __name__ == "__main__":
    main()
