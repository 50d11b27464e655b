r"""The Lagrangian bound of the OASiS program: capacity rows (4), (5) priced, each job alone.

With prices p_h^r(t) >= 0 on the worker-server rows (4) and q_k^r(t) >= 0 on the PS rows (5),

  L(p, q) = sum_i max(0, max_{S_i} [ f_i(t_hat_i - a_i) - sum_{t,h} kappa_ih(t) y_ih(t)
                                                     - sum_{t,k} lambda_ik(t) z_ik(t) ])
            + sum_{t,h,r} p_h^r(t) c_h^r + sum_{t,k,r} q_k^r(t) c_k^r,

kappa_ih(t) = sum_r p_h^r(t) w_i^r, lambda_ik(t) = sum_r q_k^r(t) s_i^r, where S_i ranges over
job i's schedules under its own rows ((2) or (2c), (3), (6)-(13), the per-server bounds) and the
max(0, .) is x_i = 0. For every feasible schedule the priced terms add up to at most the resource
value (rows (4), (5) hold), so L(p, q) >= OPT for all p, q >= 0 (weak duality). Job i's inner
problem is the paper's Algorithm 2 at these prices with full capacities: for OPT_chunk exactly
(:func:`mlsched.online.oasis.subproblem.best_schedule`, chunk-passes), for OPT_paper its
convexified form (:func:`mlsched.oasis_relaxed_subproblem.relaxed_best_schedule`, worker-slot
units, a payoff never below the exact one and no DP), so every L(p, q) evaluated is a valid
bound: replacing a job's best payoff by an upper bound of it only raises L.

min L is the LP bound over the convex hull of each job's integer schedules, never above the LP
relaxation's. The prices start at the LP relaxation's duals of (4) and (5) when known (there L is
at most the LP bound: at these duals the LP with only (4), (5) priced has the LP bound as its
value, and each job's integer schedules are among its LP points, as long as the LP has no row
tying jobs together other than (4), (5)), else at zero (L is then the sum of the jobs' best
payoffs alone), and move by projected subgradient steps in prices scaled by capacity
(p_h^r(t) c_h^r) -- or, pooled, in one price per (slot, resource) of each pool shared by all its
servers in proportion to their capacities (a subset of the price vectors, so still >= OPT) --, with Polyak's step toward ``target`` (a known objective value or an estimate of OPT: it sets
only the step length, never the bound's validity), halved after ``STALL`` evaluations without a
better bound. The result is the least L seen.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import NamedTuple

import numpy as np

from mlsched.formulations.oasis import server_bounds
from mlsched.formulations.oasis_arrays import OasisArrays
from mlsched.formulations.oasis_terms import SlotPrices
from mlsched.instance import ClusterJobsInstance
from mlsched.online.oasis.policy import job_terms
from mlsched.oasis_relaxed_subproblem import relaxed_best_schedule
from mlsched.online.oasis.subproblem import best_schedule
from mlsched.solve import load_arrays

STALL = 5
GRANULARITY = {"paper": "worker_slot", "chunk": "chunk"}


class Evaluation(NamedTuple):
    """L at one price vector, the load each pool's (slot, server, resource) carries over its
    capacity in the jobs' best schedules (1 = full), and each job's payoff there."""

    value: float
    load_w: np.ndarray
    load_ps: np.ndarray
    payoff: np.ndarray


class LagrangianBound(NamedTuple):
    """The least L seen, the number of L evaluated and the jobs' payoffs at the best prices."""

    bound: float
    evaluated: int
    payoff: np.ndarray


class Lagrangian:
    """L(p, q) of the module docstring for one instance and variant, prices scaled by capacity:
    ``scaled_w[t, h, r] = p_h^r(t) c_h^r`` (zero where c_h^r = 0), likewise for PS servers."""

    def __init__(self, instance: ClusterJobsInstance, variant: str) -> None:
        self.instance, self.granularity = instance, GRANULARITY[variant]
        self.terms = [job_terms(instance, i) for i in range(instance.num_jobs)]
        ycap, zcap = server_bounds(instance)
        self.ycap, self.zcap = ycap.astype(np.int64), zcap.astype(np.int64)
        with np.errstate(divide="ignore"):
            self.inv_w = np.where(instance.worker_capacity > 0, 1.0 / instance.worker_capacity, 0.0)
            self.inv_ps = np.where(instance.ps_capacity > 0, 1.0 / instance.ps_capacity, 0.0)

    def value(self, scaled_w: np.ndarray, scaled_ps: np.ndarray) -> Evaluation:
        """L at the prices, with the loads and payoffs of :class:`Evaluation`."""
        inst = self.instance
        price_w, price_ps = scaled_w * self.inv_w, scaled_ps * self.inv_ps
        load_w, load_ps = np.zeros_like(scaled_w), np.zeros_like(scaled_ps)
        payoff = np.zeros(inst.num_jobs)
        for i, job in enumerate(self.terms):
            window = slice(job.arrival - 1, inst.horizon)
            slots = inst.horizon - job.arrival + 1
            w, s = inst.worker_demand[i], inst.ps_demand[i]
            prices = SlotPrices(worker_price=price_w[window] @ w,
                                worker_cap=np.broadcast_to(self.ycap[i], (slots, self.ycap.shape[1])),
                                ps_price=price_ps[window] @ s,
                                ps_cap=np.broadcast_to(self.zcap[i], (slots, self.zcap.shape[1])))
            best = (relaxed_best_schedule(job, prices) if self.granularity == "worker_slot"
                    else best_schedule(job, prices, granularity=self.granularity))
            if best.payoff > 0:
                payoff[i] = best.payoff
                load_w[window] += best.workers[:, :, None] * (w * self.inv_w)[None, :, :]
                load_ps[window] += best.ps[:, :, None] * (s * self.inv_ps)[None, :, :]
        return Evaluation(float(scaled_w.sum() + scaled_ps.sum() + payoff.sum()), load_w, load_ps, payoff)


def lp_duals(arrays: OasisArrays, *, time_limit: float | None = None,
             presolve: bool = True) -> tuple[float | None, tuple[np.ndarray, np.ndarray] | None]:
    """The LP relaxation of ``arrays``: its value and its duals of rows (4) and (5) scaled by
    capacity, shapes (T, H, R) and (T, K, R) (zero where there is no row); (None, None) unless
    HiGHS solves it to optimality within ``time_limit``."""
    import highspy

    inst = arrays.instance
    h = load_arrays(replace(arrays.program, integer=False), time_limit=time_limit, presolve=presolve)
    h.run()
    if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        return None, None
    duals = np.abs(np.asarray(h.getSolution().row_dual))
    out = []
    for labels, capacity in zip(arrays.capacity_rows, (inst.worker_capacity, inst.ps_capacity)):
        scaled = np.zeros((inst.horizon, *capacity.shape))
        row, server, slot, resource = labels.T
        scaled[slot, server, resource] = duals[row] * capacity[server, resource]
        out.append(scaled)
    return float(h.getInfo().objective_function_value), (out[0], out[1])


class _Prices:
    """The price vector the subgradient moves: the scaled prices of every (slot, server, resource)
    or, pooled, one scaled price P^r(t) per (slot, resource) of a pool, p_h^r(t) = P^r(t) / C^r
    on every server (C^r the pool's total capacity): scaled_h^r(t) = P^r(t) c_h^r / C^r."""

    def __init__(self, capacity: np.ndarray, pooled: bool) -> None:
        total = capacity.sum(axis=0)
        self.share = np.where(total > 0, capacity / np.where(total > 0, total, 1.0), 0.0) if pooled else None

    def scaled(self, free: np.ndarray) -> np.ndarray:
        return free if self.share is None else free[:, None, :] * self.share[None, :, :]

    def gradient(self, load: np.ndarray) -> np.ndarray:
        """dL/d(free prices) = 1 - load, summed over a pool's servers by their shares when pooled."""
        return 1.0 - load if self.share is None else (self.share[None, :, :] * (1.0 - load)).sum(axis=1)


def lagrangian_bound(instance: ClusterJobsInstance, variant: str, *,
                     start: tuple[np.ndarray, np.ndarray] | None = None, pooled: bool = False,
                     target: float = 0.0, iterations: int = 50, deadline: float | None = None) -> LagrangianBound:
    """min over the prices visited of L (module docstring), the number of L evaluated and the
    jobs' payoffs at the best prices: from the scaled prices ``start`` (e.g. :func:`lp_duals`;
    zero if None) or, ``pooled``, from zero over pooled prices (:class:`_Prices`: far fewer
    prices, which the subgradient moves much faster when the jobs' best schedules all crowd onto
    the same cheapest servers; every pooled price vector is a price vector, so L stays >= OPT),
    at most ``iterations`` evaluations, none begun after ``deadline`` (time.perf_counter()) once
    one L is known."""
    if pooled and start is not None:
        raise ValueError("pooled prices start at zero")
    lagrangian = Lagrangian(instance, variant)
    pools = (_Prices(instance.worker_capacity, pooled), _Prices(instance.ps_capacity, pooled))
    if start is None:
        start = tuple(np.zeros((instance.horizon, *capacity.shape[int(pooled):]))
                      for capacity in (instance.worker_capacity, instance.ps_capacity))
    free_w, free_ps = start
    best, payoff, theta, stall, evaluated = np.inf, np.zeros(instance.num_jobs), 1.0, 0, 0
    while evaluated < iterations and (deadline is None or evaluated == 0 or time.perf_counter() < deadline):
        point = lagrangian.value(pools[0].scaled(free_w), pools[1].scaled(free_ps))
        evaluated += 1
        if point.value < best - 1e-9:
            best, payoff, stall = point.value, point.payoff, 0
        else:
            stall += 1
            if stall >= STALL:
                theta, stall = theta / 2, 0
        # projected: no step below zero
        grad_w, grad_ps = pools[0].gradient(point.load_w), pools[1].gradient(point.load_ps)
        grad_w[(free_w <= 0) & (grad_w > 0)] = 0.0
        grad_ps[(free_ps <= 0) & (grad_ps > 0)] = 0.0
        norm = float((grad_w ** 2).sum() + (grad_ps ** 2).sum())
        if norm <= 0:
            break   # the best schedules fit the capacities exactly where priced: L is optimal
        step = theta * max(point.value - target, 1e-9) / norm
        free_w = np.maximum(0.0, free_w - step * grad_w)
        free_ps = np.maximum(0.0, free_ps - step * grad_ps)
    return LagrangianBound(float(best), evaluated, payoff)
