"""`mlsched solve FILE.lp` against the number of columns: generated knapsack and multiple-choice
(assignment-like) model files from 10^3 to 10^6 columns, without and with verification.

    python benchmarks/model_file_speed.py [--columns 1000 10000 100000 1000000] [--kinds knapsack choice]
                                          [--time-limit 5] [--file MODEL.lp ...]

Each row: the file, its columns, the status, wall and CPU seconds of the whole call (reading and
checking the file, HiGHS, the verifier, checking the solutions), HiGHS's own run, and the wall
seconds per 1,000 columns outside HiGHS's run. The solves stop at the time limit (the verifier gets
what HiGHS leaves of it), so a linear call keeps that last figure flat as the columns grow.
``--file`` adds model files of one's own (e.g. one written by ``mlsched solve INSTANCE --write``).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from mlsched.model_files import solve_model_file

GROUP = 10   # columns per choice row in the multiple-choice model


def write_knapsack(path: Path, columns: int, seed: int = 0) -> Path:
    """max sum v_j x_j s.t. sum w_j x_j <= half the total weight, x binary."""
    rng = np.random.default_rng(seed)
    value, weight = rng.integers(1, 100, columns), rng.integers(1, 100, columns)
    names = [f"x{j}" for j in range(columns)]
    lines = ["maximize", " obj:", *(f" + {v} {n}" for v, n in zip(value, names)),
             "subject to", " capacity:", *(f" + {w} {n}" for w, n in zip(weight, names)),
             f" <= {int(weight.sum()) // 2}", "binary", *(f" {n}" for n in names), "end"]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_choice(path: Path, columns: int, seed: int = 0) -> Path:
    """Each of columns / GROUP items goes to at most one of GROUP places (x binary), maximising
    the values of the placements. (With a capacity per place as well, HiGHS 1.16 spends 52 s
    before its first node on 30,000 columns, past a 5 s limit; this benchmark is about what
    happens after the solve.)"""
    rng = np.random.default_rng(seed)
    items = columns // GROUP
    value = rng.integers(1, 100, (items, GROUP))
    lines = ["maximize", " obj:", *(f" + {value[i, k]} x{i}_{k}" for i in range(items) for k in range(GROUP)),
             "subject to", *(f" item{i}: " + " + ".join(f"x{i}_{k}" for k in range(GROUP)) + " <= 1"
                             for i in range(items)),
             "binary", *(f" x{i}_{k}" for i in range(items) for k in range(GROUP)), "end"]
    path.write_text("\n".join(lines) + "\n")
    return path


WRITERS = {"knapsack": write_knapsack, "choice": write_choice}


def measure(path: Path, columns: int, time_limit: float, verify: bool) -> str:
    wall, cpu = time.perf_counter(), time.process_time()
    report = solve_model_file(path, time_limit=time_limit, verify=verify)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    outside = (wall - report.solve_seconds) / columns * 1000
    return (f"{path.name:28} {columns:9} {'yes' if verify else 'no':6} {report.status.value:12} {wall:8.2f} {cpu:8.2f} "
            f"{report.solve_seconds:8.2f} {outside:12.4f}")


def columns_of(path: Path) -> int:
    from mlsched.model_files import read_model_file

    return int(read_model_file(path, None).getLp().num_col_)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--columns", type=int, nargs="+", default=[1_000, 10_000, 100_000, 1_000_000])
    parser.add_argument("--kinds", nargs="+", default=list(WRITERS), choices=list(WRITERS))
    parser.add_argument("--time-limit", type=float, default=5.0)
    parser.add_argument("--file", type=Path, nargs="*", default=[], help="model files of one's own")
    args = parser.parse_args()
    print(f"time limit {args.time_limit:g} s per call (both solvers together when verifying)")
    print(f"{'file':28} {'columns':>9} {'verify':6} {'status':12} {'wall s':>8} {'CPU s':>8} {'HiGHS s':>8} "
          f"{'s/1k cols outside HiGHS':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        files = [(WRITERS[kind](Path(tmp) / f"{kind}-{n}.lp", n), n) for kind in args.kinds for n in args.columns]
        files += [(path, columns_of(path)) for path in args.file]
        for path, columns in files:
            for verify in (False, True):
                print(measure(path, columns, args.time_limit, verify), flush=True)


if __name__ == "__main__":
    main()
