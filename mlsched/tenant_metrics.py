r"""Metrics of multi-tenant runs (Astraea spec §5.3), computed from a schedule's realized utilities
and the transfers between tenants, whatever produced them.

  REV       = sum_j f_j(t_j^+)                                   (jobs not run count 0)
  g_u       = sum_{j of u} (f_j(t_j^+) - c_j) + sum_j rho^u_j    (§1.6, self-payments included)
  share_u   = (q_w^u / sum q_w + q_p^u / sum q_p) / 2
  alpha_u   = (g_u / REV) / share_u;  Var_alpha = population variance over the tenants with a share (A23)
  SI_u      = g_u / g_u^excl   (against the tenant's exclusive partition; NaN without a share, A23,
                                or when g_u^excl <= 0)
  PR        = REV_alg / REV_opt, reported beside OPT / ALG; with OPT only bracketed by an incumbent and
              a bound, the interval [ALG / UB, ALG / incumbent] (its ends swap when ALG < 0)
  util(t)   = sum_{s, j} y_js(t) / sum_s C_sw;  makespan = max_j t_j^+
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlsched.instance.multi_tenant import MultiTenantInstance


def tenant_gains(instance: MultiTenantInstance, utilities: np.ndarray, paid: np.ndarray | None = None,
                 received: np.ndarray | None = None) -> np.ndarray:
    """g_u: utilities of u's jobs less what they paid, plus what u received (``received``: (J, U))."""
    owners = np.array([job.owner for job in instance.jobs], dtype=np.int64)
    net = utilities - (paid if paid is not None else 0.0)
    gains = np.bincount(owners, weights=net, minlength=len(instance.tenants)) if len(owners) else \
        np.zeros(len(instance.tenants))
    if received is not None and received.size:
        gains = gains + received.sum(axis=0)
    return gains


def fair_shares(instance: MultiTenantInstance) -> np.ndarray:
    """share_u: the mean of the tenant's worker and PS quota fractions."""
    q_w = np.array([t.workers for t in instance.tenants], dtype=float)
    q_p = np.array([t.ps for t in instance.tenants], dtype=float)
    part_w = q_w / q_w.sum() if q_w.sum() > 0 else np.zeros_like(q_w)
    part_p = q_p / q_p.sum() if q_p.sum() > 0 else np.zeros_like(q_p)
    return (part_w + part_p) / 2.0


def fairness_ratios(instance: MultiTenantInstance, gains: np.ndarray) -> np.ndarray:
    """alpha_u; NaN for tenants with no share (A23) and when REV = 0."""
    shares = fair_shares(instance)
    revenue = float(gains.sum())
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = (gains / revenue) / shares if revenue != 0 else np.full_like(gains, np.nan)
    return np.where(shares > 0, alpha, np.nan)


def mean_utilization(instance: MultiTenantInstance, starts: np.ndarray, ends: np.ndarray,
                     workers: np.ndarray) -> float:
    """The mean of util(t) over t = 1..makespan from each job's run [start, end] and its worker
    count: worker-slots used over the cluster's worker-slots (0 when nothing ran)."""
    ran = starts > 0
    if not ran.any():
        return 0.0
    makespan = int(ends[ran].max())
    used = float((workers[ran] * (ends[ran] - starts[ran] + 1)).sum())
    return used / (makespan * max(1, int(instance.worker_capacity.sum())))


def summary(instance: MultiTenantInstance, utilities: np.ndarray, ran: np.ndarray, utilization: float,
            makespan: int, gains: np.ndarray) -> dict[str, Any]:
    """REV, alpha's mean and variance, the tenants without a share, utilization and makespan."""
    alpha = fairness_ratios(instance, gains)
    defined = alpha[~np.isnan(alpha)]
    return {"revenue": float(utilities.sum()), "jobs": instance.num_jobs, "scheduled": int(ran.sum()),
            "negative_jobs": int((utilities[ran] < 0).sum()),
            "alpha_mean": float(defined.mean()) if defined.size else math.nan,
            "var_alpha": float(defined.var()) if defined.size else math.nan,
            "tenants_without_share": int((fair_shares(instance) <= 0).sum()),
            "utilization": utilization, "makespan": makespan}


def sharing_incentive(instance: MultiTenantInstance, gains: np.ndarray, exclusive: np.ndarray) -> dict[str, Any]:
    """SI_u = g_u / g_u^excl per tenant; its mean and minimum over the tenants where it is defined,
    how many fall below 1 (BSI-2 fails: g_u < g_u^excl), and how many are undefined (A23)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        si = np.where((fair_shares(instance) > 0) & (exclusive > 0), gains / exclusive, np.nan)
    defined = si[~np.isnan(si)]
    return {"si": si, "si_mean": float(defined.mean()) if defined.size else math.nan,
            "si_min": float(defined.min()) if defined.size else math.nan,
            "si_below_one": int((gains < exclusive - 1e-9 * np.maximum(1.0, np.abs(exclusive)))[~np.isnan(si)].sum()),
            "si_undefined": int(np.isnan(si).sum())}


def performance_ratio(alg: float, opt_low: float, opt_high: float | None = None) -> dict[str, Any]:
    """PR = ALG / OPT beside OPT / ALG for a proven OPT (``opt_high`` None or equal), else the
    interval [ALG / UB, ALG / incumbent] with ``pr`` NaN; ALG <= 0 makes OPT / ALG meaningless, and says so."""
    high = opt_low if opt_high is None else opt_high
    ends = sorted((alg / high, alg / opt_low)) if opt_low > 0 else [math.nan, math.nan]
    proven = high == opt_low
    inverse = opt_low / alg if alg > 0 and proven else math.nan
    note = "" if alg > 0 else "ALG <= 0: OPT/ALG undefined"
    return {"pr": ends[0] if proven else math.nan, "pr_low": ends[0], "pr_high": ends[1], "opt_over_alg": inverse,
            "note": note}
