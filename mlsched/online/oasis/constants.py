"""OASiS price constants U1^r, U2^r, L1, L2, eta1, eta2 and alpha (paper eqs. 23-26, Thm. 4).

All are kept in log space (spec §3.1 numerics): L1 can be ~e^-1425 for time-critical sigmoid
utilities, far below the smallest double.

  U1^r = max_{i: w_i^r > 0} f_i(x_i) / w_i^r                                      (23)
  U2^r = max_{i: s_i^r > 0} f_i(x_i) / s_i^r                                      (24)
  L1   = 1/(4 eta1) min_i f_i(T - a_i) / (ceil(Theta_i) sum_r w_i^r)              (25)
  L2   = 1/(4 eta2) min_i f_i(T - a_i) / (ceil(Theta_i) sum_r s_i^r)              (26)
  eta1 = max(1, max_i T sum_h sum_r c_h^r / (ceil(Theta_i) sum_r w_i^r))     (smallest admissible)
  alpha = max(1, max_r ln(U1^r / L1), max_r ln(U2^r / L2))                      (Theorem 4)

x_i = max(0, dmin_i - 1) by default (``u_arg="duration"``, spec A2); ``u_arg="paper_literal"``
uses the paper's text f_i(dmin_i - a_i). A resource no job uses in a pool gets a flat price
(U = L) and does not enter alpha; a pool no job uses at all is free (L = U = 0); U < L is raised to L with a warning (spec §3.1).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, replace

import numpy as np

from mlsched import libm
from mlsched.errors import UsageError
from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS

U_ARGS = ("duration", "paper_literal")


@dataclass(frozen=True)
class PriceConstants:
    """ln L1, ln L2 (scalars) and ln U1^r, ln U2^r (shape (R,)) plus eta1, eta2."""

    ln_l1: float
    ln_l2: float
    ln_u1: np.ndarray
    ln_u2: np.ndarray
    eta1: float
    eta2: float
    worker_used: np.ndarray
    ps_used: np.ndarray

    @property
    def alpha(self) -> float:
        """alpha of Theorem 4 (OASiS is 2 alpha-competitive under its assumptions)."""
        spreads = [1.0]
        spreads += [u - self.ln_l1 for u, used in zip(self.ln_u1, self.worker_used) if used]
        spreads += [u - self.ln_l2 for u, used in zip(self.ln_u2, self.ps_used) if used]
        return float(max(spreads))

    def scaled(self, factor: float) -> PriceConstants:
        """U scaled by ``factor`` with L fixed, clamped at U >= L (Fig. 6, spec A11)."""
        if not factor > 0:
            raise UsageError(f"U scale factor must be > 0, got {factor}")
        shift = math.log(factor)
        return replace(self, ln_u1=np.maximum(self.ln_u1 + shift, self.ln_l1),
                       ln_u2=np.maximum(self.ln_u2 + shift, self.ln_l2))


def oracle_constants(instance: ClusterJobsInstance, *, u_arg: str = "duration") -> PriceConstants:
    """The constants computed from the full job list (what Theorem 4 assumes)."""
    if u_arg not in U_ARGS:
        raise UsageError(f"unknown u_arg {u_arg!r}; choose one of {', '.join(U_ARGS)}")
    inst = instance
    horizon = inst.horizon
    theta_ceil = np.ceil(inst.workload - EPS)
    dmin = inst.min_duration
    if u_arg == "duration":
        best_x = np.maximum(0, dmin - 1)
    else:
        best_x = dmin - inst.arrival
    ln_f_best = np.array([j.utility.log_value(x) for j, x in zip(inst.jobs, best_x)], dtype=float)
    ln_f_last = np.array([j.utility.log_value(horizon - j.arrival) for j in inst.jobs], dtype=float)
    eta1 = _eta(horizon, inst.worker_capacity, theta_ceil, inst.worker_demand)
    eta2 = _eta(horizon, inst.ps_capacity, theta_ceil, inst.ps_demand)
    ln_l1 = _ln_low(ln_f_last, eta1, theta_ceil, inst.worker_demand)
    ln_l2 = _ln_low(ln_f_last, eta2, theta_ceil, inst.ps_demand)
    ln_u1, used1 = _ln_high(ln_f_best, inst.worker_demand, ln_l1, "worker", inst.resources)
    ln_u2, used2 = _ln_high(ln_f_best, inst.ps_demand, ln_l2, "PS", inst.resources)
    return PriceConstants(ln_l1=ln_l1, ln_l2=ln_l2, ln_u1=ln_u1, ln_u2=ln_u2, eta1=eta1, eta2=eta2,
                          worker_used=used1, ps_used=used2)


def _eta(horizon: int, capacity: np.ndarray, theta_ceil: np.ndarray, demand: np.ndarray) -> float:
    per_job = theta_ceil * demand.sum(axis=1)
    total = horizon * capacity.sum()
    with np.errstate(divide="ignore"):
        needed = np.where(per_job > 0, total / per_job, 0.0)
    return float(max(1.0, needed.max(initial=0.0)))


def _ln_low(ln_f_last: np.ndarray, eta: float, theta_ceil: np.ndarray, demand: np.ndarray) -> float:
    per_job = theta_ceil * demand.sum(axis=1)
    users = per_job > 0
    if not users.any():
        return -math.inf  # no job uses this pool: its resources are free (price 0)
    return float(np.min(ln_f_last[users] - libm.log(4.0 * eta * per_job[users])))


def _ln_high(ln_f_best: np.ndarray, demand: np.ndarray, ln_low: float, pool: str,
             resources: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    n_res = demand.shape[1]
    ln_u = np.full(n_res, ln_low)
    used = np.zeros(n_res, dtype=bool)
    for r in range(n_res):
        users = demand[:, r] > 0
        if not users.any():
            continue
        used[r] = True
        value = float(np.max(ln_f_best[users] - libm.log(demand[users, r])))
        if value < ln_low:
            warnings.warn(f"OASiS: U < L for {pool} resource {resources[r]}; using U = L", stacklevel=3)
            value = ln_low
        ln_u[r] = value
    return ln_u, used


def prices(ln_low: float, ln_high: np.ndarray, usage: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """P(g) = L (U/L)^(g/c) of eq. (22), evaluated in log space; U exactly when full.

    ``usage`` (..., S, R) and ``capacity`` (S, R); a zero capacity counts as usage 0 (price L).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(capacity > 0, usage / np.where(capacity > 0, capacity, 1.0), 0.0)
        ln_p = np.where(frac >= 1.0 - 1e-12, ln_high, (1.0 - frac) * ln_low + frac * ln_high)
        ln_p = np.where(np.isnan(ln_p), -np.inf, ln_p)
    return libm.exp(ln_p)
