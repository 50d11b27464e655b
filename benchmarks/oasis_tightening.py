"""The OASiS program before and after the earliest-completion bounds (u_i(t) only from t_i^min,
docs/decisions.md "Upper bounds (OASiS)"): LP relaxation bound, and what HiGHS and SCIP reach
within the time limit (status, incumbent, bound), per size and seed on the feasible profile.

    python benchmarks/oasis_tightening.py [--sizes 10x10 30x30 50x50] [--seeds 0 1 2] [--time-limit 60]
        [--solvers highs scip]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
from mlsched.instance.generators import generate_oasis
from mlsched.solve import scip_available, solve_arrays, write_model


def scip(built, limit: float) -> tuple[str, float | None, float | None, float]:
    """SCIP on the model file: status, incumbent, bound, seconds."""
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=["10x10", "30x30", "50x50"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--solvers", nargs="+", default=["highs", "scip"], choices=["highs", "scip"])
    args = parser.parse_args()
    print(f"feasible profile, OPT_paper, time limit {args.time_limit:g} s (CPU s in brackets)")
    print("size      seed  program    LP bound   solver  status        incumbent      bound")
    for size in args.sizes:
        jobs, horizon = (int(v) for v in size.split("x"))
        for seed in args.seeds:
            inst = generate_oasis(jobs=jobs, horizon=horizon, seed=seed, profile="feasible")
            for earliest in (False, True):
                label = "tightened" if earliest else "plain"
                lp = solve_arrays(build_arrays(inst, relax=True, earliest=earliest).program)
                head = f"{size:9s} {seed:4d}  {label:9s} {fmt(lp.objective)}"
                if "highs" in args.solvers:
                    tick = time.process_time()
                    r = solve_arrays(build_arrays(inst, earliest=earliest).program, time_limit=args.time_limit)
                    print(f"{head}   highs   {r.status.value:10s} {fmt(r.objective)} {fmt(r.bound)}"
                          f"  [{time.process_time() - tick:.0f}]", flush=True)
                if "scip" in args.solvers and scip_available():
                    status, objective, bound, seconds = scip(oasis.build(inst, earliest=earliest), args.time_limit)
                    print(f"{head}   scip    {status:10s} {fmt(objective)} {fmt(bound)}  [{seconds:.0f}]", flush=True)


if __name__ == "__main__":
    main()
