"""The ``multi-tenant`` instance family (Astraea spec §1): tenants that bought quotas of a cluster's
workers and parameter-server (PS) slots, and their distributed training jobs.

A document::

    {"format": "mlsched/v1", "family": "multi-tenant", "name": "EX",
     "servers": [{"name": "s1", "workers": 2, "ps": 1}, ...],          # C_sw, C_sp
     "tenants": [{"name": "u1", "workers": 4, "ps": 2}, ...],          # quotas q_w^u, q_p^u
     "bandwidth": {"worker": 1, "ps": 1},                              # b_w, b_p (Mbps)
     "jobs": [{"id": "j11", "owner": "u1", "arrival": 3, "epochs": 2, "chunks": 2, "minibatches": 1,
               "rates": {"centralized": 1, "distributed": 0.5},        # n^cent, n^dist (per slot)
               "utility": {"kind": "affine", "k": -2, "g": 100}}, ...],
     "time_origin": "arrival", "release_inclusive": false, "horizon": 20}

A job gives either ``rates`` directly (as the spec's oracles do) or ``minibatch_hours`` m_j,
``update_ms`` G_j and ``gradient_mb`` eps_j, from which Eq. (1) gives the rates:
n^dist = 1 / (m + G + 2 eps / b_w), n^cent = 1 / (m + G), in mini-batches per one-hour slot
(G in ms / 3.6e6, 2 eps / b_w = 2 * 8 * eps[MB] / b_w[Mbps] / 3600 hours), by the mini-batch time
OASiS shares (:mod:`mlsched.instance.parameter_server`).

Rules (§1.1-1.5): quotas sum to the cluster's workers and PS slots exactly; a job's workload is
B_j = E_j D_j M_j mini-batches and its D_j chunks bound its workers; with W workers in mode zeta
(1: every worker and PS on one server) it runs d_j(W, zeta) = ceil(B_j / (n_j^zeta W)) slots
(:func:`duration`). Utilities are ``affine`` (k x + g, k <= 0 <= g, unclamped) or ``convex``
((e / x)^kappa) in the elapsed time x; ``time_origin`` says whether x = t^+ - r_j ("arrival",
default) or t^+ ("absolute"). A job arriving at r_j may occupy slots t >= r_j + 1 unless
``release_inclusive`` (then t >= r_j). ``horizon`` (optional) is the last slot of the offline
program; without it the program's own horizon rule applies.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from mlsched.instance.fields import Fields, repeated_names, with_optional
from mlsched.instance.parameter_server import eq1_rates
from mlsched.instance.utility import ASTRAEA_KINDS, Utility, read_utility

FAMILY = "multi-tenant"
TIME_ORIGINS = ("arrival", "absolute")
MAX_COUNT = 100_000          # workers or PS slots per server, chunks per job: bounds what validation allocates
MAX_SLOTS = 1_000_000        # arrivals and horizons, in slots
MAX_RATE = 1e6               # mini-batches per slot: with B_j >= D_j, a job never takes under 1e-6 of a slot
MAX_RUN_SLOTS = 1e15         # a job's longest run (one worker, distributed): slot counts stay exact integers
_TOP = {"format", "family", "name", "servers", "tenants", "bandwidth", "jobs", "time_origin",
        "release_inclusive", "horizon", "expected", "meta"}
_JOB_KEYS = {"id", "owner", "arrival", "epochs", "chunks", "minibatches", "rates", "minibatch_hours", "update_ms",
             "gradient_mb", "utility", "gpus"}


@dataclass(frozen=True)
class TenantServer:
    name: str
    workers: int       # C_sw
    ps: int            # C_sp


@dataclass(frozen=True)
class Tenant:
    name: str
    workers: int       # q_w^u
    ps: int            # q_p^u
    servers: tuple[int, ...] | None = None   # its physical partition (server indices), when known


@dataclass(frozen=True)
class TenantJob:
    id: str
    owner: int                 # tenant index
    arrival: int               # r_j (slot)
    epochs: int                # E_j
    chunks: int                # D_j: data chunks, also the most workers (3e)
    minibatches: int           # M_j per chunk
    rate_centralized: float    # n_j^cent, mini-batches per worker per slot
    rate_distributed: float    # n_j^dist
    utility: Utility           # phi_j(x) of the elapsed time
    physical: dict[str, float] | None = None   # m, G, eps when the rates came from Eq. (1)
    gpus: int | None = None    # g_j^tr, the trace's GPU request (the baselines' worker count, A13)

    @property
    def workload(self) -> int:
        """B_j = E_j D_j M_j mini-batches."""
        return self.epochs * self.chunks * self.minibatches

    def rate(self, centralized: bool) -> float:
        return self.rate_centralized if centralized else self.rate_distributed


def duration(job: TenantJob, workers: int, centralized: bool) -> int:
    """d_j(W, zeta) = ceil(B_j / (n_j^zeta W)) slots (§1.3)."""
    return math.ceil(job.workload / (job.rate(centralized) * workers) - 1e-9)


@dataclass(frozen=True)
class MultiTenantInstance:
    name: str
    servers: tuple[TenantServer, ...]
    tenants: tuple[Tenant, ...]
    worker_bandwidth: float    # b_w
    ps_bandwidth: float        # b_p
    jobs: tuple[TenantJob, ...]
    time_origin: str = "arrival"
    release_inclusive: bool = False
    horizon: int | None = None
    expected: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    family: ClassVar[str] = FAMILY

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @property
    def worker_capacity(self) -> np.ndarray:
        return np.array([s.workers for s in self.servers], dtype=np.int64)

    @property
    def ps_capacity(self) -> np.ndarray:
        return np.array([s.ps for s in self.servers], dtype=np.int64)

    def first_slot(self, job: TenantJob) -> int:
        """The earliest slot the job may occupy (§1.2); slots are numbered from 1."""
        return max(1, job.arrival if self.release_inclusive else job.arrival + 1)

    def realized(self, job: TenantJob, completion: int) -> float:
        """f_j(t^+) (§1.5): phi_j of the elapsed time under ``time_origin``."""
        elapsed = completion - job.arrival if self.time_origin == "arrival" else completion
        return float(job.utility.value(elapsed))

    def describe(self) -> str:
        return (f"{len(self.jobs)} jobs of {len(self.tenants)} tenants, {len(self.servers)} servers "
                f"({int(self.worker_capacity.sum())} workers, {int(self.ps_capacity.sum())} PS slots)")

    def to_dict(self) -> dict[str, Any]:
        def job(j: TenantJob) -> dict[str, Any]:
            doc: dict[str, Any] = {"id": j.id, "owner": self.tenants[j.owner].name, "arrival": j.arrival,
                                   "epochs": j.epochs, "chunks": j.chunks, "minibatches": j.minibatches}
            if j.physical is not None:
                doc.update(j.physical)
            else:
                doc["rates"] = {"centralized": j.rate_centralized, "distributed": j.rate_distributed}
            if j.gpus is not None:
                doc["gpus"] = j.gpus
            doc["utility"] = j.utility.to_dict()
            return doc

        def tenant(t: Tenant) -> dict[str, Any]:
            doc: dict[str, Any] = {"name": t.name, "workers": t.workers, "ps": t.ps}
            if t.servers is not None:
                doc["servers"] = [self.servers[s].name for s in t.servers]
            return doc

        doc: dict[str, Any] = {
            "format": "mlsched/v1", "family": FAMILY, "name": self.name,
            "servers": [{"name": s.name, "workers": s.workers, "ps": s.ps} for s in self.servers],
            "tenants": [tenant(t) for t in self.tenants],
            "bandwidth": {"worker": self.worker_bandwidth, "ps": self.ps_bandwidth},
            "jobs": [job(j) for j in self.jobs],
            "time_origin": self.time_origin, "release_inclusive": self.release_inclusive,
        }
        return with_optional(doc, horizon=self.horizon, expected=self.expected, meta=self.meta)


def read_multi_tenant(top: Fields) -> MultiTenantInstance:
    """Validate a multi-tenant document; every problem is recorded on ``top.problems``."""
    top.unknown_keys(_TOP)
    servers = [TenantServer(name=f.string("name", default=f"s{n + 1}"),
                            workers=int(f.number("workers", integer=True, minimum=0, maximum=MAX_COUNT) or 0),
                            ps=int(f.number("ps", integer=True, minimum=0, maximum=MAX_COUNT) or 0))
               for n, f in enumerate(top.objects("servers", min_items=1))]
    repeated_names(top.problems, "servers", [s.name for s in servers])
    tenants = [_tenant(f, n, servers) for n, f in enumerate(top.objects("tenants", min_items=1))]
    repeated_names(top.problems, "tenants", [t.name for t in tenants])
    listed = [s for t in tenants for s in (t.servers or ())]
    if len(listed) != len(set(listed)):
        top.problems.add("tenants", "a server is listed in two tenants' partitions")
    for kind, attr in (("workers", "workers"), ("PS slots", "ps")):
        quota, capacity = sum(getattr(t, attr) for t in tenants), sum(getattr(s, attr) for s in servers)
        if servers and tenants and quota != capacity:
            top.problems.add("tenants", f"quotas of {kind} sum to {quota}, the servers hold {capacity} (§1.1: equal)")
    bandwidth = top.obj("bandwidth")
    bandwidth.unknown_keys({"worker", "ps"})
    b_w = float(bandwidth.number("worker", greater_than=0, maximum=1e12) or 1.0)
    b_p = float(bandwidth.number("ps", greater_than=0, maximum=1e12) or 1.0)
    owners = {t.name: u for u, t in enumerate(tenants)}
    jobs = []
    for n, f in enumerate(top.objects("jobs")):
        f.unknown_keys(_JOB_KEYS)
        owner = f.string("owner", choices=tuple(owners) or None)
        rates, physical = _rates(f, b_w)
        jobs.append(TenantJob(
            id=f.string("id", default=str(n + 1)), owner=owners.get(owner, 0),
            arrival=int(f.number("arrival", integer=True, minimum=0, maximum=MAX_SLOTS) or 0),
            epochs=int(f.number("epochs", integer=True, minimum=1, maximum=MAX_COUNT) or 1),
            chunks=int(f.number("chunks", integer=True, minimum=1, maximum=MAX_COUNT) or 1),
            minibatches=int(f.number("minibatches", integer=True, minimum=1, maximum=MAX_COUNT) or 1),
            rate_centralized=rates[0], rate_distributed=rates[1],
            utility=read_utility(f.obj("utility"), ASTRAEA_KINDS), physical=physical,
            gpus=_optional_int(f.number("gpus", default=None, integer=True, minimum=1, maximum=MAX_COUNT))))
    for n, j in enumerate(jobs):
        if j.physical is not None and j.rate_centralized > MAX_RATE:   # Eq. (1)'s rate; given rates are bounded as read
            top.problems.add(f"jobs[{n}]", f"runs {j.rate_centralized:g} mini-batches per slot by Eq. (1), more than "
                                           f"{MAX_RATE:g}")
        if not j.workload / j.rate_distributed <= MAX_RUN_SLOTS:
            top.problems.add(f"jobs[{n}]", f"takes {j.workload / j.rate_distributed:.3g} slots on one worker, more "
                                           f"than {MAX_RUN_SLOTS:g}")
    seen_ids: set[str] = set()
    for n, j in enumerate(jobs):
        if j.id in seen_ids:
            top.problems.add(f"jobs[{n}].id", f"repeats the id {j.id!r}")
        seen_ids.add(j.id)
    horizon = top.number("horizon", default=None, integer=True, minimum=1, maximum=MAX_SLOTS)
    extras = top.free_objects("expected", "meta")
    release = top.raw("release_inclusive", False)
    if not isinstance(release, bool):
        top.problems.add("release_inclusive", "must be true or false")
        release = False
    return MultiTenantInstance(
        name=top.string("name", default="unnamed"), servers=tuple(servers), tenants=tuple(tenants),
        worker_bandwidth=b_w, ps_bandwidth=b_p, jobs=tuple(jobs),
        time_origin=top.string("time_origin", default="arrival", choices=TIME_ORIGINS) or "arrival",
        release_inclusive=release, horizon=None if horizon is None else int(horizon),
        expected=extras[0], meta=extras[1])


def _optional_int(value: float | None) -> int | None:
    return None if value is None else int(value)


def _tenant(f: Fields, n: int, servers: list[TenantServer]) -> Tenant:
    """A tenant's quotas and, when listed, its servers, which must hold exactly those quotas."""
    f.unknown_keys({"name", "workers", "ps", "servers"})
    tenant = Tenant(name=f.string("name", default=f"u{n + 1}"),
                    workers=int(f.number("workers", integer=True, minimum=0, maximum=MAX_COUNT * 1000) or 0),
                    ps=int(f.number("ps", integer=True, minimum=0, maximum=MAX_COUNT * 1000) or 0))
    if not f.has("servers"):
        return tenant
    names = f.raw("servers", [])
    index = {s.name: i for i, s in enumerate(servers)}
    if not isinstance(names, list) or not all(isinstance(x, str) and x in index for x in names):
        f.problems.add(f"{f.path}.servers", "must be a list of server names")
        return tenant
    own = tuple(index[x] for x in names)
    held = (sum(servers[s].workers for s in own), sum(servers[s].ps for s in own))
    if held != (tenant.workers, tenant.ps):
        f.problems.add(f"{f.path}.servers", f"hold {held[0]} workers and {held[1]} PS slots, the quota is "
                                            f"{tenant.workers} and {tenant.ps}")
    return Tenant(tenant.name, tenant.workers, tenant.ps, own)


def _rates(f: Fields, worker_mbps: float) -> tuple[tuple[float, float], dict[str, float] | None]:
    """(n^cent, n^dist) given directly, or from Eq. (1); n^dist <= n^cent."""
    physical_keys = ("minibatch_hours", "update_ms", "gradient_mb")
    if f.has("rates"):
        if any(f.has(k) for k in physical_keys):
            f.problems.add(f.path, "gives both rates and minibatch_hours/update_ms/gradient_mb; give one")
        rates = f.obj("rates")
        rates.unknown_keys({"centralized", "distributed"})
        cent = float(rates.number("centralized", greater_than=0, maximum=MAX_RATE) or 1.0)
        dist = float(rates.number("distributed", greater_than=0, maximum=MAX_RATE) or 1.0)
        if dist > cent:
            f.problems.add(f"{f.path}.rates.distributed", f"must be <= the centralized rate {cent:g} (Eq. 1)")
        return (cent, dist), None
    m = float(f.number("minibatch_hours", greater_than=0, maximum=1e6) or 1.0)
    g = float(f.number("update_ms", minimum=0, maximum=1e12) or 0.0)
    eps = float(f.number("gradient_mb", minimum=0, maximum=1e12) or 0.0)
    return eq1_rates(m, g, eps, worker_mbps), {"minibatch_hours": m, "update_ms": g, "gradient_mb": eps}
