"""Gavel's Philly trace (1,181 jobs, ``gavel-philly-vc-0e4a51``) on Gavel's heterogeneous cluster
(36 V100 + 36 P100 + 36 K80) through the Themis simulator: ``gavel-ftf`` (Gavel's
finish-time-fairness policy, 360 s rounds), ``themis`` and ``tiresias`` (10-minute leases).

For each policy, in a fresh process: CPU seconds (``time.process_time``) and wall seconds of the
simulation and of the independent checker, peak memory (max resident set), rounds, max rho and
mean job completion time. Gavel itself needs about 7 CPU minutes for its FTF policy on this trace;
the goal for ``gavel-ftf`` here is at least 10x less. ``--cpu-limit S`` stops a simulation after S
CPU seconds and reports how far it got (simulated time, apps finished), as it does for a simulation
that fails (its error printed). HiGHS runs on
``--solver-threads`` threads (default 1, 0 for HiGHS's default; Themis's auctions too, whose own
default is 1): Themis's auctions are thousands of small MILPs, for which HiGHS's default thread
pool only adds CPU time spent waiting (the run record is the same). ``--apps N`` runs the first N
jobs of the trace.

``--record FILE`` writes each policy's run record to FILE (``.gz``: gzip-compressed), one JSON
document keyed by policy; an existing FILE is refused (exit 2) unless ``--force``. Per policy:
``summary`` (the printed figures), ``gpu_types`` (the type of every GPU id) and ``apps``, one row
per app: name (``j{n}``: the trace's line n + 1), arrival, finish, T_id, N_avg (T_id min(R_C, D) / W),
rho, work W (serial seconds on one reference GPU), cap (GPUs), speeds by type, first_gpu (when it
first held a GPU) and gpu_seconds; and ``holdings``, every [app, gpu, start, end] (end null for a
GPU still held when a CPU limit stopped the run; then finish, T_id and rho are null for the apps
not finished).

    python benchmarks/gavel_trace.py [--policies gavel-ftf themis tiresias] [--apps N] [--gpus 108]
                                     [--cpu-limit S] [--trace FILE] [--solver-threads 1]
                                     [--record FILE [--force]]
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np


class OutOfTime(Exception):
    pass


def _stop(*_: object) -> None:
    raise OutOfTime


def run_record(engine) -> dict:
    """The apps and holdings of a simulation, finished or stopped (module docstring)."""
    inst = engine.instance
    holdings = [[h.app, h.gpu, h.start, h.end] for h in engine.holdings]
    holdings += [[s.index, g, since, None] for s in engine.states for g, since in sorted(s.held_since.items())]
    first: dict[int, float] = {}
    used: dict[int, float] = {}
    for app, _, start, end in holdings:
        first[app] = min(first.get(app, math.inf), start)
        used[app] = used.get(app, 0.0) + ((engine.now if end is None else end) - start)
    rows = []
    for s in engine.states:
        app, t_id = s.app, float(engine.finish_t_id[s.index])
        done = s.finish is not None
        rows.append({"name": app.name, "arrival": app.arrival, "finish": s.finish, "t_id": t_id if done else None,
                     "n_avg": t_id * min(inst.num_gpus, app.demand) / app.work if done else None,
                     "rho": (s.finish - app.arrival) / t_id if done else None, "work": app.work, "cap": app.demand,
                     "speeds": app.speed_of, "first_gpu": first.get(s.index), "gpu_seconds": used.get(s.index, 0.0)})
    return {"gpu_types": list(inst.topology.gpu_types), "apps": rows, "holdings": holdings}


def write_records(path: str, records: dict, force: bool) -> None:
    from mlsched.fileio import write_atomic

    def write(tmp: str) -> None:
        text = json.dumps(records).encode()
        Path(tmp).write_bytes(gzip.compress(text) if path.endswith(".gz") else text)

    write_atomic(path, write, force=force)


def one(policy_name: str, apps: int | None, gpus: int, cpu_limit: float | None, trace: str | None,
        solver_threads: int, record: bool = False) -> dict:
    from mlsched.errors import MlschedError
    from mlsched.instance.generators.gavel import generate_gavel
    from mlsched.metrics import themis_summary
    from mlsched.sim.event_check import assert_valid_run
    from mlsched.sim.event_engine import EventEngine, SimOptions
    from mlsched.solve import set_solver_threads
    from mlsched.systems import get_system

    set_solver_threads(solver_threads or None)
    inst = generate_gavel(trace=trace, gpus=gpus, apps=apps)
    policy = get_system("themis").policy(policy_name)
    if hasattr(policy, "solver_threads"):   # Themis's auctions (its own default is 1 thread)
        policy.solver_threads = solver_threads or None
    options = SimOptions(lease=getattr(policy, "default_lease", SimOptions.lease))
    engine = EventEngine(inst, policy, options)
    row: dict = {"policy": policy_name, "apps": len(inst.apps), "gpus": inst.num_gpus, "lease": options.lease,
                 "solver_threads": solver_threads}
    cpu, wall = time.process_time(), time.perf_counter()
    if cpu_limit:
        signal.signal(signal.SIGPROF, _stop)
        signal.setitimer(signal.ITIMER_PROF, cpu_limit)
    try:
        run = engine.run()
    except (OutOfTime, MlschedError) as stop:   # the CPU limit, or a failure inside the simulation
        finished = sum(s.finish is not None for s in engine.states)
        row.update(finished=False, error=str(stop) or None, sim_cpu_s=time.process_time() - cpu, sim_wall_s=time.perf_counter() - wall,
                   simulated_days=engine.now / 86400, apps_finished=finished, rounds=engine.rounds,
                   peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
        if record:
            row["record"] = run_record(engine)
        return row
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
    row.update(finished=True, sim_cpu_s=time.process_time() - cpu, sim_wall_s=time.perf_counter() - wall)
    cpu, wall = time.process_time(), time.perf_counter()
    assert_valid_run(run)
    row.update(check_cpu_s=time.process_time() - cpu, check_wall_s=time.perf_counter() - wall)
    summary = themis_summary(run)
    jct = run.finish - np.array([a.arrival for a in inst.apps])
    row.update(rounds=run.rounds, max_rho=summary["max_rho"], median_rho=summary["median_rho"],
               mean_jct_hours=float(jct.mean() / 3600), makespan_days=float(np.nanmax(run.finish) / 86400),
               gpu_hours=summary["gpu_hours"], stats={k: v for k, v in run.stats.items() if not isinstance(v, dict)},
               peak_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if record:
        row["record"] = run_record(engine)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", nargs="+", default=["gavel-ftf", "themis", "tiresias"])
    parser.add_argument("--apps", type=int, default=None, help="first N jobs of the trace (default all 1,181)")
    parser.add_argument("--gpus", type=int, default=108, help="GPUs, split equally over V100, P100, K80")
    parser.add_argument("--cpu-limit", type=float, default=None, help="CPU seconds per simulation")
    parser.add_argument("--trace", default=None, help="a Gavel trace (default: the shipped Philly trace)")
    parser.add_argument("--solver-threads", type=int, default=1, help="HiGHS threads (0: HiGHS's default)")
    parser.add_argument("--record", metavar="FILE", help="write each policy's run record (JSON; .gz compressed)")
    parser.add_argument("--force", action="store_true", help="overwrite the --record FILE if it exists")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.apps, args.gpus, args.cpu_limit, args.trace, args.solver_threads,
                             record=bool(args.record))))
        return
    if args.record and Path(args.record).exists() and not args.force:
        print(f"{args.record}: exists; pass --force to overwrite it", file=sys.stderr)   # before any simulation
        sys.exit(2)
    records: dict = {}
    for name in args.policies:
        command = [sys.executable, __file__, "--one", name, "--gpus", str(args.gpus),
                   "--solver-threads", str(args.solver_threads)]
        for flag, value in (("--apps", args.apps), ("--cpu-limit", args.cpu_limit), ("--trace", args.trace),
                            ("--record", args.record)):
            if value is not None:
                command += [flag, str(value)]
        row = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
        if args.record:
            records[name] = {"summary": {k: v for k, v in row.items() if k != "record"}, **row.pop("record")}
        head = (f"{name}: {row['apps']} jobs on {row['gpus']} GPUs, lease/round {row['lease']:g} s, "
                f"HiGHS threads {row['solver_threads'] or 'default'}")
        if not row["finished"]:
            print(f"{head}: {'failed (' + row['error'] + ')' if row['error'] else 'stopped'} after {row['sim_cpu_s']:.1f} CPU s ({row['sim_wall_s']:.1f} s wall) at "
                  f"{row['simulated_days']:.1f} simulated days, {row['apps_finished']} jobs finished, "
                  f"{row['rounds']} rounds, peak {row['peak_mb']:.0f} MB")
            continue
        print(f"{head}\n  simulation {row['sim_cpu_s']:.1f} CPU s ({row['sim_wall_s']:.1f} s wall), checker "
              f"{row['check_cpu_s']:.1f} CPU s ({row['check_wall_s']:.1f} s wall), peak {row['peak_mb']:.0f} MB, "
              f"{row['rounds']} rounds\n  max rho {row['max_rho']:.3f}, median rho {row['median_rho']:.3f}, "
              f"mean JCT {row['mean_jct_hours']:.2f} h, makespan {row['makespan_days']:.1f} days, "
              f"GPU hours {row['gpu_hours']:.0f}" + (f"\n  {row['stats']}" if row["stats"] else ""))
        if name == "gavel-ftf" and args.apps is None and math.isclose(args.gpus, 108):
            print(f"  Gavel: about 420 CPU s for its FTF policy on this trace (goal here <= 42 CPU s): "
                  f"{420 / row['sim_cpu_s']:.1f}x less")
    if args.record:
        write_records(args.record, records, args.force)
        print(f"run records written to {args.record}")


if __name__ == "__main__":
    main()
