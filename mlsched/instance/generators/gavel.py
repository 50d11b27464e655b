"""Gavel's job traces as Themis-family instances (Gavel: Narayanan et al., OSDI 2020; an extension
beside the Themis workloads, so both schedulers' policies run on the same input).

Trace format (Gavel's 2019 traces, e.g. ``gavel-philly-vc-0e4a51.trace``): one job per line, 7
tab-separated columns: job type ("ResNet-50 (batch size 32)"), command, steps flag, needs data
dir (0 or 1), total steps (integer > 0), arrival time (seconds, non-decreasing), scale factor (GPUs,
integer >= 1). The shipped copy (``mlsched/data/traces/gavel-philly-vc-0e4a51.trace.gz``) is the
default; ``.gz`` files are read as gzip.

Every job becomes an app of one phase holding one job:

- thr_k = the job type's measured throughput (steps/s) on ``scale factor`` GPUs of type k, from the
  model profile's ``job_types`` (``models/``); the reference type is the fastest one;
- tau = scale / thr_ref (seconds per step on one reference GPU, so the job on its ``scale``
  reference GPUs takes steps / thr_ref), iterations = total steps, cap = scale factor;
- speeds: speed_k = thr_k / thr_ref (0 where the job does not fit, e.g. ResNet-50 at batch size
  128 on 2 or more K80s);
- profile (1, 1, 1, 1): Gavel's simulator ignores placement (its throughputs are measured
  consolidated), and so do the apps here;
- a job whose type has no throughput at its scale factor on any GPU type (A3C, CycleGAN and
  Recommendation were measured on one GPU only: 197 jobs of the Philly trace) runs as a 1-GPU job
  with the same steps (counted in ``meta.single_gpu_fallback``).

``apps`` and ``start`` cut a slice: the first ``apps`` jobs arriving at or after ``start`` seconds,
re-timed so that the first arrives at 0. App ``j{n}`` is the trace's job on line n + 1.
"""

from __future__ import annotations

import gzip
import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mlsched.errors import InstanceError, UsageError
from mlsched.instance.generators.philly import ATTRIBUTION
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, MAX_ARRIVAL, MAX_WORK, ThemisApp, ThemisInstance, ThemisJob
from mlsched.instance.themis_clusters import gavel, preset
from mlsched.profiles import Profile, available_profiles, load_profile
from mlsched.resources import data_file

DEFAULT_TRACE = Path(str(data_file("traces"))) / "gavel-philly-vc-0e4a51.trace.gz"
COLUMNS = ("job type", "command", "steps flag", "needs data dir", "total steps", "arrival", "scale factor")


@dataclass(frozen=True)
class TraceJob:
    job_type: str
    steps: int
    arrival: float
    scale: int


def read_gavel_trace(path: str | Path) -> list[TraceJob]:
    """The jobs of a Gavel trace, validated; the first bad line is one problem naming its column."""
    p = Path(path)
    lines = _lines(p)
    models = job_type_profiles()
    jobs: list[TraceJob] = []
    problems: list[str] = []
    previous = 0.0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        fields = line.split("\t")
        if len(fields) != len(COLUMNS):
            problems.append(f"line {number}: must have {len(COLUMNS)} tab-separated columns ({', '.join(COLUMNS)}), "
                            f"got {len(fields)}")
            continue
        job_type, _, _, data_dir, steps, arrival, scale = (f.strip() for f in fields)
        bad = _bad_field(job_type, data_dir, steps, arrival, scale, previous, models)
        if bad:
            column, what, value = bad
            problems.append(f"line {number}, column '{column}': {what}, got {value!r}")
            continue
        previous = float(arrival)
        jobs.append(TraceJob(job_type, int(steps), float(arrival), int(scale)))
    if problems:
        more = f" ({len(problems) - 1} more bad lines)" if len(problems) > 1 else ""
        raise InstanceError(str(p), [problems[0] + more])
    if not jobs:
        raise InstanceError(str(p), ["holds no jobs"])
    return jobs


def job_type_profiles() -> dict[str, Profile]:
    """The model profile of every job type some profile measured."""
    out = {}
    for name in available_profiles():
        profile = load_profile(name)
        out.update({job_type: profile for job_type in profile.job_types})
    return out


def _lines(p: Path) -> list[str]:
    if not p.exists():
        raise InstanceError(str(p), ["file not found"])
    if p.is_dir():
        raise InstanceError(str(p), ["is a directory, not a Gavel trace"])
    try:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
        return raw.decode("utf-8").splitlines()
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError) as exc:
        raise InstanceError(str(p), [f"cannot be read as a Gavel trace ({type(exc).__name__})"]) from None


def _bad_field(job_type: str, data_dir: str, steps: str, arrival: str, scale: str, previous: float,
               models: dict[str, Profile]) -> tuple[str, str, str] | None:
    """(column, what is wrong, value) of the first bad field of a line, or None."""
    if job_type not in models:
        return "job type", "must name a job type measured in the model profiles (e.g. 'ResNet-50 (batch size 32)')", \
            job_type
    if data_dir not in ("0", "1"):
        return "needs data dir", "must be 0 or 1", data_dir
    if not steps.isdigit() or int(steps) == 0:
        return "total steps", "must be an integer > 0", steps
    try:
        when = float(arrival)
    except ValueError:
        when = math.nan
    if not (math.isfinite(when) and 0 <= when <= MAX_ARRIVAL):
        return "arrival", f"must be a number of seconds in [0, {MAX_ARRIVAL:.0e}]", arrival
    if when < previous:
        return "arrival", f"must not be earlier than the previous job's ({previous:g} s)", arrival
    if not scale.isdigit() or int(scale) == 0:
        return "scale factor", "must be an integer >= 1 (GPUs)", scale
    return None


def job_app(job: TraceJob, profile: Profile, index: int, arrival: float,
            types: tuple[str, ...]) -> tuple[ThemisApp, bool]:
    """The app of one trace job (module docstring); True when it falls back to one GPU."""
    curves = profile.job_types[job.job_type]
    scale = job.scale
    fallback = not any(scale in curves.get(t, {}) for t in types)
    if fallback:
        scale = 1
    thr = {t: curves.get(t, {}).get(scale, 0.0) for t in types}
    if not any(v > 0 for v in thr.values()):
        raise UsageError(f"job type {job.job_type!r} has no measured throughput on {', '.join(types)} GPUs")
    best = max(thr.values())
    tau = scale / best
    if job.steps * tau > MAX_WORK:
        raise UsageError(f"trace job {index}: {job.steps} steps of {job.job_type} exceed {MAX_WORK:.0e} GPU-seconds")
    app = ThemisApp(name=f"j{index}", arrival=arrival, phases=((ThemisJob(float(job.steps), tau, scale),),),
                    profile=COMPUTE_PROFILE, model=profile.name,
                    speeds=tuple((t, thr[t] / best) for t in types))
    return app, fallback


def generate_gavel(*, trace: str | Path | None = None, cluster: str | None = None, gpus: int | None = None,
                   apps: int | None = None, start: float = 0.0) -> ThemisInstance:
    """A Themis-family instance of a Gavel trace on a Gavel-like cluster: the preset ``cluster``
    (default ``gavel108``) or ``gpus`` GPUs split equally over V100, P100 and K80."""
    if apps is not None and (isinstance(apps, bool) or not isinstance(apps, int) or apps < 1):
        raise UsageError(f"apps must be an integer >= 1, got {apps!r}")
    if not (isinstance(start, (int, float)) and math.isfinite(start) and start >= 0):
        raise UsageError(f"start must be a number of seconds >= 0, got {start!r}")
    topology, cluster_name = _cluster(cluster, gpus)
    if not topology.typed:
        raise UsageError(f"cluster {cluster_name} names no GPU types; Gavel traces need a typed cluster (gavel108)")
    path = Path(trace) if trace is not None else DEFAULT_TRACE
    jobs = read_gavel_trace(path)
    chosen = [n for n, job in enumerate(jobs) if job.arrival - jobs[0].arrival >= start][:apps]
    if not chosen:
        raise UsageError(f"no trace job arrives {start:g} s or later after the first one; lower start")
    origin = jobs[chosen[0]].arrival
    profiles = job_type_profiles()
    made, fallback = [], 0
    for n in chosen:
        app, single = job_app(jobs[n], profiles[jobs[n].job_type], n, jobs[n].arrival - origin, topology.type_names)
        made.append(app)
        fallback += single
    meta: dict[str, Any] = {
        "generator": "gavel-trace", "trace": path.name, "cluster": cluster_name, "gpus": topology.num_gpus,
        "gpu_types": {t: topology.gpu_types.count(t) for t in topology.type_names},
        "jobs_in_trace": len(jobs), "apps_kept": len(made), "single_gpu_fallback": fallback,
        "time_origin_seconds": origin, "throughputs": "models/*.json job_types (Gavel simulation_throughputs.json)",
        "attribution": ATTRIBUTION,
    }
    if apps is not None or start:
        meta["slice"] = {"start_seconds": float(start), "apps": apps}
    stem = path.name.split(".")[0]
    name = (f"{stem}-{cluster_name}" + (f"-from{start:g}s" if start else "")
            + (f"-first{apps}" if apps is not None else ""))
    return ThemisInstance(name=name, topology=topology, apps=tuple(made), meta=meta)


def _cluster(name: str | None, gpus: int | None) -> tuple[GpuTopology, str]:
    if name is not None:
        topology = preset(name)
        if gpus is not None and gpus != topology.num_gpus:
            raise UsageError(f"cluster {name} has {topology.num_gpus} GPUs, not {gpus}; give one of the two")
        return topology, name
    if gpus is None:
        return preset("gavel108"), "gavel108"
    if isinstance(gpus, bool) or not isinstance(gpus, int) or gpus % 3:
        raise UsageError(f"a Gavel-like cluster splits its GPUs equally over 3 types; {gpus} is not a multiple of 3")
    return gavel(gpus // 3), f"gavel{gpus}"
