r"""Offline exact optimum O1 of the Themis spec (§5.6): the time-slotted integer program that
minimises the largest finish-time fairness rho over a whole trace, for online-vs-offline studies.

Data. Slots t = 0..H-1 of length Delta (= the lease L); slot t covers [t Delta, (t+1) Delta).
Machines m = 0..M-1 with kappa_m GPUs in rack r(m); R racks. Apps i with arrival a_i, work W_i
(serial GPU-seconds at S = 1), cap d_i = the app's demand D_a, slowdowns s_i = s_i[2] (spread
over machines of one rack) and s'_i = s_i[3] (spread over racks), and fixed denominators T_id_i
supplied by the caller (A27; :func:`fifo_t_id` computes them from N_avg under FIFO).

Variables:
  x_imt in Z>=0, 0 <= x_imt <= min(kappa_m, d_i)   GPUs of machine m held by app i in slot t
  w_imt in {0,1}       app i uses machine m in slot t
  l_it  in {0,1}       app i is machine-local in slot t
  q_it, p_it >= 0      GPUs counted at full speed; effective GPU-seconds done in slot t
  u_it  in {0,1}       app i is done by the end of slot t
  rho_max >= 0
  (R > 1 only)  v_irt in {0,1} app i uses rack r;  k_it in {0,1} rack-local;  g_it >= 0.

With X_it = sum_m x_imt:
  (1)  sum_i x_imt <= kappa_m                                   for all m, t   (capacity)
  (2)  X_it <= d_i                                              for all i, t   (cap)
  (3)  X_it = 0 for every slot with t Delta < a_i               (no x variable is created there)
  (4)  x_imt <= kappa_m w_imt
  (5)  sum_m w_imt <= 1 + (M - 1)(1 - l_it)                     (l = 1 only on one machine)
  (6)  q_it <= X_it;   (7)  q_it <= d_i l_it                    (q = X if machine-local, else 0)
  (8)  p_it <= Delta (X_it / s_i + (1 - 1/s_i) q_it)            (one rack: rate X, or X/s spread)
  (9)  sum_{t' <= t} p_it' >= W_i u_it
  (10) u_it <= u_i,t+1;   (11) u_i,H-1 = 1
  (12) C_i = Delta (H + 1 - sum_t u_it)                         (the end of the first done slot)
  (13) rho_max >= (C_i - a_i) / T_id_i
  objective:  minimize rho_max + epsilon sum_i C_i              (epsilon = 1e-6, the spec's weight)

Rack levels (spec: "rack levels add analogous indicator layers"), built when the topology has
R > 1 racks; (8) is then replaced by (8R):
  (R1) w_imt <= v_i,r(m),t;   (R2) sum_r v_irt <= 1 + (R - 1)(1 - k_it)
  (R3) g_it <= X_it;   (R4) g_it <= d_i k_it                    (g = X if rack-local, else 0)
  (8R) p_it <= Delta (X_it / s'_i + (1/s_i - 1/s'_i) g_it + (1 - 1/s_i) q_it)
Since 1 <= s_i <= s'_i, every coefficient is >= 0 and the best choice of indicators gives rate
X (one machine), X/s (one rack) or X/s' (several racks), the placement levels of spec §1.1.

Choices where the spec is silent (documented here, cited by the code):
  * Apps: O1 needs one pool of work per app. An app with more than one job (several phases or
    parallel jobs) is rejected unless ``pool=True``, which pools all its work under cap D_a and
    one slowdown; pooling ignores phase barriers and per-job placement, so it is neither a
    relaxation nor a restriction of the online system.
  * Machine-local placement runs at full speed, so a profile with s1 > s0 is rejected (all
    default profiles have s0 = s1 = 1, spec §1.3).
  * Exact lexicographic optimum: epsilon sum C_i with C_i in seconds can outweigh one slot of
    rho_max on long traces, so :func:`solve_offline` (default ``lexicographic=True``) first
    minimises rho_max alone and then minimises sum_i C_i subject to rho_max <= rho* (1 + 1e-9),
    the re-solve the auction uses for its tie-break (A8). ``lexicographic=False`` solves the
    single weighted objective of the spec.
  * Default horizon: with FIFO's completions C^F (:func:`fifo_completions`, the slotted greedy
    FIFO below) and rho^F = max_i (C^F_i - a_i) / T_id_i,  H = max_i floor((a_i + rho^F T_id_i)
    / Delta). FIFO finishes within H slots, and every schedule with max rho <= rho^F (so every
    optimum) completes within H slots, so O1 over H slots equals O1 over an unbounded horizon.
  * Slotted greedy FIFO: in each slot, apps in (arrival, index) order that have arrived and are
    unfinished take, from the GPUs still free, the allocation of at most d_i GPUs with the
    largest effective rate among: the fullest single machine, each rack filled machine by
    machine (fullest first), or the whole cluster filled rack by rack; ties go to fewer GPUs.
    It follows the rate rules of (8)/(8R), so its schedule is feasible for O1.

Online runs are scored against O1 with slot-rounded completion times,
ceil((C - a) / Delta) Delta (:func:`slot_rounded_rho`).

Two builds of one program. :func:`build_offline` is the Pyomo model: the public, inspectable form
and the one cross-certified (``verify``). :mod:`mlsched.formulations.themis_offline_arrays` builds
the same columns, integrality, rows and objective as arrays for HiGHS's direct interface (0.1-0.3 s
where Pyomo takes 5-6 s on the 91,876 columns of ``themis/gavel-philly-first24``, and no hand-off
from Pyomo to HiGHS, which took several seconds more without looking at the clock).
:func:`solve_offline` solves the arrays whenever its first solve is not cross-certified; above
LARGE_COLUMNS columns and with a time limit each solve runs in a child process ended
HARD_STOP_GRACE s after its limit (:func:`mlsched.solve.solve_arrays_by_deadline`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import pyomo.environ as pyo

from mlsched.errors import UsageError
from mlsched.instance.themis import ThemisInstance
from mlsched.solve import (
    HARD_STOP_GRACE,
    VERIFY_MAX_INTEGERS,
    ArrayProgram,
    BudgetStep,
    Built,
    SolveReport,
    Status,
    TimeBudget,
    close,
    relative_gap,
    solve,
    solve_arrays,
    solve_arrays_by_deadline,
)

if TYPE_CHECKING:
    from mlsched.formulations.themis_offline_arrays import OfflineArrays

TIEBREAK = 1e-6            # spec §5.6: minimize rho_max + 1e-6 sum_i C_i
LEX_TOLERANCE = 1e-9       # relative slack on rho* in the lexicographic re-solve
_SLOT_EPS = 1e-9           # float slack when mapping times to slot boundaries
MAX_SLOTS = 1_000_000      # the slotted programs' horizon (FIFO's and O1's)
# O1's (app, machine, slot) cells from each app's arrival on, above which the program is not built:
# 10 apps of W1 (2,710 cells) build and solve in 6 s; 20 apps (810,465 cells over 8,180 slots)
# took more than 400 s and 2.2 GB in the build alone.
MAX_BUILD_CELLS = 50_000
# O1's columns above which a time-limited solve of its arrays runs in a child process ended
# HARD_STOP_GRACE s after its limit (solve_offline). Measured in process with a 2 s limit and FIFO's
# start on the first N apps of Gavel's Philly trace (12 GPUs): HiGHS returned 0.1 s late at 26,716
# columns (16 apps), 1.6 s at 78,736 (20 apps) and 0.8 s at 91,876 (24 apps), its presolve not
# looking at the clock. Probing stays on: without it the 24-app child overran its grace at 10 s.
LARGE_COLUMNS = 50_000


@dataclass(frozen=True)
class OfflineData:
    """The numbers O1 needs, read off a :class:`ThemisInstance`."""

    slot: float
    names: tuple[str, ...]
    arrival: np.ndarray        # a_i, seconds
    work: np.ndarray           # W_i, serial GPU-seconds
    demand: np.ndarray         # d_i
    spread: np.ndarray         # s_i = profile[2]
    cross_rack: np.ndarray     # s'_i = profile[3]
    kappa: np.ndarray          # GPUs per machine
    rack: np.ndarray           # dense rack index per machine

    @property
    def num_apps(self) -> int:
        return len(self.names)

    @property
    def num_machines(self) -> int:
        return len(self.kappa)

    @property
    def num_racks(self) -> int:
        return int(self.rack.max()) + 1 if len(self.rack) else 0

    @property
    def first_slot(self) -> np.ndarray:
        """The first slot starting at or after a_i (constraint (3))."""
        return np.array([max(0, math.ceil(a / self.slot - _SLOT_EPS)) for a in self.arrival], dtype=np.int64)

    def rate(self, i: int, counts: np.ndarray) -> float:
        """Effective GPUs of app i holding ``counts[m]`` GPUs on machine m (spec §1.1 levels)."""
        used = np.flatnonzero(counts)
        total = float(counts.sum())
        if used.size <= 1:
            return total
        if np.unique(self.rack[used]).size <= 1:
            return total / float(self.spread[i])
        return total / float(self.cross_rack[i])

    def rates(self, apps: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """:meth:`rate` of many allocations at once: row n of ``counts`` (shape (n, machines)) held
        by app ``apps[n]``."""
        used = counts > 0
        racks = sum(used[:, self.rack == r].any(axis=1).astype(np.int64) for r in range(self.num_racks))
        divisor = np.where(used.sum(axis=1) <= 1, 1.0,
                           np.where(racks <= 1, self.spread[apps], self.cross_rack[apps]))
        return counts.sum(axis=1) / divisor


def o1_refusal(instance: ThemisInstance, *, pool: bool = False) -> str | None:
    """Why O1 cannot take ``instance``, None when it can: no apps, an app with more than one job
    (unless ``pool``), with s1 > s0 or without work (see the module docstring)."""
    if not instance.apps:
        return f"{instance.name}: O1 needs at least one app"
    for app in instance.apps:
        if app.num_jobs > 1 and not pool:
            return (f"{instance.name}: app {app.name!r} has {len(app.phases)} phase(s) and {app.num_jobs} jobs; "
                    "O1 (spec §5.6) is defined for single-job apps")
        if app.profile[1] > app.profile[0]:
            return (f"{instance.name}: app {app.name!r} has s1 = {app.profile[1]} > s0; O1 runs machine-local "
                    "placements at full speed")
        if not app.work > 0:
            return f"{instance.name}: app {app.name!r} has no work"
    return None


def offline_data(instance: ThemisInstance, *, slot: float, pool: bool = False) -> OfflineData:
    """Read arrival, work, cap and slowdowns per app and the machine capacities (see the module
    docstring for the ``pool`` rule and the s1 restriction)."""
    if not (slot > 0 and math.isfinite(slot)):
        raise UsageError(f"slot length must be a positive number of seconds, got {slot}")
    refusal = o1_refusal(instance, pool=pool)
    if refusal is not None:
        raise UsageError(refusal)
    racks = sorted({r for r, _ in instance.topology.machines})
    return OfflineData(
        slot=float(slot),
        names=tuple(a.name for a in instance.apps),
        arrival=np.array([a.arrival for a in instance.apps], dtype=float),
        work=np.array([a.work for a in instance.apps], dtype=float),
        demand=np.array([a.demand for a in instance.apps], dtype=np.int64),
        spread=np.array([a.profile[2] for a in instance.apps], dtype=float),
        cross_rack=np.array([a.profile[3] for a in instance.apps], dtype=float),
        kappa=np.array([sum(slots) for _, slots in instance.topology.machines], dtype=np.int64),
        rack=np.array([racks.index(r) for r, _ in instance.topology.machines], dtype=np.int64),
    )


def t_id_vector(data: OfflineData, t_id: Sequence[float] | Mapping[str, float]) -> np.ndarray:
    """T_id_i per app, from a sequence in app order or a mapping by app name (A27)."""
    if isinstance(t_id, Mapping):
        missing = [n for n in data.names if n not in t_id]
        if missing:
            raise UsageError(f"t_id has no value for app(s) {', '.join(map(repr, missing))}")
        values = np.array([t_id[n] for n in data.names], dtype=float)
    else:
        values = np.asarray(t_id, dtype=float).reshape(-1)
        if values.size != data.num_apps:
            raise UsageError(f"t_id has {values.size} values for {data.num_apps} apps")
    if not np.all(np.isfinite(values) & (values > 0)):
        raise UsageError(f"every T_id must be a positive number, got {values.tolist()}")
    return values


# ----------------------------------------------------------------------------------------------
# Slotted greedy FIFO: default horizon and N_avg-based denominators


def _fill(free: np.ndarray, machines: Sequence[int], want: int) -> np.ndarray:
    counts = np.zeros_like(free)
    for m in machines:
        take = min(int(free[m]), want - int(counts.sum()))
        if take <= 0:
            break
        counts[m] = take
    return counts


def _greedy_allocation(data: OfflineData, i: int, free: np.ndarray) -> np.ndarray:
    """The FIFO grant of app i from ``free`` (module docstring): best rate, then fewest GPUs."""
    cap = int(data.demand[i])
    by_free = sorted(range(data.num_machines), key=lambda m: (-int(free[m]), m))
    options = [_fill(free, by_free[:1], cap)]
    racks = range(data.num_racks)
    for r in racks:
        options.append(_fill(free, [m for m in by_free if data.rack[m] == r], cap))
    rack_free = {r: int(free[data.rack == r].sum()) for r in racks}
    rack_order = sorted(racks, key=lambda r: (-rack_free[r], r))
    options.append(_fill(free, [m for r in rack_order for m in by_free if data.rack[m] == r], cap))
    return max(options, key=lambda c: (data.rate(i, c), -int(c.sum())))


def fifo_schedule(data: OfflineData, *, max_slots: int = MAX_SLOTS) -> tuple[np.ndarray, np.ndarray]:
    """Run the slotted greedy FIFO; returns completion times C^F (ends of slots, seconds) and the
    GPU counts, shape (apps, slots, machines)."""
    _require_slots(data, max_slots)
    order = sorted(range(data.num_apps), key=lambda i: (data.arrival[i], i))
    first = data.first_slot
    left = data.work.copy()
    completion = np.full(data.num_apps, np.nan)
    grants: list[np.ndarray] = []
    t = 0
    while np.isnan(completion).any():
        if t >= max_slots:
            raise UsageError(f"FIFO did not finish within {max_slots} slots")
        free = data.kappa.copy()
        grant = np.zeros((data.num_apps, data.num_machines), dtype=np.int64)
        for i in order:
            if first[i] > t or not np.isnan(completion[i]) or not free.any():
                continue
            counts = _greedy_allocation(data, i, free)
            free -= counts
            grant[i] = counts
            left[i] -= data.slot * data.rate(i, counts)
            if left[i] <= 1e-9 * data.work[i]:
                completion[i] = data.slot * (t + 1)
        grants.append(grant)
        t += 1
    return completion, np.stack(grants, axis=1)


def _require_slots(data: OfflineData, max_slots: int) -> None:
    """Refuse at once, naming the app, when some app cannot finish within ``max_slots`` even with
    the whole cluster from its arrival on (a late arrival or a huge workload), rather than after
    stepping through ``max_slots`` slots."""
    for i in range(data.num_apps):
        best = data.rate(i, _greedy_allocation(data, i, data.kappa.copy()))
        least = int(data.first_slot[i]) + math.ceil(data.work[i] / (data.slot * best) - _SLOT_EPS)
        if least > max_slots:
            raise UsageError(f"app {data.names[i]!r} cannot finish within the slotted programs' {max_slots} slots of "
                             f"{data.slot:g} s: it arrives in slot {int(data.first_slot[i])} and needs at least "
                             f"{least - int(data.first_slot[i])} slots with every GPU")


def fifo_completions(data: OfflineData) -> np.ndarray:
    return fifo_schedule(data)[0]


def n_avg(arrival: np.ndarray, completion: np.ndarray) -> np.ndarray:
    """Time-weighted mean number of active apps over each app's lifetime [a_i, C_i], itself
    included (A11); an app is active on [a_j, C_j)."""
    points = np.unique(np.concatenate([arrival, completion]))
    mids = (points[:-1] + points[1:]) / 2
    active = np.array([np.sum((arrival <= u) & (u < completion)) for u in mids], dtype=float)
    widths = np.diff(points)
    out = np.empty(len(arrival))
    for i, (a, c) in enumerate(zip(arrival, completion)):
        inside = (mids > a) & (mids < c)
        span = c - a
        out[i] = float(np.sum(active[inside] * widths[inside]) / span) if span > 0 else 1.0
    return out


def fifo_t_id(instance: ThemisInstance, *, slot: float, mode: str = "paper", pool: bool = False) -> list[float]:
    """T_id_i with N_avg taken over the app's lifetime under the slotted greedy FIFO (A27).

    ``mode="paper"``: T_id = W_i / min(R_C, D_i) * N_avg_i (spec §1.5 default);
    ``mode="exact_share"``: T_id = W_i / min(R_C / N_avg_i, D_i) (A13)."""
    data = offline_data(instance, slot=slot, pool=pool)
    gpus = float(data.kappa.sum())
    avg = n_avg(data.arrival, fifo_completions(data))
    if mode == "paper":
        values = data.work / np.minimum(gpus, data.demand) * avg
    elif mode == "exact_share":
        values = data.work / np.minimum(gpus / avg, data.demand)
    else:
        raise UsageError(f"unknown T_id mode {mode!r}; choose paper or exact_share")
    return [float(v) for v in values]


def default_horizon(data: OfflineData, t_id: np.ndarray) -> int:
    """H = max_i floor((a_i + rho^F T_id_i) / Delta), rho^F = FIFO's max rho (module docstring)."""
    completion = fifo_completions(data)
    rho_fifo = float(np.max((completion - data.arrival) / t_id))
    ends = (data.arrival + rho_fifo * t_id) / data.slot
    last = float(np.max(ends))
    if not last <= MAX_SLOTS:   # apps of wildly different T_id stretch rho^F, and H with it
        raise UsageError(f"O1's default horizon would be {last:.3g} slots of {data.slot:g} s (FIFO's max rho "
                         f"{rho_fifo:.3g}), beyond the slotted programs' {MAX_SLOTS}")
    return int(max(math.floor(e + _SLOT_EPS) for e in ends))


def slot_rounded_rho(completion: float | np.ndarray, arrival: float | np.ndarray, t_id: float | np.ndarray,
                     slot: float) -> float | np.ndarray:
    """rho of an online run scored against O1: ceil((C - a) / Delta) Delta / T_id (spec §5.6);
    a quotient within 1e-9 of an integer counts as that integer."""
    c, a, t = np.asarray(completion, dtype=float), np.asarray(arrival, dtype=float), np.asarray(t_id, dtype=float)
    quotient = (c - a) / slot
    nearest = np.round(quotient)
    quotient = np.where(np.abs(quotient - nearest) <= _SLOT_EPS * np.maximum(1.0, np.abs(nearest)), nearest, quotient)
    out = np.ceil(quotient) * slot / t
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------------------------
# The program


@dataclass
class OfflineSchedule:
    completion: np.ndarray     # C_i (12), seconds
    gpus: np.ndarray           # x_imt, shape (apps, H, machines)


def check_schedule(data: OfflineData, schedule: OfflineSchedule) -> list[str]:
    """Independent feasibility check of an O1 schedule: constraints (1)-(3) and that every app's
    progress at the stated rates covers W_i by C_i."""
    problems = []
    gpus = schedule.gpus
    horizon = gpus.shape[1]
    if np.any(gpus < 0):
        problems.append("negative GPU count")
    over = np.argwhere(gpus.sum(axis=0) > data.kappa[None, :])
    problems += [f"slot {t} machine {m}: over capacity" for t, m in over]
    first = data.first_slot
    for i in range(data.num_apps):
        held = gpus[i].sum(axis=1)
        if np.any(held > data.demand[i]):
            problems.append(f"app {i}: above its cap d = {data.demand[i]}")
        if np.any(held[: first[i]] > 0):
            problems.append(f"app {i}: GPUs before its arrival")
        done_slot = round(schedule.completion[i] / data.slot) - 1
        if not 0 <= done_slot < horizon:
            problems.append(f"app {i}: completion {schedule.completion[i]} outside the horizon")
            continue
        work = sum(data.slot * data.rate(i, gpus[i, t]) for t in range(done_slot + 1))
        if work < data.work[i] * (1 - 1e-7) - 1e-7:
            problems.append(f"app {i}: {work:.6g} of {data.work[i]:.6g} GPU-seconds done by {schedule.completion[i]}")
    return problems


def build_offline(instance: ThemisInstance, *, t_id: Sequence[float] | Mapping[str, float], slot: float,
                  horizon: int | None = None, relax: bool = False, tiebreak: float = TIEBREAK,
                  pool: bool = False) -> Built:
    """Build O1 (module docstring, spec §5.6) or, with ``relax``, its LP relaxation.

    ``t_id``: T_id per app (sequence in app order, or mapping by app name); ``slot``: Delta in
    seconds; ``horizon``: H slots (default :func:`default_horizon`); ``tiebreak``: the weight
    epsilon of sum_i C_i (0 gives min rho_max alone)."""
    tick = time.perf_counter()
    data = offline_data(instance, slot=slot, pool=pool)
    tid = t_id_vector(data, t_id)
    horizon = default_horizon(data, tid) if horizon is None else int(horizon)
    _checked_horizon(horizon)
    delta = data.slot
    apps, machines, racks = range(data.num_apps), range(data.num_machines), range(data.num_racks)
    slots = range(horizon)
    first = data.first_slot
    live = [(i, t) for i in apps for t in slots if t >= first[i]]
    live_m = [(i, m, t) for i, t in live for m in machines]
    n_machines, n_racks = data.num_machines, data.num_racks
    kappa = [int(k) for k in data.kappa]
    cap = [int(d) for d in data.demand]

    m = pyo.ConcreteModel(name="themis_o1")
    binary = pyo.UnitInterval if relax else pyo.Binary
    m.x = pyo.Var(live_m, domain=pyo.NonNegativeReals if relax else pyo.NonNegativeIntegers,
                  bounds=lambda _, i, k, t: (0, min(kappa[k], cap[i])))
    m.w = pyo.Var(live_m, domain=binary)
    m.l = pyo.Var(live, domain=binary)
    m.q = pyo.Var(live, domain=pyo.NonNegativeReals)
    m.p = pyo.Var(live, domain=pyo.NonNegativeReals)
    m.u = pyo.Var(apps, slots, domain=binary)
    m.rho_max = pyo.Var(domain=pyo.NonNegativeReals)

    def total(i: int, t: int):
        return sum(m.x[i, k, t] for k in machines)

    m.C = pyo.Expression(apps, rule=lambda _, i: delta * (horizon + 1 - sum(m.u[i, t] for t in slots)))     # (12)
    m.obj = pyo.Objective(expr=m.rho_max + tiebreak * sum(m.C[i] for i in apps), sense=pyo.minimize)
    by_slot = {(k, t): [i for i in apps if t >= first[i]] for k in machines for t in slots}
    m.capacity = pyo.Constraint([key for key, users in by_slot.items() if users], rule=lambda _, k, t: sum(
        m.x[i, k, t] for i in by_slot[k, t]) <= kappa[k])                                                  # (1)
    m.cap = pyo.Constraint(live, rule=lambda _, i, t: total(i, t) <= cap[i])                               # (2)
    m.uses = pyo.Constraint(live_m, rule=lambda _, i, k, t: m.x[i, k, t] <= kappa[k] * m.w[i, k, t])       # (4)
    m.local = pyo.Constraint(live, rule=lambda _, i, t: sum(m.w[i, k, t] for k in machines)
                             <= 1 + (n_machines - 1) * (1 - m.l[i, t]))                                    # (5)
    m.q_total = pyo.Constraint(live, rule=lambda _, i, t: m.q[i, t] <= total(i, t))                        # (6)
    m.q_local = pyo.Constraint(live, rule=lambda _, i, t: m.q[i, t] <= cap[i] * m.l[i, t])                 # (7)
    if n_racks > 1:
        m.v = pyo.Var(apps, racks, slots, domain=binary)
        m.k = pyo.Var(live, domain=binary)
        m.g = pyo.Var(live, domain=pyo.NonNegativeReals)
        m.in_rack = pyo.Constraint(live_m, rule=lambda _, i, k, t: m.w[i, k, t] <= m.v[i, int(data.rack[k]), t])  # (R1)
        m.rack_local = pyo.Constraint(live, rule=lambda _, i, t: sum(m.v[i, r, t] for r in racks)
                                      <= 1 + (n_racks - 1) * (1 - m.k[i, t]))                              # (R2)
        m.g_total = pyo.Constraint(live, rule=lambda _, i, t: m.g[i, t] <= total(i, t))                    # (R3)
        m.g_local = pyo.Constraint(live, rule=lambda _, i, t: m.g[i, t] <= cap[i] * m.k[i, t])             # (R4)
        m.rate = pyo.Constraint(live, rule=lambda _, i, t: m.p[i, t] <= delta * (
            total(i, t) / float(data.cross_rack[i])
            + (1 / float(data.spread[i]) - 1 / float(data.cross_rack[i])) * m.g[i, t]
            + (1 - 1 / float(data.spread[i])) * m.q[i, t]))                                                # (8R)
    else:
        m.rate = pyo.Constraint(live, rule=lambda _, i, t: m.p[i, t] <= delta * (
            total(i, t) / float(data.spread[i]) + (1 - 1 / float(data.spread[i])) * m.q[i, t]))            # (8)
    m.work = pyo.Constraint(apps, slots, rule=lambda _, i, t: sum(
        m.p[i, s] for s in range(first[i], t + 1)) >= float(data.work[i]) * m.u[i, t])                     # (9)
    m.done_stays = pyo.Constraint(apps, range(horizon - 1), rule=lambda _, i, t: m.u[i, t] <= m.u[i, t + 1])  # (10)
    m.done_at_end = pyo.Constraint(apps, rule=lambda _, i: m.u[i, horizon - 1] == 1)                       # (11)
    m.rho_row = pyo.Constraint(apps, rule=lambda _, i: m.rho_max
                               >= (m.C[i] - float(data.arrival[i])) / float(tid[i]))                      # (13)
    m.o1_data, m.o1_t_id, m.o1_horizon = data, tid, horizon   # read back by solve_offline

    def extract() -> OfflineSchedule:
        gpus = np.zeros((data.num_apps, horizon, data.num_machines), dtype=np.int64)
        for (i, k, t), var in m.x.items():
            gpus[i, t, k] = round(var.value or 0.0)
        done = np.array([sum(round(m.u[i, t].value or 0.0) for t in slots) for i in apps])
        for i in apps:                 # GPUs held after the done slot do no work: drop them
            gpus[i, horizon - done[i] + 1:, :] = 0
        return OfflineSchedule(completion=delta * (horizon + 1 - done), gpus=gpus)

    def load_start(schedule: OfflineSchedule) -> None:
        """Set every variable from a schedule that :func:`check_schedule` passes (a MIP start):
        w, l, q (and v, k, g) from its placement, p at the rate of that placement, u from C_i."""
        done_slot = np.rint(schedule.completion / delta).astype(np.int64) - 1
        for (i, k, t), var in m.x.items():
            var.set_value(float(schedule.gpus[i, t, k]))
            m.w[i, k, t].set_value(float(schedule.gpus[i, t, k] > 0))
        for i, t in live:
            counts = schedule.gpus[i, t]
            held = float(counts.sum())
            one_machine = int((counts > 0).sum()) == 1
            m.l[i, t].set_value(float(one_machine))
            m.q[i, t].set_value(held if one_machine else 0.0)
            m.p[i, t].set_value(delta * data.rate(i, counts))
            if n_racks > 1:
                used = np.unique(data.rack[counts > 0])
                m.k[i, t].set_value(float(len(used) == 1))
                m.g[i, t].set_value(held if len(used) == 1 else 0.0)
        if n_racks > 1:
            for (i, r, t), var in m.v.items():
                var.set_value(float(t >= first[i] and np.any(schedule.gpus[i, t][data.rack == r] > 0)))
        for (i, t), var in m.u.items():
            var.set_value(float(t >= done_slot[i]))
        m.rho_max.set_value(float(np.max((schedule.completion - data.arrival) / tid)))

    return Built(model=m, name=m.name, sense="min", relaxed=relax, build_seconds=time.perf_counter() - tick,
                 extract=None if relax else extract,
                 validate=None if relax else (lambda schedule: check_schedule(data, schedule)),
                 load_start=None if relax else load_start)


def _checked_horizon(horizon: int) -> int:
    if int(horizon) < 1:
        raise UsageError(f"the horizon must be at least one slot, got {horizon}")
    return int(horizon)


def alone_bound(data: OfflineData, t_id: np.ndarray) -> float:
    """max_i (C_i^alone - a_i) / T_id_i, with C_i^alone the end of the slot in which app i would
    finish holding the best allocation of the whole cluster from its first slot on: no O1
    schedule completes an app earlier, so a lower bound on O1 that needs no program."""
    alone = np.array([data.slot * (int(data.first_slot[i]) + math.ceil(
        data.work[i] / (data.slot * data.rate(i, _greedy_allocation(data, i, data.kappa.copy()))) - _SLOT_EPS))
        for i in range(data.num_apps)])
    return float(np.max((alone - data.arrival) / t_id))


def _fifo_interval(data: OfflineData, t_id: np.ndarray, horizon: int, cells: int) -> OfflineResult:
    """O1 unbuilt: the slotted greedy FIFO's schedule as the incumbent, :func:`alone_bound` below."""
    start = fifo_start(data, horizon)
    bound = alone_bound(data, t_id)
    message = f"O1 not built ({cells:,} cells, more than {MAX_BUILD_CELLS:,}): FIFO's schedule, bound of apps alone"
    if start is None:
        report = SolveReport(Status.NO_SOLUTION, None, bound, None, 0.0, 0.0, "none", False, message=message,
                             bound_source="apps alone")
        return OfflineResult(Status.NO_SOLUTION, None, bound, None, None, None, horizon, data.arrival, t_id,
                             {}, 0.0, message, [report], bound_source="apps alone")
    max_rho = float(np.max((start.completion - data.arrival) / t_id))
    bound = min(bound, max_rho)
    gap = relative_gap(max_rho, bound)
    status = Status.OPTIMAL if gap is not None and gap <= 1e-9 else Status.FEASIBLE
    report = SolveReport(status, max_rho, bound, gap, 0.0, 0.0, "none", False, message=message,
                         bound_source="apps alone", schedule=start)
    return OfflineResult(status, max_rho, bound, gap, start.completion, start.gpus, horizon, data.arrival, t_id,
                         {}, 0.0, message, [report], bound_source="apps alone")


def fifo_start(data: OfflineData, horizon: int) -> OfflineSchedule | None:
    """The slotted greedy FIFO as an O1 schedule over ``horizon`` slots, or None when it does not
    finish within them (a horizon given shorter than the default)."""
    completion, grants = fifo_schedule(data)
    if np.max(completion) > data.slot * horizon + _SLOT_EPS:
        return None
    gpus = np.zeros((data.num_apps, horizon, data.num_machines), dtype=np.int64)
    gpus[:, : grants.shape[1]] = grants[:, :horizon]
    return OfflineSchedule(completion=completion, gpus=gpus)


@dataclass
class OfflineResult:
    status: Status
    max_rho: float | None              # max_i (C_i - a_i) / T_id_i of the schedule found
    bound: float | None                # proven lower bound on O1's min max rho
    gap: float | None
    completion: np.ndarray | None      # C_i (12), seconds
    schedule: np.ndarray | None        # x_imt, shape (apps, H, machines)
    horizon: int
    arrival: np.ndarray
    t_id: np.ndarray
    size: dict[str, int]
    solve_seconds: float
    message: str = ""
    reports: list[SolveReport] = field(default_factory=list, repr=False)
    bound_source: str | None = None    # what ``bound`` is: the solver's ("milp") or "apps alone"
    steps: list[BudgetStep] = field(default_factory=list, repr=False)   # the time-limited steps run

    @property
    def rho(self) -> np.ndarray | None:
        """(C_i - a_i) / T_id_i per app."""
        return None if self.completion is None else (self.completion - self.arrival) / self.t_id


def solve_offline(instance: ThemisInstance, *, t_id: Sequence[float] | Mapping[str, float], slot: float,
                  horizon: int | None = None, relax: bool = False, lexicographic: bool = True,
                  time_limit: float | None = None, verify: bool | str = False, pool: bool = False) -> OfflineResult:
    """Solve O1 and summarise it; solver trouble is a status (``max_rho`` None), never an exception.

    ``lexicographic`` (default): min rho_max, then min sum_i C_i at that rho_max (module
    docstring); otherwise the spec's single objective rho_max + 1e-6 sum_i C_i, whose optimum can
    sit above the min max rho by at most 1e-6 n Delta H (reported as the bound). ``relax=True``
    solves the LP relaxation with epsilon = 0; its value is the ``bound``, a valid lower bound on
    O1. The slotted greedy FIFO is the first solve's MIP start and the incumbent's floor, so a
    time-limited solve always has an incumbent (max rho at most FIFO's) when FIFO finishes within
    the horizon. ``verify`` (True or "auto", see :func:`mlsched.solve.solve`) cross-certifies the
    first solve: that solve runs on the Pyomo model of :func:`build_offline`. Every other solve
    runs on the same program built as arrays (:mod:`mlsched.formulations.themis_offline_arrays`),
    and above LARGE_COLUMNS columns with a time limit in a child process ended HARD_STOP_GRACE s
    after its limit (:func:`mlsched.solve.solve_arrays_by_deadline`; a solve ended there has no
    incumbent of its own, FIFO's schedule and the bound of apps alone stand). ``time_limit``
    covers the build and both solves: the first solve (with its verification) gets what the build
    left, the re-solve what remains, each solver call at least ``mlsched.solve.MIN_VERIFY_SECONDS``
    (the stated overshoot per call); the result's ``steps`` log them.

    A program of more than MAX_BUILD_CELLS (app, machine, slot) cells is not built: the interval
    is then [:func:`alone_bound`, FIFO's max rho] (status FEASIBLE; the relaxation is refused)."""
    from mlsched.formulations import themis_offline_arrays   # here: that module reads this one's data classes

    budget = TimeBudget(time_limit)
    data = offline_data(instance, slot=slot, pool=pool)
    tid = t_id_vector(data, t_id)
    horizon = default_horizon(data, tid) if horizon is None else _checked_horizon(horizon)
    cells = int(np.maximum(horizon - data.first_slot, 0).sum()) * data.num_machines
    if cells > MAX_BUILD_CELLS:
        if relax:
            raise UsageError(f"{instance.name}: O1 would have {cells:,} (app, machine, slot) cells, more than "
                             f"{MAX_BUILD_CELLS:,}; its relaxation is not built")
        return _fifo_interval(data, tid, horizon, cells)
    tiebreak = 0.0 if (relax or lexicographic) else TIEBREAK
    with budget.step("build"):
        arrays = themis_offline_arrays.build_offline_arrays(data, tid, horizon, relax=relax, tiebreak=tiebreak)
        certify = not relax and (verify is True or (
            verify == "auto" and arrays.size["integer_variables"] <= VERIFY_MAX_INTEGERS))
        program: _ModelO1 | _ArraysO1 = _ArraysO1(arrays) if not certify else _ModelO1(build_offline(
            instance, t_id=tid, slot=slot, horizon=horizon, tiebreak=tiebreak, pool=pool))
    common = dict(horizon=horizon, arrival=data.arrival, t_id=tid, size=arrays.size, steps=budget.log)
    start = None if relax else fifo_start(data, horizon)
    first_step = "lp relaxation" if relax else "milp and verification" if certify else "milp"
    with budget.step(first_step, 1.0) as seconds:
        first = program.first(start, seconds)

    def first_score(schedule: OfflineSchedule) -> float:
        return _max_rho(data, tid, schedule) + tiebreak * float(schedule.completion.sum())

    if not _backed(first, first_score):
        with budget.step(f"{first_step} without the start", 1.0) as seconds:
            first = _without_start(program.first(None, seconds), first, first_score)
    if relax:
        return OfflineResult(first.status, None, first.objective, None, None, None, solve_seconds=first.solve_seconds,
                             message=first.message, reports=[first], bound_source=first.bound_source, **common)
    bound = first.bound
    if not lexicographic and bound is not None:
        bound -= TIEBREAK * data.num_apps * data.slot * horizon      # C_i <= Delta H by (11)-(12)
    bound, bound_source = _with_alone_bound(data, tid, bound, proven=first.status is Status.OPTIMAL)
    reports = [first]
    schedule: OfflineSchedule | None = first.schedule
    status, message = first.status, first.message
    if start is not None and status in (Status.NO_SOLUTION, Status.FEASIBLE, Status.ERROR) and (
            schedule is None or _max_rho(data, tid, schedule) > _max_rho(data, tid, start)):
        schedule, status = start, Status.FEASIBLE          # a solve stopped without (or above) FIFO's incumbent
        message = f"{message}; incumbent: FIFO's schedule".lstrip("; ")
    if schedule is None:
        return OfflineResult(first.status, None, bound, None, None, None, solve_seconds=first.solve_seconds,
                             message=first.message, reports=reports, bound_source=bound_source, **common)
    if lexicographic and status is Status.OPTIMAL:
        rho_star = float(first.objective)
        with budget.step("sum-of-completions re-solve", 1.0) as seconds:
            second = program.resolve(rho_star, schedule, seconds)
        if not _backed(second, _sum_of_completions):
            with budget.step("sum-of-completions re-solve without the start", 1.0) as seconds:
                second = _without_start(program.resolve(rho_star, None, seconds), second, _sum_of_completions)
        reports.append(second)
        if second.has_solution:   # every solution keeps max rho <= rho*: the max rho stays proven
            schedule = second.schedule
        if second.status is not Status.OPTIMAL:   # the least sum of completions among them is not
            message = f"sum-of-completions re-solve: {second.status.value} {second.message}".strip()
    max_rho = _max_rho(data, tid, schedule)
    if bound is not None:
        bound = min(bound, max_rho)
    gap = relative_gap(max_rho, bound)
    if status is Status.OPTIMAL and gap is not None and gap > 1e-9:
        status, message = Status.FEASIBLE, f"max rho is known within relative gap {gap:.3g}"
    elif status is Status.FEASIBLE and gap is not None and gap <= 1e-9:   # the stopped MILP's max rho meets the bound
        status, message = Status.OPTIMAL, f"max rho meets the bound of {bound_source} ({message})"
    return OfflineResult(status, max_rho, bound, gap, schedule.completion, schedule.gpus,
                         solve_seconds=sum(r.solve_seconds for r in reports), message=message, reports=reports,
                         bound_source=bound_source, **common)


def _max_rho(data: OfflineData, t_id: np.ndarray, schedule: OfflineSchedule) -> float:
    return float(np.max((schedule.completion - data.arrival) / t_id))


def _sum_of_completions(schedule: OfflineSchedule) -> float:
    return float(schedule.completion.sum())


def _backed(report: SolveReport, score: Callable[[OfflineSchedule], float]) -> bool:
    """Whether the solver's schedule scores what it claims, or better (an incumbent's rho_max may sit
    above its max rho). HiGHS 1.16.0 with presolve and a MIP start has returned the start's values
    with the objective of another solution (O1's re-solve claimed the least sum of completions,
    120, and returned its start, 180: the same defect as docs/reliability.md reports for P-OFF);
    the program is then solved without the start."""
    if report.schedule is None or report.objective is None:
        return True
    scored = score(report.schedule)
    return scored <= report.objective or close(report.objective, scored)


def _without_start(retry: SolveReport, rejected: SolveReport, score: Callable[[OfflineSchedule], float]) -> SolveReport:
    """The solve run again without the start, noting the rejected claim; an error (no solution,
    no bound) when this one too claims what its schedule does not score."""
    note = f"with the MIP start HiGHS claimed {rejected.objective:.10g}, which its solution does not score"
    if not _backed(retry, score):
        return replace(retry, status=Status.ERROR, objective=None, bound=None, gap=None, schedule=None,
                       bound_source=None, message=f"{note}, nor without it")
    return replace(retry, message=f"{retry.message}; {note}".lstrip("; "))


class _ModelO1:
    """O1's solves on the Pyomo model (the cross-certified path)."""

    def __init__(self, built: Built) -> None:
        self.built = built

    def first(self, start: OfflineSchedule | None, seconds: float | None) -> SolveReport:
        return self._solve(start, seconds, verify=True)

    def resolve(self, rho_star: float, start: OfflineSchedule | None, seconds: float | None) -> SolveReport:
        """min sum_i C_i subject to rho_max <= rho* (1 + LEX_TOLERANCE) + LEX_TOLERANCE, from
        ``start`` (the first optimum, feasible for the re-solve) when given."""
        m = self.built.model
        if m.obj.active:
            m.obj.deactivate()
            m.keep_rho = pyo.Constraint(expr=m.rho_max <= rho_star * (1 + LEX_TOLERANCE) + LEX_TOLERANCE)
            m.sum_completion = pyo.Objective(expr=sum(m.C[i] for i in m.C), sense=pyo.minimize)
        return self._solve(start, seconds, verify=False)

    def _solve(self, start: OfflineSchedule | None, seconds: float | None, *, verify: bool) -> SolveReport:
        if start is not None:      # HiGHS's first incumbent
            assert self.built.load_start is not None
            self.built.load_start(start)
        return solve(self.built, time_limit=seconds, verify=verify, warm_start=start is not None)


class _ArraysO1:
    """O1's solves on its arrays: in this process, or above LARGE_COLUMNS columns with a time limit
    in a child process ended HARD_STOP_GRACE s after its limit."""

    def __init__(self, arrays: OfflineArrays) -> None:
        self.arrays = arrays

    def first(self, start: OfflineSchedule | None, seconds: float | None) -> SolveReport:
        return self._solve(self.arrays.program, start, seconds)

    def resolve(self, rho_star: float, start: OfflineSchedule | None, seconds: float | None) -> SolveReport:
        return self._solve(self.arrays.lexicographic(rho_star), start, seconds)

    def _solve(self, program: ArrayProgram, start: OfflineSchedule | None, seconds: float | None) -> SolveReport:
        values = None if start is None else self.arrays.start(start)
        if self.arrays.num_columns > LARGE_COLUMNS and seconds is not None:
            report = solve_arrays_by_deadline(program, time_limit=seconds, grace=HARD_STOP_GRACE, start=values)
        else:
            report = solve_arrays(program, time_limit=seconds, start=values)
        solution = report.schedule
        schedule = self.arrays.extract(solution) if solution is not None and program.is_mip else None
        return replace(report, build_seconds=self.arrays.build_seconds, schedule=schedule)


def _with_alone_bound(data: OfflineData, t_id: np.ndarray, bound: float | None, *,
                      proven: bool) -> tuple[float | None, str | None]:
    """O1's lower bound and its source: the MILP's own, or :func:`alone_bound` where the MILP stopped
    with none or a weaker one (a proven optimum keeps its bound)."""
    if proven:
        return bound, "milp"
    alone = alone_bound(data, t_id)
    if bound is None or alone > bound:
        return alone, "apps alone"
    return bound, "milp"
