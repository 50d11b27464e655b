"""Where one time-limited OASiS exact call spends its time: the runs' schedules as MIP starts,
then `exact_oasis(..., time_limit=S, starts=...)`, printing each logged step (`report.steps`) with
the seconds it was granted and took, the call's wall and CPU time (this process's; the MILP of
programs above 100,000 columns runs in a child process) and its interval.

    python benchmarks/oasis_exact_steps.py INSTANCE.json [--time-limit 60]
"""

from __future__ import annotations

import argparse
import resource
import time

from mlsched import sim
from mlsched.exact import exact_oasis
from mlsched.instance import load
from mlsched.systems import get_system

ALGORITHMS = ("oasis", "fifo", "drf", "rrh")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("instance")
    parser.add_argument("--time-limit", type=float, default=60.0)
    args = parser.parse_args()
    inst = load(args.instance)
    sysm = get_system(family=inst.family)
    starts = []
    for name in ALGORITHMS:
        tick = time.perf_counter()
        starts.append(sim.run(inst, sysm.policy(name)).schedule)
        print(f"{name}: {time.perf_counter() - tick:.1f} s", flush=True)
    tick, cpu = time.perf_counter(), time.process_time()
    report = exact_oasis(inst, time_limit=args.time_limit, starts=starts)
    wall = time.perf_counter() - tick
    print(f"exact: wall {wall:.1f} s (over {wall - args.time_limit:+.1f}), CPU {time.process_time() - cpu:.1f} s, "
          f"{report.status.value}, [{report.objective}, {report.bound}] ({report.bound_source})")
    for step in report.steps:
        granted = "-" if step.granted is None else f"{step.granted:.1f}"
        print(f"  {step.name:26} granted {granted:>6} s  took {step.seconds:6.1f} s")
    print(f"peak {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB (this process)")


if __name__ == "__main__":
    main()
