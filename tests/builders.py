"""Tiny cluster-jobs instances built in code for hand-checked tests (spec §7.1 conventions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsched.instance import ClusterJobsInstance, from_dict


def job(job_id: str, *, arrival: int = 1, epochs: int = 1, chunks: int = 1, minibatches: int = 1,
        minibatch_time: float = 1.0, worker: dict[str, float] | None = None, ps: dict[str, float] | None = None,
        bandwidth: tuple[float, float] = (1, 1), utility: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "id": job_id, "arrival": arrival, "epochs": epochs, "chunks": chunks, "minibatches": minibatches,
        "minibatch_time": minibatch_time, "worker_demand": {"cpu": 1} if worker is None else worker,
        "ps_demand": {"cpu": 1} if ps is None else ps,
        "bandwidth": {"worker": bandwidth[0], "ps": bandwidth[1]},
        "utility": utility or {"kind": "linear", "intercept": 10, "slope": 1},
    }


def cluster(jobs: list[dict[str, Any]], *, horizon: int, workers: list[dict[str, float]],
            ps: list[dict[str, float]], resources: tuple[str, ...] = ("cpu",), name: str = "test") -> ClusterJobsInstance:
    return from_dict({
        "format": "mlsched/v1", "family": "cluster-jobs", "name": name, "horizon": horizon,
        "resources": list(resources),
        "worker_servers": [{"name": f"w{n + 1}", "capacity": c} for n, c in enumerate(workers)],
        "ps_servers": [{"name": f"p{n + 1}", "capacity": c} for n, c in enumerate(ps)],
        "jobs": jobs,
    })


def random_tiny(rng: np.random.Generator, *, jobs: int = 3, horizon: int = 3, workers: int = 1, ps: int = 1,
                resources: tuple[str, ...] = ("cpu",), max_chunks: int = 3) -> ClusterJobsInstance:
    """Small random instances with integer demands and contention (for brute force and invariants)."""
    specs = []
    for n in range(jobs):
        utility = rng.choice(["linear", "constant", "sigmoid"])
        if utility == "linear":
            u = {"kind": "linear", "intercept": float(rng.integers(3, 20)), "slope": float(rng.integers(0, 4))}
        elif utility == "constant":
            u = {"kind": "constant", "value": float(rng.integers(1, 20))}
        else:
            u = {"kind": "sigmoid", "gamma1": float(rng.uniform(1, 20)), "gamma2": float(rng.uniform(0, 3)),
                 "gamma3": float(rng.integers(0, 3))}
        b = int(rng.integers(1, 3))
        specs.append(job(
            str(n + 1), arrival=int(rng.integers(1, horizon + 1)), epochs=int(rng.integers(1, 3)),
            chunks=int(rng.integers(1, max_chunks + 1)), minibatches=1,
            minibatch_time=float(rng.choice([0.5, 0.6, 1.0, 1.5])),
            worker={r: int(rng.integers(1, 3)) for r in resources},
            ps={r: int(rng.integers(0, 2)) for r in resources}, bandwidth=(b, int(rng.integers(b, 4))), utility=u))
    caps = [{r: int(rng.integers(2, 6)) for r in resources} for _ in range(workers)]
    pcaps = [{r: int(rng.integers(1, 4)) for r in resources} for _ in range(ps)]
    return cluster(specs, horizon=horizon, workers=caps, ps=pcaps, resources=resources, name="random-tiny")


def multi_server(*, ports: list[dict[str, float]], nodes: list[dict[str, float]], channels: list[list[int]],
                 beta: dict[str, float], slots: list[list[int]], alpha: list[dict[str, float]] | None = None,
                 utility: str = "linear", resources: tuple[str, ...] = ("cpu",)):
    """A multi-server instance with explicit arrivals (one list of arrived ports per slot)."""
    return from_dict({
        "format": "mlsched/v1", "family": "multi-server", "name": "test", "horizon": len(slots),
        "resources": list(resources),
        "ports": [{"name": f"l{n}", "request": a} for n, a in enumerate(ports)],
        "nodes": [{"name": f"r{n}", "capacity": c, "alpha": (alpha[n] if alpha else {k: 1.0 for k in resources}),
                   "utility": {k: utility for k in resources}} for n, c in enumerate(nodes)],
        "channels": channels, "beta": beta, "arrivals": {"kind": "explicit", "slots": slots},
    })
