"""OgaSched speed: the Fig. 2 run (T = 8000, 10 job types, 128 nodes; goal < 60 s end to end),
the large-scale Fig. 5 run (100 job types, 1024 nodes, T = 10000; goal < 10 min) with the
per-slot decision time (gradient plus projection), and the hindsight optimum of the default
setting (goal < 60 s).

    python benchmarks/ogasched_speed.py [--skip-large]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlsched.exact import exact_ogasched
from mlsched.instance.generators.ogasched import generate_ogasched
from mlsched.online.ogasched import OgaSched
from mlsched.sim.multi_engine import run_slots


def timed_run(preset: str, seed: int = 0) -> None:
    tick = time.perf_counter()
    inst = generate_ogasched(seed, preset_name=preset)
    run = run_slots(inst, OgaSched())
    wall = time.perf_counter() - tick
    print(f"{preset}: {inst.num_ports} job types, {inst.num_nodes} nodes, {len(inst.channels)} channels, "
          f"T = {inst.horizon}: end to end {wall:.1f} s; per-slot decision (gradient + projection) median "
          f"{1e3 * np.median(run.decision_seconds):.2f} ms, p95 {1e3 * np.percentile(run.decision_seconds, 95):.2f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    timed_run("fig2")
    if not args.skip_large:
        timed_run("large")
    inst = generate_ogasched(0)
    tick = time.perf_counter()
    report = exact_ogasched(inst)
    print(f"hindsight optimum, default setting (T = {inst.horizon}): {report.status.value}, Q(y*) = "
          f"{report.objective:.6g}, {time.perf_counter() - tick:.2f} s (cvxpy/Clarabel plus the HiGHS LP cross-check)")


if __name__ == "__main__":
    main()
