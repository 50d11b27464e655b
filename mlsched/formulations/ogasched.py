r"""OgaSched offline benchmarks (spec §2.1, §2.2): the best fixed allocation in hindsight and the
per-slot optimum.

Q(x_{1:T}, y) = sum_l n_l q_l(e_l, y) with n_l = sum_t x_l(t) arrivals at port l, so

  maximize_{y, s}  sum_l n_l ( sum_{r in R_l} sum_k F_{r,k}(y[l,r,k]) - s_l )
  s.t.             s_l >= beta_k sum_{r in R_l} y[l,r,k]          for all l, k   (epigraph of the max)
                   0 <= y[l,r,k] <= a[l,k]                         for (l,r) in E, k   (5)
                   sum_{l in L_r} y[l,r,k] <= c[r,k]               for all r, k        (6)

``hindsight_cvxpy`` solves it for any concave utilities (linear, log1p, inv_pos, sqrt forms of
eq. 60) with Clarabel; ``build_linear`` builds it as a Pyomo LP for linear utilities (HiGHS, the
cross-check). The per-slot optimum OPT_t is the same program with n = x(t), cached by pattern.
"""

from __future__ import annotations

import time

import cvxpy as cp
import numpy as np
import pyomo.environ as pyo

from mlsched.errors import UsageError
from mlsched.instance.multi_server import MultiServerInstance
from mlsched.multiserver import LINEAR, LOG, POLY, RECIPROCAL, ChannelModel
from mlsched.solve import Built, SolveReport, solve_cvxpy


def _gain(model: ChannelModel, y: cp.Variable) -> tuple[cp.Expression, np.ndarray]:
    """F_{r,k}(y[e,k]) for every (e, k), grouped by utility kind, and the channel e of each entry."""
    a, kind = model.alpha, model.kind
    terms, channels = [], []
    for code in (LINEAR, LOG, RECIPROCAL, POLY):
        rows, cols = np.nonzero(kind == code)
        if rows.size == 0:
            continue
        v, w = y[rows, cols], a[rows, cols]
        if code == LINEAR:
            terms.append(cp.multiply(w, v))
        elif code == LOG:
            terms.append(cp.multiply(w, cp.log1p(v)))
        elif code == RECIPROCAL:
            terms.append(1.0 / w - cp.inv_pos(v + w))
        else:
            terms.append(cp.multiply(w, cp.sqrt(v + 1.0)) - w)
        channels.append(rows)
    return cp.hstack(terms), np.concatenate(channels)


def hindsight_cvxpy(instance: MultiServerInstance, counts: np.ndarray) -> SolveReport:
    """max_y sum_l n_l q_l(e_l, y) over Y with cvxpy/Clarabel; ``report.schedule`` is y (E, K)."""
    tick = time.perf_counter()
    inst = instance
    model = ChannelModel(inst)
    y = cp.Variable(inst.channel_cap.shape, nonneg=True)
    s = cp.Variable(inst.num_ports)
    gains, channels = _gain(model, y)
    scale = max(1.0, float(np.max(counts, initial=0.0)))      # counts / scale keeps Clarabel well conditioned
    weights = counts / scale
    objective = cp.sum(cp.multiply(weights[inst.channel_port[channels]], gains)) - weights @ s
    constraints = [y <= inst.channel_cap, model.node_matrix @ y <= inst.capacity,
                   cp.reshape(s, (inst.num_ports, 1), order="C") >= cp.multiply(model.port_matrix @ y, inst.beta[None, :])]
    problem = cp.Problem(cp.Maximize(objective), constraints)
    report = solve_cvxpy(problem, extract=lambda: into_y(inst, model, y.value), build_seconds=time.perf_counter() - tick)
    if report.objective is not None:
        report.objective *= scale
        report.bound = None if report.bound is None else report.bound * scale
    return report


def into_y(instance: MultiServerInstance, model: ChannelModel, y: np.ndarray) -> np.ndarray:
    """An interior-point solution moved exactly into Y: clipped to [0, a] and each (r, k) block
    scaled down where the solver's tolerance left it (by ~1e-7) above c[r, k]."""
    y = np.clip(y, 0.0, instance.channel_cap)
    used = model.node_matrix @ y
    with np.errstate(divide="ignore", invalid="ignore"):
        factor = np.where(used > instance.capacity, instance.capacity / used, 1.0)
    return y * factor[instance.channel_node]


def build_linear(instance: MultiServerInstance, counts: np.ndarray, *, relax: bool = False) -> Built:
    """The hindsight program as a Pyomo LP (linear utilities only)."""
    inst = instance
    if np.any(inst.utility_kind != LINEAR):
        raise UsageError("the Pyomo form of the hindsight program needs linear utilities; use cvxpy")
    tick = time.perf_counter()
    model = ChannelModel(inst)
    e, k = inst.channel_cap.shape
    m = pyo.ConcreteModel(name="ogasched_hindsight")
    m.y = pyo.Var(range(e), range(k), domain=pyo.NonNegativeReals,
                  bounds=lambda _, i, j: (0.0, float(inst.channel_cap[i, j])))
    m.s = pyo.Var(range(inst.num_ports))
    port_channels = [np.flatnonzero(inst.channel_port == l) for l in range(inst.num_ports)]
    node_channels = [np.flatnonzero(inst.channel_node == r) for r in range(inst.num_nodes)]
    m.obj = pyo.Objective(sense=pyo.maximize, expr=sum(
        float(counts[l]) * (sum(float(model.alpha[i, j]) * m.y[i, j] for i in port_channels[l] for j in range(k)) - m.s[l])
        for l in range(inst.num_ports) if counts[l] > 0))
    m.dominant = pyo.Constraint(range(inst.num_ports), range(k), rule=lambda _, l, j: (
        m.s[l] >= float(inst.beta[j]) * sum(m.y[i, j] for i in port_channels[l])) if counts[l] > 0 else pyo.Constraint.Skip)
    m.capacity = pyo.Constraint(range(inst.num_nodes), range(k), rule=lambda _, r, j: (
        sum(m.y[i, j] for i in node_channels[r]) <= float(inst.capacity[r, j])) if len(node_channels[r]) else pyo.Constraint.Skip)

    def extract() -> np.ndarray:
        return np.array([[m.y[i, j].value or 0.0 for j in range(k)] for i in range(e)])

    return Built(model=m, name="ogasched_hindsight", sense="max", relaxed=True,
                 build_seconds=time.perf_counter() - tick, extract=extract)


def per_slot_optimum(instance: MultiServerInstance, arrivals: np.ndarray) -> np.ndarray:
    """OPT_t = max_y q(x(t), y) for every slot (NaN where its program has no solution); the
    solvers' statuses are in :func:`per_slot_solutions`."""
    return per_slot_solutions(instance, arrivals)[0]


def per_slot_solutions(instance: MultiServerInstance, arrivals: np.ndarray) -> tuple[np.ndarray, list[SolveReport]]:
    """OPT_t for every slot, solved once per distinct arrival pattern (0 for a slot with no
    arrival, NaN where the program has no solution), and the report of each pattern's program."""
    patterns, inverse = np.unique(arrivals.astype(np.int8), axis=0, return_inverse=True)
    values = np.zeros(len(patterns))
    reports = []
    for p, pattern in enumerate(patterns):
        if pattern.any():
            report = hindsight_cvxpy(instance, pattern.astype(float))
            values[p] = np.nan if report.objective is None else report.objective
            reports.append(report)
    return values[inverse.reshape(-1)], reports
