"""The straightforward implementation of the Themis-family run checker, one record at a time,
kept as the oracle of the array checker (``mlsched.sim.event_check``): both must report the same
problems on every record, valid or forged (tests/test_event_check_exact.py). The rules are the
module docstring of ``mlsched.sim.event_check``.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict

import numpy as np

from mlsched.instance.themis_physics import slowdown, speed
from mlsched.sim.event_check import T_ID_TOL, TIME_TOL, WORK_TOL
from mlsched.sim.themis_run import JobInterval, ThemisRun


def check_run(run: ThemisRun) -> list[str]:
    inst = run.instance
    problems: list[str] = []
    by_gpu: dict[int, list[tuple[float, float, int]]] = defaultdict(list)
    by_app_gpu: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    for h in run.holdings:
        if not 0 <= h.gpu < inst.num_gpus:
            problems.append(f"app {h.app} holds unknown GPU {h.gpu}")
            continue
        app = inst.apps[h.app]
        if (h.start < app.arrival - TIME_TOL or h.end > run.finish[h.app] + TIME_TOL or h.end < h.start
                or not (math.isfinite(h.start) and math.isfinite(h.end))):
            problems.append(f"app {h.app} holds GPU {h.gpu} over [{h.start}, {h.end}] outside its lifetime")
        if math.isfinite(h.start) and math.isfinite(h.end):
            by_gpu[h.gpu].append((h.start, h.end, h.app))
            by_app_gpu[h.app, h.gpu].append((h.start, h.end))
    for gpu, spans in by_gpu.items():
        spans.sort()
        for (_, e0, a0), (s1, _, a1) in zip(spans, spans[1:]):
            if s1 < e0 - TIME_TOL:
                problems.append(f"GPU {gpu} held by apps {a0} and {a1} at once near t = {s1}")
    problems += _demand(run)
    problems += _jobs(run, by_app_gpu)
    problems += _fairness(run)
    return problems


def _fairness(run: ThemisRun) -> list[str]:
    """Each app's T_id against W / min(R_C, D) N_avg (exact_share: W / min(R_C / N_avg, D)), N_avg
    summed app by app: the overlap of every app's lifetime with this one's, over its length; within
    T_ID_TOL of the overlaps with [0, finish] relative to those with the lifetime."""
    inst = run.instance
    lifetimes = [(app.arrival, float(end)) for app, end in zip(inst.apps, run.finish)]
    if not all(math.isfinite(end) and end > start for start, end in lifetimes):
        return []
    out = []
    for a, (app, (start, end)) in enumerate(zip(inst.apps, lifetimes)):
        overlap = sum(max(0.0, min(end, other_end) - max(start, other_start)) for other_start, other_end in lifetimes)
        until_finish = sum(max(0.0, min(end, other_end) - other_start) for other_start, other_end in lifetimes)
        n_avg = overlap / (end - start)
        if run.options.tid_mode == "paper":
            t_id = app.work / min(inst.num_gpus, app.demand) * n_avg
        else:
            t_id = app.work / min(inst.num_gpus / n_avg, app.demand)
        if not abs(run.t_id[a] - t_id) <= T_ID_TOL * until_finish / overlap * abs(t_id):   # NaN-safe
            out.append(f"app {a} has T_id {run.t_id[a]:.6g}, its lifetime gives {t_id:.6g} (N_avg {n_avg:.6g})")
    return out


def _demand(run: ThemisRun) -> list[str]:
    """Sweep each app's holdings: never more than D_a at once."""
    out = []
    events: dict[int, list[tuple[float, int]]] = defaultdict(list)
    for h in run.holdings:
        if math.isfinite(h.start) and math.isfinite(h.end):
            events[h.app] += [(h.start, 1), (h.end, -1)]
    for a, evs in events.items():
        held = np.cumsum([d for _, d in sorted(evs, key=lambda e: (e[0], e[1]))])
        if held.size and held.max() > run.instance.apps[a].demand:
            out.append(f"app {a} holds {held.max()} GPUs, above its demand {run.instance.apps[a].demand}")
    return out


def _merged(spans: list[tuple[float, float]]) -> tuple[list[float], list[float]]:
    """The union of ``spans`` as disjoint intervals (starts, ends), touching spans joined."""
    starts: list[float] = []
    ends: list[float] = []
    for s, e in sorted(spans):
        if ends and s <= ends[-1] + TIME_TOL:
            ends[-1] = max(ends[-1], e)
        else:
            starts.append(s)
            ends.append(e)
    return starts, ends


def _covered(union: tuple[list[float], list[float]], start: float, end: float) -> bool:
    """Whether one interval of the merged ``union`` covers [start, end]."""
    starts, ends = union
    k = bisect.bisect_right(starts, start + TIME_TOL) - 1
    return k >= 0 and ends[k] >= end - TIME_TOL


def _job(iv: JobInterval) -> str:
    return f"app {iv.app} phase {iv.phase} job {iv.job}"


def _jobs(run: ThemisRun, by_app_gpu: dict[tuple[int, int], list[tuple[float, float]]]) -> list[str]:
    inst = run.instance
    out = []
    delivered: dict[tuple[int, int, int], float] = defaultdict(float)
    phase_span: dict[tuple[int, int], list[float]] = {}
    on_gpu: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)
    held = {key: _merged(spans) for key, spans in by_app_gpu.items()}
    placements: dict[tuple[int, frozenset[int]], tuple[float, float]] = {}   # (app, GPUs) -> (S, speed)
    for iv in run.jobs:
        app = inst.apps[iv.app]
        job = app.phases[iv.phase][iv.job]
        if len(iv.gpus) > job.cap:
            out.append(f"{_job(iv)} runs on {len(iv.gpus)} GPUs, above its cap {job.cap}")
        due = min(iv.start + run.options.restart_overhead, iv.end)
        if not all(map(math.isfinite, (iv.start, iv.end, iv.resume))):
            out.append(f"{_job(iv)} has a time that is not finite")
        elif iv.end < iv.start - TIME_TOL:
            out.append(f"{_job(iv)} ends before it starts")
        if all(map(math.isfinite, (iv.start, iv.end, iv.resume))) and abs(iv.resume - due) > TIME_TOL:
            out.append(f"{_job(iv)} progresses from {iv.resume}, not from {due}")
        unknown = sorted(g for g in iv.gpus if not 0 <= g < inst.num_gpus)
        for g in unknown:
            out.append(f"{_job(iv)} runs on unknown GPU {g}")
        if not unknown:
            physics = placements.get((iv.app, iv.gpus))
            if physics is None:   # the placement's slowdown and speed depend on the app and the GPU set alone
                physics = placements[iv.app, iv.gpus] = (slowdown(app.profile, iv.gpus, inst.topology),
                                                         speed(app.speed_of, iv.gpus, inst.topology) if iv.gpus else 1.0)
            expected, rate = physics
            if not math.isclose(iv.slowdown, expected):
                out.append(f"{_job(iv)} runs with slowdown {iv.slowdown}, its placement gives {expected}")
            if iv.speed != rate:
                out.append(f"{_job(iv)} runs at speed {iv.speed}, its GPU types give {rate}")
        for g in iv.gpus:
            if not _covered(held.get((iv.app, g), ([], [])), iv.start, iv.end):
                out.append(f"{_job(iv)} runs on GPU {g} over [{iv.start}, {iv.end}] without holding it")
        gained = max(0.0, iv.end - iv.resume) * len(iv.gpus) * iv.speed / iv.slowdown
        delivered[iv.app, iv.phase, iv.job] += gained if math.isfinite(gained) else 0.0
        span = phase_span.setdefault((iv.app, iv.phase), [math.inf, -math.inf])
        if iv.start < span[0]:
            span[0] = iv.start
        if iv.end > span[1]:
            span[1] = iv.end
        for g in iv.gpus:
            on_gpu[iv.app, g].append((iv.start, iv.end))
    for (a, g), spans in on_gpu.items():
        spans.sort()
        for (_, e0), (s1, _) in zip(spans, spans[1:]):
            if s1 < e0 - TIME_TOL:
                out.append(f"app {a} runs two jobs on GPU {g} at once near t = {s1}")
    for a, app in enumerate(inst.apps):
        for p, phase in enumerate(app.phases):
            for j, job in enumerate(phase):
                if delivered[a, p, j] < job.work * (1 - WORK_TOL):
                    out.append(f"app {a} phase {p} job {j} got {delivered[a, p, j]:.6g} of {job.work:.6g} GPU-seconds")
                if delivered[a, p, j] > job.work * (1 + WORK_TOL):
                    out.append(f"app {a} phase {p} job {j} got {delivered[a, p, j]:.6g} of {job.work:.6g} GPU-seconds: "
                               f"it ran past its completion")
            if p > 0 and (a, p) in phase_span and (a, p - 1) in phase_span:
                if phase_span[a, p][0] < phase_span[a, p - 1][1] - TIME_TOL:
                    out.append(f"app {a} phase {p} starts before phase {p - 1} ends")
        last = phase_span.get((a, len(app.phases) - 1))
        if last is None or not math.isclose(last[1], run.finish[a], rel_tol=1e-9, abs_tol=TIME_TOL):
            out.append(f"app {a} finish {run.finish[a]} is not the end of its last job")
    return out
