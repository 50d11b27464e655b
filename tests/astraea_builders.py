"""Multi-tenant instances of the Astraea spec's oracles (§7), built in code."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsched.instance import MultiTenantInstance, from_dict


def job(job_id: str, owner: str, *, arrival: int, chunks: int, epochs: int = 1, minibatches: int = 1,
        central: float = 1.0, distributed: float = 1.0, k: float = -1.0, g: float = 100.0) -> dict[str, Any]:
    return {"id": job_id, "owner": owner, "arrival": arrival, "epochs": epochs, "chunks": chunks,
            "minibatches": minibatches, "rates": {"centralized": central, "distributed": distributed},
            "utility": {"kind": "affine", "k": k, "g": g}}


def system(jobs: list[dict[str, Any]], *, servers: list[tuple[int, int]], tenants: list[tuple[int, int]],
           bandwidth: tuple[float, float] = (1, 1), name: str = "t", **extra: Any) -> MultiTenantInstance:
    return from_dict({
        "format": "mlsched/v1", "family": "multi-tenant", "name": name,
        "servers": [{"name": f"s{n + 1}", "workers": w, "ps": p} for n, (w, p) in enumerate(servers)],
        "tenants": [{"name": f"u{n + 1}", "workers": w, "ps": p} for n, (w, p) in enumerate(tenants)],
        "bandwidth": {"worker": bandwidth[0], "ps": bandwidth[1]}, "jobs": jobs, **extra})


def ex(jobs: tuple[str, ...] = ("j11", "j12", "j21", "j22"), tenants=((4, 2), (4, 2)),
       horizon: int | None = None) -> MultiTenantInstance:
    """The paper's example EX (spec §7): 2 tenants, 4 servers of 2 workers and 1 PS, r = 3, E = 2,
    M = 1, n^cent = 1, n^dist = 0.5, phi(x) = -2x + 100; D: j11 2, j12 3, j21 2, j22 30."""
    chunks = {"j11": 2, "j12": 3, "j21": 2, "j22": 30}
    return system([job(j, "u1" if j.startswith("j1") else "u2", arrival=3, chunks=chunks[j], epochs=2,
                       central=1.0, distributed=0.5, k=-2, g=100) for j in jobs],
                  servers=[(2, 1)] * 4, tenants=list(tenants), name="EX",
                  **({} if horizon is None else {"horizon": horizon}))


def random_instance(seed: int, *, max_tenants: int = 3, max_servers: int = 6, max_jobs: int = 10,
                    max_arrival: int = 6, slope: tuple[float, float] = (0.5, 4.0)) -> MultiTenantInstance:
    """A random small instance (spec §7.6: U <= 3, S <= 6, N <= 10) with quotas that split the
    cluster exactly and affine utilities worth running for a while (g / |k| slots; a steeper
    ``slope`` keeps the offline program's horizon short)."""
    rng = np.random.default_rng(seed)
    n_servers, n_tenants = int(rng.integers(1, max_servers + 1)), int(rng.integers(1, max_tenants + 1))
    servers = [(int(rng.integers(1, 5)), int(rng.integers(1, 3))) for _ in range(n_servers)]

    def split(total: int) -> list[int]:
        cuts = np.sort(rng.integers(0, total + 1, size=n_tenants - 1))
        return np.diff(np.concatenate([[0], cuts, [total]])).astype(int).tolist()

    q_w, q_p = split(sum(w for w, _ in servers)), split(sum(p for _, p in servers))
    jobs = []
    for n in range(int(rng.integers(1, max_jobs + 1))):
        central = float(rng.choice([0.5, 1.0, 2.0]))
        jobs.append(job(f"j{n + 1}", f"u{int(rng.integers(n_tenants)) + 1}", arrival=int(rng.integers(0, max_arrival + 1)),
                        chunks=int(rng.integers(1, 5)), epochs=int(rng.integers(1, 3)),
                        minibatches=int(rng.integers(1, 3)), central=central,
                        distributed=central * float(rng.choice([0.5, 0.8, 1.0])),
                        k=-float(rng.uniform(*slope)), g=float(rng.uniform(20, 100))))
    return system(jobs, servers=servers, tenants=list(zip(q_w, q_p)),
                  bandwidth=(1.0, float(rng.choice([0.5, 1.0, 2.0]))), name=f"random-{seed}")
