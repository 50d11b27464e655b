"""Building large OASiS programs: the Pyomo model vs the array builder vs handing the finished
matrix to HiGHS (a raw highspy build), and peak memory of each, per jobs x slots (feasible profile).
The array builder's goal: at most 2x the raw highspy build.

    python benchmarks/oasis_build.py [--sizes 30x30 50x50 100x100] [--seed 7] [--skip-pyomo-above 100]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from functools import partial

import highspy

from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
from mlsched.instance.generators import generate_oasis


def timed(step):
    """The step's value and wall seconds (untraced), then its peak Python-allocated MB (a second,
    traced run: tracing slows native calls down too much to time them)."""
    tick = time.perf_counter()
    value = step()
    seconds = time.perf_counter() - tick
    tracemalloc.start()
    step()
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return value, seconds, peak


def raw_highspy(program) -> None:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = len(program.cost), len(program.row_lower)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = program.cost, program.col_lower, program.col_upper
    lp.row_lower_, lp.row_upper_ = program.row_lower, program.row_upper
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = program.a_start, program.a_index, program.a_value
    lp.integrality_ = [highspy.HighsVarType.kInteger] * lp.num_col_
    h.passModel(lp)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["30x30", "50x50", "100x100"])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip-pyomo-above", type=int, default=100, help="jobs above which Pyomo is not timed")
    args = parser.parse_args()
    print("size      columns    rows    pyomo s (MB)   arrays s (MB)   highspy passModel s   arrays / highspy (goal <= 2)")
    for size in args.sizes:
        jobs, horizon = (int(v) for v in size.split("x"))
        inst = generate_oasis(jobs=jobs, horizon=horizon, seed=args.seed, profile="feasible")
        arrays, array_s, array_mb = timed(partial(build_arrays, inst))
        _, raw_s, _ = timed(partial(raw_highspy, arrays.program))
        pyomo = "           -"
        if jobs <= args.skip_pyomo_above:
            _, pyomo_s, pyomo_mb = timed(partial(oasis.build, inst))
            pyomo = f"{pyomo_s:7.2f} ({pyomo_mb:4.0f})"
        print(f"{size:9} {arrays.num_columns:8} {len(arrays.program.row_lower):7}   {pyomo}   "
              f"{array_s:6.2f} ({array_mb:4.0f})   {raw_s:18.2f}   {array_s / raw_s:8.2f}x")


if __name__ == "__main__":
    main()
