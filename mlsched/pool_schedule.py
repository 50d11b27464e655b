r"""UB-POOL-guided list scheduling: a feasible schedule of Astraea's P-OFF for its MIP start.

UB-POOL (:mod:`mlsched.formulations.astraea`) chooses columns x_jkt0 (a configuration and a start
per job) under pooled capacities only. On an uncrowded cluster its choice often fits the servers as
it is, and then the schedule scores UB-POOL's value, which proves it optimal with no branching.

1. Per job, its columns ranked: UB-POOL's largest x_jkt0 first (when >= 1/2), then by realized
   utility f_j(t0 + d_jk - 1), descending (columns of utility <= 0 are left out under admission).
2. Jobs in order of their first column's utility (descending, ties by index); each takes the first
   of its columns that the capacity left by the earlier jobs can host over slots t0..t0 + d_jk - 1:
   a centralized placement (W workers and one PS on the tightest server that has them; a
   distributed column placed so runs no slower, §1.3), else for a distributed column the workers
   on the servers with most free workers and the PS on the server that leaves fewest workers
   elsewhere, with ceil(b_w (W - Y_js) / b_p) PS ((3i)), on at least two servers. A job with no
   such column is not run (admission) -- under "all-jobs" the schedule is then no start.

The heuristic proves nothing by itself: the caller checks the schedule and compares its score
with the bounds.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from mlsched.formulations.astraea import Config, configurations, start_slots
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob, duration
from mlsched.instance.parameter_server import ps_needed
from mlsched.sim.multi_tenant_check import TenantSchedule

Column = tuple[int, int, int]   # (j, k, t0) as in P-OFF's x


def pool_guided_schedule(instance: MultiTenantInstance, horizon: int, pool_x: Mapping[Column, float],
                         variant: str = "admission") -> TenantSchedule:
    """The list schedule of the module docstring from UB-POOL's column values ``pool_x``."""
    free_w = np.tile(instance.worker_capacity, (horizon + 1, 1))
    free_p = np.tile(instance.ps_capacity, (horizon + 1, 1))
    ranked = {j: _ranked_columns(instance, j, job, horizon, pool_x, variant) for j, job in enumerate(instance.jobs)}
    schedule = TenantSchedule.empty(instance, "ub-pool-guided")
    order = sorted((j for j, r in ranked.items() if r is not None), key=lambda j: (-ranked[j][0], j))  # type: ignore[index]
    for j in order:
        for _, config, t0 in ranked[j][1]:  # type: ignore[index]
            window = slice(t0, t0 + config.duration)
            placed = _place(instance, instance.jobs[j], config, free_w[window].min(axis=0), free_p[window].min(axis=0))
            if placed is not None:
                workers, ps = placed
                schedule.start[j], schedule.workers[j], schedule.ps[j] = t0, workers, ps
                free_w[window] -= workers
                free_p[window] -= ps
                break
    return schedule


def _ranked_columns(instance: MultiTenantInstance, j: int, job: TenantJob, horizon: int,
                    pool_x: Mapping[Column, float],
                    variant: str) -> tuple[float, list[tuple[float, Config, int]]] | None:
    """(the first column's utility, the job's columns in the order of step 1); None if it has none."""
    columns = []
    for k, config in enumerate(configurations(instance, job)):
        for t0 in start_slots(instance, job, config, horizon):
            value = instance.realized(job, t0 + config.duration - 1)
            if variant == "all-jobs" or value > 0:
                chosen = pool_x.get((j, k, t0), 0.0) >= 0.5
                columns.append((not chosen, -value, k, t0, value, config))
    if not columns:
        return None
    columns.sort(key=lambda c: c[:4])
    return columns[0][4], [(value, config, t0) for *_, t0, value, config in columns]


def _place(instance: MultiTenantInstance, job: TenantJob, config: Config, free_w: np.ndarray,
           free_p: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """Workers and PS per server for ``config`` within the free capacities, or None."""
    n = len(free_w)
    workers, ps = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    w = config.workers
    if duration(job, w, True) <= config.duration:
        hosts = np.flatnonzero((free_w >= w) & (free_p >= 1))
        if len(hosts):
            s = int(hosts[np.argmin(free_w[hosts])])
            workers[s], ps[s] = w, 1
            return workers, ps
    if config.centralized:
        return None
    for s in np.argsort(-free_w, kind="stable"):
        workers[s] = min(int(free_w[s]), w - int(workers.sum()))
    if workers.sum() < w:
        return None
    b_w, b_p = instance.worker_bandwidth, instance.ps_bandwidth
    for s in sorted(range(n), key=lambda s: (-workers[s], s)):
        need = max(1, int(ps_needed(w - int(workers[s]), b_w, b_p)))
        if need <= free_p[s]:
            ps[s] = need
            if ((workers > 0) | (ps > 0)).sum() >= 2:
                return workers, ps
            ps[s] = 0
    return None
