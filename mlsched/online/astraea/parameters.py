r"""Astraea's constants (spec §3.1): the configurations that fit the empty cluster, the price bases
theta_w, theta_p, the approximation ratio sigma of A_maxIrev (Lemma 3), the number of rounds per
batch lambda (Lemma 1), and the posted prices (Eq. 8).

  K_j^fit   configurations (W, zeta) of K_j with a placement satisfying §1.4 on the empty cluster:
            centralized: some s with C_sw >= W and C_sp >= 1; distributed: some s1 with
            y1 = min(W - 1, C_s1w), ceil((W - y1) b_w / b_p) <= C_s1p and W - y1 <= sum_{s != s1} C_sw
  theta_w = 1 + max_j max_{k in K_j^fit} phi_j(d_jk) / (W_k d_jk)
  theta_p = 1 + max_j max_{k in K_j^fit} phi_j(d_jk) / d_jk                         (each times theta_scale,
                                                                                   at least 1 + 1e-9)
  sigma   = 2 (log theta_w + log theta_p)                                          (Lemma 3; natural log)
  lambda  = ceil((log F - log f_min) / (log sigma - log(sigma - 1))) + 1           (Lemma 1, mode "theory")
            F = sum_j max_{K_j^fit} phi_j(d_jk), f_min = min_j max_{K_j^fit} phi_j(d_jk); mode "fixed": 2
  eta(t)  = theta ^ (h(t) / C_tot) - 1                                             (Eq. 8)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mlsched import libm
from mlsched.errors import UsageError
from mlsched.formulations.astraea import Config, configurations
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob
from mlsched.instance.parameter_server import ps_needed

THETA_FLOOR = 1.0 + 1e-9
LAMBDA_MODES = ("fixed", "theory")
LOG_BASES = {"e": math.log, "2": math.log2, "10": math.log10}


def fits_empty_cluster(instance: MultiTenantInstance, config: Config) -> bool:
    """Whether ``config`` has a placement satisfying §1.4 on the empty cluster."""
    cap_w, cap_p = instance.worker_capacity, instance.ps_capacity
    w = config.workers
    if config.centralized:
        return bool(((cap_w >= w) & (cap_p >= 1)).any())
    local = np.minimum(w - 1, cap_w)          # per candidate PS server s: its own workers
    need = ps_needed(w - local, instance.worker_bandwidth, instance.ps_bandwidth)
    return bool(((need <= cap_p) & (w - local <= int(cap_w.sum()) - cap_w)).any())


def worker_cap(job: TenantJob, by_trace_gpus: bool = False) -> int:
    """The most workers Astraea tries: D_j (Alg. 3), or min(g_j^tr, D_j) with ``by_trace_gpus`` (A13)."""
    return min(job.gpus, job.chunks) if by_trace_gpus and job.gpus is not None else job.chunks


def fitting_configurations(instance: MultiTenantInstance, job: TenantJob, by_trace_gpus: bool = False) -> list[Config]:
    """K_j^fit (module docstring), over W = 1..worker_cap(job)."""
    return [c for c in configurations(instance, job, worker_cap(job, by_trace_gpus))
            if fits_empty_cluster(instance, c)]


def best_ideal_utility(job: TenantJob, configs: list[Config]) -> float:
    """max_{k in K_j^fit} phi_j(d_jk): the job's utility at its fastest fitting run; -inf if none fits."""
    return max((float(job.utility.value(c.duration)) for c in configs), default=-math.inf)


@dataclass(frozen=True)
class Constants:
    theta_w: float
    theta_p: float
    sigma: float
    rounds: int              # lambda
    lambda_theory: float     # the Lemma 1 value (nan when undefined: no job worth running)


def price_bases(instance: MultiTenantInstance, fit: list[list[Config]], theta_scale: float = 1.0) -> tuple[float, float]:
    """(theta_w, theta_p) of §3.1 over every job's K_j^fit."""
    per_worker = per_slot = -math.inf
    for job, configs in zip(instance.jobs, fit):
        for c in configs:
            value = float(job.utility.value(c.duration))
            per_worker = max(per_worker, value / (c.workers * c.duration))
            per_slot = max(per_slot, value / c.duration)
    theta_w = max(THETA_FLOOR, (1.0 + per_worker) * theta_scale) if per_worker > -math.inf else THETA_FLOOR
    theta_p = max(THETA_FLOOR, (1.0 + per_slot) * theta_scale) if per_slot > -math.inf else THETA_FLOOR
    return theta_w, theta_p


def sigma_of(theta_w: float, theta_p: float, log_base: str = "e") -> float:
    """sigma = 2 (log theta_w + log theta_p) (Lemma 3)."""
    if log_base not in LOG_BASES:
        raise UsageError(f"log_base must be one of {', '.join(LOG_BASES)}, not {log_base!r}")
    log = LOG_BASES[log_base]
    return 2.0 * (log(theta_w) + log(theta_p))


def lambda_theory(instance: MultiTenantInstance, fit: list[list[Config]], sigma: float) -> float:
    """ceil((ln F - ln f_min) / (ln sigma - ln(sigma - 1))) + 1 over the jobs worth running (Lemma 1)."""
    if sigma <= 1.0:
        raise UsageError(f"lambda_mode 'theory' needs sigma > 1, but sigma = {sigma:.6g} "
                         f"(raise theta_w/theta_p or use lambda_mode 'fixed')")
    best = [best_ideal_utility(job, configs) for job, configs in zip(instance.jobs, fit)]
    worth = [b for b in best if b > 0]
    if not worth:
        return math.nan
    spread = math.log(sum(worth)) - math.log(min(worth))
    return math.ceil(spread / (math.log(sigma) - math.log(sigma - 1.0)) - 1e-12) + 1


def constants(instance: MultiTenantInstance, fit: list[list[Config]], *, theta: tuple[float, float] | None = None,
              theta_scale: float = 1.0, lambda_mode: str = "fixed", lambda_fixed: int = 2,
              log_base: str = "e") -> Constants:
    """theta (given, or from §3.1), sigma and lambda in the chosen mode (A1, A24)."""
    if lambda_mode not in LAMBDA_MODES:
        raise UsageError(f"lambda_mode must be one of {', '.join(LAMBDA_MODES)}, not {lambda_mode!r}")
    if lambda_fixed < 1:
        raise UsageError(f"lambda_fixed must be at least 1, not {lambda_fixed}")
    if theta_scale <= 0:
        raise UsageError(f"theta_scale must be positive, not {theta_scale}")
    if theta is not None:
        theta_w, theta_p = (max(THETA_FLOOR, float(v)) for v in theta)
    else:
        theta_w, theta_p = price_bases(instance, fit, theta_scale)
    sigma = sigma_of(theta_w, theta_p, log_base)
    if lambda_mode == "theory":
        theory = lambda_theory(instance, fit, sigma)
        rounds = 1 if math.isnan(theory) else int(theory)
    else:
        theory = math.nan
        rounds = lambda_fixed
    return Constants(theta_w=theta_w, theta_p=theta_p, sigma=sigma, rounds=rounds, lambda_theory=theory)


def posted_prices(theta: float, used: np.ndarray, total: int) -> np.ndarray:
    """eta(t) = theta^(h(t) / C_tot) - 1 of every slot (Eq. 8); 0 on an empty slot, theta - 1 when full."""
    if total <= 0:
        return np.zeros_like(used, dtype=float)
    return libm.power(theta, used / total) - 1.0
