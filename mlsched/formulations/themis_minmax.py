r"""Gavel-style min-max finish-time-fairness program (R3 of the Themis spec §2.4, [GAV]): a
per-round fairness comparator, not part of Themis itself.

Data per app i (one round): elapsed time t_i since arrival, remaining steps n_i, throughput
thr_i (steps per second while the app runs on its scale_i GPUs), cumulative isolated time
iso_i, and the cluster size R_C. Variables x_i, the fraction of the round app i runs.

  (1)  minimize    max_i  rho_i(x_i),   rho_i(x) = (t_i + n_i inv_pos(thr_i x)) / (iso_i + n_i / thr_iso_i)
  (2)  subject to  sum_i scale_i x_i <= R_C
  (3)              0 <= x_i <= 1

The denominators are constants of the round, each rho_i is convex and non-increasing in x_i, so
(1)-(3) is DCP (a max of convex terms); cvxpy solves it through ``mlsched.solve.solve_cvxpy``.

Isolated throughput (Gavel's IsolatedPolicy, one GPU type): with n apps in the round the equal
split gives app i the time fraction x_iso_i = min(1, R_C / (n scale_i)), so thr_iso_i =
thr_i x_iso_i. Cumulative isolated time, carried across rounds: iso_i += (n_i,prev - n_i,now) /
thr_iso_i,prev (:func:`accumulate_isolated_time`); it is 0 in an app's first round.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mlsched.errors import UsageError
from mlsched.solve import SolveReport, Status, solve_cvxpy

TOLERANCE = 1e-10          # Clarabel's gap and feasibility tolerances


def isolated_share(scale: Sequence[float], gpus: float) -> np.ndarray:
    """x_iso_i = min(1, R_C / (n scale_i)), the equal split of the cluster over the n apps."""
    s = np.asarray(scale, dtype=float)
    return np.minimum(1.0, gpus / (len(s) * s))


def accumulate_isolated_time(iso_cum: Sequence[float], steps_prev: Sequence[float], steps_now: Sequence[float],
                             thr_iso_prev: Sequence[float]) -> np.ndarray:
    """iso_i + (steps done since the last round) / (last round's isolated throughput)."""
    return np.asarray(iso_cum, dtype=float) + (np.asarray(steps_prev, dtype=float)
                                               - np.asarray(steps_now, dtype=float)) / np.asarray(thr_iso_prev, dtype=float)


def rho_values(x: Sequence[float], elapsed: Sequence[float], steps: Sequence[float], thr: Sequence[float],
               iso_cum: Sequence[float], thr_iso: Sequence[float]) -> np.ndarray:
    """rho_i(x_i) of (1) evaluated directly (+inf for x_i = 0 with steps left)."""
    x, t, n = (np.asarray(v, dtype=float) for v in (x, elapsed, steps))
    th, iso, th_iso = (np.asarray(v, dtype=float) for v in (thr, iso_cum, thr_iso))
    with np.errstate(divide="ignore", invalid="ignore"):
        shared = np.where(n > 0, n / (th * x), 0.0)
    return (t + shared) / (iso + n / th_iso)


@dataclass
class MinMaxResult:
    status: Status
    x: np.ndarray | None           # time fractions in [0, 1]
    max_rho: float | None          # max_i rho_i(x_i) at the returned x
    rho: np.ndarray | None
    thr_iso: np.ndarray
    report: SolveReport


def min_max_rho(elapsed: Sequence[float], steps: Sequence[float], thr: Sequence[float], scale: Sequence[float],
                iso_cum: Sequence[float], gpus: float, *, thr_iso: Sequence[float] | None = None) -> MinMaxResult:
    """Solve (1)-(3) for one round. ``thr_iso`` defaults to the equal-split throughput above.

    Solver trouble is a status (``x`` None), never an exception; bad data raises UsageError."""
    tick = time.perf_counter()
    t, n, th, sc, iso = (np.asarray(v, dtype=float).reshape(-1) for v in (elapsed, steps, thr, scale, iso_cum))
    count = len(t)
    if count == 0 or any(len(v) != count for v in (n, th, sc, iso)):
        raise UsageError("elapsed, steps, thr, scale and iso_cum need one value per app (at least one app)")
    if not (math.isfinite(gpus) and gpus > 0):
        raise UsageError(f"the cluster needs a positive GPU count, got {gpus}")
    if np.any(th <= 0) or np.any(sc <= 0) or np.any(n < 0) or np.any(t < 0) or np.any(iso < 0):
        raise UsageError("thr and scale must be > 0; steps, elapsed and iso_cum must be >= 0")
    th_iso = th * isolated_share(sc, gpus) if thr_iso is None else np.asarray(thr_iso, dtype=float).reshape(-1)
    if len(th_iso) != count or np.any(th_iso <= 0):
        raise UsageError("thr_iso needs one positive value per app")
    denominator = iso + n / th_iso
    if np.any(denominator <= 0):
        raise UsageError("an app has neither steps left nor isolated time: its rho is undefined")

    import cvxpy as cp

    x = cp.Variable(count)
    terms = [t[i] / denominator[i] + (n[i] / (th[i] * denominator[i])) * cp.inv_pos(x[i]) if n[i] > 0
             else t[i] / denominator[i] + 0 * x[i] for i in range(count)]
    problem = cp.Problem(cp.Minimize(cp.max(cp.hstack(terms))), [sc @ x <= gpus, x >= 0, x <= 1])
    report = solve_cvxpy(problem, extract=lambda: None if x.value is None else np.clip(x.value, 0.0, 1.0),
                         build_seconds=time.perf_counter() - tick,
                         tol_gap_abs=TOLERANCE, tol_gap_rel=TOLERANCE, tol_feas=TOLERANCE)
    if report.schedule is None:
        return MinMaxResult(report.status, None, None, None, th_iso, report)
    share = report.schedule
    rho = rho_values(share, t, n, th, iso, th_iso)
    return MinMaxResult(report.status, share, float(rho.max()), rho, th_iso, report)
