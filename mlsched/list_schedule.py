r"""Guided list scheduling: feasible schedules of the OASiS program for its MIP start.

At the papers' sizes HiGHS can run a minute without an incumbent better than the online
algorithms'. This heuristic gives it one:

1. Value each job, by one or more rules: its utility density (needing no solve)
       v_i = max_t f_i(t - a_i) / ( Theta_i [ sum_r w_i^r / C_w^r + (b_i / B_i) sum_r s_i^r / C_ps^r ] ),
   the best utility per worker-slot weighted by the share of the pools' total capacities C^r
   one worker and its PS take; the LP relaxation's fractional utility
   v_i = sum_t f_i(t - a_i) u_i(t) (the same arrays as the MILP, integrality dropped); or its
   payoff in the Lagrangian bound at the best prices (:mod:`mlsched.oasis_lagrangian`).
2. List scheduling: take the jobs in an order and give each, on the capacity the earlier ones
   left, its best schedule at zero prices -- Algorithm 2's exact subproblem (eqs. 27-32) with
   every price 0, i.e. the earliest completion slot the residual capacity allows, so the job
   scores max_t f_i(t - a_i) over its feasible completions; a job that cannot complete is
   skipped.  Worker-slot granularity solves OPT_paper's per-job problem exactly; chunk
   granularity gives whole chunk-passes per slot, as OPT_chunk's (2c) requires.
3. Local search on the order: move one job to another place (seeded, ``moves`` attempts),
   keeping a move whenever the total does not fall.

Each rule's order is v_i descending (ties by index); the search starts from the best of them.
Every schedule is checked by the caller like any start; the heuristic proves nothing and bounds
nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from mlsched.formulations.oasis_arrays import OasisArrays, build_arrays
from mlsched.formulations.oasis_terms import SlotPrices
from mlsched.instance import ClusterJobsInstance
from mlsched.online.oasis.policy import job_terms, server_caps
from mlsched.online.oasis.subproblem import best_schedule
from mlsched.sim.schedule import ClusterSchedule
from mlsched.solve import SolveReport, Status, solve_arrays

GRANULARITY = {"paper": "worker_slot", "chunk": "chunk"}
MOVES = 200


def lp_job_values(instance: ClusterJobsInstance, variant: str = "paper", time_limit: float | None = None,
                  arrays: OasisArrays | None = None, presolve: bool = True) -> tuple[SolveReport, np.ndarray | None]:
    """The LP relaxation's report and v_i per job (None when the LP was not solved to optimality);
    ``arrays`` is the program when it is already built (its integrality is dropped here)."""
    arrays = build_arrays(instance, variant=variant) if arrays is None else arrays
    report = solve_arrays(replace(arrays.program, integer=False), time_limit=time_limit, presolve=presolve)
    if report.status is not Status.OPTIMAL or report.schedule is None:
        return report, None
    u = np.where(arrays.u_index >= 0, report.schedule[np.maximum(arrays.u_index, 0)], 0.0)
    cost = np.where(arrays.u_index >= 0, arrays.program.cost[np.maximum(arrays.u_index, 0)], 0.0)
    return report, (u * cost).sum(axis=1)


def value_order(values: np.ndarray) -> list[int]:
    """Job indices by ``values`` descending, ties by index."""
    return [int(i) for i in np.lexsort((np.arange(len(values)), -np.asarray(values)))]


def list_schedule(instance: ClusterJobsInstance, order: list[int] | np.ndarray,
                  variant: str = "paper") -> tuple[float, ClusterSchedule]:
    """Step 2 for one order: the total utility and the schedule."""
    inst = instance
    granularity = GRANULARITY[variant]
    usage_w = np.zeros((inst.horizon,) + inst.worker_capacity.shape)
    usage_ps = np.zeros((inst.horizon,) + inst.ps_capacity.shape)
    schedule = ClusterSchedule.empty(inst, f"guided_list_{variant}", promises_completion=True)
    total = 0.0
    for i in order:
        job = inst.jobs[i]
        window = slice(job.arrival - 1, inst.horizon)
        n_slots = inst.horizon - job.arrival + 1
        w, s = inst.worker_demand[i], inst.ps_demand[i]
        prices = SlotPrices(
            worker_price=np.zeros((n_slots, len(inst.worker_servers))),
            worker_cap=server_caps(inst.worker_capacity - usage_w[window], w, job.chunks),
            ps_price=np.zeros((n_slots, len(inst.ps_servers))),
            ps_cap=server_caps(inst.ps_capacity - usage_ps[window], s, job.chunks))
        plan = best_schedule(job_terms(inst, int(i)), prices, granularity=granularity)
        if not plan.admitted:
            continue
        usage_w[window] += plan.workers[:, :, None] * w[None, None, :]
        usage_ps[window] += plan.ps[:, :, None] * s[None, None, :]
        schedule.admitted[i] = True
        schedule.workers[i, window] = plan.workers
        schedule.ps[i, window] = plan.ps
        total += plan.payoff
    return total, schedule


def density_values(instance: ClusterJobsInstance) -> np.ndarray:
    """Step 1's utility density v_i of every job."""
    inst = instance
    pools = []
    for demand, capacity in ((inst.worker_demand, inst.worker_capacity), (inst.ps_demand, inst.ps_capacity)):
        total = capacity.sum(axis=0)
        pools.append((demand * np.where(total > 0, 1.0 / np.where(total > 0, total, 1.0), 0.0)).sum(axis=1))
    ratio = np.array([job.worker_bandwidth / job.ps_bandwidth for job in inst.jobs])
    best = np.array([job_terms(inst, i).utility.max(initial=0.0) for i in range(inst.num_jobs)])
    footprint = np.asarray(inst.workload, dtype=float) * (pools[0] + ratio * pools[1])
    return best / np.maximum(footprint, 1e-12)


def guided_schedule(instance: ClusterJobsInstance, values: Sequence[np.ndarray], *, variant: str = "paper",
                    moves: int = MOVES, seed: int = 0, deadline: float | None = None) -> ClusterSchedule:
    """Steps 2-3 from the best of the orders of ``values`` (each descending); ``deadline`` (a
    ``time.perf_counter`` instant) stops the local search early."""
    best, schedule, order = -np.inf, None, []
    for rule in values:
        candidate = value_order(rule)
        total, trial = list_schedule(instance, candidate, variant)
        if total > best:
            best, schedule, order = total, trial, candidate
    if schedule is None:
        raise ValueError("no job values given")
    rng = np.random.default_rng(seed)
    for _ in range(moves if len(order) > 1 else 0):
        if deadline is not None and time.perf_counter() >= deadline:
            break
        source, target = (int(v) for v in rng.integers(0, len(order), 2))
        candidate = order.copy()
        candidate.insert(target, candidate.pop(source))
        total, trial = list_schedule(instance, candidate, variant)
        if total >= best:
            best, schedule, order = total, trial, candidate
    return schedule
