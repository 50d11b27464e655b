r"""OASiS offline program (1)-(13) as a MILP (spec §2.3), in two variants, and its LP relaxation.

Data (per job i): arrival a_i, epochs E_i, chunks N_i, chunk time W_i, workload
Theta_i = E_i N_i W_i, demands w_i^r (worker), s_i^r (PS), bandwidths b_i, B_i, utility f_i.
Cluster: worker servers h with capacity c_h^r, PS servers k with c_k^r, slots t = 1..T.

Variables (created only for t >= a_i, which enforces (9) and (10)):
  x_i in {0,1}           admit job i                                  (11)
  u_i(t) in {0,1}        job i's declared completion slot is t, t >= t_i^min  [linearizes (8)]
  y_ih(t) in Z+          workers of job i on worker server h in slot t (12)
  z_ik(t) in Z+          PS of job i on PS server k in slot t          (13)
  d_i(t) in Z+           chunk-passes of job i in slot t (variant "chunk" only)

Objective (1), linearized:   max  sum_i sum_{t >= a_i} f_i(t - a_i) u_i(t)

Constraints:
  (assign)  sum_{t >= a_i} u_i(t) = x_i                               one completion slot if admitted
  (2)       sum_{t,h} y_ih(t) >= Theta_i x_i                          enough worker time   ["paper"]
  (2c)      sum_t d_i(t) = E_i N_i x_i;  sum_h y_ih(t) >= W_i d_i(t)  integer chunk-passes ["chunk"]
  (3)+(8)   sum_h y_ih(t) <= N_i sum_{t' >= t} u_i(t')                <= N_i workers, none after t_hat
  (4)       sum_i w_i^r y_ih(t) <= c_h^r                              worker server capacity
  (5)       sum_i s_i^r z_ik(t) <= c_k^r                              PS server capacity
  (6)       b_i sum_h y_ih(t) <= B_i sum_k z_ik(t)                    PS bandwidth covers workers
  (7)       sum_k z_ik(t) <= sum_h y_ih(t)                            no more PS than workers
Valid bounds: y_ih(t) <= min(N_i, min_r floor(c_h^r / w_i^r)), z_ik(t) likewise.
Earliest completion: a job runs at most rho_i = min(N_i, sum_h ybar_ih, floor(B_i/b_i sum_k zbar_ik))
workers per slot ((3), the per-server bounds, (6)), so it cannot complete before
t_i^min = a_i + ceil(Theta_i / rho_i) - 1 (under "chunk": E_i N_i passes at floor(rho_i / W_i) per
slot), so u_i(t) exists only for t >= t_i^min. Valid for every schedule; it removes the LP relaxation's
fractional early completions (30 jobs x 30 slots, seed 3: LP bound 925.5 -> 781.7).

Strengthenings (``cuts`` of :func:`build`, both builders, "rate" by default; none changes the optimum):
  "rate"        (3)+(8) with rho_i for N_i: sum_h y_ih(t) <= rho_i sum_{t' >= t} u_i(t'); valid for
                every schedule, rho_i being the most workers job i can run in a slot (feasible
                profile, LP bound 10 x 10 seed 2: 273.3 -> 260.4, OPT 257.7; 30 x 30 seed 0:
                592.7 -> 587.2).
  "completion"  u_i(t) <= sum_h y_ih(t): the declared completion slot runs a worker. Not valid for
                every point of the program (u_i(t) may sit after the last worker), but every point
                maps to one that satisfies it with at least its objective: move u_i to t_hat_i, the
                last slot with a worker, which is no later (f_i non-increasing); t_hat_i >= t_i^min
                since the job's work is done by t_hat_i.
  "symmetry"    per-slot order of interchangeable servers (:mod:`mlsched.formulations.oasis_symmetry`,
                with its validity proof); MIP starts are permuted into that order.

If u_i(t) = 1, no worker runs after t, so t >= the true completion slot t_hat and, f_i being
non-increasing, the optimum picks t = t_hat: the MILP optimum equals OPT of (1) ("OPT_paper").
"OPT_chunk" restricts schedules to those of the paper's Algorithm 2 (integer chunk-passes per
slot), so OASiS(chunk) <= OPT_chunk <= OPT_paper. ``relax=True`` drops every integrality (x, u
in [0, 1]; y, z, d >= 0) and gives an upper bound (the LP relaxation).
"""

from __future__ import annotations

import time
from collections.abc import Collection

import numpy as np
import pyomo.environ as pyo

from mlsched.errors import UsageError
from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.check import check
from mlsched.sim.schedule import ClusterSchedule
from mlsched.formulations.oasis_symmetry import interchangeable, ordered
from mlsched.formulations.rows import row
from mlsched.solve import Built

VARIANTS = ("paper", "chunk")
CUTS = ("rate", "completion", "symmetry")
DEFAULT_CUTS: tuple[str, ...] = ("rate",)   # what helped when measured (docs/decisions.md "Tighter OASiS program")


def per_server_cap(demand: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """min_r floor(c^r / demand^r) over r with demand^r > 0, shape (I, S); huge where no r is used."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(demand[:, None, :] > 0, capacity[None, :, :] / demand[:, None, :], np.inf)
    cap = np.floor(ratio.min(axis=2) + EPS)
    return np.where(np.isfinite(cap), cap, 1e9)


def max_rate(instance: ClusterJobsInstance, ycap: np.ndarray, zcap: np.ndarray) -> np.ndarray:
    """rho_i of the module docstring: the most workers job i can run in one slot."""
    chunks = np.array([j.chunks for j in instance.jobs], dtype=float)
    bandwidth_ratio = np.array([j.ps_bandwidth / j.worker_bandwidth for j in instance.jobs])
    return np.minimum(np.minimum(chunks, ycap.sum(axis=1)), np.floor(bandwidth_ratio * zcap.sum(axis=1) + EPS))


def earliest_completion(instance: ClusterJobsInstance, ycap: np.ndarray, zcap: np.ndarray,
                        variant: str = "paper") -> np.ndarray:
    """t_i^min of the module docstring per job (horizon + 1 where job i cannot complete at all)."""
    rate = max_rate(instance, ycap, zcap)
    if variant == "chunk":
        need = np.array([j.epochs * j.chunks for j in instance.jobs], dtype=float)
        rate = np.floor(rate / instance.chunk_time + EPS)
    else:
        need = instance.workload
    with np.errstate(divide="ignore", invalid="ignore"):
        slots = np.where(rate > 0, np.ceil(need / np.where(rate > 0, rate, 1.0) - EPS), np.inf)
    first = np.asarray(instance.arrival, dtype=float) + np.maximum(slots, 1.0) - 1.0
    return np.minimum(first, instance.horizon + 1).astype(np.int64)


def server_bounds(instance: ClusterJobsInstance) -> tuple[np.ndarray, np.ndarray]:
    """The valid bounds min(N_i, per-server cap) on y_ih(t) and z_ik(t), shapes (I, H) and (I, K)."""
    chunks = np.array([j.chunks for j in instance.jobs])[:, None]
    return (np.minimum(per_server_cap(instance.worker_demand, instance.worker_capacity), chunks),
            np.minimum(per_server_cap(instance.ps_demand, instance.ps_capacity), chunks))


def jobwise_bound(instance: ClusterJobsInstance, variant: str = "paper") -> float:
    """sum_i max(0, f_i(t_i^min - a_i)) over the jobs with t_i^min <= T: every job completing at its
    earliest slot, as if alone (f_i is non-increasing), so an upper bound on OPT of ``variant``
    that needs no solve (far looser than the LP; it is there when nothing else is)."""
    t_min = earliest_completion(instance, *server_bounds(instance), variant)
    return float(sum(max(0.0, instance.utility_of(i, int(t))) for i, t in enumerate(t_min) if t <= instance.horizon))


MAX_PROGRAM_TERMS = 100_000_000   # terms of rows (3)+(8), sum_i (T - a_i + 1)(T - a_i + 2) / 2, about 3 GB built


def require_buildable(instance: ClusterJobsInstance, variant: str, cuts: Collection[str] = ()) -> None:
    """A known variant and known cuts, and a program whose rows (3)+(8) (one u-term per pair
    t <= t' of a job's slots) hold at most MAX_PROGRAM_TERMS terms: refused before anything is allocated."""
    if variant not in VARIANTS:
        raise UsageError(f"unknown OASiS variant {variant!r}; choose one of {', '.join(VARIANTS)}")
    unknown = sorted(set(cuts) - set(CUTS))
    if unknown:
        raise UsageError(f"unknown OASiS cut {unknown[0]!r}; choose from {', '.join(CUTS)}")
    slots = instance.horizon - np.asarray(instance.arrival, dtype=np.int64) + 1
    terms = int(np.sum(slots * (slots + 1) // 2))
    if terms > MAX_PROGRAM_TERMS:
        raise UsageError(f"{instance.name}: the exact program would hold {terms:.3g} terms in rows (3)+(8) "
                         f"(jobs x horizon^2 / 2), more than {MAX_PROGRAM_TERMS:.0e}; use a shorter horizon")


def server_classes(instance: ClusterJobsInstance, ycap: np.ndarray,
                   zcap: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The classes of interchangeable worker and PS servers (:mod:`mlsched.formulations.oasis_symmetry`)."""
    return (interchangeable(instance.worker_demand, instance.worker_capacity, ycap),
            interchangeable(instance.ps_demand, instance.ps_capacity, zcap))


def build(instance: ClusterJobsInstance, *, variant: str = "paper", relax: bool = False,
          earliest: bool = True, cuts: Collection[str] = DEFAULT_CUTS) -> Built:
    """Build the OPT_paper or OPT_chunk MILP (or its LP relaxation) of ``instance``; ``earliest``
    (default) creates u_i(t) only from t_i^min, False from a_i (the program before tightening);
    ``cuts`` names the strengthenings of the module docstring to add (``CUTS``)."""
    require_buildable(instance, variant, cuts)
    tick = time.perf_counter()
    inst = instance
    horizon = inst.horizon
    n_workers, n_ps = len(inst.worker_servers), len(inst.ps_servers)
    jobs = range(inst.num_jobs)
    ycap, zcap = server_bounds(inst)
    slots = {i: range(inst.jobs[i].arrival, horizon + 1) for i in jobs}
    it = [(i, t) for i in jobs for t in slots[i]]
    iht = [(i, h, t) for i, t in it for h in range(n_workers) if ycap[i, h] >= 1]
    ikt = [(i, k, t) for i, t in it for k in range(n_ps) if zcap[i, k] >= 1]

    m = pyo.ConcreteModel(name=f"oasis_{variant}")
    binary = pyo.UnitInterval if relax else pyo.Binary
    integer = pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers
    m.x = pyo.Var(jobs, domain=binary)
    t_min = earliest_completion(inst, ycap, zcap, variant) if earliest else np.asarray(inst.arrival)
    done_slots = {i: range(max(inst.jobs[i].arrival, int(t_min[i])), horizon + 1) for i in jobs}
    m.u = pyo.Var([(i, t) for i in jobs for t in done_slots[i]], domain=binary)
    m.y = pyo.Var(iht, domain=integer, bounds=lambda _, i, h, t: (0, ycap[i, h]))
    m.z = pyo.Var(ikt, domain=integer, bounds=lambda _, i, k, t: (0, zcap[i, k]))

    y_of: dict[tuple[int, int], list] = {key: [] for key in it}
    for i, h, t in iht:
        y_of[i, t].append(m.y[i, h, t])
    z_of: dict[tuple[int, int], list] = {key: [] for key in it}
    for i, k, t in ikt:
        z_of[i, t].append(m.z[i, k, t])
    workers = {key: sum(v) for key, v in y_of.items()}
    ps = {key: sum(v) for key, v in z_of.items()}

    m.obj = pyo.Objective(
        expr=sum(float(inst.jobs[i].utility.value(t - inst.jobs[i].arrival)) * var for (i, t), var in m.u.items()),
        sense=pyo.maximize,
    )
    m.assign = pyo.Constraint(jobs, rule=lambda _, i: sum(m.u[i, t] for t in done_slots[i]) == m.x[i])
    if variant == "paper":
        m.work = pyo.Constraint(jobs, rule=lambda _, i: sum(workers[i, t] for t in slots[i])
                                >= float(inst.workload[i]) * m.x[i])
    else:
        m.d = pyo.Var(it, domain=integer, bounds=lambda _, i, t: (0, inst.jobs[i].epochs * inst.jobs[i].chunks))
        m.passes = pyo.Constraint(jobs, rule=lambda _, i: sum(m.d[i, t] for t in slots[i])
                                  == inst.jobs[i].epochs * inst.jobs[i].chunks * m.x[i])
        m.chunk_workers = pyo.Constraint(it, rule=lambda _, i, t: workers[i, t]
                                         >= float(inst.chunk_time[i]) * m.d[i, t])
    most = max_rate(inst, ycap, zcap) if "rate" in cuts else np.array([j.chunks for j in inst.jobs])
    m.last = pyo.Constraint(it, rule=lambda _, i, t: row(workers[i, t] <= float(most[i]) * sum(
        m.u[i, s] for s in done_slots[i] if s >= t)))
    if "completion" in cuts:
        m.completion = pyo.Constraint(list(m.u), rule=lambda _, i, t: row(m.u[i, t] <= workers[i, t]))
    classes = server_classes(inst, ycap, zcap) if "symmetry" in cuts else ([], [])
    _server_order(m, "worker_order", iht, classes[0], m.y)
    _server_order(m, "ps_order", ikt, classes[1], m.z)
    m.bandwidth = pyo.Constraint(it, rule=lambda _, i, t: row(inst.jobs[i].worker_bandwidth * workers[i, t]
                                                               <= inst.jobs[i].ps_bandwidth * ps[i, t]))
    m.ps_le_workers = pyo.Constraint(it, rule=lambda _, i, t: row(ps[i, t] <= workers[i, t]))
    _capacity(m, "worker_capacity", iht, inst.worker_demand, inst.worker_capacity, m.y)
    _capacity(m, "ps_capacity", ikt, inst.ps_demand, inst.ps_capacity, m.z)

    def extract() -> ClusterSchedule:
        schedule = ClusterSchedule.empty(inst, f"opt_{variant}{'_lp' if relax else ''}", promises_completion=True)
        for i in jobs:
            schedule.admitted[i] = (m.x[i].value or 0.0) > 0.5
        for (i, h, t), var in m.y.items():
            schedule.workers[i, t - 1, h] = round(var.value or 0.0)
        for (i, k, t), var in m.z.items():
            schedule.ps[i, t - 1, k] = round(var.value or 0.0)
        return schedule

    def load_start(schedule: ClusterSchedule) -> None:
        """Set the variables from a schedule of :func:`program_schedule` (a MIP start), its
        interchangeable servers put in the program's order."""
        schedule = ordered(schedule, *classes)
        t_hat = schedule.completion_slots()
        for i in jobs:
            m.x[i].set_value(float(schedule.admitted[i]))
        for (i, t), var in m.u.items():
            var.set_value(1.0 if schedule.admitted[i] and t == t_hat[i] else 0.0)
        for (i, h, t), var in m.y.items():
            var.set_value(float(schedule.workers[i, t - 1, h]))
        for (i, k, t), var in m.z.items():
            var.set_value(float(schedule.ps[i, t - 1, k]))
        if variant == "chunk":
            passes = chunk_passes(inst, schedule)
            for (i, t), var in m.d.items():
                var.set_value(float(passes[i, t - 1]))

    return Built(model=m, name=m.name, sense="max", relaxed=relax,
                 build_seconds=time.perf_counter() - tick,
                 extract=None if relax else extract,
                 validate=None if relax else (lambda schedule: check(inst, schedule)),
                 load_start=None if relax else load_start)


def chunk_passes(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> np.ndarray:
    """d_i(t) of (2c) for a schedule: whole chunk-passes its workers complete per slot, the
    earliest first, never more than E_i N_i in all; shape (I, T)."""
    per_slot = np.floor(schedule.workers_per_slot / instance.chunk_time[:, None] + EPS)
    total = np.array([j.epochs * j.chunks for j in instance.jobs], dtype=float)
    before = np.cumsum(per_slot, axis=1) - per_slot
    return np.clip(np.minimum(per_slot, total[:, None] - before), 0, None)


def program_schedule(instance: ClusterJobsInstance, schedule: ClusterSchedule, variant: str = "paper") -> ClusterSchedule:
    """The program's reading of any checked schedule, a feasible solution of the ``variant``
    MILP with the same score: jobs it completes are kept whole (x_i = 1, u_i(t_hat_i) = 1 at the
    last slot with a worker, eq. 8); every other job is dropped with its workers and PS, which
    only frees capacity and scores 0 either way. Under "chunk" a job is kept only if its slots
    hold E_i N_i whole chunk-passes (2c), so the start may score less than the schedule."""
    keep = schedule.completed(instance)
    if variant == "chunk":
        total = np.array([j.epochs * j.chunks for j in instance.jobs], dtype=float)
        keep = keep & (chunk_passes(instance, schedule).sum(axis=1) >= total - EPS)
    return ClusterSchedule(workers=np.where(keep[:, None, None], schedule.workers, 0),
                           ps=np.where(keep[:, None, None], schedule.ps, 0), admitted=keep.copy(),
                           algorithm=schedule.algorithm, promises_completion=True)


def _capacity(m: pyo.ConcreteModel, name: str, index: list[tuple[int, int, int]], demand: np.ndarray,
              capacity: np.ndarray, var: pyo.Var) -> None:
    """sum_i demand_i^r var_is(t) <= c_s^r for every (t, s, r) some job can load (eq. 4 / 5)."""
    by_server_slot: dict[tuple[int, int], list[int]] = {}
    for i, s, t in index:
        by_server_slot.setdefault((s, t), []).append(i)
    rows = [(s, t, r) for (s, t), users in by_server_slot.items() for r in range(demand.shape[1])
            if sum(demand[i, r] > 0 for i in users) > 0
            and sum(demand[i, r] * var[i, s, t].ub for i in users) > capacity[s, r] + EPS]
    setattr(m, name, pyo.Constraint(rows, rule=lambda _, s, t, r: sum(
        float(demand[i, r]) * var[i, s, t] for i in by_server_slot[s, t] if demand[i, r] > 0) <= float(capacity[s, r])))


def _server_order(m: pyo.ConcreteModel, name: str, index: list[tuple[int, int, int]], classes: list[np.ndarray],
                  var: pyo.Var) -> None:
    """(sym) of :mod:`mlsched.formulations.oasis_symmetry`: per slot, each server of a class
    holds at least as many workers (PS) as the next one."""
    load: dict[tuple[int, int], list] = {}
    for i, s, t in index:
        load.setdefault((s, t), []).append(var[i, s, t])
    rows = [(int(a), int(b), t) for members in classes for a, b in zip(members[:-1], members[1:])
            for t in sorted({t for (s, t) in load if s == a})]
    setattr(m, name, pyo.Constraint(rows, rule=lambda _, a, b, t: sum(load[a, t]) >= sum(load[b, t])))
