"""Themis workloads W1 and W2 from the Microsoft Philly trace (spec §5.3, A24, A25, A29).

Source: a Philly job CSV (``timestamp,duration,num_gpus,gpu_time,cluster``; the AdaptDL copy).
The default is the trimmed sample shipped in ``mlsched/data/traces/`` (the window's jobs with <= 2
GPUs, cut by ``tools/trim_philly_trace.py``); the full copy can be passed as ``trace``.

1. Jobs submitted in [2017-10-01 00:00, 2017-10-15 00:00) with ``num_gpus <= 2`` (A24).
2. Apps by chain (A29): jobs of one ``cluster`` (the user) with equal ``num_gpus``, in submit
   order; a job submitted more than 60 s after the previous job of its group starts a new app.
   Apps are numbered by (first submit, cluster, num_gpus); app ``a{i}`` keeps its number
   whatever subset is kept.
3. Every app draws, from one seeded stream and in that order, whatever the options: a keep
   uniform u, a model from the Gavel trace's model mix (``gavel-model-mix.csv``), a placement
   uniform v, and the W2 shape (n jobs in {4, 8, 16, 32}, phase-1 cap in {1, 2, 4}). An app is
   kept iff u < p = min(1, load * gpus / 156), so one seed gives nested app sets: ``gpus=32,
   load=2`` keeps exactly the apps of ``gpus=64, load=1`` (Fig. 14 contention: same apps, smaller
   cluster). Its profile is network-intensive iff v < p_net (A10, §5.3 [OURS]).
4. Arrival = submit time of the app's first job minus that of the first kept app (the first kept
   app arrives at 0; ``meta.time_origin`` keeps the absolute time).
5. tau = the model's K80 iteration time (the testbed has K80s); a job's work W is its
   ``gpu_time`` (= duration * num_gpus, serial GPU-seconds) and its iterations W / tau.

W1: one phase holding the app's jobs, cap = num_gpus (1 or 2), run concurrently.
W2 (A25): same kept apps, arrivals, models and profiles. n jobs, P = log2(n) + 1 phases of n,
n/2, ..., 1 jobs with cap min(8, c1 * 2^(p-1)) in phase p; budget B = the app's W1 work. Every job
uses the app's model tau. Phases 1..P-1 get floor((B / P) / (jobs * tau)) iterations per job
(spec §1.6); when that floor is 0 the phase gets its exact share B / P instead (fractional
iterations; counted in ``meta.w2_fractional_phases``); the last phase takes what remains, so the
total work is B.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlsched.errors import InstanceError, UsageError
from mlsched.instance.generators.philly import (  # noqa: F401 (COLUMNS, read_philly: the trace's readers)
    ATTRIBUTION, COLUMNS, TIME_FORMAT, bad_rows, read_csv, read_philly, require_columns)
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, NETWORK_PROFILE, ThemisApp, ThemisInstance, ThemisJob
from mlsched.instance.themis_clusters import preset, testbed
from mlsched.profiles import available_profiles, load_profile
from mlsched.resources import data_file

TRACES = Path(str(data_file("traces")))
DEFAULT_TRACE = TRACES / "philly-2017-10-01-to-15-le2gpu.csv.gz"
DEFAULT_MODEL_MIX = TRACES / "gavel-model-mix.csv"
WINDOW = ("2017-10-01 00:00:00", "2017-10-15 00:00:00")
MAX_GPUS = 2
CHAIN_GAP = 60.0
BUSY_GPUS = 156.0            # mean busy GPUs of the window's <= 2-GPU jobs (A29)
GPU_TYPE = "k80"
W2_JOBS = (4, 8, 16, 32)
W2_FIRST_CAPS = (1, 2, 4)
W2_MAX_CAP = 8
WORKLOADS = ("W1", "W2")


def window_jobs(jobs: pd.DataFrame, window: tuple[str, str] = WINDOW, max_gpus: int = MAX_GPUS) -> pd.DataFrame:
    """Jobs submitted in [start, end) with at most ``max_gpus`` GPUs (A24)."""
    start, end = (int(pd.Timestamp(t).timestamp()) for t in window)
    keep = (jobs["submit"] >= start) & (jobs["submit"] < end) & (jobs["num_gpus"] <= max_gpus)
    return jobs[keep].reset_index(drop=True)


def group_apps(jobs: pd.DataFrame, gap: float = CHAIN_GAP, *, from_first: bool = False) -> np.ndarray:
    """App number of every job (A29): same cluster and num_gpus, each job within ``gap`` seconds
    of the previous job of the group (``from_first``: of the group's first job instead). Apps are
    numbered by (first submit, cluster, num_gpus)."""
    cluster = np.unique(jobs["cluster"].to_numpy(dtype=str), return_inverse=True)[1]
    gpus = jobs["num_gpus"].to_numpy()
    submit = jobs["submit"].to_numpy()
    order = np.lexsort((submit, gpus, cluster))
    cluster, gpus, submit = cluster[order], gpus[order], submit[order]
    new = np.ones(len(order), dtype=bool)
    new[1:] = (cluster[1:] != cluster[:-1]) | (gpus[1:] != gpus[:-1])
    if from_first:
        start = 0
        for i in range(1, len(order)):
            if new[i] or submit[i] - submit[start] > gap:
                new[i] = True
                start = i
    else:
        new[1:] |= np.diff(submit) > gap
    starts = np.flatnonzero(new)
    rank = np.empty(len(starts), dtype=np.int64)
    rank[np.lexsort((gpus[starts], cluster[starts], submit[starts]))] = np.arange(len(starts))
    app = np.empty(len(order), dtype=np.int64)
    app[order] = rank[np.cumsum(new) - 1]
    return app


def read_model_mix(path: str | Path = DEFAULT_MODEL_MIX) -> tuple[tuple[str, ...], np.ndarray]:
    """Profile names and their probabilities from a ``job_type,jobs`` CSV of Gavel job types
    ("ResNet-50 (batch size 64)"); batch sizes are merged into the model's one profile."""
    p = Path(path)
    frame = read_csv(p)
    require_columns(p, frame, ("job_type", "jobs"))
    by_model = {load_profile(name).model: name for name in available_profiles()}
    counts = pd.to_numeric(frame["jobs"], errors="coerce")
    problems = bad_rows(frame, "jobs", ~(np.isfinite(counts) & (counts >= 0) & (counts == np.floor(counts))),
                    "must be an integer >= 0")
    models = frame["job_type"].str.replace(r" \(batch size \d+\)$", "", regex=True)
    problems += bad_rows(frame, "job_type", ~models.isin(list(by_model)),
                     f"must name a model with a profile in models/ ({', '.join(sorted(by_model))})")
    if not problems and counts.sum() <= 0:
        problems.append("column 'jobs': counts sum to 0")
    if problems:
        raise InstanceError(str(p), problems)
    weights = counts.groupby(models.map(by_model)).sum().sort_index()
    return tuple(weights.index), weights.to_numpy(dtype=float) / weights.sum()


def generate_themis(*, workload: str = "W1", gpus: int | None = None, seed: int = 0, load: float = 1.0,
                    p_net: float = 0.5, trace: str | Path | None = None,
                    cluster: str | None = None, apps: int | None = None, start: float = 0.0) -> ThemisInstance:
    """A seeded W1 or W2 instance. The cluster is the preset ``cluster`` (testbed64, sim_hetero,
    sim_256, truth64) or else the testbed-like cluster of ``gpus`` GPUs (default 64); ``gpus`` also
    sets the keep probability, and must match the preset's GPU count when both are given.

    ``start`` (seconds after the first kept app's arrival) and ``apps`` cut a slice: the first
    ``apps`` kept apps arriving at or after ``start``, re-timed so that the first arrives at 0.
    An app's model, profile and W2 shape do not depend on the slice."""
    if apps is not None and (isinstance(apps, bool) or not isinstance(apps, (int, np.integer)) or apps < 1):
        raise UsageError(f"apps must be an integer >= 1, got {apps!r}")
    if not (isinstance(start, (int, float)) and math.isfinite(start) and start >= 0):
        raise UsageError(f"start must be a number of seconds >= 0, got {start!r}")
    if workload not in WORKLOADS:
        raise UsageError(f"unknown workload {workload!r}; choose {', '.join(WORKLOADS)}")
    if not (isinstance(load, (int, float)) and math.isfinite(load) and load > 0):
        raise UsageError(f"load must be a number > 0, got {load!r}")
    if not (isinstance(p_net, (int, float)) and 0 <= p_net <= 1):
        raise UsageError(f"p_net must lie in [0, 1], got {p_net!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise UsageError(f"seed must be an integer >= 0, got {seed!r}")
    topology, cluster_name = _cluster(cluster, gpus)
    path = Path(trace) if trace is not None else DEFAULT_TRACE
    jobs = window_jobs(read_philly(path))
    if jobs.empty:
        raise UsageError(f"{path}: no jobs with <= {MAX_GPUS} GPUs submitted in [{WINDOW[0]}, {WINDOW[1]})")
    jobs["app"] = group_apps(jobs)
    n_apps = int(jobs["app"].max()) + 1
    names, weights = read_model_mix()
    taus = np.array([load_profile(name).iteration_seconds[GPU_TYPE] for name in names])

    rng = np.random.default_rng(int(seed))
    keep_u = rng.random(n_apps)
    model = rng.choice(len(names), size=n_apps, p=weights)
    net_u = rng.random(n_apps)
    n_jobs = rng.choice(W2_JOBS, size=n_apps)
    first_cap = rng.choice(W2_FIRST_CAPS, size=n_apps)

    p = min(1.0, load * topology.num_gpus / BUSY_GPUS)
    kept = np.flatnonzero(keep_u < p)
    if not len(kept):
        raise UsageError(f"no app kept (keep probability {p:.3g}); raise load or gpus")
    by_app = np.argsort(jobs["app"].to_numpy(), kind="stable")      # jobs of each app, in submit order
    bounds = np.searchsorted(jobs["app"].to_numpy()[by_app], np.arange(n_apps + 1))
    submit = jobs["submit"].to_numpy()[by_app]
    gpu_time = jobs["gpu_time"].to_numpy(dtype=float)[by_app]
    num_gpus = jobs["num_gpus"].to_numpy()[by_app]
    first_submit = submit[bounds[:-1]]
    by_arrival = kept[np.argsort(first_submit[kept], kind="stable")]
    kept = np.sort(by_arrival[first_submit[by_arrival] - first_submit[by_arrival[0]] >= start][:apps])
    if not len(kept):
        raise UsageError(f"no app kept arrives {start:g} s or later after the first one; lower start")
    origin = int(first_submit[kept].min())
    made: list[ThemisApp] = []
    fractional = 0
    for a in kept:
        members = slice(bounds[a], bounds[a + 1])
        tau = float(taus[model[a]])
        work = gpu_time[members]
        if workload == "W1":
            phases = (tuple(ThemisJob(iterations=float(w / tau), tau=tau, cap=int(g))
                            for w, g in zip(work, num_gpus[members])),)
        else:
            phases, short = _successive_halving(float(work.sum()), tau, int(n_jobs[a]), int(first_cap[a]))
            fractional += short
        made.append(ThemisApp(name=f"a{a}", arrival=float(first_submit[a] - origin), phases=phases,
                              profile=NETWORK_PROFILE if net_u[a] < p_net else COMPUTE_PROFILE,
                              model=names[model[a]]))
    meta: dict[str, Any] = {
        "generator": "themis", "workload": workload, "seed": int(seed), "load": float(load), "p_net": float(p_net),
        "cluster": cluster_name, "gpus": topology.num_gpus, "trace": path.name, "model_mix": DEFAULT_MODEL_MIX.name,
        "window": list(WINDOW), "max_gpus_per_job": MAX_GPUS,
        "grouping": f"chain: same cluster and num_gpus, each job within {CHAIN_GAP:g} s of the previous one",
        "jobs_in_window": len(jobs), "apps_total": n_apps, "apps_kept": len(made), "keep_probability": p,
        "busy_gpus": BUSY_GPUS, "time_origin": pd.Timestamp(origin, unit="s").strftime(TIME_FORMAT),
        "tau_gpu_type": GPU_TYPE, "attribution": ATTRIBUTION,
    }
    if workload == "W2":
        meta["w2_fractional_phases"] = fractional
    if apps is not None or start:
        meta["slice"] = {"start_seconds": float(start), "apps": apps}
    name = (f"themis-{workload.lower()}-{cluster_name}-s{seed}" + (f"-load{load:g}" if load != 1 else "")
            + (f"-from{start:g}s" if start else "") + (f"-first{apps}" if apps is not None else ""))
    return ThemisInstance(name=name, topology=topology, apps=tuple(made), meta=meta)


def _successive_halving(budget: float, tau: float, n: int, first_cap: int) -> tuple[tuple[tuple[ThemisJob, ...], ...], int]:
    """Phases of n, n/2, ..., 1 jobs sharing ``budget`` GPU-seconds by the §1.6 rule."""
    count = int(math.log2(n)) + 1
    phases = []
    spent = 0.0
    fractional = 0
    for p in range(count):
        jobs = n >> p
        cap = min(W2_MAX_CAP, first_cap << p)
        if p < count - 1:
            share = (budget / count) / (jobs * tau)
            iterations = float(math.floor(share))
            if iterations == 0:
                iterations = share
                fractional += 1
        else:
            iterations = (budget - spent) / (jobs * tau)
        spent += iterations * jobs * tau
        phases.append(tuple(ThemisJob(iterations=iterations, tau=tau, cap=cap) for _ in range(jobs)))
    return tuple(phases), fractional


def _cluster(name: str | None, gpus: int | None) -> tuple[GpuTopology, str]:
    if name is None:
        gpus = 64 if gpus is None else gpus
        return testbed(gpus), "testbed64" if gpus == 64 else f"testbed{gpus}"
    topology = preset(name)
    if gpus is not None and gpus != topology.num_gpus:
        raise UsageError(f"cluster {name} has {topology.num_gpus} GPUs, not {gpus}; give one of the two")
    return topology, name
