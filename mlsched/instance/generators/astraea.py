"""Astraea's multi-tenant instances from the Microsoft Philly trace (spec §5.1, §5.5, A14).

Source: a Philly job CSV (``timestamp,duration,num_gpus,gpu_time,cluster``). The default is the
two samples shipped in ``mlsched/data/traces/``: every job submitted in [2017-10-01, 2017-10-15)
(the <= 2-GPU rows and the > 2-GPU rows); ``trace`` may name the full copy instead.

1. Tenants: the ``users`` virtual clusters (``cluster``) with the most jobs in the trace (ties by
   id), all of them by default.
2. Jobs: the first ``jobs`` jobs of those tenants in submit order; r_j = ceil((submit - first
   submit) / 1 h) slots; the GPU request g_j^tr = ``num_gpus`` (the baselines' worker count).
3. Servers (A14: the trace has no machine list): ``servers`` servers dealt to the tenants by
   largest remainder in proportion to each tenant's GPU-time over the whole trace (the machines
   it used most; at least one each, ties by tenant order), tenants without a chosen job included; each server draws its GPUs C_sw from ``{2, 4, 8}`` (``paper``) or
   ``{2, 4}`` (``small``) and has C_sp = 1 PS slot ("one CPU per machine"). A tenant's quota is
   what its servers hold, so the quotas sum to the cluster exactly; the tenant entry names its
   servers (its physical partition).
4. Per job, uniform draws (§5.1): ``paper``: E in [50, 100], D in [20, 50], M in [10, 50],
   m in [0.001, 0.05] h, G in [10, 100] ms, eps in [30, 575] MB; ``small`` (exact optima within a
   minute): E in [1, 2], D in [1, 4], M in [1, 3], m in [0.2, 0.6] h, same G and eps.
   Utilities: ``linear`` k in [-2, -0.1], g in [100, 1000] (``small``: k in [-10, -2],
   g in [50, 150], so that g / |k| keeps the program's horizon short); ``convex`` e in [100, 1000],
   kappa in [1, 2]. One b_w in [100, 5120] Mbps and one b_p in [5120, 20480] Mbps per instance.
All draws come from one stream seeded by ``seed``, in job order.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlsched.errors import UsageError
from mlsched.instance.generators.philly import ATTRIBUTION, TIME_FORMAT, read_philly
from mlsched.instance import from_dict
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.resources import data_file

TRACES = Path(str(data_file("traces")))
NARROW_TRACE = TRACES / "philly-2017-10-01-to-15-le2gpu.csv.gz"
WIDE_TRACE = TRACES / "philly-2017-10-01-to-15-gt2gpu.csv.gz"
PROFILES = ("paper", "small")
UTILITIES = ("linear", "convex")
_RANGES = {
    "paper": {"epochs": (50, 100), "chunks": (20, 50), "minibatches": (10, 50), "minibatch_hours": (0.001, 0.05),
              "k": (-2.0, -0.1), "g": (100.0, 1000.0), "gpus": (2, 4, 8)},
    "small": {"epochs": (1, 2), "chunks": (1, 4), "minibatches": (1, 3), "minibatch_hours": (0.2, 0.6),
              "k": (-10.0, -2.0), "g": (50.0, 150.0), "gpus": (2, 4)},
}


def philly_jobs(trace: str | Path | None = None) -> pd.DataFrame:
    """The trace's jobs in the reader's canonical order (the shipped window by default)."""
    if trace is not None:
        return read_philly(trace)
    both = pd.concat([read_philly(NARROW_TRACE), read_philly(WIDE_TRACE)], ignore_index=True)
    return both.sort_values(["submit", "cluster", "num_gpus", "duration", "gpu_time"], kind="stable",
                            ignore_index=True)


def deal_servers(weights: np.ndarray, servers: int) -> np.ndarray:
    """Largest-remainder apportionment of ``servers`` with at least one per tenant."""
    n = len(weights)
    if servers < n:
        raise UsageError(f"servers (--servers) {servers} is fewer than the {n} tenants (each needs a server)")
    share = weights / weights.sum() * (servers - n) if weights.sum() > 0 else np.full(n, (servers - n) / n)
    counts = np.floor(share).astype(np.int64)
    order = np.lexsort((np.arange(n), -(share - counts)))
    counts[order[:servers - n - int(counts.sum())]] += 1
    return counts + 1


def generate_astraea(*, jobs: int = 100, servers: int = 100, users: int | None = None, utility: str = "linear",
                     profile: str = "paper", seed: int = 0, trace: str | Path | None = None,
                     name: str | None = None) -> MultiTenantInstance:
    """A multi-tenant instance by the rules of the module docstring."""
    if profile not in PROFILES:
        raise UsageError(f"profile must be one of {', '.join(PROFILES)}, not {profile!r}")
    if utility not in UTILITIES:
        raise UsageError(f"utility must be one of {', '.join(UTILITIES)}, not {utility!r}")
    if jobs < 1 or servers < 1:
        raise UsageError("jobs and servers (--jobs, --servers) must be at least 1")
    table = philly_jobs(trace)
    counts = table["cluster"].value_counts()
    ranked = sorted(counts.index, key=lambda c: (-int(counts[c]), c))
    if users is not None and not 1 <= users <= len(ranked):
        raise UsageError(f"users (--users) {users}: the trace has {len(ranked)} virtual clusters")
    tenants = ranked[:users] if users is not None else ranked
    chosen = table[table["cluster"].isin(tenants)].head(jobs).reset_index(drop=True)
    rng = np.random.default_rng(seed)
    ranges = _RANGES[profile]
    gpu_time = np.array([table.loc[table["cluster"] == c, "gpu_time"].sum() for c in tenants])
    dealt = deal_servers(gpu_time, servers)
    sizes = rng.choice(ranges["gpus"], size=servers)
    server_docs, tenant_docs, first = [], [], 0
    for cluster, count in zip(tenants, dealt):
        names = [f"s{first + n + 1}" for n in range(int(count))]
        server_docs += [{"name": s, "workers": int(sizes[first + n]), "ps": 1} for n, s in enumerate(names)]
        tenant_docs.append({"name": f"vc-{cluster}", "workers": int(sizes[first:first + count].sum()),
                            "ps": int(count), "servers": names})
        first += int(count)
    b_w, b_p = float(rng.uniform(100, 5120)), float(rng.uniform(5120, 20480))
    origin = int(chosen["submit"].iloc[0])
    job_docs = []
    for n, row in chosen.iterrows():
        doc: dict[str, Any] = {
            "id": f"j{n + 1}", "owner": f"vc-{row['cluster']}",
            "arrival": math.ceil((int(row["submit"]) - origin) / 3600),
            "epochs": int(rng.integers(ranges["epochs"][0], ranges["epochs"][1] + 1)),
            "chunks": int(rng.integers(ranges["chunks"][0], ranges["chunks"][1] + 1)),
            "minibatches": int(rng.integers(ranges["minibatches"][0], ranges["minibatches"][1] + 1)),
            "minibatch_hours": float(rng.uniform(*ranges["minibatch_hours"])),
            "update_ms": float(rng.uniform(10, 100)), "gradient_mb": float(rng.uniform(30, 575)),
            "gpus": int(row["num_gpus"])}
        if utility == "linear":
            doc["utility"] = {"kind": "affine", "k": float(rng.uniform(*ranges["k"])),
                              "g": float(rng.uniform(*ranges["g"]))}
        else:
            doc["utility"] = {"kind": "convex", "e": float(rng.uniform(100, 1000)), "kappa": float(rng.uniform(1, 2))}
        job_docs.append(doc)
    doc = {"format": "mlsched/v1", "family": "multi-tenant",
           "name": name or f"astraea-{profile}-{utility}-n{jobs}-s{servers}-seed{seed}",
           "servers": server_docs, "tenants": tenant_docs, "bandwidth": {"worker": b_w, "ps": b_p},
           "jobs": job_docs, "time_origin": "arrival", "release_inclusive": False,
           "meta": {"generator": "astraea", "profile": profile, "utility": utility, "seed": seed,
                    "trace_start": pd.Timestamp(origin, unit="s").strftime(TIME_FORMAT),
                    "trace": "shipped" if trace is None else str(trace), "attribution": ATTRIBUTION}}
    inst = from_dict(doc)
    assert isinstance(inst, MultiTenantInstance)
    return inst


def tiny_astraea(seed: int, *, max_tenants: int = 3, max_servers: int = 6, max_jobs: int = 10,
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
        owner = f"u{int(rng.integers(n_tenants)) + 1}"
        arrival = int(rng.integers(0, max_arrival + 1))
        chunks, epochs, minibatches = int(rng.integers(1, 5)), int(rng.integers(1, 3)), int(rng.integers(1, 3))
        distributed = central * float(rng.choice([0.5, 0.8, 1.0]))
        k, g = -float(rng.uniform(*slope)), float(rng.uniform(20, 100))
        jobs.append({"id": f"j{n + 1}", "owner": owner, "arrival": arrival, "epochs": epochs, "chunks": chunks,
                     "minibatches": minibatches, "rates": {"centralized": central, "distributed": distributed},
                     "utility": {"kind": "affine", "k": k, "g": g}})
    return from_dict({
        "format": "mlsched/v1", "family": "multi-tenant", "name": f"random-{seed}",
        "servers": [{"name": f"s{n + 1}", "workers": w, "ps": p} for n, (w, p) in enumerate(servers)],
        "tenants": [{"name": f"u{n + 1}", "workers": w, "ps": p} for n, (w, p) in enumerate(zip(q_w, q_p))],
        "bandwidth": {"worker": 1.0, "ps": float(rng.choice([0.5, 1.0, 2.0]))}, "jobs": jobs})
