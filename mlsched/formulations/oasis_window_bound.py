r"""The workload-window bound: an upper bound on OPT_paper and OPT_chunk from aggregated capacity.

A job that completes by slot t has done its whole workload Theta_i = E_i N_i W_i worker-slots
(eq. 2; (2c) needs W_i E_i N_i as well) within [a_i, t], each worker slot using w_i^r of
resource r on some worker server, and at least b_i / B_i PS-slots per worker-slot (eqs. 6, 7),
each using s_i^r. Summed over the jobs that arrive at or after tau, the work they complete by t
fits in the pools' total capacity over the slots tau..t. With U_i(t) in [0, 1] "job i has
completed by t" (non-decreasing in t, 0 before t_i^min, the earliest completion of
:func:`mlsched.formulations.oasis.earliest_completion`):

  max  sum_i sum_t f_i(t - a_i) (U_i(t) - U_i(t - 1))
  s.t. U_i(t - 1) <= U_i(t) <= 1
       sum_{i: a_i >= tau} Theta_i w_i^r U_i(t)           <= (t - tau + 1) sum_h c_h^r   (worker pool)
       sum_{i: a_i >= tau} (b_i / B_i) Theta_i s_i^r U_i(t) <= (t - tau + 1) sum_k c_k^r   (PS pool)
  for every arrival slot tau, t >= tau and resource r some job uses.

Every schedule gives a solution (U_i(t) = 1 from its completion slot on) of the same value, so the
LP's optimum bounds OPT from above. It is not implied by the LP relaxation of the MILP, whose
fractional u_i(t) may collect utility early while the work is done late; the window rows forbid
that. With f_i non-increasing the objective telescopes to
sum_{t < T} (f_i(t - a_i) - f_i(t + 1 - a_i)) U_i(t) + f_i(T - a_i) U_i(T); negative utilities
are floored at 0 (a job may stay incomplete).
"""

from __future__ import annotations

import numpy as np

from mlsched.formulations.oasis import earliest_completion, server_bounds
from mlsched.formulations.rows import ArrayRows
from mlsched.instance import ClusterJobsInstance
from mlsched.solve import ArrayProgram


def window_program(instance: ClusterJobsInstance, variant: str = "paper") -> ArrayProgram:
    """The LP of the module docstring in arrays (columns U_i(t) for t >= t_i^min, job-major)."""
    inst = instance
    n_jobs, horizon = inst.num_jobs, inst.horizon
    arrival = np.asarray(inst.arrival, dtype=np.int64)
    t_min = earliest_completion(inst, *server_bounds(inst), variant)
    slot = np.arange(1, horizon + 1)
    present = slot[None, :] >= t_min[:, None]                        # (I, T)
    index = np.full((n_jobs, horizon), -1, dtype=np.int64)
    index[present] = np.arange(int(present.sum()))
    ji, jt = np.nonzero(present)
    value = np.zeros((n_jobs, horizon + 1))
    for i in range(n_jobs):
        value[i, :horizon] = np.maximum(0.0, np.asarray(inst.jobs[i].utility.value(slot - arrival[i]), dtype=float))
    cost = value[ji, jt] - np.where(jt + 1 < horizon, value[ji, np.minimum(jt + 1, horizon - 1)], 0.0)
    rows = ArrayRows()
    later = present[:, 1:] & present[:, :-1]                          # U_i(t - 1) - U_i(t) <= 0
    li, lt = np.nonzero(later)
    n_mono = len(li)
    rows.add(np.concatenate([np.arange(n_mono), np.arange(n_mono)]),
             np.concatenate([index[li, lt], index[li, lt + 1]]),
             np.concatenate([np.ones(n_mono), -np.ones(n_mono)]), np.full(n_mono, -np.inf), np.zeros(n_mono))
    theta = inst.workload
    ps_share = np.array([j.worker_bandwidth / j.ps_bandwidth for j in inst.jobs])
    for demand, capacity, per_job in ((inst.worker_demand, inst.worker_capacity, theta),
                                      (inst.ps_demand, inst.ps_capacity, ps_share * theta)):
        total = capacity.sum(axis=0)
        for r in range(demand.shape[1]):
            weight = per_job * demand[:, r]
            if not np.any(weight > 0):
                continue
            _window_rows(rows, index, present, arrival, weight, float(total[r]))
    return rows.program(cost, np.zeros(len(cost)), np.ones(len(cost)), integer=False, sense="max")


def _window_rows(rows: ArrayRows, index: np.ndarray, present: np.ndarray, arrival: np.ndarray,
                 weight: np.ndarray, capacity: float) -> None:
    """sum_{i: a_i >= tau, w_i > 0} w_i U_i(t) <= (t - tau + 1) capacity for every arrival tau, t >= tau."""
    horizon = present.shape[1]
    row_i, row_c, row_v, upper = [], [], [], []
    number = 0
    for tau in np.unique(arrival):
        jobs = np.flatnonzero((arrival >= tau) & (weight > 0))
        for t in range(int(tau), horizon + 1):
            users = jobs[present[jobs, t - 1]]
            if users.size == 0 or float(weight[users].sum()) <= (t - tau + 1) * capacity:
                continue   # a row that cannot bind
            row_i.append(np.full(users.size, number))
            row_c.append(index[users, t - 1])
            row_v.append(weight[users])
            upper.append((t - tau + 1) * capacity)
            number += 1
    if number:
        rows.add(np.concatenate(row_i), np.concatenate(row_c), np.concatenate(row_v),
                 np.full(number, -np.inf), np.array(upper))
