"""Failure-probability oracle (spec §4.3, Lemma 3.1, Lemma F.1).

Job j born at tau fails when launched at t with width d and duration l iff, with
L(r) the committed load at r of the surviving earlier-born jobs (LIFO applied among them),
  exists r in [tau, t - 1] : L(r) > C    or    exists r in [t, t + l - 1] : L(r) + d > C.
Earlier jobs' residual futures are given as outcome lists: (probability, start or None, duration)
after their fixed launch plans. The exact oracle enumerates the product of these lists; the sampled
oracle draws M futures shared by every (t, l) and d (common random numbers), with
  M = ceil( ln(2 Delta D / zeta) / (2 gamma^2) )   (Lemma F.1).
Estimates below eps0 are zeroed and the table is closed monotonically in l and d (A1).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Outcome = tuple[float, int | None, int]  # (probability, start or None, duration)
NONE = -1


def lemma_f1_samples(delta: int, max_duration: int, gamma: float, zeta: float) -> int:
    """M = ceil(ln(2 Delta D / zeta) / (2 gamma^2))."""
    return math.ceil(math.log(2 * delta * max_duration / zeta) / (2 * gamma * gamma))


def enumerate_futures(jobs: Sequence[Sequence[Outcome]]
                      ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Every joint future: starts[S, n] (-1 = not launched), durations[S, n], weights[S]."""
    combos = list(itertools.product(*jobs)) if jobs else [()]
    n = len(jobs)
    starts = np.array([[NONE if o[1] is None else o[1] for o in c] for c in combos], dtype=np.int64).reshape(-1, n)
    durs = np.array([[o[2] for o in c] for c in combos], dtype=np.int64).reshape(-1, n)
    weights = np.array([math.prod(o[0] for o in c) for c in combos], dtype=float)
    return starts, durs, weights


def sample_futures(jobs: Sequence[Sequence[Outcome]], samples: int, rng: np.random.Generator
                   ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """M i.i.d. joint futures (each job's outcome drawn independently, by inverting its distribution
    at one uniform per job and future), each counted once: weights 1, and :func:`failure_table`
    divides by ``total`` = M."""
    n = len(jobs)
    starts = np.full((samples, n), NONE, dtype=np.int64)
    durs = np.zeros((samples, n), dtype=np.int64)
    uniforms = rng.random((samples, n))
    for i, outcomes in enumerate(jobs):
        if len(outcomes) == 1:
            pick = np.zeros(samples, dtype=np.int64)
        else:
            cdf = np.cumsum([o[0] for o in outcomes], dtype=float)
            pick = np.minimum(np.searchsorted(cdf / cdf[-1], uniforms[:, i], side="right"), len(outcomes) - 1)
        starts[:, i] = np.array([NONE if o[1] is None else o[1] for o in outcomes], dtype=np.int64)[pick]
        durs[:, i] = np.array([o[2] for o in outcomes], dtype=np.int64)[pick]
    return starts, durs, np.ones(samples)


def load_paths(widths: npt.ArrayLike, starts: npt.NDArray[np.int64], durs: npt.NDArray[np.int64],
               tau: int, horizon: int, capacity: float) -> npt.NDArray[np.float64]:
    """Pre-removal committed load L[S, r - tau] of the earlier jobs for r = tau..horizon - 1, with LIFO
    (prefix loads computed only in the futures whose round is overloaded)."""
    d = np.asarray(widths, dtype=float)
    alive = starts != NONE
    ends = starts + durs - 1
    loads = np.zeros((starts.shape[0], max(horizon - tau, 0)))
    for k, r in enumerate(range(tau, horizon)):
        load = np.where(alive & (starts <= r) & (r <= ends), d, 0.0)
        loads[:, k] = load.sum(axis=1)
        over = loads[:, k] > capacity
        if over.any():
            alive[over] &= ~(np.cumsum(load[over], axis=1) > capacity)
    return loads


def failure_table(loads: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], width: int,
                  capacity: float, max_duration: int, total: float = 1.0) -> npt.NDArray[np.float64]:
    """q[t - tau, l - 1] for t = tau..tau + R - 1 (R = load columns); rounds past the paths carry load 0.
    q is the weight of the failing futures over ``total``: the futures' probabilities over 1, or the
    sampled futures' counts over M. A sum of counts is exact, so two starts that fail in as many
    sampled futures get the same estimate to the last bit and a tie between them stays a tie (spec
    §3.2); weights 1/M summed in the dot product's order came out apart in the last bits."""
    n_s, n_r = loads.shape
    padded = np.concatenate([loads, np.zeros((n_s, max_duration))], axis=1)
    before = np.concatenate([np.zeros((n_s, 1), dtype=bool),
                             np.logical_or.accumulate(loads > capacity, axis=1)], axis=1)[:, :n_r]
    over = padded + width > capacity
    table = np.empty((n_r, max_duration))
    window = np.zeros((n_s, n_r), dtype=bool)
    for l in range(1, max_duration + 1):
        window |= over[:, l - 1:l - 1 + n_r]
        table[:, l - 1] = (weights @ (before | window)) / total
    return table


def threshold_closure(tables: npt.NDArray[np.float64], eps0: float) -> npt.NDArray[np.float64]:
    """Zero estimates below eps0, then qt[d, t, l] <- max over d' <= d, l' <= l (tables: [d - 1, t, l - 1])."""
    q = np.where(tables >= eps0, tables, 0.0)
    return np.maximum.accumulate(np.maximum.accumulate(q, axis=2), axis=0)
