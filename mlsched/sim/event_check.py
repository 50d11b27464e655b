"""Independent checker of a Themis-family run record (Themis spec §3.3, §4 T8).

It re-derives every claim from the record alone (GPU holdings and job intervals) and the
instance, without the engine's state:

- every GPU id exists and no GPU is held by two apps at once;
- an app holds GPUs only between its arrival and its finish, never more than its demand D_a;
- each job interval runs on existing GPUs its app holds throughout, at most the job's cap, disjoint from
  the app's other jobs running at the same time, with the slowdown s[level(G)] of its placement
  and the app's speed on the slowest GPU type of G (heterogeneous clusters);
- every time is finite; a job interval ends no earlier than it starts, and progresses from its
  resume time, min(start + restart overhead, end), since every interval starts on a new GPU set (A18);
- phases run in order, every job's work is delivered (sum of (end - resume) |G| speed / S) and no
  more (a job's intervals end at its completion), and the app's finish is the end of its last job;
- each app's T_id is that of its lifetime in the record (§1.5, A11, A13): W / min(R_C, D_a) N_avg
  (``tid_mode="exact_share"``: W / min(R_C / N_avg, D_a)), N_avg the time-weighted mean number of
  apps active (arrived, not finished) over [arrival, finish], itself included; within T_ID_TOL of
  the active count's integral from time 0 to the app's finish, relative to that integral over its
  lifetime (a run sums the integral over all its events, so its rounding grows with the run).

A record holds about a million intervals on a long run, so the checks run on arrays, one column
per field: overlaps are found between neighbours after sorting by (GPU, start, end), an interval's
holding by the last merged holding that starts at or before it, the work delivered by
``np.bincount`` (which adds each job's intervals in record order, as a loop would), N_avg from the
integral of the active count, sum_b ((t - arrival_b)^+ - (t - finish_b)^+), at each arrival and
finish. The one-record-at-a-time form is kept as the oracle of this one (tests/event_check_reference.py).
"""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np
import pandas as pd

from mlsched.errors import MlschedError
from mlsched.instance.themis_physics import slowdown, speed
from mlsched.sim.themis_run import Holding, JobInterval, ThemisRun

TIME_TOL = 1e-6
WORK_TOL = 1e-6
T_ID_TOL = 1e-9   # the record's T_id against its lifetime's, relative to the active count's integral up to its finish


class RunViolation(MlschedError):
    def __init__(self, policy: str, violations: list[str]) -> None:
        shown = "; ".join(violations[:5]) + (f"; and {len(violations) - 5} more" if len(violations) > 5 else "")
        super().__init__(f"{policy}: run record violates the model: {shown}")
        self.violations = violations


class _Holdings:
    """The record's holdings as columns; ``known``: the GPU id exists; ``finite``: both times are
    finite; ``usable``: both (a holding with a time that is not finite is reported and otherwise
    ignored)."""

    def __init__(self, run: ThemisRun) -> None:
        records = run.holdings
        self.app, self.gpu = (_column(records, Holding._fields.index(f), np.int64) for f in ("app", "gpu"))
        self.start, self.end = (_column(records, Holding._fields.index(f), float) for f in ("start", "end"))
        self.known = (self.gpu >= 0) & (self.gpu < run.instance.num_gpus)
        self.finite = np.isfinite(self.start) & np.isfinite(self.end)
        self.usable = self.known & self.finite


def _column(records: list, field: int, dtype: type) -> np.ndarray:
    """One field of a list of named tuples as an array."""
    return np.fromiter(map(operator.itemgetter(field), records), dtype, len(records))


def check_run(run: ThemisRun) -> list[str]:
    holdings = _Holdings(run)
    return _holding_problems(run, holdings) + _demand(run, holdings) + _jobs(run, holdings) + _fairness(run)


def _holding_problems(run: ThemisRun, h: _Holdings) -> list[str]:
    """Unknown GPU ids, holdings outside the app's lifetime, a GPU held by two apps at once."""
    inst = run.instance
    arrival = np.array([a.arrival for a in inst.apps], dtype=float)
    app = np.where(h.known, h.app, 0)
    outside = h.known & ((h.start < arrival[app] - TIME_TOL) | (h.end > run.finish[app] + TIME_TOL) | (h.end < h.start)
                         | ~h.finite)
    out = []
    for i in np.flatnonzero(~h.known | outside):
        r = run.holdings[i]
        out.append(f"app {r.app} holds unknown GPU {r.gpu}" if not h.known[i] else
                   f"app {r.app} holds GPU {r.gpu} over [{r.start}, {r.end}] outside its lifetime")
    rows = np.flatnonzero(h.usable)
    for first, second in _overlapping(h.gpu[rows], h.start[rows], h.end[rows], h.app[rows]):
        a, b = run.holdings[rows[first]], run.holdings[rows[second]]
        out.append(f"GPU {b.gpu} held by apps {a.app} and {b.app} at once near t = {b.start}")
    return out


def _overlapping(key: np.ndarray, start: np.ndarray, end: np.ndarray,
                 tie: np.ndarray | None = None) -> list[tuple[int, int]]:
    """(i, j): spans of the same key, j next after i in the order (key, start, end, tie), with j
    starting before i ends (less the time tolerance)."""
    order = np.lexsort((end, start, key) if tie is None else (tie, end, start, key))
    k, s, e = key[order], start[order], end[order]
    hits = np.flatnonzero((k[1:] == k[:-1]) & (s[1:] < e[:-1] - TIME_TOL))
    return list(zip(order[hits].tolist(), order[hits + 1].tolist()))


def _demand(run: ThemisRun, h: _Holdings) -> list[str]:
    """Sweep each app's holdings, releases before grants at the same time: never more than D_a at
    once. Each app's grants and releases cancel, so the running sum over apps in turn is each app's."""
    held_by = h.app[h.finite]
    if not held_by.size:
        return []
    app = np.concatenate([held_by, held_by])
    time = np.concatenate([h.start[h.finite], h.end[h.finite]])
    step = np.concatenate([np.ones(held_by.size, np.int64), -np.ones(held_by.size, np.int64)])
    order = np.lexsort((step, time, app))
    held, app = np.cumsum(step[order]), app[order]
    firsts = np.flatnonzero(np.r_[True, app[1:] != app[:-1]])
    peaks = np.maximum.reduceat(held, firsts)
    demand = np.array([a.demand for a in run.instance.apps])
    return [f"app {a} holds {peak} GPUs, above its demand {demand[a]}"
            for a, peak in zip(app[firsts].tolist(), peaks.tolist()) if peak > demand[a]]


class _Jobs:
    """The instance's jobs flattened (app, phase, job in order) and the record's intervals as
    columns, with each interval's flat job and flat phase."""

    def __init__(self, run: ThemisRun) -> None:
        apps = run.instance.apps
        self.phase_first = np.cumsum([0] + [len(a.phases) for a in apps])           # by app
        sizes = [len(phase) for a in apps for phase in a.phases]
        self.job_first = np.cumsum([0] + sizes)                                     # by flat phase
        self.work = np.array([job.work for a in apps for phase in a.phases for job in phase], dtype=float)
        self.cap = np.array([job.cap for a in apps for phase in a.phases for job in phase], dtype=np.int64)
        self.where = [(a, p, j) for a, app in enumerate(apps) for p, phase in enumerate(app.phases)
                      for j in range(len(phase))]
        records, field = run.jobs, JobInterval._fields.index
        self.app = _column(records, field("app"), np.int64)
        self.start, self.end, self.resume, self.slowdown, self.speed = (
            _column(records, field(name), float) for name in ("start", "end", "resume", "slowdown", "speed"))
        self.gpus: list[frozenset[int]] = list(map(operator.itemgetter(field("gpus")), records))
        self.size = np.fromiter(map(len, self.gpus), np.int64, len(self.gpus))
        self.flat_phase = self.phase_first[self.app] + _column(records, field("phase"), np.int64)
        self.flat_job = self.job_first[self.flat_phase] + _column(records, field("job"), np.int64)


def _jobs(run: ThemisRun, h: _Holdings) -> list[str]:
    jobs = _Jobs(run)
    out = [f"{_job(run.jobs[i])} runs on {jobs.size[i]} GPUs, above its cap {jobs.cap[jobs.flat_job[i]]}"
           for i in np.flatnonzero(jobs.size > jobs.cap[jobs.flat_job])]
    out += _timing(run, jobs)
    out += _physics(run, jobs)
    out += _coverage(run, jobs, h)
    out += _delivery(run, jobs)
    return out


def _physics(run: ThemisRun, jobs: _Jobs) -> list[str]:
    """Each interval's GPU ids known, and its slowdown and speed those of its placement, derived
    once per (app, GPU set); an interval on an unknown GPU has no placement to compare with."""
    num_gpus = run.instance.num_gpus
    gpu_set, gpu_sets = pd.factorize(pd.Series(jobs.gpus, dtype=object))
    unknown_in = [sorted(g for g in gpus if not 0 <= g < num_gpus) for gpus in gpu_sets]
    off_cluster = np.array([bool(u) for u in unknown_in], dtype=bool)[gpu_set]
    out = [f"{_job(run.jobs[i])} runs on unknown GPU {g}" for i in np.flatnonzero(off_cluster)
           for g in unknown_in[gpu_set[i]]]
    sets = max(1, len(gpu_sets))
    placements, code = np.unique(jobs.app * sets + gpu_set, return_inverse=True)
    physics = np.array([(math.nan, math.nan) if unknown_in[p % sets] else _placement(run, p // sets, gpu_sets[p % sets])
                        for p in placements.tolist()]).reshape(-1, 2)
    expected, rate = physics[code, 0], physics[code, 1]
    placed = ~np.isnan(expected)
    for i in np.flatnonzero(placed & ~_isclose(jobs.slowdown, expected, 1e-9, 0.0)):
        iv = run.jobs[i]
        out.append(f"{_job(iv)} runs with slowdown {iv.slowdown}, its placement gives {float(expected[i])}")
    for i in np.flatnonzero(placed & (jobs.speed != rate)):
        out.append(f"{_job(run.jobs[i])} runs at speed {run.jobs[i].speed}, its GPU types give {float(rate[i])}")
    return out


def _placement(run: ThemisRun, app: int, gpus: frozenset[int]) -> tuple[float, float]:
    """(slowdown, speed) of app ``app`` running a job on ``gpus``."""
    inst = run.instance
    profile, speeds = inst.apps[app].profile, inst.apps[app].speed_of
    return slowdown(profile, gpus, inst.topology), speed(speeds, gpus, inst.topology) if gpus else 1.0


def _isclose(a: np.ndarray, b: np.ndarray, rel_tol: float, abs_tol: float) -> np.ndarray:
    """:func:`math.isclose` elementwise (equal, or finitely apart by at most the tolerances)."""
    with np.errstate(invalid="ignore"):
        apart = np.abs(a - b)
        allowed = np.maximum(rel_tol * np.maximum(np.abs(a), np.abs(b)), abs_tol)
        return (a == b) | (np.isfinite(apart) & (apart <= allowed))


def _timing(run: ThemisRun, jobs: _Jobs) -> list[str]:
    """Finite times; an interval ends no earlier than it starts; it progresses from
    min(start + restart overhead, end) on, no earlier and no later."""
    finite = np.isfinite(jobs.start) & np.isfinite(jobs.end) & np.isfinite(jobs.resume)
    due = np.minimum(jobs.start + run.options.restart_overhead, jobs.end)
    out = [f"{_job(run.jobs[i])} has a time that is not finite" for i in np.flatnonzero(~finite)]
    out += [f"{_job(run.jobs[i])} ends before it starts" for i in np.flatnonzero(finite & (jobs.end < jobs.start - TIME_TOL))]
    out += [f"{_job(run.jobs[i])} progresses from {run.jobs[i].resume}, not from {due[i]}"
            for i in np.flatnonzero(finite & (np.abs(jobs.resume - due) > TIME_TOL))]
    return out


def _coverage(run: ThemisRun, jobs: _Jobs, h: _Holdings) -> list[str]:
    """Each (interval, GPU) within one merged span of the app's holding of that GPU; no two jobs of
    an app on one GPU at once."""
    row = np.repeat(np.arange(jobs.size.size), jobs.size)
    gpu = np.fromiter(itertools.chain.from_iterable(jobs.gpus), np.int64, int(jobs.size.sum()))
    low = min(0, int(gpu.min(initial=0)))
    width = max(run.instance.num_gpus, int(gpu.max(initial=0)) + 1) - low
    key = jobs.app[row] * width + (gpu - low)
    held = np.flatnonzero(h.usable)
    span_key, span_start, span_end = _merged(h.app[held] * width + (h.gpu[held] - low), h.start[held], h.end[held])
    span = _last_at_or_before(span_key, span_start, key, jobs.start[row] + TIME_TOL)
    covered = span >= 0
    covered[covered] = span_end[span[covered]] >= jobs.end[row[covered]] - TIME_TOL
    out = []
    for p in np.flatnonzero(~covered):
        iv = run.jobs[row[p]]
        out.append(f"{_job(iv)} runs on GPU {gpu[p]} over [{iv.start}, {iv.end}] without holding it")
    for _first, second in _overlapping(key, jobs.start[row], jobs.end[row]):
        out.append(f"app {jobs.app[row[second]]} runs two jobs on GPU {gpu[second]} at once near t = "
                   f"{run.jobs[row[second]].start}")
    return out


def _merged(key: np.ndarray, start: np.ndarray, end: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The union of each key's spans as disjoint spans (key, start, end) in order of (key, start),
    touching spans (within the time tolerance) joined: a span opens a new one when it starts after
    every span of its key before it ends."""
    if not key.size:
        return key, start, end
    order = np.lexsort((end, start, key))
    key, start, end = key[order], start[order], end[order]
    reach = pd.Series(end).groupby(key, sort=False).cummax().to_numpy()
    opens = np.flatnonzero(np.r_[True, (key[1:] != key[:-1]) | (start[1:] > reach[:-1] + TIME_TOL)])
    return key[opens], start[opens], np.maximum.reduceat(end, opens)


def _last_at_or_before(span_key: np.ndarray, span_start: np.ndarray, key: np.ndarray, at: np.ndarray) -> np.ndarray:
    """For each (key, at), the index of the span of that key with the largest start <= at, or -1:
    ``bisect_right`` on each key's starts, all queries at once, the spans (in order of (key,
    start)) and the queries sorted together, spans first at equal times."""
    spans = span_key.size
    if not spans:
        return np.full(key.size, -1)
    kind = np.r_[np.zeros(spans, np.int8), np.ones(key.size, np.int8)]
    order = np.lexsort((kind, np.r_[span_start, at], np.r_[span_key, key]))
    last_span = np.maximum.accumulate(np.where(order < spans, order, -1))
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    found = last_span[position[spans:]]
    same_key = span_key[np.maximum(found, 0)] == key
    return np.where((found >= 0) & same_key, found, -1)


def _delivery(run: ThemisRun, jobs: _Jobs) -> list[str]:
    """Every job's work delivered; phases in order; each app's finish at the end of its last job."""
    apps = run.instance.apps
    gained = np.maximum(0.0, jobs.end - jobs.resume) * jobs.size * jobs.speed / jobs.slowdown
    gained[~np.isfinite(gained)] = 0.0   # an interval with a time that is not finite delivers nothing
    delivered = np.bincount(jobs.flat_job, weights=gained, minlength=jobs.work.size)
    out = []
    for f in np.flatnonzero(delivered < jobs.work * (1 - WORK_TOL)):
        a, p, j = jobs.where[f]
        out.append(f"app {a} phase {p} job {j} got {delivered[f]:.6g} of {jobs.work[f]:.6g} GPU-seconds")
    for f in np.flatnonzero(delivered > jobs.work * (1 + WORK_TOL)):
        a, p, j = jobs.where[f]
        out.append(f"app {a} phase {p} job {j} got {delivered[f]:.6g} of {jobs.work[f]:.6g} GPU-seconds: "
                   f"it ran past its completion")
    phases = jobs.phase_first[-1]
    ran = np.bincount(jobs.flat_phase, minlength=phases) > 0
    first, last = np.full(phases, math.inf), np.full(phases, -math.inf)
    np.fmin.at(first, jobs.flat_phase, jobs.start)   # a time that is not finite is reported by _timing
    np.fmax.at(last, jobs.flat_phase, jobs.end)
    for a, app in enumerate(apps):
        base = jobs.phase_first[a]
        for p in range(1, len(app.phases)):
            if ran[base + p] and ran[base + p - 1] and first[base + p] < last[base + p - 1] - TIME_TOL:
                out.append(f"app {a} phase {p} starts before phase {p - 1} ends")
        final = base + len(app.phases) - 1
        if not ran[final] or not math.isclose(last[final], run.finish[a], rel_tol=1e-9, abs_tol=TIME_TOL):
            out.append(f"app {a} finish {run.finish[a]} is not the end of its last job")
    return out


def _fairness(run: ThemisRun) -> list[str]:
    """Each app's T_id against the one its lifetime in the record gives (module docstring); not
    checked when some finish is not finite or not after its arrival (reported by :func:`_delivery`)."""
    inst = run.instance
    arrival = np.array([a.arrival for a in inst.apps], dtype=float)
    finish = np.asarray(run.finish, dtype=float)
    if not (np.all(np.isfinite(finish)) and np.all(finish > arrival)):
        return []
    starts, ends = np.sort(arrival), np.sort(finish)
    start_sums, end_sums = np.r_[0.0, np.cumsum(starts)], np.r_[0.0, np.cumsum(ends)]

    def active_integral(t: np.ndarray) -> np.ndarray:   # the integral of the active count from 0 to t
        began, ended = np.searchsorted(starts, t, side="right"), np.searchsorted(ends, t, side="right")
        return (began * t - start_sums[began]) - (ended * t - end_sums[ended])

    until_finish = active_integral(finish)
    lifetime_integral = until_finish - active_integral(arrival)
    n_avg = lifetime_integral / (finish - arrival)
    work = np.array([a.work for a in inst.apps], dtype=float)
    demand = np.array([a.demand for a in inst.apps], dtype=float)
    if run.options.tid_mode == "paper":
        t_id = work / np.minimum(inst.num_gpus, demand) * n_avg
    else:
        t_id = work / np.minimum(inst.num_gpus / n_avg, demand)
    recorded = np.asarray(run.t_id, dtype=float)
    allowed = T_ID_TOL * until_finish / lifetime_integral * np.abs(t_id)
    with np.errstate(invalid="ignore"):
        agree = np.abs(recorded - t_id) <= allowed   # NaN-safe
    return [f"app {a} has T_id {recorded[a]:.6g}, its lifetime gives {t_id[a]:.6g} (N_avg {n_avg[a]:.6g})"
            for a in np.flatnonzero(~agree)]


def _job(iv: JobInterval) -> str:
    return f"app {iv.app} phase {iv.phase} job {iv.job}"


def assert_valid_run(run: ThemisRun) -> None:
    problems = check_run(run)
    if problems:
        raise RunViolation(run.policy, problems)
