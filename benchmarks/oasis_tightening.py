"""The OASiS program's strengthenings, each program against the others: the earliest-completion
bounds (u_i(t) only from t_i^min) and the cuts of :func:`mlsched.formulations.oasis.build`
(docs/decisions.md "Upper bounds (OASiS)", "Tighter OASiS program"): LP relaxation bound, and what
HiGHS and SCIP reach within the time limit (status, incumbent, bound, gap), per size and seed on
the feasible profile, with CPU and wall seconds.

    python benchmarks/oasis_tightening.py [--sizes 10x10 30x30 50x50] [--seeds 0 1 2] [--time-limit 60]
        [--solvers highs scip] [--programs plain earliest default all rate completion symmetry]
        [--lagrangian SECONDS]

Programs: "plain" (no strengthening), "earliest" (t_i^min only), "default" (what the builders
build), "all" (t_i^min and every cut), or one cut name (t_i^min and that cut). ``--lagrangian S`` adds the Lagrangian bound
(:mod:`mlsched.oasis_lagrangian`, from the LP's duals, S seconds of subgradient steps
aimed at 0.95 x the LP bound).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
from mlsched.oasis_lagrangian import lagrangian_bound, lp_duals
from mlsched.instance.generators import generate_oasis
from mlsched.solve import scip_available, solve_arrays, write_model


PROGRAMS = ("plain", "earliest", "default", "all", *oasis.CUTS)


def program_options(name: str) -> dict:
    """The builder options of a program named in PROGRAMS."""
    if name == "plain":
        return {"earliest": False, "cuts": ()}
    if name == "earliest":
        return {"cuts": ()}
    if name == "default":
        return {}
    if name == "all":
        return {"cuts": oasis.CUTS}
    return {"cuts": (name,)}


def scip(built, limit: float) -> tuple[str, float | None, float | None, float]:
    """SCIP on the model file: status, incumbent, bound, CPU seconds."""
    from pyscipopt import Model

    with tempfile.TemporaryDirectory() as tmp:
        path = write_model(built, Path(tmp) / "m.lp")
        model = Model()
        model.hideOutput()
        model.readProblem(str(path))
        model.setParam("limits/time", limit)
        model.setParam("limits/gap", 0.0)
        tick = time.process_time()
        model.optimize()
        seconds = time.process_time() - tick
        found = model.getNSols() > 0
        return model.getStatus(), model.getObjVal() if found else None, model.getDualbound(), seconds


def fmt(value: float | None) -> str:
    return f"{value:10.2f}" if value is not None else "         -"


def gap(incumbent: float | None, bound: float | None) -> str:
    if incumbent is None or bound is None or incumbent <= 0:
        return "     -"
    return f"{100 * (bound - incumbent) / incumbent:5.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["10x10", "30x30", "50x50"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solvers", nargs="+", default=["highs", "scip"], choices=["highs", "scip"])
    parser.add_argument("--programs", nargs="+", default=["plain", "default"], choices=PROGRAMS)
    parser.add_argument("--lagrangian", type=float, default=0.0, metavar="SECONDS")
    args = parser.parse_args()
    print(f"feasible profile, OPT_paper, time limit {args.time_limit:g} s (limits are wall-clock; CPU s, wall s)")
    print("size      seed  program     LP bound  LP CPU s  solver  status        incumbent      bound    gap   CPU s  wall s")
    for size in args.sizes:
        jobs, horizon = (int(v) for v in size.split("x"))
        for seed in args.seeds:
            inst = generate_oasis(jobs=jobs, horizon=horizon, seed=seed, profile="feasible")
            for name in args.programs:
                options = program_options(name)
                tick = time.process_time()
                lp, duals = lp_duals(build_arrays(inst, relax=True, **options))
                head = f"{size:9s} {seed:4d}  {name:10s} {fmt(lp)} {time.process_time() - tick:8.1f}"
                if args.lagrangian > 0 and lp is not None:
                    tick = time.process_time()
                    bound, evaluated, _ = lagrangian_bound(inst, "paper", start=duals, target=0.95 * lp, iterations=10**6,
                                                        deadline=time.perf_counter() + args.lagrangian)
                    print(f"{size:9s} {seed:4d}  {name:10s} lagrangian {bound:.2f} after {evaluated} evaluations "
                          f"({time.process_time() - tick:.1f} CPU s)", flush=True)
                if "highs" in args.solvers:
                    tick, wall = time.process_time(), time.perf_counter()
                    r = solve_arrays(build_arrays(inst, **options).program, time_limit=args.time_limit)
                    print(f"{head}   highs   {r.status.value:10s} {fmt(r.objective)} {fmt(r.bound)} "
                          f"{gap(r.objective, r.bound)} {time.process_time() - tick:6.0f} {time.perf_counter() - wall:6.0f}",
                          flush=True)
                if "scip" in args.solvers and scip_available():
                    wall = time.perf_counter()
                    status, objective, bound, seconds = scip(oasis.build(inst, **options), args.time_limit)
                    print(f"{head}   scip    {status:10s} {fmt(objective)} {fmt(bound)} {gap(objective, bound)} "
                          f"{seconds:6.0f} {time.perf_counter() - wall:6.0f}", flush=True)


if __name__ == "__main__":
    main()
