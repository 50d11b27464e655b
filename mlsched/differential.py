"""Differential testing of exact programs: seeded random tiny instances solved by HiGHS (default
options), SCIP (through the LP file of the same model) and a brute-force enumeration written
independently of the formulation. Counts agreements and disagreements by kind.

Programs covered: OASiS OPT_paper and OPT_chunk. A disagreement is kept with its seed so it can
be minimised into a regression case under ``tests/regressions/``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.instance import ClusterJobsInstance, from_dict
from mlsched.solve import Status, solve

TOLERANCE = 1e-6


def random_oasis_instance(rng: np.random.Generator) -> ClusterJobsInstance:
    """1 worker + 1 PS server, 2-4 jobs, T = 2-3, 1-2 resources: tiny enough to enumerate."""
    resources = ["r1", "r2"][: int(rng.integers(1, 3))]
    jobs = []
    horizon = int(rng.integers(2, 4))
    for n in range(int(rng.integers(2, 5))):
        b = int(rng.integers(1, 4))
        kind = rng.choice(["table", "sigmoid", "linear"])
        if kind == "table":
            values = np.sort(rng.uniform(0, 12, size=horizon))[::-1].round(6).tolist()
            utility = {"kind": "table", "values": values}
        elif kind == "sigmoid":
            utility = {"kind": "sigmoid", "gamma1": float(rng.uniform(1, 20)), "gamma2": float(rng.uniform(0, 2)),
                       "gamma3": float(rng.integers(0, 3))}
        else:
            utility = {"kind": "linear", "intercept": float(rng.integers(1, 15)), "slope": float(rng.integers(0, 5))}
        worker = {r: int(rng.integers(0, 3)) for r in resources}
        if not any(worker.values()):
            worker[resources[0]] = 1
        jobs.append({
            "id": str(n), "arrival": int(rng.integers(1, horizon + 1)), "epochs": int(rng.integers(1, 3)),
            "chunks": int(rng.integers(1, 4)), "minibatches": 1,
            "minibatch_time": float(rng.choice([0.3, 0.5, 0.6, 1.0, 1.5, 2.0, 4.0])),
            "worker_demand": worker, "ps_demand": {r: int(rng.integers(0, 3)) for r in resources},
            "bandwidth": {"worker": b, "ps": int(rng.integers(b, 5))}, "utility": utility,
        })
    return from_dict({
        "format": "mlsched/v1", "family": "cluster-jobs", "name": "differential", "horizon": horizon,
        "resources": resources,
        "worker_servers": [{"name": "w", "capacity": {r: int(rng.integers(1, 7)) for r in resources}}],
        "ps_servers": [{"name": "p", "capacity": {r: int(rng.integers(1, 7)) for r in resources}}],
        "jobs": jobs,
    })


@dataclass
class Tally:
    program: str
    instances: int = 0
    agreements: int = 0
    disagreements: Counter = field(default_factory=Counter)
    cases: list[tuple[int, str]] = field(default_factory=list)


def _oasis_program(variant: str) -> Callable[[ClusterJobsInstance], tuple[float | None, float | None, float]]:
    def run(inst: ClusterJobsInstance) -> tuple[float | None, float | None, float]:
        highs = solve(oasis.build(inst, variant=variant))
        scip = solve(oasis.build(inst, variant=variant), verify=True)
        truth = bruteforce.oasis_opt(inst, variant=variant)
        highs_value = highs.objective if highs.status is Status.OPTIMAL else None
        scip_value = scip.verifier_objective
        return highs_value, scip_value, truth
    return run


PROGRAMS: dict[str, Callable[[ClusterJobsInstance], tuple[float | None, float | None, float]]] = {
    "oasis-opt_paper": _oasis_program("paper"),
    "oasis-opt_chunk": _oasis_program("chunk"),
}
GENERATORS: dict[str, Callable[[np.random.Generator], ClusterJobsInstance]] = {
    "oasis-opt_paper": random_oasis_instance,
    "oasis-opt_chunk": random_oasis_instance,
}


def differential(program: str, count: int, *, seed: int = 0) -> Tally:
    """Run ``count`` seeded instances of ``program`` through HiGHS, SCIP and brute force."""
    tally = Tally(program)
    run = PROGRAMS[program]
    for k in range(count):
        inst = GENERATORS[program](np.random.default_rng([seed, k]))
        highs, scip, truth = run(inst)
        tally.instances += 1
        kinds = []
        if highs is None or abs(highs - truth) > TOLERANCE * max(1.0, abs(truth)):
            kinds.append("highs-vs-bruteforce")
        if scip is None or abs(scip - truth) > TOLERANCE * max(1.0, abs(truth)):
            kinds.append("scip-vs-bruteforce")
        if not kinds:
            tally.agreements += 1
        for kind in kinds:
            tally.disagreements[kind] += 1
            tally.cases.append((k, kind))
    return tally
