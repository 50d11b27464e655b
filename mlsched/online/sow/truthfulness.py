"""Misreport families, an agent's expected utility under a report and the gains of misreports
(spec §3.4, Theorem 3.2, T9, §8 item 4).

An agent's expected true utility under report S' is the probability-weighted mean, over every joint
realization drawn from the true SoWs, of v_j(c_j) - P_j in the run where only job j reports S'.
With the exact oracle and no thresholding, reporting the truth maximises it when sigma = l; for other
signals only among reports of the true width under a menu with finite prices (§3.4 [AUDIT]).

Families (T9): widths d' in [1, d_max]; supports: a point mass on each support point, every arrival
shifted by -1 or +1 (kept >= b), every duration + 1 (kept <= D), the mixture with the uniform
distribution over the support (signals unchanged, so a realization still finds its group); values:
2v, v/2 and a step at each deadline (v(b) up to the deadline, 0 after). Values outside [1, V] are
allowed in a misreport: the mechanism does not clip them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from mlsched.instance.sow import Sow, SowInstance, SupportPoint
from mlsched.sim.sow_run import run_sow

GAIN_TOLERANCE = 1e-9   # gains up to this are rounding, not a profitable misreport


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


def expected_utility(instance: SowInstance, j: int, report: Sow | None, mechanism: Any) -> float:
    """E[v_j(c_j) - P_j] when job j reports ``report`` (None: the truth) and the others tell the truth."""
    jobs = list(instance.jobs)
    jobs[j] = replace(jobs[j], report=report)
    inst = instance.with_jobs(tuple(jobs))
    runs = run_sow(inst, mechanism)     # every realization (up to 20,000 of them), as the exact oracle needs
    if runs.problems:
        raise AssertionError(f"checker: {runs.problems[0]}")
    return runs.mean([o.jobs[j].utility for o in runs.outcomes])


def misreport_gains(instance: SowInstance, j: int, mechanism: Any,
                    seeds: Sequence[int] | None = None) -> list[tuple[str, float, float]]:
    """(kind, gain, standard error) of every T9 misreport of job j over the truth. With ``seeds`` the
    mechanism's own randomness (the sampled oracle) is redrawn once per seed and the gain is the mean
    over them, its standard error taken across the seeds; without, one run per realization (s.e. 0)."""
    mechs = [mechanism] if seeds is None else [_reseeded(mechanism, s) for s in seeds]
    truthful = np.array([expected_utility(instance, j, None, m) for m in mechs])
    out = []
    for kind, report in misreports(instance, j):
        gains = np.array([expected_utility(instance, j, report, m) for m in mechs]) - truthful
        se = float(gains.std(ddof=1) / np.sqrt(len(gains))) if len(gains) > 1 else 0.0
        out.append((kind, float(gains.mean()), se))
    return out


def best_gain(instance: SowInstance, j: int, mechanism: Any) -> tuple[float, str]:
    """The largest gain of a T9 misreport of job j over the truth, and its kind ('' when none gains)."""
    best, kind = 0.0, ""
    for name, gain, _ in misreport_gains(instance, j, mechanism):
        if gain > best:
            best, kind = gain, name
    return best, kind


def gain_table(instances: Sequence[SowInstance], mechanism: Any, *, seeds: Sequence[int] | None = None
               ) -> pd.DataFrame:
    """The §8 truthfulness figures, one row per agent: its largest misreport gain (raw and / V, A6),
    the misreport's kind and standard error, the bound 2V(eps0 + gamma + zeta) and whether the gain
    is within it up to three standard errors (every misreport checked, not only the largest)."""
    rows = []
    for inst in instances:
        bound = mechanism.constants(inst)["truthful_bound"]
        signal = "l" if all(p.signal == p.duration for job in inst.jobs for p in job.sow.support) else "other"
        for j in range(inst.num_jobs):
            gains = misreport_gains(inst, j, mechanism, seeds)
            kind, gain, se = max(gains, key=lambda g: g[1], default=("", 0.0, 0.0))
            rows.append({"instance": inst.name, "job": inst.jobs[j].id, "signal": signal,
                         "gain": max(gain, 0.0), "gain_over_v": max(gain, 0.0) / inst.max_value,
                         "kind": kind if gain > GAIN_TOLERANCE else "", "se": se, "truthful_bound": bound,
                         "within_bound": all(g <= bound + 3 * e for _, g, e in gains),
                         "misreports": len(gains)})
    return pd.DataFrame(rows)


def _reseeded(mechanism: Any, seed: int) -> Any:
    twin = copy.copy(mechanism)
    twin.seed = seed
    return twin
