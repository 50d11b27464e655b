r"""OASiS's per-job subproblem (paper eqs. 27-32, worker-slot units) with convexified slot costs:
an upper bound on Algorithm 2's best payoff and a feasible schedule, without the DP.

Algorithm 2's exact DP (:func:`mlsched.online.oasis.subproblem.best_schedule`) splits the
workload D_i = ceil(Theta_i) worker-slots over the slots a_i..t_hat at the least total slot cost
cost_t(Y) (the greedy fill of the cheapest workers, eq. 30, plus that of Z(Y) = ceil(Y b_i / B_i)
PS, eqs. 6, 31), for every completion slot t_hat: O(S N_i D_i) per job, about 2 s for the 100
jobs of a 100 x 100 instance. Here cost_t is replaced by the convex minorant

    cost'_t(Y) = W_t(Y) + P_t(Y b_i / B_i),

W_t the worker fill (convex: units in price order), P_t the PS fill interpolated linearly between
integer PS counts (convex, and P_t(x) <= P_t(ceil x) because P_t is non-decreasing), infinite
exactly where cost_t is (past the caps). With convex slot costs the least cost of D units in
slots a_i..t is the sum of the D cheapest marginal units cost'_t(Y) - cost'_t(Y - 1) among those
slots (and the sum of the D cheapest is never above any other choice of D marginals, so this
holds even where rounding makes cost' a little non-convex). Hence

    payoff' = max_t [ f_i(t - a_i) - sum of the D cheapest marginals in a_i..t ]  >=  payoff of Alg. 2,

so a Lagrangian bound built from payoff' stays >= OPT (:mod:`mlsched.oasis_lagrangian`). The
schedule returned runs in each slot as many workers as marginals it took there (never past the
slot's caps, where marginals are infinite), placed greedily by price like lines 25-31, with Z(Y)
PS: a feasible schedule for the job under the caps given, completing at t_hat; its true cost may
exceed cost'. At zero prices every finite marginal is 0 and the schedule is the earliest
completion, Algorithm 2's at zero prices.
"""

from __future__ import annotations

import math

import numpy as np

from mlsched.formulations.oasis_terms import JobTerms, SlotPrices
from mlsched.instance.cluster_jobs import EPS
from mlsched.online.oasis.subproblem import BestSchedule

ROW_BLOCK = 8   # completion rows computed together; each block skips rows that cannot beat the best so far


def _unit_prices(price: np.ndarray, cap: np.ndarray, count: int) -> np.ndarray:
    """(S, count): the price of the k-th cheapest unit of each row, k = 1..count; inf past the caps."""
    order = np.argsort(price, axis=1, kind="stable")
    sorted_price = np.concatenate([np.take_along_axis(price, order, axis=1),
                                   np.full((price.shape[0], 1), np.inf)], axis=1)
    filled = np.cumsum(np.take_along_axis(cap, order, axis=1), axis=1)
    server = (filled[:, None, :] < np.arange(1, count + 1)[None, :, None]).sum(axis=2)
    return np.take_along_axis(sorted_price, server, axis=1)


def _cumulative(unit_prices: np.ndarray) -> np.ndarray:
    return np.concatenate([np.zeros((unit_prices.shape[0], 1)), np.cumsum(unit_prices, axis=1)], axis=1)


def marginal_costs(job: JobTerms, prices: SlotPrices) -> np.ndarray:
    """(S, N_i): cost'_t(Y) - cost'_t(Y - 1) for Y = 1..N_i (module docstring); inf where
    cost_t(Y) is infinite."""
    workers = np.arange(job.chunks + 1)
    need = np.asarray(job.ps_needed(workers))
    worker_cost = _cumulative(_unit_prices(prices.worker_price, prices.worker_cap, job.chunks))
    ps_cost = _cumulative(_unit_prices(prices.ps_price, prices.ps_cap, int(need[-1])))
    below = np.maximum(need - 1, 0)
    fraction = np.clip(workers * (job.worker_bandwidth / job.ps_bandwidth) - below, 0.0, 1.0)
    upper, lower = ps_cost[:, need], ps_cost[:, below]
    with np.errstate(invalid="ignore"):
        cost = worker_cost + np.where(need > 0, lower + fraction * (upper - lower), 0.0)
        cost[~np.isfinite(worker_cost) | ~np.isfinite(upper)] = np.inf
        return np.where(np.isfinite(cost[:, 1:]), cost[:, 1:] - cost[:, :-1], np.inf)


def greedy_placement(price: np.ndarray, cap: np.ndarray, count: np.ndarray) -> np.ndarray:
    """Per row, ``count`` units on the servers in price order (ties by index), each up to its cap."""
    order = np.argsort(price, axis=1, kind="stable")
    sorted_cap = np.take_along_axis(cap, order, axis=1)
    before = np.cumsum(sorted_cap, axis=1) - sorted_cap
    taken = np.clip(count[:, None] - before, 0, sorted_cap).astype(np.int64)
    placed = np.empty_like(taken)
    np.put_along_axis(placed, order, taken, axis=1)
    return placed


def relaxed_best_schedule(job: JobTerms, prices: SlotPrices) -> BestSchedule:
    """payoff' and the schedule of the module docstring (worker-slot units); ``cost`` is the
    convexified cost, ``completion`` 0 when payoff' <= 0."""
    n_slots, n_workers = prices.worker_price.shape
    empty = BestSchedule(0.0, 0, 0.0, np.zeros((n_slots, n_workers), dtype=np.int64),
                         np.zeros((n_slots, prices.ps_price.shape[1]), dtype=np.int64),
                         np.zeros(n_slots, dtype=np.int64))
    units = math.ceil(job.workload - EPS)
    rows = np.flatnonzero(job.utility > 0)
    if not len(rows):
        return empty
    marginal = marginal_costs(job, prices)
    # a marginal at or above every utility is in no selection of positive payoff: left out
    finite = marginal.ravel() < job.utility.max()
    order = np.argsort(marginal.ravel()[finite], kind="stable")
    values = marginal.ravel()[finite][order]
    slot = np.repeat(np.arange(n_slots), marginal.shape[1])[finite][order]
    if values.size < units:
        return empty
    # no completion row costs less than the D cheapest marginals of all slots, and none before
    # the first slot by which D marginals exist completes: those rows are never computed
    least = float(values[:units].sum())
    first = int(np.searchsorted(np.cumsum(np.bincount(slot, minlength=n_slots)), units))
    rows = rows[(rows >= first) & (job.utility[rows] - least > 0)]
    best_payoff, best_row, best_cost, chosen = 0.0, -1, 0.0, np.zeros(values.size, dtype=bool)
    for block in range(0, len(rows), ROW_BLOCK):
        candidates = rows[block:block + ROW_BLOCK]
        candidates = candidates[job.utility[candidates] - least > best_payoff]
        if not len(candidates):
            continue
        usable = slot[None, :] <= candidates[:, None]          # (completion row, marginal) pairs
        taken = np.cumsum(usable, axis=1, dtype=np.int32)
        if units == 0:
            cost = np.zeros(len(candidates))
        else:
            last = np.argmax(taken >= units, axis=1)
            cost = np.cumsum(np.where(usable, values, 0.0), axis=1)[np.arange(len(candidates)), last]
        payoff = job.utility[candidates] - cost
        pick = int(np.argmax(payoff))
        if payoff[pick] > best_payoff:
            best_payoff, best_row, best_cost = float(payoff[pick]), int(candidates[pick]), float(cost[pick])
            chosen = usable[pick] & (taken[pick] <= units)
    if best_row < 0:
        return empty
    count = np.bincount(slot[chosen], minlength=n_slots)
    return BestSchedule(best_payoff, job.arrival + best_row, best_cost,
                        greedy_placement(prices.worker_price, prices.worker_cap, count),
                        greedy_placement(prices.ps_price, prices.ps_cap, np.asarray(job.ps_needed(count))),
                        count)
