r"""Astraea's exact offline benchmark P-OFF (spec §2.5), a time-indexed configuration MILP
equivalent to problem (3), with an admission variant; its LP relaxation; and UB-POOL.

Data: servers s with C_sw workers and C_sp PS slots; b_w, b_p; job j with release slot
r'_j (r_j + 1, or r_j when ``release_inclusive``), chunks D_j and durations
d_jk = ceil(B_j / (n_j^zeta W)) of its configurations k = (W, zeta) (§1.3).

Index sets:
  K_j     (W, zeta), W = 1..D_j, zeta = 1 only if W <= max_s C_sw; exact pruning: per (j, zeta) only
          the smallest W of each distinct d_jk (fewer workers, same duration, never worse)
  A_jk    start slots t0 with r'_j <= t0 <= T - d_jk + 1
Variables:
  x_jkt0 in {0,1}  j runs configuration k from slot t0
  Y_js, Z_js in Z+  its constant workers / PS on server s;  p_js in {0,1} s hosts a PS of j;
  v_js in {0,1} s is j's centralized server;  y_jst, z_jst >= 0, a_jt in [0,1] (integral at
  every feasible point)
Objective:  max sum_{j,k,t0} x_jkt0 f_j(t0 + d_jk - 1)          (3), f_j as ``time_origin`` says
Constraints:
  (O1) o_j = sum_{k,t0} x_jkt0 <= 1   ("admission"; "all-jobs": = 1, exactly (3))
  (O2) sum_s Y_js = sum_{k,t0} W_k x_jkt0                                               (3e)
  (O3) p_js <= Z_js <= C_sp p_js;  sum_s p_js >= o_j                                   (3g)
  (O4) b_w (sum_s' Y_js' - Y_js) <= b_p Z_js + b_w D_j (1 - p_js)                       (3i) [P-fix]
  (O5) zeta_j = sum_{k: zeta_k = 1, t0} x_jkt0;  sum_s v_js = zeta_j;
       Y_js <= C_sw v_js + D_j (1 - zeta_j);  Z_js <= C_sp (v_js + 1 - zeta_j)           (3j)
  (O6) a_jt = sum_k sum_{t0 <= t <= t0 + d_jk - 1} x_jkt0                     (3f), (3h), (3l)-(3n)
  (O7) y_jst <= Y_js;  y_jst <= Cbar_w a_jt;  y_jst >= Y_js - Cbar_w (1 - a_jt),
       Cbar_w = min(C_sw, D_j); the same for z with C_sp
  (O8) sum_j y_jst <= C_sw;  sum_j z_jst <= C_sp                               (3c), (3d) => (3a), (3b)

Exact tightenings (``tightenings``; DEFAULT_TIGHTENINGS are on by default, "symmetry" on request:
the measurements are in docs/decisions.md §2.5):
  lower-rows  only the rows y_jst >= Y_js - Cbar_w (1 - a_jt) and z_jst >= Z_js - C_sp (1 - a_jt) of
              (O7), y, z >= 0. y, z appear only on the left of (O8), so any point of these rows
              with y >= Y a, z >= Z a (which they imply at integral a, and the LP can always take
              y = max(0, Y - Cbar_w (1 - a)) <= min(Y, Cbar_w a)) gives a point of full (O7) with
              y := Y a, z := Z a: the same (x, Y, Z) are feasible, in the MILP and in the LP.
  pooled      UB-POOL's per-slot rows sum_j sum_k W_k act_jkt <= sum_s C_sw, sum_j a_jt <= sum_s C_sp:
              the sums over s of (O8), with sum_s y_jst = W_j a_jt by (O2), (O7) and every running
              job holding a PS (O3): valid cuts, and P-OFF's LP bound is then at most UB-POOL.
  big-m       the big-Ms of (O5) Y_js <= C_sw v_js + min(C_sw, D_j)(1 - zeta_j) and of (O4)
              b_w min(D_j, sum_{s' != s} C_s'w)(1 - p_js): Y_js <= min(C_sw, D_j) is its bound,
              and sum_{s' != s} Y_js' <= min(W_j, sum_{s' != s} C_s'w) with W_j <= D_j.
  symmetry    (O9) among servers of equal (C_sw, C_sp), in index order s < s' consecutive,
              L_s >= L_s' with L_s = sum_j (Y_js + Z_js). Valid: nothing in (3) distinguishes
              two servers of equal capacities (rows (O2)-(O8) and the objective are symmetric in
              them, the tenants' partitions are not rows of (3)), so renumbering the servers of
              each group by non-increasing L_s (:func:`identical_servers_by_load`) maps every
              feasible schedule to one satisfying (O9) with the same x, hence the same objective;
              :func:`program_schedule` applies that renumbering to a MIP start.

Horizon T: the instance's ``horizon`` if given; else for affine utilities in the admission
variant max_j (r_j + floor(g_j / |k_j|)) (exact: no job is worth finishing later); else
max_j r'_j + sum_j min_k d_jk - 1, the minimum over the configurations that fit the empty cluster
(:func:`runs_alone`), so that every job fits after the last release, one after another (the spec's
max(ALG makespan, ...) takes the runs' makespan in :func:`mlsched.exact.exact_astraea`, which
lengthens T to the latest completion of the schedules it is given).

IRMP(J, D) (Lemma 1; :func:`irmp`) is P-OFF with every r_j := 0, T := D, f := phi_j(t^+), admission
allowed.

MIP start (:func:`program_schedule`): a checked non-preemptive schedule read as a point of P-OFF:
x_jkt0 = 1 for its start t0 and configuration k = (W_j, zeta_j) read from the placement, Y, Z its
allocation (servers of equal capacities renumbered by non-increasing load, (O9)), p_js = [Z_js > 0], v_js = zeta_j [j uses s], a_jt = [t0 <= t <= t0 + d_jk - 1],
y = Y a, z = Z a. Every row then holds with the schedule's own values: (O4), (O8) are the checker's
(3i), (3c), (3d); (O1)-(O3), (O5)-(O7) hold by construction.

UB-POOL (``variant="ub-pool"``, an LP): x in [0, 1], (O1) and per-slot pooled capacity
  sum_j sum_k W_k act_jkt <= sum_s C_sw,  sum_j act_jt <= sum_s C_sp,
with act_jkt = sum_{t0 <= t <= t0 + d_jk - 1} x_jkt0: a relaxation of (3), so OPT <= UB-POOL.
It bounds the all-jobs variant too: its schedules are admission schedules, and the admission
optimum is the same under the all-jobs horizon (the horizon rule above is exact).

Job-wise bound (:func:`jobwise_bound`, no solve): sum_j max(0, max_{k, t0} f_j(t0 + d_jk - 1)).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo

from mlsched.errors import UsageError
from mlsched.formulations.rows import row
from mlsched.instance.multi_tenant import MultiTenantInstance, TenantJob, duration
from mlsched.instance.parameter_server import ps_needed
from mlsched.instance.utility import Affine
from mlsched.sim.multi_tenant_check import TenantSchedule, check, realized_utilities
from mlsched.solve import Built

VARIANTS = ("admission", "all-jobs", "ub-pool")
TIGHTENINGS = ("lower-rows", "pooled", "big-m", "symmetry")
DEFAULT_TIGHTENINGS = ("lower-rows", "pooled", "big-m")   # measured: docs/decisions.md §2.5


@dataclass(frozen=True)
class Config:
    workers: int
    centralized: bool
    duration: int


def configurations(instance: MultiTenantInstance, job: TenantJob, max_workers: int | None = None) -> list[Config]:
    """K_j after the exact pruning: per mode, the fewest workers of each distinct duration
    (W = 1..D_j, or 1..``max_workers`` when the worker count is capped lower)."""
    most_on_one = int(instance.worker_capacity.max())
    out = []
    for centralized in (True, False):
        seen: set[int] = set()
        for w in range(1, (max_workers or job.chunks) + 1):
            if centralized and w > most_on_one:
                break
            d = duration(job, w, centralized)
            if d not in seen:
                seen.add(d)
                out.append(Config(w, centralized, d))
    return out


def runs_alone(instance: MultiTenantInstance, config: Config) -> bool:
    """Whether ``config`` can be placed on the empty cluster: centralized, W workers and a PS on
    one server (3j); distributed, W workers in all and a server whose PS slots, holding as many of
    the workers as it can, cover the workers on the other servers (3i) (one PS server is the
    easiest placement: each server that hosts a PS must cover the workers elsewhere itself)."""
    workers, ps = instance.worker_capacity, instance.ps_capacity
    if config.centralized:
        return bool(np.any((workers >= config.workers) & (ps >= 1)))
    if config.workers > workers.sum():
        return False
    elsewhere = config.workers - np.minimum(workers, config.workers)
    return bool(np.any(ps >= np.maximum(1, ps_needed(elsewhere, instance.worker_bandwidth, instance.ps_bandwidth))))


def start_slots(instance: MultiTenantInstance, job: TenantJob, config: Config, horizon: int) -> range:
    """A_jk: the slots t0 from which ``job`` runs ``config`` and completes within ``horizon``."""
    return range(instance.first_slot(job), horizon - config.duration + 2)


def jobwise_bound(instance: MultiTenantInstance, variant: str = "admission") -> float:
    """sum_j max_{k, t0} f_j(t0 + d_jk - 1) over P-OFF's columns (at least 0 per job under
    "admission"): every job on its best column, as if alone. An upper bound on P-OFF's optimum of
    ``variant`` that needs no solve (a job without columns adds nothing); looser than UB-POOL and
    the LP relaxation, it is there when they are not."""
    horizon = offline_horizon(instance, variant)
    total = 0.0
    for job in instance.jobs:
        values = [instance.realized(job, t0 + c.duration - 1) for c in configurations(instance, job)
                  for t0 in start_slots(instance, job, c, horizon)]
        total += max(values + ([0.0] if variant != "all-jobs" else []), default=0.0)
    return total


def column_count(instance: MultiTenantInstance, variant: str) -> int:
    """P-OFF's start columns x_jkt0 without building it."""
    horizon = offline_horizon(instance, variant)
    return sum(len(start_slots(instance, job, c, horizon)) for job in instance.jobs
               for c in configurations(instance, job))


def integer_count(instance: MultiTenantInstance, variant: str, columns: int | None = None) -> int:
    """P-OFF's integer variables (x, Y, Z, p, v) without building it (``columns``: its
    :func:`column_count`, when already known)."""
    if columns is None:
        columns = column_count(instance, variant)
    return columns + 4 * instance.num_jobs * len(instance.servers)


def exact_horizon(instance: MultiTenantInstance, variant: str) -> bool:
    """Whether P-OFF's horizon rule is exact (module docstring): affine utilities of negative slope
    in the admission variant, where no job is worth finishing later."""
    return variant != "all-jobs" and bool(instance.jobs) and all(
        isinstance(j.utility, Affine) and j.utility.k < 0 for j in instance.jobs)


def offline_horizon(instance: MultiTenantInstance, variant: str) -> int:
    """The last slot of P-OFF (module docstring)."""
    if instance.horizon is not None:
        return instance.horizon
    jobs = instance.jobs
    if exact_horizon(instance, variant):
        origin = [j.arrival if instance.time_origin == "arrival" else 0 for j in jobs]
        return max(1, max(o + math.floor(j.utility.g / -j.utility.k) for o, j in zip(origin, jobs)))
    shortest = [min((c.duration for c in configurations(instance, j) if runs_alone(instance, c)), default=0)
                for j in jobs]   # a job no configuration of which fits the cluster never runs
    return max(1, max((instance.first_slot(j) for j in jobs), default=1) + sum(shortest) - 1)


def program_schedule(instance: MultiTenantInstance, schedule: TenantSchedule,
                     variant: str = "admission") -> TenantSchedule:
    """The program's reading of a checked schedule, a point of P-OFF (a MIP start): a job that
    ends after the horizon has no column and is dropped with its workers and PS (only frees
    capacity); under the admission variant so is a job of negative realized utility (it scores 0
    unadmitted). A kept job's workers are cut to the fewest of its mode with the same duration (the
    column the exact pruning of K_j keeps), so it scores what it scored. Under "all-jobs" a dropped
    job leaves the result infeasible (O1), which the caller's check sees."""
    out = TenantSchedule(schedule.start.copy(), schedule.workers.copy(), schedule.ps.copy(), schedule.algorithm)
    horizon = offline_horizon(instance, variant)
    ends, values = schedule.completions(instance), realized_utilities(instance, schedule)
    for j, job in enumerate(instance.jobs):
        if not out.start[j]:
            continue
        if ends[j] > horizon or (variant != "all-jobs" and values[j] < 0):
            out.start[j], out.workers[j], out.ps[j] = 0, 0, 0
        else:
            _fewest_workers(job, out.workers[j], out.ps[j])
    order = identical_servers_by_load(instance, out.workers.sum(axis=0) + out.ps.sum(axis=0))
    out.workers, out.ps = out.workers[:, order], out.ps[:, order]
    return out


def identical_servers_by_load(instance: MultiTenantInstance, load: np.ndarray) -> np.ndarray:
    """A renumbering of the servers (new index -> old) that keeps every server's (C_sw, C_sp) and
    puts the servers of equal capacities in non-increasing ``load``, ties in index order: the
    order (O9) asks for."""
    order = np.arange(len(instance.servers))
    for members in identical_server_groups(instance):
        order[members] = sorted(members, key=lambda s: -load[s])
    return order


def identical_server_groups(instance: MultiTenantInstance) -> list[list[int]]:
    """The servers grouped by equal (C_sw, C_sp), each group in index order."""
    groups: dict[tuple[int, int], list[int]] = {}
    for s, caps in enumerate(zip(instance.worker_capacity, instance.ps_capacity)):
        groups.setdefault((int(caps[0]), int(caps[1])), []).append(s)
    return list(groups.values())


def _fewest_workers(job: TenantJob, workers: np.ndarray, ps: np.ndarray) -> None:
    """Cut a job's placement (in place) to the fewest workers of the same mode and duration: one
    worker at a time from the server holding most among those whose cut keeps the mode (a server
    with a PS or a second worker stays in use; otherwise a distributed job keeps two servers).
    Fewer workers never break (3i) or a capacity."""
    used = (workers > 0) | (ps > 0)
    centralized = bool(used.sum() == 1)
    same = duration(job, int(workers.sum()), centralized)
    fewest = next(w for w in range(1, job.chunks + 1) if duration(job, w, centralized) == same)
    while workers.sum() > fewest:
        stays = (workers > 1) | (ps > 0)
        allowed = (workers > 0) & (stays | (((workers > 0) | (ps > 0)).sum() > 2))
        workers[int(np.argmax(np.where(allowed, workers, -1)))] -= 1


def add_placement(m: pyo.ConcreteModel, inst: MultiTenantInstance, chunks: list[int], admitted: dict[int, Any],
                  workers_of: dict[int, Any], central: dict[int, Any], *, relax: bool = False,
                  tight_big_m: bool = False) -> None:
    """The constant per-server allocation of each job j (indices of ``chunks``) and rows (O2)-(O5):
    Y_js, Z_js, p_js, v_js, given the expressions o_j (``admitted``), W_j (``workers_of``) and
    zeta_j (``central``) in the job's chosen configuration; ``tight_big_m``: the big-Ms of (O4) and
    (O5) at Y_js's own bound min(C_sw, D_j) (module docstring)."""
    jobs, servers = range(len(chunks)), range(len(inst.servers))
    cap_w, cap_p = inst.worker_capacity, inst.ps_capacity
    integer = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    flag = pyo.UnitInterval if relax else pyo.Binary
    m.Y = pyo.Var(jobs, servers, domain=integer, bounds=lambda _, j, s: (0, min(int(cap_w[s]), chunks[j])))
    m.Z = pyo.Var(jobs, servers, domain=integer, bounds=lambda _, j, s: (0, int(cap_p[s])))
    m.p = pyo.Var(jobs, servers, domain=flag)
    m.v = pyo.Var(jobs, servers, domain=flag)
    b_w, b_p = inst.worker_bandwidth, inst.ps_bandwidth
    big_m = {(j, s): min(int(cap_w[s]), chunks[j]) if tight_big_m else chunks[j] for j in jobs for s in servers}
    m.o2 = pyo.Constraint(jobs, rule=lambda _, j: sum(m.Y[j, s] for s in servers) == workers_of[j])
    m.o3a = pyo.Constraint(jobs, servers, rule=lambda _, j, s: m.p[j, s] <= m.Z[j, s])
    m.o3b = pyo.Constraint(jobs, servers, rule=lambda _, j, s: m.Z[j, s] <= int(cap_p[s]) * m.p[j, s])
    m.o3c = pyo.Constraint(jobs, rule=lambda _, j: sum(m.p[j, s] for s in servers) >= admitted[j])
    m.o4 = pyo.Constraint(jobs, servers, rule=lambda _, j, s: b_w * (sum(m.Y[j, q] for q in servers) - m.Y[j, s])
                          <= b_p * m.Z[j, s] + b_w * (chunks[j] if not tight_big_m else
                                                        min(chunks[j], int(cap_w.sum() - cap_w[s]))) * (1 - m.p[j, s]))
    m.o5a = pyo.Constraint(jobs, rule=lambda _, j: sum(m.v[j, s] for s in servers) == central[j])
    m.o5b = pyo.Constraint(jobs, servers, rule=lambda _, j, s: m.Y[j, s]
                           <= int(cap_w[s]) * m.v[j, s] + big_m[j, s] * (1 - central[j]))
    m.o5c = pyo.Constraint(jobs, servers, rule=lambda _, j, s: m.Z[j, s] <= int(cap_p[s]) * (m.v[j, s] + 1 - central[j]))


def _order_identical_servers(m: pyo.ConcreteModel, inst: MultiTenantInstance) -> None:
    """(O9): among servers of equal (C_sw, C_sp), in index order, the load L_s = sum_j (Y_js + Z_js)
    does not increase (module docstring)."""
    pairs = [(a, b) for members in identical_server_groups(inst) for a, b in zip(members, members[1:])]
    jobs = range(inst.num_jobs)

    def load(s: int) -> Any:
        return sum(m.Y[j, s] + m.Z[j, s] for j in jobs)

    m.o9 = pyo.Constraint(range(len(pairs)), rule=lambda _, i: load(pairs[i][0]) >= load(pairs[i][1]))


def irmp(instance: MultiTenantInstance, jobs: Sequence[int], deadline: int) -> MultiTenantInstance:
    """IRMP(J, D) (Definition 1, (4)) as a P-OFF instance: the jobs J available at time 0 (slots
    1..D), each scored phi_j(t^+); solve it with the admission variant."""
    return dataclasses.replace(
        instance, jobs=tuple(dataclasses.replace(instance.jobs[j], arrival=0) for j in jobs), time_origin="arrival",
        release_inclusive=False, horizon=deadline, expected={})


def build(instance: MultiTenantInstance, *, variant: str = "admission", relax: bool = False,
          tightenings: Collection[str] = DEFAULT_TIGHTENINGS) -> Built:
    """P-OFF (``admission`` or ``all-jobs``), its LP relaxation, or UB-POOL; ``tightenings`` (a
    subset of TIGHTENINGS) are the exact reformulations of the module docstring."""
    if variant not in VARIANTS:
        raise UsageError(f"unknown Astraea variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    unknown = set(tightenings) - set(TIGHTENINGS)
    if unknown:
        raise UsageError(f"unknown P-OFF tightening {sorted(unknown)[0]!r}; choose from {', '.join(TIGHTENINGS)}")
    tick = time.perf_counter()
    inst = instance
    horizon = offline_horizon(inst, variant)
    n_servers = len(inst.servers)
    cap_w, cap_p = inst.worker_capacity, inst.ps_capacity
    configs = {j: configurations(inst, job) for j, job in enumerate(inst.jobs)}
    starts = [(j, k, t0) for j, job in enumerate(inst.jobs) for k, c in enumerate(configs[j])
              for t0 in start_slots(inst, job, c, horizon)]
    value = {(j, k, t0): inst.realized(inst.jobs[j], t0 + configs[j][k].duration - 1) for j, k, t0 in starts}
    jobs = range(inst.num_jobs)
    servers = range(n_servers)
    slots = range(1, horizon + 1)

    by_job: dict[int, list[tuple[int, int, int]]] = {j: [] for j in jobs}
    running_at: dict[tuple[int, int], list[tuple[int, int, int]]] = {}   # (j, t) -> the columns of j running at t
    for key in starts:
        j, k, t0 = key
        by_job[j].append(key)
        for t in range(t0, t0 + configs[j][k].duration):
            running_at.setdefault((j, t), []).append(key)

    def running(j: int, t: int) -> list[tuple[int, int, int]]:
        return running_at.get((j, t), [])

    m = pyo.ConcreteModel(name=f"astraea_{variant}")
    binary = pyo.UnitInterval if relax or variant == "ub-pool" else pyo.Binary
    m.x = pyo.Var(starts, domain=binary)
    m.obj = pyo.Objective(expr=sum(value[key] * m.x[key] for key in starts), sense=pyo.maximize)
    admitted = {j: sum(m.x[key] for key in by_job[j]) for j in jobs}
    if variant == "all-jobs":
        m.o1 = pyo.Constraint(jobs, rule=lambda _, j: row(admitted[j] == 1))
    else:
        m.o1 = pyo.Constraint(jobs, rule=lambda _, j: row(admitted[j] <= 1))
    if variant == "ub-pool" or "pooled" in tightenings:
        active_workers = {t: sum(configs[j][k].workers * m.x[j, k, t0] for j in jobs for (_, k, t0) in running(j, t))
                          for t in slots}
        active_jobs = {t: sum(m.x[key] for j in jobs for key in running(j, t)) for t in slots}
        m.pool_w = pyo.Constraint(slots, rule=lambda _, t: row(active_workers[t] <= int(cap_w.sum())))
        m.pool_p = pyo.Constraint(slots, rule=lambda _, t: row(active_jobs[t] <= int(cap_p.sum())))
    if variant == "ub-pool":
        return Built(model=m, name=m.name, sense="max", relaxed=True, build_seconds=time.perf_counter() - tick)

    workers_of = {j: sum(configs[j][k].workers * m.x[j, k, t0] for (_, k, t0) in by_job[j]) for j in jobs}
    central = {j: sum(m.x[j, k, t0] for (_, k, t0) in by_job[j] if configs[j][k].centralized) for j in jobs}
    add_placement(m, inst, [job.chunks for job in inst.jobs], admitted, workers_of, central, relax=relax,
                  tight_big_m="big-m" in tightenings)
    if "symmetry" in tightenings:
        _order_identical_servers(m, inst)
    m.a = pyo.Var(jobs, slots, bounds=(0, 1))
    m.y = pyo.Var(jobs, servers, slots, domain=pyo.NonNegativeReals)
    m.z = pyo.Var(jobs, servers, slots, domain=pyo.NonNegativeReals)
    chunks = {j: inst.jobs[j].chunks for j in jobs}
    m.o6 = pyo.Constraint(jobs, slots, rule=lambda _, j, t: m.a[j, t] == sum(m.x[key] for key in running(j, t)))
    wbar = {(j, s): min(int(cap_w[s]), chunks[j]) for j in jobs for s in servers}
    m.o7c = pyo.Constraint(jobs, servers, slots,
                           rule=lambda _, j, s, t: m.y[j, s, t] >= m.Y[j, s] - wbar[j, s] * (1 - m.a[j, t]))
    m.o7f = pyo.Constraint(jobs, servers, slots,
                           rule=lambda _, j, s, t: m.z[j, s, t] >= m.Z[j, s] - int(cap_p[s]) * (1 - m.a[j, t]))
    if "lower-rows" not in tightenings:
        m.o7a = pyo.Constraint(jobs, servers, slots, rule=lambda _, j, s, t: m.y[j, s, t] <= m.Y[j, s])
        m.o7b = pyo.Constraint(jobs, servers, slots, rule=lambda _, j, s, t: m.y[j, s, t] <= wbar[j, s] * m.a[j, t])
        m.o7d = pyo.Constraint(jobs, servers, slots, rule=lambda _, j, s, t: m.z[j, s, t] <= m.Z[j, s])
        m.o7e = pyo.Constraint(jobs, servers, slots,
                               rule=lambda _, j, s, t: m.z[j, s, t] <= int(cap_p[s]) * m.a[j, t])
    m.o8w = pyo.Constraint(servers, slots, rule=lambda _, s, t: row(sum(m.y[j, s, t] for j in jobs) <= int(cap_w[s])))
    m.o8p = pyo.Constraint(servers, slots, rule=lambda _, s, t: row(sum(m.z[j, s, t] for j in jobs) <= int(cap_p[s])))

    def extract() -> TenantSchedule:
        schedule = TenantSchedule.empty(inst, f"p-off-{variant}")
        for (j, _, t0), var in m.x.items():
            if (var.value or 0.0) > 0.5:
                schedule.start[j] = t0
        for (j, s), var in m.Y.items():
            schedule.workers[j, s] = round(var.value or 0.0) if schedule.start[j] else 0
        for (j, s), var in m.Z.items():
            schedule.ps[j, s] = round(var.value or 0.0) if schedule.start[j] else 0
        return schedule

    column = {(j, c.workers, c.centralized): k for j in jobs for k, c in enumerate(configs[j])}

    def load_start(schedule: TenantSchedule) -> None:
        """Set the variables from a schedule of :func:`program_schedule` (module docstring)."""
        central, totals = schedule.centralized(), schedule.workers.sum(axis=1)
        ends = schedule.completions(inst)
        chosen = {}
        for j in jobs:
            if schedule.start[j]:
                k = column.get((j, int(totals[j]), bool(central[j])))
                if k is None:
                    raise ValueError(f"job {inst.jobs[j].id}: P-OFF has no configuration of {totals[j]} workers "
                                     f"({'centralized' if central[j] else 'distributed'}); read the schedule "
                                     "with program_schedule first")
                chosen[j] = (j, k, int(schedule.start[j]))
        for key, var in m.x.items():
            var.set_value(1.0 if chosen.get(key[0]) == key else 0.0)
        for (j, s), var in m.Y.items():
            var.set_value(float(schedule.workers[j, s]))
        for (j, s), var in m.Z.items():
            var.set_value(float(schedule.ps[j, s]))
        for (j, s), var in m.p.items():
            var.set_value(float(schedule.ps[j, s] > 0))
        for (j, s), var in m.v.items():
            var.set_value(float(central[j] and (schedule.workers[j, s] > 0 or schedule.ps[j, s] > 0)))
        for (j, t), var in m.a.items():
            var.set_value(float(j in chosen and schedule.start[j] <= t <= ends[j]))
        for (j, s, t), var in m.y.items():
            var.set_value(float(schedule.workers[j, s]) * m.a[j, t].value)
        for (j, s, t), var in m.z.items():
            var.set_value(float(schedule.ps[j, s]) * m.a[j, t].value)

    return Built(model=m, name=m.name, sense="max", relaxed=relax, build_seconds=time.perf_counter() - tick,
                 extract=None if relax else extract,
                 validate=None if relax else (lambda schedule: check(inst, schedule, horizon)),
                 load_start=None if relax else load_start)
