r"""Gavel-style min-max finish-time-fairness program (R3 of the Themis spec §2.4, [GAV]): a
per-round fairness comparator, not part of Themis itself, and the allocation step of the
``gavel-ftf`` policy (``mlsched.baselines.gavel_ftf``).

Data per app i (one round): elapsed time t_i since arrival, remaining steps n_i, throughput
thr_ik (steps per second while the app runs on its scale_i GPUs of type k), cumulative isolated
time iso_i, and the GPUs C_k of each type. Variables x_ik, the fraction of the round app i runs on
type k (Gavel's heterogeneity-aware FinishTimeFairnessPolicyWithPerf; one type is the homogeneous
program).

  (1)  minimize    max_i  rho_i(x_i),   rho_i(x) = (t_i + n_i inv_pos(sum_k thr_ik x_ik)) / (iso_i + n_i / thr_iso_i)
  (2)  subject to  sum_i scale_i x_ik <= C_k        for every type k
  (3)              sum_k x_ik <= 1, x_ik >= 0       for every app i

The denominators are constants of the round, each rho_i is convex and non-increasing in x_i, so
(1)-(3) is DCP (a max of convex terms). Two ways to solve it: ``method="cvxpy"`` states it in cvxpy
(the inspectable model), ``method="direct"`` (default, what the simulator policy runs) hands the
same program to Clarabel's native interface as a second-order-cone program, with a_i = n_i / D_i,
b_i = t_i / D_i (D_i the denominator) and u_i = sum_k thr_ik x_ik:

  minimize r   s.t.   r >= b_i + a_i z_i,   z_i u_i >= 1  (|| (2, z_i - u_i) || <= z_i + u_i),   (2), (3)

(an app with n_i = 0 keeps only r >= b_i).

Isolated throughput (Gavel's IsolatedPolicy): with n apps in the round, app i gets the time
fraction x_iso_ik = (C_k / n) / scale_i of each type, scaled down so that sum_k x_iso_ik <= 1;
thr_iso_i = sum_k thr_ik x_iso_ik. With one type, x_iso_i = min(1, C / (n scale_i)). Cumulative
isolated time, carried across rounds: iso_i += (n_i,prev - n_i,now) / thr_iso_i,prev
(:func:`accumulate_isolated_time`); it is 0 in an app's first round.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from mlsched.errors import UsageError
from mlsched.solve import SolveReport, Status, solve_cvxpy

TOLERANCE = 1e-10          # Clarabel's gap and feasibility tolerances
METHODS = ("direct", "cvxpy")


def isolated_share(scale: Sequence[float], gpus: float | Sequence[float]) -> np.ndarray:
    """x_iso of Gavel's IsolatedPolicy: (C_k / n) / scale_i per type, each row scaled to sum <= 1.
    Shape (n,) for a scalar ``gpus`` (one type: min(1, C / (n scale_i))), else (n, types)."""
    s = np.asarray(scale, dtype=float)
    capacity = np.atleast_1d(np.asarray(gpus, dtype=float))
    x = (capacity[None, :] / len(s)) / s[:, None]
    x = x / np.maximum(x.sum(axis=1), 1.0)[:, None]
    return x[:, 0] if np.ndim(gpus) == 0 else x


def accumulate_isolated_time(iso_cum: Sequence[float], steps_prev: Sequence[float], steps_now: Sequence[float],
                             thr_iso_prev: Sequence[float]) -> np.ndarray:
    """iso_i + (steps done since the last round) / (last round's isolated throughput)."""
    return np.asarray(iso_cum, dtype=float) + (np.asarray(steps_prev, dtype=float)
                                               - np.asarray(steps_now, dtype=float)) / np.asarray(thr_iso_prev, dtype=float)


def _rates(x: np.ndarray, thr: np.ndarray) -> np.ndarray:
    return (thr * x).sum(axis=1) if thr.ndim == 2 else thr * x


def rho_values(x: Sequence[float], elapsed: Sequence[float], steps: Sequence[float], thr: Sequence[float],
               iso_cum: Sequence[float], thr_iso: Sequence[float]) -> np.ndarray:
    """rho_i(x_i) of (1) evaluated directly (+inf for no throughput with steps left); ``x`` and
    ``thr`` both of shape (n,) or both (n, types)."""
    t, n = (np.asarray(v, dtype=float) for v in (elapsed, steps))
    rate = _rates(np.asarray(x, dtype=float), np.asarray(thr, dtype=float))
    iso, th_iso = (np.asarray(v, dtype=float) for v in (iso_cum, thr_iso))
    with np.errstate(divide="ignore", invalid="ignore"):
        shared = np.where(n > 0, n / rate, 0.0)
    return (t + shared) / (iso + n / th_iso)


@dataclass
class MinMaxResult:
    status: Status
    x: np.ndarray | None           # time fractions in [0, 1], shaped like ``thr``
    max_rho: float | None          # max_i rho_i(x_i) at the returned x
    rho: np.ndarray | None
    thr_iso: np.ndarray
    report: SolveReport


def min_max_rho(elapsed: Sequence[float], steps: Sequence[float], thr: Sequence[float] | np.ndarray,
                scale: Sequence[float], iso_cum: Sequence[float], gpus: float | Sequence[float], *,
                thr_iso: Sequence[float] | None = None, method: str = "direct") -> MinMaxResult:
    """Solve (1)-(3) for one round. ``thr`` is (n,) with a scalar ``gpus`` (one GPU type) or
    (n, types) with one GPU count per type; ``thr_iso`` defaults to Gavel's isolated throughput.

    Solver trouble is a status (``x`` None), never an exception; bad data raises UsageError."""
    tick = time.perf_counter()
    if method not in METHODS:
        raise UsageError(f"unknown method {method!r}; choose one of {', '.join(METHODS)}")
    t, n, sc, iso = (np.asarray(v, dtype=float).reshape(-1) for v in (elapsed, steps, scale, iso_cum))
    th = np.asarray(thr, dtype=float)
    typed = th.ndim == 2
    th2 = th if typed else th.reshape(-1, 1)
    capacity = np.atleast_1d(np.asarray(gpus, dtype=float)).reshape(-1)
    count = len(t)
    if count == 0 or any(len(v) != count for v in (n, th2, sc, iso)):
        raise UsageError("elapsed, steps, thr, scale and iso_cum need one value per app (at least one app)")
    if th2.shape[1] != len(capacity) or typed == (np.ndim(gpus) == 0):
        raise UsageError("thr needs one column per GPU type and gpus one count per type (or both one type)")
    if not (np.all(np.isfinite(capacity)) and np.all(capacity > 0)):
        raise UsageError(f"the cluster needs positive GPU counts, got {gpus}")
    if (np.any(th2 < 0) or np.any(th2.max(axis=1) <= 0) or np.any(sc <= 0) or np.any(n < 0) or np.any(t < 0)
            or np.any(iso < 0)):
        raise UsageError("thr must be >= 0 and > 0 on some type, scale > 0; steps, elapsed and iso_cum >= 0")
    share = isolated_share(sc, capacity)
    th_iso = (th2 * share).sum(axis=1) if thr_iso is None else np.asarray(thr_iso, dtype=float).reshape(-1)
    if len(th_iso) != count or np.any(th_iso <= 0):
        raise UsageError("thr_iso needs one positive value per app")
    denominator = iso + n / th_iso
    if np.any(denominator <= 0):
        raise UsageError("an app has neither steps left nor isolated time: its rho is undefined")
    solve = _solve_direct if method == "direct" else _solve_cvxpy
    report = solve(t / denominator, n / denominator, th2, sc, capacity, time.perf_counter() - tick)
    if report.schedule is None:
        return MinMaxResult(report.status, None, None, None, th_iso, report)
    x = np.clip(report.schedule, 0.0, 1.0)
    rho = rho_values(x, t, n, th2, iso, th_iso)
    return MinMaxResult(report.status, x if typed else x[:, 0], float(rho.max()), rho, th_iso, report)


def _solve_cvxpy(b: np.ndarray, a: np.ndarray, thr: np.ndarray, scale: np.ndarray, capacity: np.ndarray,
                 build_seconds: float) -> SolveReport:
    import cvxpy as cp

    tick = time.perf_counter()
    count, types = thr.shape
    x = cp.Variable((count, types))
    terms = [b[i] + a[i] * cp.inv_pos(thr[i] @ x[i]) if a[i] > 0 else b[i] + 0 * x[i, 0] for i in range(count)]
    problem = cp.Problem(cp.Minimize(cp.max(cp.hstack(terms))),
                         [scale @ x <= capacity, x >= 0, cp.sum(x, axis=1) <= 1])
    return solve_cvxpy(problem, extract=lambda: x.value, build_seconds=build_seconds + time.perf_counter() - tick,
                       tol_gap_abs=TOLERANCE, tol_gap_rel=TOLERANCE, tol_feas=TOLERANCE)


def _solve_direct(b: np.ndarray, a: np.ndarray, thr: np.ndarray, scale: np.ndarray, capacity: np.ndarray,
                  build_seconds: float) -> SolveReport:
    """The module docstring's cone program: variables [r, x (row-major), z]; Clarabel's
    convention h - G v in the cones (nonnegative rows first, then one 3-cone per running app)."""
    import clarabel

    tick = time.perf_counter()
    count, types = thr.shape
    running = np.flatnonzero(a > 0)
    nx = count * types
    col_x = 1 + np.arange(nx).reshape(count, types)
    col_z = 1 + nx + np.arange(count)
    nvar = 1 + nx + count
    rows, cols, vals, rhs = [], [], [], []
    row = 0

    def add(r: np.ndarray, c: np.ndarray, v: np.ndarray) -> None:
        rows.append(np.asarray(r, dtype=np.int64).ravel())
        cols.append(np.asarray(c, dtype=np.int64).ravel())
        vals.append(np.asarray(v, dtype=float).ravel())

    # b_i + a_i z_i - r <= 0
    add(row + np.arange(count), np.zeros(count), -np.ones(count))
    add(row + running, col_z[running], a[running])
    rhs.append(-b)
    row += count
    # sum_i scale_i x_ik <= C_k
    add(np.repeat(row + np.arange(types), count), col_x.T, np.tile(scale, types))
    rhs.append(capacity)
    row += types
    # sum_k x_ik <= 1
    add(np.repeat(row + np.arange(count), types), col_x, np.ones(nx))
    rhs.append(np.ones(count))
    row += count
    # x >= 0, z >= 0
    add(row + np.arange(nx + count), 1 + np.arange(nx + count), -np.ones(nx + count))
    rhs.append(np.zeros(nx + count))
    row += nx + count
    nonnegative = row
    # (z_i + u_i, 2, z_i - u_i) in the second-order cone: z_i + u_i >= || (2, z_i - u_i) ||
    for k, i in enumerate(running):
        top, last = row + 3 * k, row + 3 * k + 2
        add([top, last], [col_z[i], col_z[i]], [-1.0, -1.0])
        add(np.full(types, top), col_x[i], -thr[i])
        add(np.full(types, last), col_x[i], thr[i])
    cone_rhs = np.zeros(3 * len(running))
    cone_rhs[1::3] = 2.0
    rhs.append(cone_rhs)
    row += 3 * len(running)
    G = sp.csc_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(row, nvar))
    h = np.concatenate(rhs)
    cones = [clarabel.NonnegativeConeT(nonnegative)] + [clarabel.SecondOrderConeT(3)] * len(running)
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = TOLERANCE
    q = np.zeros(nvar)
    q[0] = 1.0
    build = build_seconds + time.perf_counter() - tick
    tick = time.perf_counter()
    solution = clarabel.DefaultSolver(sp.csc_matrix((nvar, nvar)), q, G, h, cones, settings).solve()
    seconds = time.perf_counter() - tick
    status = str(solution.status)
    base = dict(build_seconds=build, solve_seconds=seconds, solver="clarabel", relaxed=True)
    if status not in ("Solved", "AlmostSolved"):
        return SolveReport(Status.NO_SOLUTION if "Infeasible" not in status else Status.INFEASIBLE, None, None, None,
                           message=status, **base)
    value = float(solution.obj_val)
    x = np.asarray(solution.x)[col_x]
    proven = status == "Solved" and math.isfinite(value)
    return SolveReport(Status.OPTIMAL if proven else Status.FEASIBLE, value, value if proven else None,
                       0.0 if proven else None, schedule=x, message="" if proven else status, **base)
