"""The ``cluster-jobs`` instance family: typed server pools and DNN training jobs.

Used by OASiS (and later Astraea and Themis). A cluster has H worker servers and K
parameter-server (PS) servers with capacities over R named resource types; each job i has an
arrival slot a_i, training parameters (E_i epochs, N_i chunks = max concurrent workers, M_i
mini-batches per chunk, tau_i slots per mini-batch, e_i MB of gradients), per-worker and per-PS
demands, the bandwidths b_i (per worker) and B_i (per PS), and a utility f_i of the completion
delay. Derived quantities follow OASiS §1.4 of the spec:

- W_i = M_i (tau_i + 2 e_i / b_i)  (worker-slots per chunk; e_i/b_i converted to slots; the
                                    mini-batch time of :mod:`mlsched.instance.parameter_server`)
- Theta_i = E_i N_i W_i            (worker-slots of total work, RHS of eq. 2)
- dmin_i = ceil(E_i W_i)           (fewest slots to finish with N_i workers)

Slots are numbered 1..T in files and reports, as in the paper.

Limits, checked before anything is allocated: T <= MAX_HORIZON, N_i <= MAX_CHUNKS, each capacity
and demand <= MAX_AMOUNT, Theta_i <= 1e12 worker-slots, the tables of job i's subproblem DP
(N_i + 1 + T)(max(E_i N_i, Theta_i) + 1) <= MAX_DP_CELLS, utilities as in :mod:`mlsched.instance.utility`; the
exact programs refuse more than their MAX_PROGRAM_TERMS (:mod:`mlsched.formulations.oasis`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.fields import Fields, repeated_names
from mlsched.instance.parameter_server import minibatch_slots, ps_needed
from mlsched.instance.utility import Utility, read_utility
from mlsched.profiles import DEFAULT_GPU_TYPE, GPU_TYPES, load_profile

EPS = 1e-9
FAMILY = "cluster-jobs"
MAX_HORIZON = 100_000
MAX_CHUNKS = 100_000
MAX_AMOUNT = 1e12            # a capacity or demand of one resource: sums over servers and slots stay finite
MAX_DP_CELLS = 50_000_000   # (N_i + 1 + T)(units + 1), units the larger of E_i N_i and Theta_i: job i's DP tables
STANDARD_RESOURCES = ("gpu", "cpu", "mem", "storage", "bandwidth")


@dataclass(frozen=True)
class Server:
    name: str
    capacity: tuple[float, ...]


@dataclass(frozen=True)
class Job:
    id: str
    arrival: int
    epochs: int
    chunks: int
    minibatches: int
    minibatch_time: float
    gradient_mb: float
    worker_demand: tuple[float, ...]
    ps_demand: tuple[float, ...]
    worker_bandwidth: float
    ps_bandwidth: float
    utility: Utility
    model: str | None = None
    gpu_type: str | None = None

    def chunk_time(self, slot_seconds: float) -> float:
        """W_i: worker-slots to train one chunk once (compute plus gradient push and pull)."""
        return self.minibatches * minibatch_slots(self.minibatch_time, self.gradient_mb, self.worker_bandwidth,
                                                  slot_seconds)

    def ps_needed(self, workers: int | np.ndarray) -> int | np.ndarray:
        """Z(Y) = ceil(Y b_i / B_i): parameter servers needed by ``workers`` workers (eq. 6)."""
        return ps_needed(workers, self.worker_bandwidth, self.ps_bandwidth)


@dataclass(frozen=True)
class ClusterJobsInstance:
    """A validated cluster-jobs instance; numpy views of its data are cached properties."""

    name: str
    horizon: int
    slot_seconds: float
    resources: tuple[str, ...]
    worker_servers: tuple[Server, ...]
    ps_servers: tuple[Server, ...]
    jobs: tuple[Job, ...]
    expected: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    family: ClassVar[str] = FAMILY

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @cached_property
    def worker_capacity(self) -> np.ndarray:
        """c_h^r, shape (H, R)."""
        return np.array([s.capacity for s in self.worker_servers], dtype=float).reshape(-1, len(self.resources))

    @cached_property
    def ps_capacity(self) -> np.ndarray:
        """c_k^r, shape (K, R)."""
        return np.array([s.capacity for s in self.ps_servers], dtype=float).reshape(-1, len(self.resources))

    @cached_property
    def worker_demand(self) -> np.ndarray:
        """w_i^r, shape (I, R)."""
        return np.array([j.worker_demand for j in self.jobs], dtype=float).reshape(-1, len(self.resources))

    @cached_property
    def ps_demand(self) -> np.ndarray:
        """s_i^r, shape (I, R)."""
        return np.array([j.ps_demand for j in self.jobs], dtype=float).reshape(-1, len(self.resources))

    @cached_property
    def arrival(self) -> np.ndarray:
        return np.array([j.arrival for j in self.jobs], dtype=int)

    @cached_property
    def chunk_time(self) -> np.ndarray:
        """W_i, shape (I,)."""
        return np.array([j.chunk_time(self.slot_seconds) for j in self.jobs], dtype=float)

    @cached_property
    def workload(self) -> np.ndarray:
        """Theta_i = E_i N_i W_i (worker-slots), shape (I,)."""
        return np.array([j.epochs * j.chunks for j in self.jobs], dtype=float) * self.chunk_time

    @cached_property
    def min_duration(self) -> np.ndarray:
        """dmin_i = ceil(E_i W_i): fewest slots to finish with N_i workers, shape (I,)."""
        e = np.array([j.epochs for j in self.jobs], dtype=float)
        return np.ceil(e * self.chunk_time - EPS).astype(int)

    def describe(self) -> str:
        return (f"{self.num_jobs} jobs, horizon {self.horizon}, {len(self.worker_servers)} worker + "
                f"{len(self.ps_servers)} PS servers, resources {', '.join(self.resources)}")

    def utility_of(self, job: int, completion_slot: int) -> float:
        """f_i(t_hat - a_i) for a job completing in ``completion_slot``."""
        j = self.jobs[job]
        return float(j.utility.value(completion_slot - j.arrival))

    def to_dict(self) -> dict[str, Any]:
        def demands(values: tuple[float, ...]) -> dict[str, float]:
            return {r: _plain(v) for r, v in zip(self.resources, values)}

        def job_dict(j: Job) -> dict[str, Any]:
            d: dict[str, Any] = {
                "id": j.id, "arrival": j.arrival, "epochs": j.epochs, "chunks": j.chunks,
                "minibatches": j.minibatches, "minibatch_time": j.minibatch_time,
                "gradient_mb": j.gradient_mb, "worker_demand": demands(j.worker_demand),
                "ps_demand": demands(j.ps_demand),
                "bandwidth": {"worker": _plain(j.worker_bandwidth), "ps": _plain(j.ps_bandwidth)},
                "utility": j.utility.to_dict(),
            }
            if j.model is not None:
                d["model"] = j.model
            if j.gpu_type is not None:
                d["gpu_type"] = j.gpu_type
            return d

        data: dict[str, Any] = {
            "format": "mlsched/v1",
            "family": FAMILY,
            "name": self.name,
            "horizon": self.horizon,
            "slot_seconds": _plain(self.slot_seconds),
            "resources": list(self.resources),
            "worker_servers": [{"name": s.name, "capacity": demands(s.capacity)} for s in self.worker_servers],
            "ps_servers": [{"name": s.name, "capacity": demands(s.capacity)} for s in self.ps_servers],
            "jobs": [job_dict(j) for j in self.jobs],
        }
        if self.expected:
            data["expected"] = dict(self.expected)
        if self.meta:
            data["meta"] = dict(self.meta)
        return data


def _plain(v: float) -> float | int:
    """Integers stay integers in JSON (resource amounts are integral in the paper's units)."""
    return int(v) if float(v).is_integer() and abs(v) < 2**53 else float(v)


_TOP_KEYS = {"format", "family", "name", "horizon", "slot_seconds", "resources", "worker_servers",
             "ps_servers", "jobs", "expected", "meta"}
_JOB_KEYS = {"id", "arrival", "epochs", "chunks", "minibatches", "minibatch_time", "gradient_mb",
             "worker_demand", "ps_demand", "bandwidth", "utility", "model", "gpu_type"}


def _amounts(fields: Fields, key: str, resources: tuple[str, ...], *, positive_sum: bool = False) -> tuple[float, ...]:
    sub = fields.obj(key)
    sub.unknown_keys(set(resources))
    values = tuple(float(sub.number(r, default=0, minimum=0, maximum=MAX_AMOUNT)) for r in resources)
    if positive_sum and not any(values):
        fields.problems.add(sub.path, "must demand some resource (all amounts are 0)")
    return values


def read_cluster_jobs(top: Fields) -> ClusterJobsInstance:
    """Validate a cluster-jobs document; every problem is recorded on ``top.problems``."""
    top.unknown_keys(_TOP_KEYS)
    horizon = top.number("horizon", integer=True, minimum=1, maximum=MAX_HORIZON)
    slot_seconds = top.number("slot_seconds", default=3600.0, greater_than=0)
    resources = tuple(top.string_list("resources"))
    workers = [
        Server(name=f.string("name", default=f"w{n + 1}"), capacity=_amounts(f, "capacity", resources))
        for n, f in enumerate(top.objects("worker_servers", min_items=1))
    ]
    pss = [
        Server(name=f.string("name", default=f"ps{n + 1}"), capacity=_amounts(f, "capacity", resources))
        for n, f in enumerate(top.objects("ps_servers", min_items=1))
    ]
    repeated_names(top.problems, "worker_servers", [s.name for s in workers])
    repeated_names(top.problems, "ps_servers", [s.name for s in pss])
    jobs: list[Job] = []
    seen: set[str] = set()
    for n, f in enumerate(top.objects("jobs")):
        f.unknown_keys(_JOB_KEYS)
        job_id = f.string("id", default=str(n + 1))
        if job_id in seen:
            top.problems.add(f"{f.path}.id", f"repeats the id {job_id!r}")
        seen.add(job_id)
        worker_demand = _amounts(f, "worker_demand", resources, positive_sum=True)
        ps_demand = _amounts(f, "ps_demand", resources)
        bandwidth = _bandwidth(f, resources, worker_demand, ps_demand)
        arrival = f.number("arrival", integer=True, minimum=1)
        if isinstance(horizon, int) and isinstance(arrival, int) and arrival > horizon > 0:
            top.problems.add(f"{f.path}.arrival", f"must be <= horizon ({horizon}), got {arrival}")
        tau_default, gradient_default, model, gpu_type = _profile_defaults(f, float(slot_seconds or 3600.0))
        jobs.append(Job(
            id=job_id,
            arrival=arrival or 1,
            epochs=f.number("epochs", integer=True, minimum=1) or 1,
            chunks=f.number("chunks", integer=True, minimum=1, maximum=MAX_CHUNKS) or 1,
            minibatches=f.number("minibatches", integer=True, minimum=1) or 1,
            minibatch_time=float(f.number("minibatch_time", greater_than=0, **tau_default) or 1.0),
            gradient_mb=float(f.number("gradient_mb", minimum=0, **gradient_default)),
            worker_demand=worker_demand,
            ps_demand=ps_demand,
            worker_bandwidth=bandwidth[0],
            ps_bandwidth=bandwidth[1],
            utility=read_utility(f.obj("utility")),
            model=model,
            gpu_type=gpu_type,
        ))
        job = jobs[-1]
        workload = job.epochs * job.chunks * job.chunk_time(float(slot_seconds or 3600.0))
        if not math.isfinite(workload) or workload > 1e12:
            top.problems.add(f.path, f"workload E*N*W = {workload:g} worker-slots is not a usable finite number")
            continue
        units = max(job.epochs * job.chunks, math.ceil(workload))   # chunk-passes or worker-slots
        cells = (job.chunks + 1 + (horizon or 1)) * (units + 1)
        if cells > MAX_DP_CELLS:
            top.problems.add(f.path, f"its subproblem's DP (Algorithm 2) needs (N + 1 + T)(units + 1) = {cells:.3g} "
                                     f"cells ({job.chunks} chunks, {units} chunk-passes or worker-slots), more than "
                                     f"{MAX_DP_CELLS:.0e}")
    expected, meta = top.free_objects("expected", "meta")
    return ClusterJobsInstance(
        name=top.string("name", default="unnamed"),
        horizon=horizon or 1,
        slot_seconds=float(slot_seconds or 3600.0),
        resources=resources,
        worker_servers=tuple(workers),
        ps_servers=tuple(pss),
        jobs=tuple(jobs),
        expected=expected,
        meta=meta,
    )


def _profile_defaults(f: Fields, slot_seconds: float) -> tuple[dict[str, Any], dict[str, Any], str | None, str | None]:
    """Defaults of minibatch_time (slots) and gradient_mb from the job's model profile, if any."""
    model = f.string("model", default=None)
    gpu_type = f.string("gpu_type", default=None, choices=GPU_TYPES)
    gradient_default: dict[str, Any] = {"default": 0.0}
    if model is None or not model:
        if gpu_type is not None:
            f.problems.add(f"{f.path}.gpu_type", "needs a model profile ('model')")
        return {}, gradient_default, model, gpu_type
    try:
        profile = load_profile(model)
    except UsageError as exc:
        f.problems.add(f"{f.path}.model", str(exc))
        return {}, gradient_default, model, gpu_type
    seconds = profile.iteration_seconds[gpu_type or DEFAULT_GPU_TYPE]
    return {"default": seconds / slot_seconds}, {"default": profile.gradient_mb}, model, gpu_type


def _bandwidth(f: Fields, resources: tuple[str, ...], worker_demand: tuple[float, ...],
               ps_demand: tuple[float, ...]) -> tuple[float, float]:
    """b_i and B_i: the ``bandwidth`` object, else the ``bandwidth`` resource demands."""
    path = f"{f.path}.bandwidth"
    if f.has("bandwidth"):
        sub = f.obj("bandwidth")
        sub.unknown_keys({"worker", "ps"})
        b = float(sub.number("worker", greater_than=0) or 1.0)
        big_b = float(sub.number("ps", greater_than=0) or 1.0)
    elif "bandwidth" in resources:
        r = resources.index("bandwidth")
        b, big_b = worker_demand[r], ps_demand[r]
        if b <= 0 or big_b <= 0:
            f.problems.add(path, "worker and PS bandwidth demands must be > 0 (or give a bandwidth object)")
            return 1.0, 1.0
    else:
        f.problems.add(path, "is required when 'bandwidth' is not one of the resources")
        return 1.0, 1.0
    if b > big_b * (1 + EPS):
        f.problems.add(path, f"worker bandwidth b = {b:g} must be <= PS bandwidth B = {big_b:g} "
                             "(else no PS count satisfies eq. 6 and 7)")
    return b, big_b
