"""OASiS Algorithm 2: the best schedule of one job at frozen prices (paper eqs. 27-32).

Inputs, for the job's slots t = a_i..T (row s = t - a_i): per-worker prices
kappa_h(t) = sum_r p_h^r(t) w_i^r, per-PS prices lambda_k(t) = sum_r q_k^r(t) s_i^r, and
per-server caps from residual capacity, min_r floor((c^r - g^r(t)) / w_i^r) (eqs. 30, 31).

Two exact routines solve it:

- ``best_schedule`` (default, spec §3.7): per slot, the cost of Y workers is the greedy fill of
  COST_t (lines 23-46), built for every Y = 0..N_i at once as prefix sums over servers sorted by
  price; the split of the workload over slots is the "at-least" DP
      cost(t, D) = min_Y  c_t[Y] + cost(t - 1, max(0, D - step(Y)))
  with step(Y) = floor(Y / W_i) chunk-passes (``granularity="chunk"``, the paper's Alg. 2) or
  step(Y) = Y worker-slots (``granularity="worker_slot"``, spec §3.8, exact for eq. 27 as written).
  The t_hat loop (lines 4-10) keeps the earliest strictly best payoff f_i(t_hat - a_i) - cost and
  stops once f_i(t_hat - a_i) cannot beat it (costs are >= 0, f non-increasing).
- ``best_schedule_literal``: lines 3-46 as printed (memoised recursion over exact chunk counts),
  for cross-checks on small cases.
Both return the same payoff; schedules may differ only among ties (spec §3.7, A16).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from mlsched.errors import UsageError
from mlsched.formulations.oasis_terms import GRANULARITIES, JobTerms, SlotPrices
from mlsched.instance.cluster_jobs import EPS

@dataclass
class BestSchedule:
    """l* and mu_i of Algorithm 2; ``completion`` is 0 when no schedule has a positive payoff."""

    payoff: float
    completion: int
    cost: float
    workers: np.ndarray         # (S, H) for slots a_i..T
    ps: np.ndarray              # (S, K)
    units: np.ndarray           # (S,) workload units (chunk-passes or worker-slots) per slot

    @property
    def admitted(self) -> bool:
        return self.completion > 0


def _fill_cost(price: np.ndarray, cap: np.ndarray, max_units: int) -> np.ndarray:
    """Cheapest cost of n = 0..max_units units per row: greedy fill in price order (COST_t)."""
    order = np.argsort(price, axis=1, kind="stable")
    p = np.take_along_axis(price, order, axis=1)
    c = np.minimum(np.take_along_axis(cap, order, axis=1), max_units).astype(float)
    before = np.cumsum(c, axis=1) - c
    n = np.arange(max_units + 1, dtype=float)
    taken = np.clip(n[None, :, None] - before[:, None, :], 0.0, c[:, None, :])
    with np.errstate(invalid="ignore"):
        cost = np.einsum("snh,sh->sn", taken, p)
    cost[n[None, :] > c.sum(axis=1)[:, None]] = np.inf
    return cost


def slot_costs(job: JobTerms, prices: SlotPrices) -> np.ndarray:
    """cost_t(Y) for Y = 0..N_i in every slot, (S, N_i + 1); +inf where infeasible (lines 32, 41)."""
    n = job.chunks
    z_of_y = job.ps_needed(np.arange(n + 1))
    worker = _fill_cost(prices.worker_price, prices.worker_cap, n)
    ps = _fill_cost(prices.ps_price, prices.ps_cap, int(z_of_y[-1]))
    return worker + ps[:, z_of_y]


def place(price: np.ndarray, cap: np.ndarray, count: int) -> np.ndarray:
    """Greedy placement of ``count`` units on servers sorted by price, ties by index (lines 25-31)."""
    out = np.zeros(price.shape[0], dtype=np.int64)
    left = count
    for h in np.argsort(price, kind="stable"):
        if left <= 0:
            break
        take = min(int(cap[h]), left)
        out[h] = take
        left -= take
    if left > 0:
        raise AssertionError("placement of a DP choice failed: caps changed under the DP")
    return out


def best_schedule(job: JobTerms, prices: SlotPrices, *, granularity: str = "chunk") -> BestSchedule:
    """Algorithm 2 by the accelerated exact DP of spec §3.7 (and §3.8 for worker slots)."""
    if granularity not in GRANULARITIES:
        raise UsageError(f"unknown granularity {granularity!r}; choose one of {', '.join(GRANULARITIES)}")
    costs = slot_costs(job, prices)
    n_slots = costs.shape[0]
    total = job.units(granularity)
    step = job.step(granularity)
    useful = np.flatnonzero(np.r_[True, step[1:] > step[:-1]])  # smallest Y for each step value
    d = np.arange(total + 1)
    source = np.maximum(0, d[None, :] - step[useful][:, None])
    value = np.full(total + 1, np.inf)
    value[0] = 0.0
    choices = np.zeros((n_slots, total + 1), dtype=np.int64)
    best_payoff, best_slot, best_cost = 0.0, -1, 0.0
    for s in range(n_slots):
        if job.utility[s] <= best_payoff:
            break
        candidates = costs[s, useful][:, None] + value[source]
        pick = np.argmin(candidates, axis=0)
        value = candidates[pick, d]
        choices[s] = useful[pick]
        payoff = job.utility[s] - value[total]
        if payoff > best_payoff:
            best_payoff, best_slot, best_cost = float(payoff), s, float(value[total])
    return _reconstruct(job, prices, choices, step, total, best_payoff, best_slot, best_cost)


def _reconstruct(job: JobTerms, prices: SlotPrices, choices: np.ndarray, step: np.ndarray, total: int,
                 payoff: float, last: int, cost: float) -> BestSchedule:
    n_slots = prices.worker_price.shape[0]
    workers = np.zeros((n_slots, prices.worker_price.shape[1]), dtype=np.int64)
    ps = np.zeros((n_slots, prices.ps_price.shape[1]), dtype=np.int64)
    units = np.zeros(n_slots, dtype=np.int64)
    if last < 0:
        return BestSchedule(0.0, 0, 0.0, workers, ps, units)
    remaining = total
    for s in range(last, -1, -1):
        y = int(choices[s, remaining])
        units[s] = min(int(step[y]), remaining)
        remaining -= units[s]
        workers[s] = place(prices.worker_price[s], prices.worker_cap[s], y)
        ps[s] = place(prices.ps_price[s], prices.ps_cap[s], int(job.ps_needed(y)))
        if remaining == 0:
            break
    return BestSchedule(payoff, job.arrival + last, cost, workers, ps, units)


def best_schedule_literal(job: JobTerms, prices: SlotPrices, *, granularity: str = "chunk") -> BestSchedule:
    """Algorithm 2 exactly as printed (lines 3-46): exact-count DP with strict '>' tie rules."""
    if granularity not in GRANULARITIES:
        raise UsageError(f"unknown granularity {granularity!r}; choose one of {', '.join(GRANULARITIES)}")
    n_slots = prices.worker_price.shape[0]
    ratio = job.worker_bandwidth / job.ps_bandwidth

    @cache
    def cost_t(s: int, d: int) -> tuple[float, tuple[int, ...], tuple[int, ...]]:
        """COST_t (lines 23-46) for d units in slot row s."""
        y = np.zeros(prices.worker_price.shape[1], dtype=np.int64)
        z = np.zeros(prices.ps_price.shape[1], dtype=np.int64)
        need = math.ceil(d * job.chunk_time - EPS) if granularity == "chunk" else d     # line 26
        for h in np.argsort(prices.worker_price[s], kind="stable"):                     # lines 27-31
            y[h] = min(int(prices.worker_cap[s, h]), job.chunks - int(y.sum()), need)
            need -= y[h]
        if need > 0:                                                                    # line 32
            return math.inf, tuple(y), tuple(z)
        total_y = int(y.sum())
        for k in np.argsort(prices.ps_price[s], kind="stable"):                         # lines 36-40
            z[k] = min(int(prices.ps_cap[s, k]), int(job.ps_needed(total_y)) - int(z.sum()), total_y - int(z.sum()))
        if z.sum() < ratio * total_y - EPS:                                             # line 41
            return math.inf, tuple(y), tuple(z)
        cost = float(prices.worker_price[s] @ y + prices.ps_price[s] @ z)               # line 44
        return cost, tuple(y), tuple(z)

    @cache
    def dp_cost(s: int, units: int) -> tuple[float, tuple[tuple[int, int], ...]]:
        """DP_COST (lines 12-22): min cost of exactly ``units`` in rows 0..s; plan = ((row, d), ...)."""
        if s < 0:
            return (0.0, ()) if units == 0 else (math.inf, ())
        best, plan = math.inf, ()
        for d in range(units + 1):                                                      # line 14
            c_t = cost_t(s, d)[0]
            c_rest, rest = dp_cost(s - 1, units - d)
            if best > c_t + c_rest:                                                     # line 17
                best, plan = c_t + c_rest, rest + ((s, d),)
        return best, plan

    total = job.units(granularity)
    best_payoff, best_plan, best_slot, best_cost = 0.0, (), -1, 0.0
    for s in range(n_slots):                                                            # line 4
        cost, plan = dp_cost(s, total)
        payoff = job.utility[s] - cost                                                  # line 6
        if payoff > best_payoff:                                                        # line 7
            best_payoff, best_plan, best_slot, best_cost = payoff, plan, s, cost
    workers = np.zeros((n_slots, prices.worker_price.shape[1]), dtype=np.int64)
    ps = np.zeros((n_slots, prices.ps_price.shape[1]), dtype=np.int64)
    units = np.zeros(n_slots, dtype=np.int64)
    for s, d in best_plan:
        _, y, z = cost_t(s, d)
        workers[s], ps[s], units[s] = y, z, d
    completion = job.arrival + best_slot if best_slot >= 0 else 0
    return BestSchedule(float(best_payoff), completion, float(best_cost), workers, ps, units)
