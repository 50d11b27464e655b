"""The ``themis`` instance family: apps made of ML training jobs on a racks/machines/slots/GPUs
cluster (Themis spec §1.1-1.3).

File layout::

    {"format": "mlsched/v1", "family": "themis", "name": "...",
     "cluster": {"machines": [{"rack": 0, "slots": [2, 2], "gpu_type": "v100"}, ...]},
     "apps": [{"name": "a0", "arrival": 0.0, "profile": [1, 1, 1.5, 2.0], "model": "resnet50",
               "speeds": {"v100": 1.0, "p100": 0.6, "k80": 0.15},
               "phases": [[{"iterations": 100, "tau": 0.5, "cap": 2}, ...], ...]}, ...],
     "expected": {...}, "meta": {...}}

An app is a list of phases run one after the other; the jobs of a phase run concurrently and the
phase ends when its last job ends (successive halving, §1.2 (b)). A single-job app has one phase of
one job; a performance-curve-stopping app has one phase of several jobs. Job work is
``iterations * tau`` serial GPU-seconds; a job runs on 1..cap GPUs at rate g / S(G) (eq. 1).
``profile`` is the placement slowdown s = (s0, s1, s2, s3) by placement level, non-decreasing,
s0 = 1 (§1.3). Arrival times are seconds.

Heterogeneous GPUs (an extension for Gavel's clusters and traces, not in the Themis paper): every
machine may name its ``gpu_type`` (all machines or none), and an app its ``speeds``, the rate of
its jobs per GPU of each type relative to ``tau`` (>= 0; 0: the app cannot run on that type). A
job runs at g * speed / S(G) with ``speed`` the lowest speed among the types of its GPUs (its
synchronous workers wait for the slowest). An app without ``speeds`` runs at speed 1 on every type.

Reading (``read_themis``): ``rack`` (integer >= 0) and ``slots`` (GPUs per slot, integers in
[1, MAX_GPUS_PER_SLOT], at most MAX_CLUSTER_GPUS in all, checked before anything is allocated
per GPU) are required per machine; arrivals lie in [0, MAX_ARRIVAL] seconds; every job runs at
least TIME_RANGE of the instance's time scale (:func:`_require_time_range`); an app's ``name``
defaults to ``a{position}`` and must not repeat, ``profile`` (slowdowns at most MAX_SLOWDOWN)
defaults to UNKNOWN_PROFILE, ``model`` (a profile name) is optional; ``gpu_type`` (per machine) and
``speeds`` (per app, every type of the cluster) are optional; unknown
fields are rejected. ``to_dict`` writes every field, so files round-trip losslessly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from mlsched.instance.fields import Fields, kind_of
from mlsched.instance.gpu_topology import GpuTopology

FAMILY = "themis"
COMPUTE_PROFILE = (1.0, 1.0, 1.0, 1.0)        # A10
NETWORK_PROFILE = (1.0, 1.0, 1.5, 2.0)        # A10
UNKNOWN_PROFILE = (1.0, 1.0, 1.1, 1.3)        # §1.3 crude defaults


@dataclass(frozen=True)
class ThemisJob:
    iterations: float
    tau: float                     # serial seconds per iteration on one GPU
    cap: int                       # d_j: most GPUs the job can use

    @property
    def work(self) -> float:
        """Serial GPU-seconds W_j = iterations * tau."""
        return self.iterations * self.tau


@dataclass(frozen=True)
class ThemisApp:
    name: str
    arrival: float
    phases: tuple[tuple[ThemisJob, ...], ...]
    profile: tuple[float, float, float, float] = UNKNOWN_PROFILE
    model: str | None = None
    speeds: tuple[tuple[str, float], ...] = ()     # (GPU type, speed), empty: 1 on every type

    @cached_property
    def speed_of(self) -> dict[str, float]:
        return dict(self.speeds)

    @cached_property
    def demand(self) -> int:
        """D_a: the largest sum of job caps over phases (A12)."""
        return max(sum(j.cap for j in phase) for phase in self.phases)

    @cached_property
    def work(self) -> float:
        return sum(j.work for phase in self.phases for j in phase)

    @cached_property
    def work_after(self) -> tuple[float, ...]:
        """Serial GPU-seconds of the phases after each phase."""
        totals = [sum(j.work for j in phase) for phase in self.phases]
        return tuple(sum(totals[p + 1:]) for p in range(len(totals)))

    @property
    def num_jobs(self) -> int:
        return sum(len(phase) for phase in self.phases)


@dataclass(frozen=True)
class ThemisInstance:
    name: str
    topology: GpuTopology
    apps: tuple[ThemisApp, ...]
    expected: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    family: ClassVar[str] = FAMILY

    @property
    def num_gpus(self) -> int:
        return self.topology.num_gpus

    @cached_property
    def arrival_order(self) -> tuple[int, ...]:
        """App indices by (arrival, index)."""
        return tuple(sorted(range(len(self.apps)), key=lambda a: (self.apps[a].arrival, a)))

    def describe(self) -> str:
        jobs = sum(a.num_jobs for a in self.apps)
        return (f"{len(self.apps)} apps ({jobs} jobs), {self.num_gpus} GPUs on {len(self.topology.machines)} machines "
                f"in {len({r for r, _ in self.topology.machines})} racks")

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "format": "mlsched/v1", "family": FAMILY, "name": self.name,
            "cluster": {"machines": [_machine_dict(self.topology, m) for m in range(len(self.topology.machines))]},
            "apps": [_app_dict(a) for a in self.apps],
        }
        if self.expected:
            data["expected"] = dict(self.expected)
        if self.meta:
            data["meta"] = dict(self.meta)
        return data


def _machine_dict(topology: GpuTopology, m: int) -> dict[str, Any]:
    rack, slots = topology.machines[m]
    data: dict[str, Any] = {"rack": rack, "slots": list(slots)}
    if topology.typed:
        data["gpu_type"] = topology.machine_types[m]
    return data


def _app_dict(app: ThemisApp) -> dict[str, Any]:
    data: dict[str, Any] = {"name": app.name, "arrival": app.arrival, "profile": list(app.profile)}
    if app.model is not None:
        data["model"] = app.model
    if app.speeds:
        data["speeds"] = dict(app.speeds)
    data["phases"] = [[{"iterations": j.iterations, "tau": j.tau, "cap": j.cap} for j in phase] for phase in app.phases]
    return data


_TOP = {"format", "family", "name", "cluster", "apps", "expected", "meta"}
_APP_KEYS = {"name", "arrival", "profile", "model", "speeds", "phases"}
_JOB_KEYS = {"iterations", "tau", "cap"}
MAX_WORK = 1e15   # serial GPU-seconds of one job (tens of millions of years): beyond it times lose precision
MAX_ARRIVAL = 1e15   # seconds; later arrivals overflow the slotted programs and lose precision in runs
MAX_GPUS_PER_SLOT = 64         # far above any machine's slot; validation never allocates per GPU first
MAX_CLUSTER_GPUS = 1_000_000   # GPUs of the whole cluster (the topology holds a row per GPU)
MAX_SLOWDOWN = 100.0           # a placement profile's largest slowdown (the papers' reach 2)
TIME_RANGE = 1e-11             # a job's fastest run, as a share of the instance's time scale (below)


def read_themis(top: Fields) -> ThemisInstance:
    """Validate a themis document; every problem is recorded on ``top.problems``."""
    top.unknown_keys(_TOP)
    cluster = top.obj("cluster")
    cluster.unknown_keys({"machines"})
    machines, types = [], []
    for f in cluster.objects("machines", min_items=1):
        f.unknown_keys({"rack", "slots", "gpu_type"})
        machines.append((int(f.number("rack", integer=True, minimum=0)), _slots(f)))
        types.append(f.string("gpu_type", default=None))
    if any(t is not None for t in types) and None in types:
        cluster.problems.add("cluster.machines", f"machine {types.index(None)} has no gpu_type: name the GPU type of "
                                                 "every machine or of none")
    total = sum(sum(slots) for _, slots in machines)
    if total > MAX_CLUSTER_GPUS:
        cluster.problems.add("cluster.machines", f"hold {total} GPUs in all, more than the {MAX_CLUSTER_GPUS} "
                                                 "a cluster may have")
        machines = []
    apps = []
    names: set[str] = set()
    for n, f in enumerate(top.objects("apps", min_items=1)):
        f.unknown_keys(_APP_KEYS)
        name = f.string("name", default=f"a{n}")
        if name in names:
            f.problems.add(f"{f.path}.name", f"repeats the name {name!r}")
        names.add(name)
        apps.append(ThemisApp(
            name=name, arrival=float(f.number("arrival", minimum=0, maximum=MAX_ARRIVAL)), phases=_phases(f),
            profile=_profile(f),
            model=f.string("model", default=None), speeds=_speeds(f, types),
        ))
    if not top.problems.items:
        _require_time_range(top, apps, total)
    extras = top.free_objects("expected", "meta")
    typed = tuple(types) if types and None not in types else ()
    return ThemisInstance(name=top.string("name", default="unnamed"), topology=GpuTopology(tuple(machines), typed),
                          apps=tuple(apps), expected=extras[0], meta=extras[1])


def _require_time_range(top: Fields, apps: list[ThemisApp], gpus: int) -> None:
    """Runs keep times in float64 seconds, which resolve about 2e-16 of a time: a job must run, at
    its fastest (its cap of GPUs, no slowdown), at least TIME_RANGE of the instance's time scale
    (the last arrival plus every job's work at its app's largest slowdown, a bound on when a run
    can end). Shorter jobs no run can credit to the checker's 1e-6 of their work (a 2,400
    GPU-second job arriving at 1e15 s, or one of 1e-300 GPU-seconds). The bound is loose: generated
    workloads hold 0.04 s jobs beside time scales of 1e7 s, and their runs pass the checker; a
    run that does not is refused by the checker in one line."""
    scale = max(a.arrival for a in apps) + sum(job.work * a.profile[3] for a in apps for phase in a.phases
                                               for job in phase)
    for n, app in enumerate(apps):
        for p, phase in enumerate(app.phases):
            for j, job in enumerate(phase):
                fastest = job.work / min(job.cap, gpus)
                if not fastest >= TIME_RANGE * scale:
                    top.problems.add(f"apps[{n}].phases[{p}][{j}]", f"runs {fastest:.3g} s at its fastest, less than "
                                     f"{TIME_RANGE:g} of the instance's time scale ({scale:.3g} s: the last "
                                     "arrival plus all work); float64 times cannot credit it exactly")
                    return


def _speeds(f: Fields, types: list[str | None]) -> tuple[tuple[str, float], ...]:
    """Speed per GPU type: one finite number >= 0 for every type of the cluster, some > 0."""
    value = f.raw("speeds", None)
    if value is None:
        return ()
    path = f"{f.path}.speeds"
    named = [t for t in dict.fromkeys(types) if t is not None]
    if not named:
        f.problems.add(path, "the cluster names no GPU types (cluster.machines[].gpu_type)")
        return ()
    if not isinstance(value, dict):
        f.problems.add(path, f"must be an object of speeds by GPU type ({', '.join(named)}), got {kind_of(value)}")
        return ()
    out = []
    for t in named:
        v = value.get(t)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            f.problems.add(f"{path}.{t}", f"must be a finite number >= 0 (the app's speed on {t} GPUs), got {kind_of(v)}")
            return ()
        out.append((t, float(v)))
    for t in value:
        if t not in named:
            f.problems.add(f"{path}.{t}", f"names a GPU type the cluster does not have ({', '.join(named)})")
    if not any(v > 0 for _, v in out):
        f.problems.add(path, "must be > 0 on some GPU type (the app could never run)")
    return tuple(out)


def _slots(f: Fields) -> tuple[int, ...]:
    """GPUs per slot: a non-empty list of positive integers."""
    value = f.raw("slots")
    path = f"{f.path}.slots"
    if value is None:
        return ()
    if not isinstance(value, list) or not value:
        f.problems.add(path, "must be a non-empty list of GPU counts per slot")
        return ()
    slots = []
    for i, v in enumerate(value):
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= MAX_GPUS_PER_SLOT:
            f.problems.add(f"{path}[{i}]", f"must be an integer in [1, {MAX_GPUS_PER_SLOT}] (GPUs in the slot), "
                                           f"got {kind_of(v)}")
        else:
            slots.append(v)
    return tuple(slots) if len(slots) == len(value) else ()


def _profile(f: Fields) -> tuple[float, float, float, float]:
    """Placement slowdown (s0, s1, s2, s3): s0 = 1, non-decreasing (§1.3)."""
    value = f.raw("profile", None)
    if value is None:
        return UNKNOWN_PROFILE
    path = f"{f.path}.profile"
    if (not isinstance(value, list) or len(value) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in value)):
        f.problems.add(path, "must be a list of 4 finite numbers (slowdown by placement level)")
        return UNKNOWN_PROFILE
    s = tuple(float(v) for v in value)
    if s[3] > MAX_SLOWDOWN:
        f.problems.add(path, f"slowdowns must be at most {MAX_SLOWDOWN:g}, got {s[3]:g}")
    if s[0] != 1:
        f.problems.add(path, f"s0 (one slot) must be 1, got {s[0]:g}")
    elif any(b < a for a, b in zip(s, s[1:])):
        f.problems.add(path, f"must be non-decreasing, got {', '.join(f'{v:g}' for v in s)}")
    return s  # type: ignore[return-value]


def _phases(f: Fields) -> tuple[tuple[ThemisJob, ...], ...]:
    value = f.raw("phases")
    path = f"{f.path}.phases"
    if value is None and not f.has("phases"):   # missing: already reported as required
        return ()
    if not isinstance(value, list) or not value:
        f.problems.add(path, "must be a non-empty list of phases (each a non-empty list of jobs)")
        return ()
    phases = []
    for p, phase in enumerate(value):
        if not isinstance(phase, list) or not phase:
            f.problems.add(f"{path}[{p}]", "must be a non-empty list of jobs")
            continue
        jobs = []
        for j, raw in enumerate(phase):
            job = Fields(raw, f"{path}[{p}][{j}]", f.problems)
            job.unknown_keys(_JOB_KEYS)
            parsed = ThemisJob(iterations=float(job.number("iterations", greater_than=0)),
                               tau=float(job.number("tau", greater_than=0)),
                               cap=int(job.number("cap", integer=True, minimum=1)))
            if parsed.iterations > 0 and parsed.tau > 0 and not 0 < parsed.work <= MAX_WORK:
                f.problems.add(f"{path}[{p}][{j}]", f"iterations x tau = {parsed.work:.3g} GPU-seconds; it must lie "
                                                    f"in (0, {MAX_WORK:.0e}]")
            jobs.append(parsed)
        phases.append(tuple(jobs))
    return tuple(phases)
