"""Where a Themis simulation spends its CPU time: a W1 slice (64-GPU testbed, f = 0.8, 10-minute
leases, checker on) under cProfile with a CPU-time clock, split by part (engine, estimator, family
physics, auction programs, bids and arbiter, checker, the rest), each part's own time.

    python benchmarks/themis_sim_profile.py [--apps 300] [--start S] [--policy themis] [--top 15]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from collections import defaultdict

PARTS = (   # (label, path fragment of the functions whose own time it collects), first match wins
    ("engine (sim/event_engine.py)", "sim/event_engine.py"),
    ("checker (sim/event_check.py)", "sim/event_check.py"),
    ("estimator (online/themis/rho.py)", "online/themis/rho.py"),
    ("physics (instance/themis_physics.py)", "instance/themis_physics.py"),
    ("topology (instance/gpu_topology.py)", "instance/gpu_topology.py"),
    ("auction DP (formulations/themis_machine_dp.py)", "formulations/themis_machine_dp.py"),
    ("auction programs (formulations/themis.py, solve.py, HiGHS)", ("formulations/themis.py", "mlsched/solve.py",
                                                                    "highspy")),
    ("bids, arbiter, policy (online/themis/)", "online/themis/"),
    ("baselines (baselines/)", "baselines/"),
)


def part_of(filename: str, function: str) -> str:
    for label, fragments in PARTS:
        for fragment in (fragments,) if isinstance(fragments, str) else fragments:
            if fragment in filename or fragment in function:
                return label
    return "other (numpy, builtins, heapq, ...)"


def main() -> None:
    from mlsched.instance.generators.themis import generate_themis
    from mlsched.sim.event_engine import SimOptions, simulate
    from mlsched.systems import get_system

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--apps", type=int, default=300)
    parser.add_argument("--start", type=float, default=0.0)
    parser.add_argument("--policy", default="themis")
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    inst = generate_themis(workload="W1", gpus=64, apps=args.apps, start=args.start)
    policy = get_system("themis").policy(args.policy)
    profiler = cProfile.Profile(time.process_time)
    cpu, wall = time.process_time(), time.perf_counter()
    profiler.enable()
    run = simulate(inst, policy, SimOptions(lease=600.0))
    profiler.disable()
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    stats = pstats.Stats(profiler)
    split: dict[str, float] = defaultdict(float)
    for (filename, _, function), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        split[part_of(filename, function)] += own
    total = sum(split.values())
    print(f"W1 {inst.describe()}, {args.policy}: {cpu:.1f} CPU s under the profiler ({wall:.1f} s wall), "
          f"{run.rounds} rounds")
    for label, seconds in sorted(split.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:7.2f} CPU s  {seconds / total:5.1%}  {label}")
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
