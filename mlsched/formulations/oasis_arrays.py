r"""The OASiS MILP of :mod:`mlsched.formulations.oasis` built straight into arrays for HiGHS.

Same variables, rows, bounds and objective as the Pyomo model (see that module's docstring for
the math, eq. (1)-(13) with the "paper" (2) and "chunk" (2c) workload rows, the earliest-completion
bounds on u and the optional cuts); the Pyomo model stays
the public, inspectable form, this builder exists because Pyomo needs about 18 s and 400 MB to
build a 100-job, 100-slot instance that numpy assembles in well under a second. Columns, in order:
x_i; u_i(t) for t >= max(a_i, t_i^min); y_ih(t) where y's bound min(N_i, per-server cap) >= 1; z_ik(t) likewise;
d_i(t) ("chunk" only). Rows are those of the Pyomo model (in another order); rows between constants that always hold
are left out, and a false one makes the model infeasible exactly as there.
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np

from mlsched.formulations.oasis import (
    DEFAULT_CUTS, chunk_passes, earliest_completion, max_rate, per_server_cap, require_buildable, server_classes)
from mlsched.formulations.oasis_symmetry import ordered
from mlsched.formulations.rows import ArrayRows, later_pairs
from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.schedule import ClusterSchedule
from mlsched.solve import ArrayProgram


@dataclass
class OasisArrays:
    """An OASiS program in arrays, with the maps between its columns and a schedule."""

    instance: ClusterJobsInstance
    variant: str
    program: ArrayProgram
    u_index: np.ndarray      # (I, T) column of u_i(t), -1 where absent
    y_cols: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]   # (column, i, h, t-1)
    z_cols: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]
    d_index: np.ndarray      # (I, T) column of d_i(t), -1 where absent ("chunk")
    build_seconds: float
    classes: tuple[list[np.ndarray], list[np.ndarray]]   # interchangeable worker, PS servers ("symmetry")
    capacity_rows: tuple[np.ndarray, np.ndarray]   # rows (4), (5): (row, server, slot - 1, resource) each

    @property
    def num_columns(self) -> int:
        return len(self.program.cost)

    def extract(self, values: np.ndarray) -> ClusterSchedule:
        inst = self.instance
        schedule = ClusterSchedule.empty(inst, f"opt_{self.variant}", promises_completion=True)
        schedule.admitted = values[: inst.num_jobs] > 0.5
        col, i, h, t = self.y_cols
        schedule.workers[i, t, h] = np.rint(values[col]).astype(np.int64)
        col, i, k, t = self.z_cols
        schedule.ps[i, t, k] = np.rint(values[col]).astype(np.int64)
        return schedule

    def start(self, schedule: ClusterSchedule) -> np.ndarray:
        """The column values of a schedule of :func:`mlsched.formulations.oasis.program_schedule`,
        its interchangeable servers put in the program's order."""
        inst = self.instance
        schedule = ordered(schedule, *self.classes)
        values = np.zeros(self.num_columns)
        values[: inst.num_jobs] = schedule.admitted
        t_hat = schedule.completion_slots()
        done = np.flatnonzero(schedule.admitted & (t_hat > 0))
        values[self.u_index[done, t_hat[done] - 1]] = 1.0
        col, i, h, t = self.y_cols
        values[col] = schedule.workers[i, t, h]
        col, i, k, t = self.z_cols
        values[col] = schedule.ps[i, t, k]
        if self.variant == "chunk":
            present = self.d_index >= 0
            values[self.d_index[present]] = chunk_passes(inst, schedule)[present]
        return values


def build_arrays(instance: ClusterJobsInstance, *, variant: str = "paper", relax: bool = False,
                 earliest: bool = True, cuts: Collection[str] = DEFAULT_CUTS) -> OasisArrays:
    """The OPT_paper or OPT_chunk MILP (or its LP relaxation) of ``instance`` as arrays
    (``earliest`` and ``cuts`` as in :func:`mlsched.formulations.oasis.build`)."""
    require_buildable(instance, variant, cuts)
    tick = time.perf_counter()
    inst = instance
    n_jobs, horizon = inst.num_jobs, inst.horizon
    chunks = np.array([j.chunks for j in inst.jobs], dtype=float)
    passes_needed = np.array([j.epochs * j.chunks for j in inst.jobs], dtype=float)
    arrival = np.asarray(inst.arrival, dtype=np.int64)
    ycap = np.minimum(per_server_cap(inst.worker_demand, inst.worker_capacity), chunks[:, None])
    zcap = np.minimum(per_server_cap(inst.ps_demand, inst.ps_capacity), chunks[:, None])
    slot = np.arange(1, horizon + 1)
    alive = slot[None, :] >= arrival[:, None]                       # (I, T): t >= a_i

    cost, lower, upper = [np.zeros(n_jobs)], [np.zeros(n_jobs)], [np.ones(n_jobs)]
    next_col = n_jobs

    def columns(mask: np.ndarray) -> tuple[np.ndarray, int]:
        nonlocal next_col
        index = np.full(mask.shape, -1, dtype=np.int64)
        count = int(mask.sum())
        index[mask] = np.arange(next_col, next_col + count)
        next_col += count
        return index, count

    t_min = earliest_completion(inst, ycap, zcap, variant) if earliest else arrival
    can_finish = alive & (slot[None, :] >= t_min[:, None])
    u_index, n_u = columns(can_finish)
    ui, ut = np.nonzero(can_finish)
    cost.append(np.concatenate([np.asarray(inst.jobs[i].utility.value(slot[can_finish[i]] - arrival[i]), dtype=float)
                                for i in range(n_jobs)]))
    lower.append(np.zeros(n_u))
    upper.append(np.ones(n_u))

    y_mask = alive[:, :, None] & (ycap[:, None, :] >= 1)             # (I, T, H)
    y_index, n_y = columns(y_mask)
    yi, yt, yh = np.nonzero(y_mask)
    cost.append(np.zeros(n_y))
    lower.append(np.zeros(n_y))
    upper.append(ycap[yi, yh].astype(float))
    z_mask = alive[:, :, None] & (zcap[:, None, :] >= 1)
    z_index, n_z = columns(z_mask)
    zi, zt, zk = np.nonzero(z_mask)
    cost.append(np.zeros(n_z))
    lower.append(np.zeros(n_z))
    upper.append(zcap[zi, zk].astype(float))
    d_index = np.full((n_jobs, horizon), -1, dtype=np.int64)
    ai, at = np.nonzero(alive)
    if variant == "chunk":
        d_index, n_d = columns(alive)
        cost.append(np.zeros(n_d))
        lower.append(np.zeros(n_d))
        upper.append(passes_needed[ai])

    rows = ArrayRows()
    jobs = np.arange(n_jobs)
    it_row = np.full((n_jobs, horizon), -1, dtype=np.int64)        # one row per alive (i, t)
    it_row[alive] = np.arange(int(alive.sum()))
    n_it = int(alive.sum())
    # (assign) sum_t u_i(t) - x_i = 0
    rows.add(np.concatenate([ui, jobs]), np.concatenate([u_index[ui, ut], jobs]),
             np.concatenate([np.ones(n_u), -np.ones(n_jobs)]), np.zeros(n_jobs), np.zeros(n_jobs))
    if variant == "paper":
        # (2) sum_{h,t} y_ih(t) - Theta_i x_i >= 0
        rows.add(np.concatenate([yi, jobs]), np.concatenate([y_index[yi, yt, yh], jobs]),
                 np.concatenate([np.ones(n_y), -np.asarray(inst.workload, dtype=float)]),
                 np.zeros(n_jobs), np.full(n_jobs, np.inf))
    else:
        # (2c) sum_t d_i(t) - E_i N_i x_i = 0;  sum_h y_ih(t) - W_i d_i(t) >= 0
        rows.add(np.concatenate([ai, jobs]), np.concatenate([d_index[ai, at], jobs]),
                 np.concatenate([np.ones(n_d), -passes_needed]), np.zeros(n_jobs), np.zeros(n_jobs))
        rows.add(np.concatenate([it_row[yi, yt], it_row[ai, at]]), np.concatenate([y_index[yi, yt, yh], d_index[ai, at]]),
                 np.concatenate([np.ones(n_y), -inst.chunk_time[ai]]), np.zeros(n_it), np.full(n_it, np.inf))
    # (3)+(8) sum_h y_ih(t) - N_i sum_{s >= t} u_i(s) <= 0, where some term exists
    later_i, later_t, later_s = later_pairs(alive)
    finishing = can_finish[later_i, later_s]
    later_i, later_t, later_s = later_i[finishing], later_t[finishing], later_s[finishing]
    has_last = np.zeros(n_it, dtype=bool)
    has_last[it_row[yi, yt]] = True
    has_last[it_row[later_i, later_t]] = True
    last_row = np.full(n_it, -1, dtype=np.int64)
    last_row[has_last] = np.arange(int(has_last.sum()))
    n_last = int(has_last.sum())
    most = max_rate(inst, ycap, zcap) if "rate" in cuts else chunks
    rows.add(np.concatenate([last_row[it_row[yi, yt]], last_row[it_row[later_i, later_t]]]),
             np.concatenate([y_index[yi, yt, yh], u_index[later_i, later_s]]),
             np.concatenate([np.ones(n_y), -most[later_i]]), np.full(n_last, -np.inf), np.zeros(n_last))
    if "completion" in cuts:
        # u_i(t) - sum_h y_ih(t) <= 0
        u_row = np.full((n_jobs, horizon), -1, dtype=np.int64)
        u_row[ui, ut] = np.arange(n_u)
        on_u = u_row[yi, yt] >= 0
        rows.add(np.concatenate([np.arange(n_u), u_row[yi, yt][on_u]]),
                 np.concatenate([u_index[ui, ut], y_index[yi, yt, yh][on_u]]),
                 np.concatenate([np.ones(n_u), -np.ones(int(on_u.sum()))]), np.full(n_u, -np.inf), np.zeros(n_u))
    classes = server_classes(inst, ycap, zcap) if "symmetry" in cuts else ([], [])
    _order_rows(rows, y_index[yi, yt, yh], yh, yt, classes[0], horizon)
    _order_rows(rows, z_index[zi, zt, zk], zk, zt, classes[1], horizon)
    # (6) b_i sum_h y - B_i sum_k z <= 0 and (7) sum_k z - sum_h y <= 0, where some term exists
    b_w = np.array([j.worker_bandwidth for j in inst.jobs])
    b_p = np.array([j.ps_bandwidth for j in inst.jobs])
    has_terms = np.zeros(n_it, dtype=bool)
    has_terms[it_row[yi, yt]] = True
    has_terms[it_row[zi, zt]] = True
    local = np.full(n_it, -1, dtype=np.int64)
    local[has_terms] = np.arange(int(has_terms.sum()))
    n_terms = int(has_terms.sum())
    y_rows, z_rows = local[it_row[yi, yt]], local[it_row[zi, zt]]
    rows.add(np.concatenate([y_rows, z_rows]), np.concatenate([y_index[yi, yt, yh], z_index[zi, zt, zk]]),
             np.concatenate([b_w[yi], -b_p[zi]]), np.full(n_terms, -np.inf), np.zeros(n_terms))
    rows.add(np.concatenate([z_rows, y_rows]), np.concatenate([z_index[zi, zt, zk], y_index[yi, yt, yh]]),
             np.concatenate([np.ones(n_z), -np.ones(n_y)]), np.full(n_terms, -np.inf), np.zeros(n_terms))
    # (4), (5) capacity rows that can bind
    capacity_rows = (
        _capacity_rows(rows, y_index[yi, yt, yh], yi, yt, yh, upper[2], inst.worker_demand, inst.worker_capacity, horizon),
        _capacity_rows(rows, z_index[zi, zt, zk], zi, zt, zk, upper[3], inst.ps_demand, inst.ps_capacity, horizon))

    program = rows.program(np.concatenate(cost), np.concatenate(lower), np.concatenate(upper), integer=not relax,
                           sense="max")
    return OasisArrays(inst, variant, program, u_index, (y_index[yi, yt, yh], yi, yh, yt),
                       (z_index[zi, zt, zk], zi, zk, zt), d_index, time.perf_counter() - tick, classes,
                       capacity_rows)


def _capacity_rows(rows: ArrayRows, cols: np.ndarray, job: np.ndarray, slot: np.ndarray, server: np.ndarray,
                   bound: np.ndarray, demand: np.ndarray, capacity: np.ndarray, horizon: int) -> np.ndarray:
    """sum_i demand_i^r var_is(t) <= c_s^r for every (s, t, r) whose users could exceed it (eq. 4 / 5);
    returns (row, s, t - 1, r) of each row added."""
    n_servers, n_res = capacity.shape
    labels = [np.zeros((0, 4), dtype=np.int64)]
    for r in range(n_res):
        uses = demand[job, r] > 0
        if not uses.any():
            continue
        key = server[uses] * horizon + slot[uses]
        load = np.bincount(key, weights=demand[job[uses], r] * bound[uses], minlength=n_servers * horizon)
        cap = np.repeat(capacity[:, r], horizon)
        binding = load > cap + EPS
        if not binding.any():
            continue
        number = np.full(n_servers * horizon, -1, dtype=np.int64)
        number[binding] = np.arange(int(binding.sum()))
        keep = binding[key]
        where = np.flatnonzero(binding)
        labels.append(np.column_stack([rows.count + np.arange(len(where)), where // horizon, where % horizon,
                                       np.full(len(where), r)]))
        rows.add(number[key[keep]], cols[uses][keep], demand[job[uses][keep], r],
                 np.full(int(binding.sum()), -np.inf), cap[binding])
    return np.concatenate(labels)


def _order_rows(rows: ArrayRows, cols: np.ndarray, server: np.ndarray, slot: np.ndarray, classes: list[np.ndarray],
                horizon: int) -> None:
    """(sym) of :mod:`mlsched.formulations.oasis_symmetry`: sum_i var_{i a}(t) - sum_i var_{i b}(t) >= 0
    for consecutive servers a < b of a class, in every slot where a has a variable."""
    for members in classes:
        for a, b in zip(members[:-1], members[1:]):
            slots = np.unique(slot[server == a])                       # the same slots as b's
            number = np.full(horizon, -1, dtype=np.int64)
            number[slots] = np.arange(len(slots))
            on_a, on_b = server == a, server == b
            rows.add(np.concatenate([number[slot[on_a]], number[slot[on_b]]]), np.concatenate([cols[on_a], cols[on_b]]),
                     np.concatenate([np.ones(int(on_a.sum())), -np.ones(int(on_b.sum()))]),
                     np.zeros(len(slots)), np.full(len(slots), np.inf))
