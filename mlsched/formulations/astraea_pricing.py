r"""Astraea's per-job problem (9) (spec §2.4) as a Pyomo model: the best schedule of one job in one
round at frozen posted prices, over every placement satisfying §1.4, not only the two greedy ones
(MINCOSTD, MINCOSTC) that Algorithm 3 enumerates. Its optimum is mu_j of (7) restricted to that
round; the enumeration's mu never exceeds it, and equals it when the cluster has one server (every
placement is then centralized, and MINCOSTC's one PS is the cheapest).

Data of the round (a frozen view, slots 1..tau after rho0): free workers and PS slots
F_sw(t) = C_sw - h_sw(t), F_sp(t); the owner's quota bounds Q_w(t) = max{q_w^u - Uw^u(t), a_w(t)},
Q_p(t); posted prices eta_w(t), eta_p(t). Configurations k = (W, zeta) of K_j (the exact pruning of
P-OFF), duration d_k, start offsets o = 1..tau - d_k + 1; over the window [o, o + d_k - 1]:
F_sw(o, k) = min_t F_sw(t), likewise F_sp, Q_w, Q_p, and E_w(o, k) = sum_t eta_w(t), E_p likewise.

Variables: x_ok in {0,1} (run k from offset o); Y_s, Z_s, p_s, v_s as in P-OFF (O2)-(O5);
c_ok >= 0, the PS cost of the chosen window.
    maximize   sum_ok x_ok (phi_j(o + d_k - 1) - W_k E_w(o, k)) - sum_ok c_ok                   (9)
    sum_ok x_ok <= 1
    Y_s <= sum_ok F_sw(o, k) x_ok,   Z_s <= sum_ok F_sp(o, k) x_ok                               (9a)
    sum_s Y_s <= sum_ok Q_w(o, k) x_ok,   sum_s Z_s <= sum_ok Q_p(o, k) x_ok                  (3a), (3b)
    (O2)-(O5) with o_j = sum x, W_j = sum W_k x_ok, zeta_j = sum_{zeta_k = 1} x_ok        (3e), (3g), (3i), (3j)
    c_ok >= E_p(o, k) (sum_s Z_s - Z_max (1 - x_ok))                                   (the PS cost P E_p)
with Z_max = sum_s C_sp. The empty schedule scores 0, so the optimum is max{0, max over schedules}.
"""

from __future__ import annotations

import time
from typing import Protocol

import numpy as np
import pyomo.environ as pyo

from mlsched.formulations.astraea import add_placement, configurations
from mlsched.formulations.rows import row
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob
from mlsched.solve import Built, SolveReport, Status, solve



class FrozenRound(Protocol):
    """What (9) reads of a round (Algorithm 3's ``RoundView``): per slot of the round, free capacity
    per server, the owner's quota bounds and the posted prices."""

    free_w: np.ndarray     # (S, tau)
    free_p: np.ndarray     # (S, tau)
    quota_w: np.ndarray    # (tau,)
    quota_p: np.ndarray    # (tau,)
    eta_w: np.ndarray      # (tau,)
    eta_p: np.ndarray      # (tau,)


def build_pricing(instance: MultiTenantInstance, job: TenantJob, view: FrozenRound) -> Built:
    """Problem (9) for ``job`` in the round ``view`` describes (module docstring)."""
    tick = time.perf_counter()
    tau = view.eta_w.shape[0]
    configs = configurations(instance, job)
    keys = [(o, k) for k, c in enumerate(configs) for o in range(1, tau - c.duration + 2)]
    windows = {(o, k): slice(o - 1, o - 1 + configs[k].duration) for o, k in keys}
    free_w = {key: view.free_w[:, run].min(axis=1) for key, run in windows.items()}
    free_p = {key: view.free_p[:, run].min(axis=1) for key, run in windows.items()}
    quota_w = {key: int(view.quota_w[run].min()) for key, run in windows.items()}
    quota_p = {key: int(view.quota_p[run].min()) for key, run in windows.items()}
    price_w = {key: float(view.eta_w[run].sum()) for key, run in windows.items()}
    price_p = {key: float(view.eta_p[run].sum()) for key, run in windows.items()}
    value = {(o, k): float(job.utility.value(o + configs[k].duration - 1)) for o, k in keys}
    servers = range(len(instance.servers))
    most_ps = int(instance.ps_capacity.sum())

    m = pyo.ConcreteModel(name="astraea_pricing")
    m.x = pyo.Var(keys, domain=pyo.Binary)
    m.c = pyo.Var(keys, domain=pyo.NonNegativeReals)
    chosen = sum(m.x[key] for key in keys)
    add_placement(m, instance, [job.chunks], {0: chosen},
                  {0: sum(configs[k].workers * m.x[o, k] for o, k in keys)},
                  {0: sum(m.x[o, k] for o, k in keys if configs[k].centralized)})
    m.one = pyo.Constraint(rule=lambda _: row(chosen <= 1))
    m.free_w = pyo.Constraint(servers, rule=lambda _, s: m.Y[0, s] <= sum(int(free_w[key][s]) * m.x[key] for key in keys))
    m.free_p = pyo.Constraint(servers, rule=lambda _, s: m.Z[0, s] <= sum(int(free_p[key][s]) * m.x[key] for key in keys))
    workers, ps = sum(m.Y[0, s] for s in servers), sum(m.Z[0, s] for s in servers)
    m.quota_w = pyo.Constraint(expr=workers <= sum(quota_w[key] * m.x[key] for key in keys))
    m.quota_p = pyo.Constraint(expr=ps <= sum(quota_p[key] * m.x[key] for key in keys))
    m.ps_cost = pyo.Constraint(keys, rule=lambda _, o, k: m.c[o, k] >= price_p[o, k] * (ps - most_ps * (1 - m.x[o, k])))
    m.obj = pyo.Objective(expr=sum((value[o, k] - configs[k].workers * price_w[o, k]) * m.x[o, k] - m.c[o, k]
                                   for o, k in keys), sense=pyo.maximize)
    return Built(model=m, name=m.name, sense="max", relaxed=False, build_seconds=time.perf_counter() - tick)


def pricing_optimum(instance: MultiTenantInstance, job: TenantJob, view: FrozenRound, *,
                    verify: bool | str = False) -> SolveReport:
    """Solve (9); the objective is mu_j of the round over every placement (0 when nothing is worth it)."""
    built = build_pricing(instance, job, view)
    if not len(built.model.x):     # no configuration fits the round: only the empty schedule
        return SolveReport(Status.OPTIMAL, 0.0, 0.0, 0.0, built.build_seconds, 0.0, "none", relaxed=False,
                           message="no configuration fits the round")
    return solve(built, verify=verify)
