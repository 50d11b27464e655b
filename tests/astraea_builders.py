"""Multi-tenant instances of the Astraea spec's oracles (§7), built in code."""

from __future__ import annotations

from typing import Any


from mlsched.instance import MultiTenantInstance, from_dict


def job(job_id: str, owner: str, *, arrival: int, chunks: int, epochs: int = 1, minibatches: int = 1,
        central: float = 1.0, distributed: float = 1.0, k: float = -1.0, g: float = 100.0) -> dict[str, Any]:
    return {"id": job_id, "owner": owner, "arrival": arrival, "epochs": epochs, "chunks": chunks,
            "minibatches": minibatches, "rates": {"centralized": central, "distributed": distributed},
            "utility": {"kind": "affine", "k": k, "g": g}}


def system(jobs: list[dict[str, Any]], *, servers: list[tuple[int, int]], tenants: list[tuple[int, int]],
           bandwidth: tuple[float, float] = (1, 1), name: str = "t", partitions: list[list[int]] | None = None,
           **extra: Any) -> MultiTenantInstance:
    """``partitions[u]``: the 0-based servers tenant u owns (none named when omitted)."""
    owned = [{"servers": [f"s{s + 1}" for s in part]} for part in partitions] if partitions else [{}] * len(tenants)
    return from_dict({
        "format": "mlsched/v1", "family": "multi-tenant", "name": name,
        "servers": [{"name": f"s{n + 1}", "workers": w, "ps": p} for n, (w, p) in enumerate(servers)],
        "tenants": [{"name": f"u{n + 1}", "workers": w, "ps": p, **owned[n]} for n, (w, p) in enumerate(tenants)],
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
