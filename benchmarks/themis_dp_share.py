"""How much of a Themis simulation's auction work the machine DP takes (decision A8c): the CPU
time of the simulation and of its PA auctions (``pa_auction``), how many auctions with two or more
bidders the DP answered whole, priced only (the fewest-GPU re-solve picks among exact ties) or
declined, and its own CPU time, and the run-record fingerprint (compare it with a run
of the code before the DP, which prints no DP counts: ``PYTHONPATH=<that tree> python
benchmarks/themis_dp_share.py ...``). HiGHS on one thread; checker off.

    python benchmarks/themis_dp_share.py gavel 100     # the first 100 jobs of Gavel's trace, gavel108
    python benchmarks/themis_dp_share.py w1 400        # the first 400 W1 apps, 64 GPUs, 600 s leases
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any


def timed(stats: Counter, name: str, function: Callable[..., Any],
          outcome: Callable[[Any], str] | None = None) -> Callable[..., Any]:
    """``function`` counting its calls, CPU time and (with ``outcome``) its results by kind into ``stats``."""
    def run(*args: Any, **kwargs: Any) -> Any:
        tick = time.process_time()
        result = function(*args, **kwargs)
        stats[f"{name} calls"] += 1
        if outcome is not None:
            stats[f"{name} {outcome(result)}"] += 1
        stats[f"{name} CPU s"] += time.process_time() - tick
        return result
    return run


def dp_outcome(answer: Any) -> str:
    """What the machine DP gave an auction: its allocation and values, its values only (the
    re-solve picks among exact ties), or nothing (beyond its caps)."""
    if answer is None:
        return "declined (beyond its caps)"
    return "priced, allocation re-solved" if getattr(answer, "rows", ()) is None else "answered whole"


def main() -> None:
    import mlsched.formulations.themis as themis
    import mlsched.online.themis.bids as bids
    from mlsched.sim.event_engine import SimOptions, simulate
    from mlsched.solve import set_solver_threads
    from mlsched.systems import get_system

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from themis_fingerprints import fingerprint

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workload", choices=("gavel", "w1"))
    parser.add_argument("apps", type=int)
    args = parser.parse_args()
    set_solver_threads(1)
    stats: Counter = Counter()
    bids.pa_auction = timed(stats, "pa_auction", bids.pa_auction)
    if hasattr(themis, "machine_dp"):
        themis.machine_dp = timed(stats, "machine DP", themis.machine_dp, outcome=dp_outcome)
    policy = get_system("themis").policy("themis")
    if args.workload == "w1":
        from mlsched.instance.generators.themis import generate_themis
        inst, options = generate_themis(workload="W1", gpus=64, apps=args.apps), SimOptions(lease=600.0)
    else:
        from mlsched.instance.generators.gavel import generate_gavel
        inst = generate_gavel(gpus=108, apps=args.apps)
        options = SimOptions(lease=getattr(policy, "default_lease", SimOptions.lease))
    cpu, wall = time.process_time(), time.perf_counter()
    run = simulate(inst, policy, options)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"{args.workload} {args.apps}: {cpu:.1f} CPU s ({wall:.1f} s wall), {run.rounds} rounds, "
          f"fingerprint {fingerprint(run)}")
    for name, value in sorted(stats.items()):
        print(f"  {name}: {value:.2f}" if isinstance(value, float) else f"  {name}: {value}")


if __name__ == "__main__":
    main()
