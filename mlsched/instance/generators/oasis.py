"""OASiS simulation instances (paper §V-A; spec §5.1 with resolutions A3, A4, A5, A15, A20).

Resources and units: gpu (count), cpu (vCPU), mem (GB), storage (GB), bandwidth (Mbit/s).

Profiles (spec A4):
- ``paper``: the paper's literal ranges (most jobs cannot finish within T);
- ``feasible`` (default): the same ranges, each job re-drawn until dmin_i <= min(T - a_i + 1, 15);
- ``small``: the Fig. 5 profile (10 jobs, T = 10) with its own server shapes and ranges, under the
  same feasibility filter.

Servers (A3, A20): workers on P2/G3 shapes and PS on C4 shapes (``swap_server_types=False``
follows the paper's literal text: workers on C4, PS on P2/G3); storage 1000 GB per server;
every server's bandwidth U{20000..50000} Mbit/s. Arrivals (A5): ``uniform`` i.i.d. U{1..T}
sorted, or ``poisson``: n exponential inter-arrival times with mean T/n, slot = floor(time) + 1
clipped to T. Counts and amounts are integer-uniform, tau, e, gamma1, gamma2 real-uniform,
gamma3 integer (A15). Utility classes: 10% gamma2 = 0, 55% U[0.01, 1], 35% U[4, 6].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance import ClusterJobsInstance, Job, Server
from mlsched.instance.cluster_jobs import EPS, STANDARD_RESOURCES
from mlsched.instance.parameter_server import minibatch_slots
from mlsched.instance.utility import Sigmoid

PROFILES = ("paper", "feasible", "small")
ARRIVALS = ("uniform", "poisson")
SLOT_SECONDS = 3600.0
MAX_TARGET_SLOTS = 15
MAX_DRAWS = 1_048_576
BATCH = 4096

# (gpu, vCPU, memory GiB) of the EC2 shapes of spec §5.1
GPU_SHAPES = ((1, 4, 61), (8, 32, 488), (16, 64, 732), (1, 16, 122), (2, 32, 244), (4, 64, 488))
C4_SHAPES = ((0, 16, 30), (0, 36, 60))
STORAGE_GB = 1000
SMALL_WORKER = (2, 8, 32, 100, 10_000)
SMALL_PS = (0, 8, 32, 100, 20_000)


@dataclass(frozen=True)
class Ranges:
    """Inclusive ranges of one profile: integers for counts and amounts, reals for tau and e."""

    epochs: tuple[int, int]
    chunks: tuple[int, int]
    minibatches: tuple[int, int]
    tau: tuple[float, float]
    gradient_mb: tuple[float, float]
    gamma3: tuple[int, int]
    worker: tuple[tuple[int, int], ...]   # gpu, cpu, mem, storage, bandwidth b
    ps: tuple[tuple[int, int], ...]       # gpu, cpu, mem, storage, bandwidth B


PAPER_RANGES = Ranges(
    epochs=(50, 200), chunks=(5, 100), minibatches=(10, 100), tau=(0.001, 0.1), gradient_mb=(30, 575),
    gamma3=(1, 15),
    worker=((0, 4), (1, 10), (2, 32), (5, 10), (100, 5000)),
    ps=((0, 0), (1, 10), (2, 32), (5, 10), (5000, 20000)),
)
SMALL_RANGES = Ranges(
    epochs=(1, 4), chunks=(2, 6), minibatches=(1, 3), tau=(0.05, 0.3), gradient_mb=(30, 575), gamma3=(1, 5),
    worker=((0, 1), (1, 4), (2, 8), (5, 10), (100, 1000)),
    ps=((0, 0), (1, 4), (2, 8), (5, 10), (1000, 5000)),
)


def generate_oasis(
    jobs: int,
    horizon: int,
    seed: int = 0,
    *,
    profile: str = "feasible",
    arrivals: str = "uniform",
    workers: int | None = None,
    ps_servers: int | None = None,
    swap_server_types: bool = True,
    gamma1_range: tuple[float, float] = (1.0, 100.0),
    name: str | None = None,
) -> ClusterJobsInstance:
    """A seeded OASiS instance; same arguments, same instance."""
    _check(jobs, horizon, profile, arrivals, workers, ps_servers, gamma1_range)
    rng = np.random.default_rng(seed)
    small = profile == "small"
    n_workers = workers if workers is not None else (2 if small else 50)
    n_ps = ps_servers if ps_servers is not None else (2 if small else 50)
    if small:
        worker_servers = [Server(f"w{h + 1}", tuple(float(v) for v in SMALL_WORKER)) for h in range(n_workers)]
        ps_pool = [Server(f"ps{k + 1}", tuple(float(v) for v in SMALL_PS)) for k in range(n_ps)]
    else:
        worker_shapes, ps_shapes = (GPU_SHAPES, C4_SHAPES) if swap_server_types else (C4_SHAPES, GPU_SHAPES)
        worker_servers = _servers(rng, "w", n_workers, worker_shapes)
        ps_pool = _servers(rng, "ps", n_ps, ps_shapes)
    ranges = SMALL_RANGES if small else PAPER_RANGES
    slots = _arrivals(rng, jobs, horizon, arrivals)
    job_list = [_job(rng, str(n + 1), int(a), horizon, ranges, profile, gamma1_range) for n, a in enumerate(slots)]
    meta: dict[str, Any] = {
        "generator": "oasis", "seed": seed, "profile": profile, "arrivals": arrivals, "jobs": jobs,
        "horizon": horizon, "workers": n_workers, "ps_servers": n_ps, "swap_server_types": swap_server_types,
        "gamma1_range": list(gamma1_range),
    }
    return ClusterJobsInstance(
        name=name or f"oasis-{profile}-j{jobs}-t{horizon}-s{seed}", horizon=horizon, slot_seconds=SLOT_SECONDS,
        resources=STANDARD_RESOURCES, worker_servers=tuple(worker_servers), ps_servers=tuple(ps_pool),
        jobs=tuple(job_list), meta=meta,
    )


def _check(jobs: int, horizon: int, profile: str, arrivals: str, workers: int | None, ps_servers: int | None,
           gamma1_range: tuple[float, float]) -> None:
    if jobs < 1:
        raise UsageError(f"jobs (--jobs) must be >= 1, got {jobs}")
    if horizon < 1:
        raise UsageError(f"horizon (--horizon) must be >= 1, got {horizon}")
    if profile not in PROFILES:
        raise UsageError(f"unknown profile {profile!r}; choose one of {', '.join(PROFILES)}")
    if arrivals not in ARRIVALS:
        raise UsageError(f"unknown arrivals {arrivals!r}; choose one of {', '.join(ARRIVALS)}")
    for label, count in (("--workers", workers), ("--ps-servers", ps_servers)):
        if count is not None and count < 1:
            raise UsageError(f"{label} must be >= 1, got {count}")
    low, high = gamma1_range
    if not 0 <= low <= high:
        raise UsageError(f"gamma1 range must satisfy 0 <= low <= high, got {gamma1_range}")


def _servers(rng: np.random.Generator, prefix: str, count: int, shapes: tuple[tuple[int, int, int], ...]) -> list[Server]:
    out = []
    for n in range(count):
        gpu, cpu, mem = shapes[rng.integers(len(shapes))]
        bandwidth = int(rng.integers(20_000, 50_001))
        out.append(Server(f"{prefix}{n + 1}", (float(gpu), float(cpu), float(mem), float(STORAGE_GB), float(bandwidth))))
    return out


def _arrivals(rng: np.random.Generator, jobs: int, horizon: int, kind: str) -> np.ndarray:
    if kind == "uniform":
        return np.sort(rng.integers(1, horizon + 1, size=jobs))
    times = np.cumsum(rng.exponential(horizon / jobs, size=jobs))
    return np.minimum(np.floor(times).astype(int) + 1, horizon)


def _job(rng: np.random.Generator, job_id: str, arrival: int, horizon: int, ranges: Ranges, profile: str,
         gamma1_range: tuple[float, float]) -> Job:
    """Draw job parameters in batches of candidates and keep the first that passes the profile's filter."""
    limit = min(horizon - arrival + 1, MAX_TARGET_SLOTS)
    for _ in range(MAX_DRAWS // BATCH):
        epochs = rng.integers(ranges.epochs[0], ranges.epochs[1] + 1, size=BATCH)
        chunks = rng.integers(ranges.chunks[0], ranges.chunks[1] + 1, size=BATCH)
        minibatches = rng.integers(ranges.minibatches[0], ranges.minibatches[1] + 1, size=BATCH)
        tau = rng.uniform(*ranges.tau, size=BATCH)
        gradient = rng.uniform(*ranges.gradient_mb, size=BATCH)
        worker = np.stack([rng.integers(lo, hi + 1, size=BATCH) for lo, hi in ranges.worker], axis=1)
        ps = np.stack([rng.integers(lo, hi + 1, size=BATCH) for lo, hi in ranges.ps], axis=1)
        chunk_time = minibatches * minibatch_slots(tau, gradient, worker[:, 4], SLOT_SECONDS)
        fits = np.ceil(epochs * chunk_time - EPS) <= limit
        if profile == "paper":
            fits[:] = True
        if fits.any():
            k = int(np.argmax(fits))
            return Job(
                id=job_id, arrival=arrival, epochs=int(epochs[k]), chunks=int(chunks[k]),
                minibatches=int(minibatches[k]), minibatch_time=float(tau[k]), gradient_mb=float(gradient[k]),
                worker_demand=tuple(float(v) for v in worker[k]), ps_demand=tuple(float(v) for v in ps[k]),
                worker_bandwidth=float(worker[k, 4]), ps_bandwidth=float(ps[k, 4]),
                utility=_utility(rng, ranges, gamma1_range),
            )
    raise UsageError(f"no job fits: after {MAX_DRAWS} draws none finishes within {limit} slot(s) of its "
                     f"arrival {arrival}; use a longer horizon or the 'paper' profile")


def _utility(rng: np.random.Generator, ranges: Ranges, gamma1_range: tuple[float, float]) -> Sigmoid:
    gamma1 = float(rng.uniform(*gamma1_range))
    category = rng.random()
    if category < 0.10:
        gamma2 = 0.0
    elif category < 0.65:
        gamma2 = float(rng.uniform(0.01, 1.0))
    else:
        gamma2 = float(rng.uniform(4.0, 6.0))
    return Sigmoid(gamma1=gamma1, gamma2=gamma2, gamma3=float(rng.integers(ranges.gamma3[0], ranges.gamma3[1] + 1)))
