"""Misreport families and an agent's expected utility under a report (spec §3.4, Theorem 3.2, T9).

An agent's expected true utility under report S' is the probability-weighted mean, over every joint
realization drawn from the true SoWs, of v_j(c_j) - P_j in the run where only job j reports S'.
With the exact oracle and no thresholding, reporting the truth maximises it when sigma = l.

Families (T9): widths d' in [1, d_max]; supports: a point mass on each support point, every arrival
shifted by -1 or +1 (kept >= b), every duration + 1 (kept <= D), the mixture with the uniform
distribution over the support (signals unchanged, so a realization still finds its group); values: 2v, v/2 and a step at each deadline (v(b) up to the deadline,
0 after). Values outside [1, V] are allowed in a misreport: the mechanism does not clip them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from mlsched.instance.sow import Sow, SowInstance, SupportPoint
from mlsched.sim.sow_run import run_sow


def misreports(instance: SowInstance, j: int) -> Iterator[tuple[str, Sow]]:
    """(kind, reported SoW) for every misreport of job j in the T9 families."""
    job = instance.jobs[j]
    truth = job.sow
    for d in range(1, instance.d_max + 1):
        if d != truth.width:
            yield f"width {d}", replace(truth, width=d)
    for k, p in enumerate(truth.support):
        if len(truth.support) > 1:
            yield f"point mass {k}", replace(truth, support=(replace(p, prob=1.0),))
    for shift in (-1, 1):
        moved = _merge(replace(p, arrival=max(job.birth, p.arrival + shift)) for p in truth.support)
        if moved != truth.support:
            yield f"arrival {shift:+d}", replace(truth, support=moved)
    longer = _merge(replace(p, duration=min(instance.max_duration, p.duration + 1)) for p in truth.support)
    if longer != truth.support:
        yield "duration +1", replace(truth, support=longer)
    if len(truth.support) > 1:
        n = len(truth.support)
        yield "uniform mixture", replace(truth, support=tuple(replace(p, prob=(p.prob + 1 / n) / 2)
                                                              for p in truth.support))
    yield "values x2", replace(truth, values=tuple(2 * v for v in truth.values))
    yield "values /2", replace(truth, values=tuple(v / 2 for v in truth.values))
    first = truth.values[0] if truth.values else 0.0
    for deadline in range(len(truth.values)):
        step = tuple(first if i <= deadline else 0.0 for i in range(len(truth.values)))
        if step != truth.values:
            yield f"step at b+{deadline}", replace(truth, values=step)


def _merge(points: Any) -> tuple[SupportPoint, ...]:
    """Support points with equal (a, l, sigma) merged (probabilities added), in first-seen order."""
    merged: dict[tuple[int, int, int], float] = {}
    for p in points:
        key = (p.arrival, p.duration, p.signal)
        merged[key] = merged.get(key, 0.0) + p.prob
    return tuple(SupportPoint(a, l, s, w) for (a, l, s), w in merged.items())


def expected_utility(instance: SowInstance, j: int, report: Sow | None, mechanism: Any, *,
                     samples: int = 20_000) -> float:
    """E[v_j(c_j) - P_j] when job j reports ``report`` (None: the truth) and the others tell the truth."""
    jobs = list(instance.jobs)
    jobs[j] = replace(jobs[j], report=report)
    inst = instance.with_jobs(tuple(jobs))
    runs = run_sow(inst, mechanism, samples=samples)
    if runs.problems:
        raise AssertionError(f"checker: {runs.problems[0]}")
    return runs.mean([o.jobs[j].utility for o in runs.outcomes])


def best_gain(instance: SowInstance, j: int, mechanism: Any) -> tuple[float, str]:
    """The largest gain of a T9 misreport of job j over the truth, and its kind ('' when none gains)."""
    truthful = expected_utility(instance, j, None, mechanism)
    best, kind = 0.0, ""
    for name, report in misreports(instance, j):
        gain = expected_utility(instance, j, report, mechanism) - truthful
        if gain > best:
            best, kind = gain, name
    return best, kind
