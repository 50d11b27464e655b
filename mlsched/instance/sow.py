"""The ``sow`` instance family (truthful SoW spec §1): one job per owner, each with a statement of
work (SoW) S_j = (d_j, v_j, F_j), scheduled on C identical nodes over rounds 1..T.

A document::

    {"format": "mlsched/v1", "family": "sow", "name": "T3",
     "capacity": 6, "d_max": 1, "max_duration": 2, "max_value": 4, "window": 3,   # C, d_max, D, V, Delta
     "horizon": 8,                                                               # T (optional)
     "jobs": [{"id": "j1", "birth": 1, "width": 1,                               # b_j, d_j
               "values": [4, 4, 4],                                              # v_j(b_j + i), i = 0..
               "support": [{"arrival": 2, "duration": 1, "signal": 1, "prob": 1}],   # F_j
               "reported": {"width": 2}}, ...]}                                  # optional misreport

Rules (§1.2): 1 <= d_j <= d_max; ``values`` lists v_j(b_j), v_j(b_j + 1), ... and at most Delta of
them (v_j(c) = 0 from b_j + Delta on, and past the list's end); values are non-increasing and each
is 0 or in [1, V]; every support point has arrival a >= b_j, duration 1 <= l <= D, an integer signal
(default: the duration, sigma = l) and probability > 0; support points are distinct and their
probabilities sum to 1. Jobs are listed in submission order (births non-decreasing); same-round
births are processed in list order (A12). ``reported`` replaces any of ``width``, ``values``,
``support`` in what the mechanism sees; the job's true SoW still decides its realization and value.

Stochastic variant (§1.4): a job may give ``"distribution": [{"prob": p, "width": ..., "values": ...,
"support": [...]}, ...]`` (G_j, probabilities summing to 1) in place of its own width, values and
support; its SoW is drawn from G_j before the run (:meth:`SowInstance.concrete`), and the first entry
stands for it until then. Such jobs take no ``reported`` SoW.
Without ``horizon``, T = max_j b_j + Delta + D (A14). Completion of a job started at s with duration
l is c = s + l - 1 (A2, :func:`completion`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from mlsched.instance.fields import Fields, with_optional

FAMILY = "sow"
MAX_ROUNDS = 100_000
MAX_SUPPORT = 10_000
MAX_PRICE_CELLS = 10_000_000   # T x D: the interval-price table of a round (start round by duration)
PROB_TOLERANCE = 1e-9
_TOP = {"format", "family", "name", "capacity", "d_max", "max_duration", "max_value", "window", "horizon", "jobs",
        "expected", "meta"}
_SOW_KEYS = {"width", "values", "support"}


def completion(start: int, duration: int) -> int:
    """c = s + l - 1: the last round a job started at s with duration l runs (A2)."""
    return start + duration - 1


@dataclass(frozen=True)
class SupportPoint:
    arrival: int       # a
    duration: int      # l
    signal: int        # sigma
    prob: float        # F(a, l, sigma)


@dataclass(frozen=True)
class Sow:
    """A statement of work (d, v, F); ``values[i]`` is v(b + i)."""

    width: int
    values: tuple[float, ...]
    support: tuple[SupportPoint, ...]

    def value_table(self, birth: int, rounds: int) -> npt.NDArray[np.float64]:
        """v(c) for absolute rounds c = 0..rounds - 1 (0 before the birth and past the list)."""
        table = np.zeros(rounds)
        end = min(rounds, birth + len(self.values))
        if end > birth:
            table[birth:end] = self.values[:end - birth]
        return table

    def value(self, birth: int, c: int) -> float:
        i = c - birth
        return float(self.values[i]) if 0 <= i < len(self.values) else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"width": self.width, "values": list(self.values),
                "support": [{"arrival": p.arrival, "duration": p.duration, "signal": p.signal, "prob": p.prob}
                            for p in self.support]}


@dataclass(frozen=True)
class Realization:
    """The realized (a_j, l_j, sigma_j) of every job, in job order, drawn from the true SoWs."""

    arrival: tuple[int, ...]
    duration: tuple[int, ...]
    signal: tuple[int, ...]
    sow_index: tuple[int, ...] = ()     # stochastic variant: each job's draw from G_j


@dataclass(frozen=True)
class SowJob:
    id: str
    birth: int                     # b_j
    sow: Sow                       # the true SoW (stochastic variant: G_j's first, until a draw)
    report: Sow | None = None      # a misreport, when given
    distribution: tuple[tuple[float, Sow], ...] = ()   # G_j of the stochastic variant

    @property
    def reported(self) -> Sow:
        return self.sow if self.report is None else self.report

    @property
    def width(self) -> int:
        return self.sow.width


@dataclass(frozen=True)
class SowInstance:
    name: str
    capacity: int          # C
    d_max: int
    max_duration: int      # D
    max_value: float       # V
    window: int            # Delta
    jobs: tuple[SowJob, ...]
    horizon_given: int | None = None
    expected: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    family: ClassVar[str] = FAMILY

    @property
    def num_jobs(self) -> int:
        return len(self.jobs)

    @property
    def horizon(self) -> int:
        """T: given, or max_j b_j + Delta + D (A14)."""
        if self.horizon_given is not None:
            return self.horizon_given
        return max((j.birth for j in self.jobs), default=1) + self.window + self.max_duration

    def last_start(self, job: SowJob) -> int:
        """The last useful start round: min(T, b_j + Delta - 1)."""
        return min(self.horizon, job.birth + self.window - 1)

    @property
    def stochastic(self) -> bool:
        return any(j.distribution for j in self.jobs)

    def sow_choices(self, j: int) -> tuple[tuple[float, Sow], ...]:
        """G_j: (probability, SoW) pairs; a job with a fixed SoW has one, of probability 1."""
        job = self.jobs[j]
        return job.distribution or ((1.0, job.sow),)

    def concrete(self, sow_index: tuple[int, ...]) -> SowInstance:
        """The instance with each stochastic job's SoW drawn (``sow_index[j]`` into G_j)."""
        if not self.stochastic:
            return self
        jobs = tuple(replace(job, sow=self.sow_choices(j)[k][1], distribution=()) if job.distribution else job
                     for j, (job, k) in enumerate(zip(self.jobs, sow_index, strict=True)))
        return replace(self, jobs=jobs, expected={})

    def support_points(self) -> int:
        """The number of joint realizations: the product over jobs of their (SoW, support point) pairs."""
        return math.prod(sum(len(s.support) for _, s in self.sow_choices(j)) for j in range(self.num_jobs))

    def with_jobs(self, jobs: tuple[SowJob, ...]) -> SowInstance:
        return replace(self, jobs=jobs, expected={})

    def describe(self) -> str:
        return (f"{self.num_jobs} jobs on C = {self.capacity} nodes, d_max {self.d_max}, D {self.max_duration}, "
                f"Delta {self.window}, V {self.max_value:g}, T {self.horizon}")

    def to_dict(self) -> dict[str, Any]:
        def job(j: SowJob) -> dict[str, Any]:
            if j.distribution:
                return {"id": j.id, "birth": j.birth,
                        "distribution": [{"prob": p, **s.to_dict()} for p, s in j.distribution]}
            doc: dict[str, Any] = {"id": j.id, "birth": j.birth, **j.sow.to_dict()}
            if j.report is not None:
                doc["reported"] = j.report.to_dict()
            return doc

        doc: dict[str, Any] = {"format": "mlsched/v1", "family": FAMILY, "name": self.name,
                               "capacity": self.capacity, "d_max": self.d_max, "max_duration": self.max_duration,
                               "max_value": self.max_value, "window": self.window,
                               "jobs": [job(j) for j in self.jobs]}
        return with_optional(doc, horizon=self.horizon_given, expected=self.expected, meta=self.meta)


def read_sow(top: Fields) -> SowInstance:
    """Validate a sow document; every problem is recorded on ``top.problems``."""
    top.unknown_keys(_TOP)
    capacity = int(top.number("capacity", integer=True, minimum=1, maximum=10**9) or 1)
    d_max = int(top.number("d_max", integer=True, minimum=1, maximum=10**6) or 1)
    max_duration = int(top.number("max_duration", integer=True, minimum=1, maximum=MAX_ROUNDS) or 1)
    max_value = float(top.number("max_value", minimum=1, maximum=1e12) or 1.0)
    window = int(top.number("window", integer=True, minimum=1, maximum=MAX_ROUNDS) or 1)
    limits = _Limits(d_max, max_duration, max_value, window)
    jobs = []
    for n, f in enumerate(top.objects("jobs")):
        f.unknown_keys({"id", "birth", "reported", "distribution"} | _SOW_KEYS)
        birth = int(f.number("birth", integer=True, minimum=1, maximum=MAX_ROUNDS) or 1)
        job_id = f.string("id", default=str(n + 1))
        if f.has("distribution"):
            jobs.append(_stochastic_job(f, job_id, birth, limits))
            continue
        sow = _read_sow(f, birth, limits, None)
        report = None
        if f.has("reported"):
            rf = f.obj("reported")
            rf.unknown_keys(_SOW_KEYS)
            report = _read_sow(rf, birth, limits, sow)
        jobs.append(SowJob(id=job_id, birth=birth, sow=sow, report=report))
    seen: dict[str, int] = {}
    for n, j in enumerate(jobs):
        if j.id in seen:
            top.problems.add(f"jobs[{n}].id", f"repeats the id of jobs[{seen[j.id]}] ({j.id!r})")
        seen.setdefault(j.id, n)
        if n and j.birth < jobs[n - 1].birth:
            top.problems.add(f"jobs[{n}].birth", f"{j.birth} is before the previous job's birth "
                                                 f"{jobs[n - 1].birth}; list jobs in submission order")
    horizon = top.number("horizon", default=None, integer=True, minimum=1, maximum=MAX_ROUNDS)
    rounds = horizon or max((j.birth for j in jobs), default=1) + window + max_duration
    if rounds * max_duration > MAX_PRICE_CELLS:
        top.problems.add("max_duration", f"T x D = {rounds} x {max_duration} rounds exceeds {MAX_PRICE_CELLS:.0e} "
                                         "(the table of interval prices of a round)")
    extras = top.free_objects("expected", "meta")
    return SowInstance(name=top.string("name", default="unnamed"), capacity=capacity, d_max=d_max,
                       max_duration=max_duration, max_value=max_value, window=window, jobs=tuple(jobs),
                       horizon_given=None if horizon is None else int(horizon), expected=extras[0], meta=extras[1])


@dataclass(frozen=True)
class _Limits:
    d_max: int
    max_duration: int
    max_value: float
    window: int


def _stochastic_job(f: Fields, job_id: str, birth: int, limits: _Limits) -> SowJob:
    """A job of the stochastic variant: G_j, a list of (prob, SoW) with probabilities summing to 1."""
    for key in ("reported", *sorted(_SOW_KEYS)):
        if f.has(key):
            f.problems.add(f"{f.path}.{key}", "a job with a distribution takes its SoWs from it; remove this field")
    choices = []
    for g in f.objects("distribution", min_items=1):
        g.unknown_keys({"prob"} | _SOW_KEYS)
        choices.append((float(g.number("prob", greater_than=0, maximum=1) or 0.0), _read_sow(g, birth, limits, None)))
    total = sum(p for p, _ in choices)
    if choices and abs(total - 1.0) > PROB_TOLERANCE:
        f.problems.add(f"{f.path}.distribution", f"probabilities sum to {total:.12g}, not 1")
    first = choices[0][1] if choices else Sow(width=1, values=(), support=())
    return SowJob(id=job_id, birth=birth, sow=first, distribution=tuple(choices))


def _read_sow(f: Fields, birth: int, limits: _Limits, truth: Sow | None) -> Sow:
    """A SoW's fields; a reported SoW (``truth`` given) takes the truth's for any field it omits."""
    if truth is not None and not f.has("width"):
        width = truth.width
    else:
        width = int(f.number("width", integer=True, minimum=1, maximum=limits.d_max) or 1)
    values = truth.values if truth is not None and not f.has("values") else _values(f, limits)
    support = truth.support if truth is not None and not f.has("support") else _support(f, birth, limits)
    return Sow(width=width, values=values, support=support)


def _values(f: Fields, limits: _Limits) -> tuple[float, ...]:
    raw = f.raw("values")
    path = f"{f.path}.values"
    if not isinstance(raw, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                            and math.isfinite(x) for x in raw):
        if raw is not None:
            f.problems.add(path, "must be a list of finite numbers")
        return ()
    if len(raw) > limits.window:
        f.problems.add(path, f"lists {len(raw)} values; v(c) = 0 from b + Delta on, so at most Delta = "
                             f"{limits.window}")
    for i, x in enumerate(raw):
        if x != 0 and not 1 <= x <= limits.max_value:
            f.problems.add(f"{path}[{i}]", f"must be 0 or in [1, V = {limits.max_value:g}], got {x:g}")
        if i and x > raw[i - 1]:
            f.problems.add(f"{path}[{i}]", f"{x:g} exceeds the value before it ({raw[i - 1]:g}); v is non-increasing")
    return tuple(float(x) for x in raw[:limits.window])


def _support(f: Fields, birth: int, limits: _Limits) -> tuple[SupportPoint, ...]:
    points = []
    for p in f.objects("support", min_items=1):
        p.unknown_keys({"arrival", "duration", "signal", "prob"})
        a = int(p.number("arrival", integer=True, minimum=birth, maximum=MAX_ROUNDS) or birth)
        l = int(p.number("duration", integer=True, minimum=1, maximum=limits.max_duration) or 1)
        sigma = p.number("signal", default=l, integer=True, minimum=-(2**31), maximum=2**31)
        prob = float(p.number("prob", greater_than=0, maximum=1) or 0.0)
        points.append(SupportPoint(arrival=a, duration=l, signal=int(sigma), prob=prob))
        if len(points) > MAX_SUPPORT:
            f.problems.add(f"{f.path}.support", f"has more than {MAX_SUPPORT} points")
            break
    keys = [(q.arrival, q.duration, q.signal) for q in points]
    if len(set(keys)) != len(keys):
        f.problems.add(f"{f.path}.support", "repeats an (arrival, duration, signal) point; merge their probabilities")
    total = sum(q.prob for q in points)
    if points and abs(total - 1.0) > PROB_TOLERANCE:
        f.problems.add(f"{f.path}.support", f"probabilities sum to {total:.12g}, not 1")
    return tuple(points)
