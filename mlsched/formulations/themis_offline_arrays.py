r"""Themis's O1 of :mod:`mlsched.formulations.themis_offline` built straight into arrays for HiGHS.

Same variables, bounds, integrality, rows and objective as the Pyomo model of
:func:`~mlsched.formulations.themis_offline.build_offline` (see that module's docstring for the
math, rows (1)-(13) and, with R > 1 racks, (R1)-(R4) and (8R)); the Pyomo model stays the
public, inspectable form and the one cross-certified. This builder exists because Pyomo takes
5-6 s to build the 91,876-column O1 of ``themis/gavel-philly-first24`` (numpy 0.1-0.3 s) and
several more seconds to hand it to HiGHS, none of which looks at a time limit.

Columns, in order: x_imt and then w_imt over the live (i, t) (t >= the first slot of app i) and
every machine m; l_it, q_it, p_it over the live (i, t); u_it over every (i, t); rho_max; with R > 1
racks v_irt over every (i, r, t), then k_it and g_it over the live (i, t). The objective
rho_max + epsilon sum_i C_i is written with C_i of (12) substituted: the constant
epsilon Delta n (H + 1) is the program's ``offset``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

import numpy as np

from mlsched.formulations.rows import ArrayRows, later_pairs
from mlsched.formulations.themis_offline import LEX_TOLERANCE, OfflineData, OfflineSchedule
from mlsched.solve import ArrayProgram


@dataclass
class OfflineArrays:
    """O1 in arrays, with the maps between its columns and an :class:`OfflineSchedule`."""

    data: OfflineData
    t_id: np.ndarray
    horizon: int
    program: ArrayProgram
    live: tuple[np.ndarray, np.ndarray]          # (i, t) of every live pair, in column order
    x_start: int                                 # x of live pair j on machine m: x_start + j M + m
    w_start: int
    l_start: int                                 # l, q, p of live pair j: *_start + j
    q_start: int
    p_start: int
    u_start: int                                 # u_it: u_start + i H + t
    rho_column: int
    v_start: int | None                          # v_irt: v_start + (i R + r) H + t  (R > 1)
    k_start: int | None
    g_start: int | None
    build_seconds: float

    @property
    def num_columns(self) -> int:
        return len(self.program.cost)

    @property
    def size(self) -> dict[str, int]:
        """Sizes as :attr:`mlsched.solve.Built.size` counts them on the Pyomo model."""
        return {"variables": self.num_columns, "integer_variables": int(self.program.integrality.sum()),
                "constraints": len(self.program.row_lower)}

    def _live_gpus(self, gpus: np.ndarray) -> np.ndarray:
        """GPU counts of the live pairs, shape (live pairs, machines)."""
        i, t = self.live
        return gpus[i, t, :]

    def start(self, schedule: OfflineSchedule) -> np.ndarray:
        """The column values of a schedule that :func:`check_schedule` passes, as the Pyomo
        model's ``load_start`` sets them: w, l, q (and v, k, g) from its placement, p at the rate
        of that placement, u from C_i, rho_max the schedule's max rho."""
        data, horizon = self.data, self.horizon
        i, t = self.live
        n_live, n_machines = len(i), data.num_machines
        counts = self._live_gpus(schedule.gpus)
        held = counts.sum(axis=1).astype(float)
        values = np.zeros(self.num_columns)
        values[self.x_start: self.x_start + n_live * n_machines] = counts.reshape(-1)
        values[self.w_start: self.w_start + n_live * n_machines] = (counts > 0).reshape(-1)
        one_machine = (counts > 0).sum(axis=1) == 1
        values[self.l_start: self.l_start + n_live] = one_machine
        values[self.q_start: self.q_start + n_live] = np.where(one_machine, held, 0.0)
        values[self.p_start: self.p_start + n_live] = data.slot * data.rates(i, counts)
        done_slot = np.rint(schedule.completion / data.slot).astype(np.int64) - 1
        values[self.u_start: self.u_start + data.num_apps * horizon] = (
            np.arange(horizon)[None, :] >= done_slot[:, None]).reshape(-1)
        values[self.rho_column] = float(np.max((schedule.completion - data.arrival) / self.t_id))
        if self.v_start is not None:
            n_racks = data.num_racks
            in_rack = np.stack([(schedule.gpus[:, :, data.rack == r] > 0).any(axis=2) for r in range(n_racks)], axis=1)
            in_rack &= np.arange(horizon)[None, None, :] >= data.first_slot[:, None, None]
            values[self.v_start: self.v_start + data.num_apps * n_racks * horizon] = in_rack.reshape(-1)
            one_rack = in_rack[i, :, t].sum(axis=1) == 1
            values[self.k_start: self.k_start + n_live] = one_rack
            values[self.g_start: self.g_start + n_live] = np.where(one_rack, held, 0.0)
        return values

    def extract(self, values: np.ndarray) -> OfflineSchedule:
        """The schedule of a solution vector, as the Pyomo model's ``extract`` reads it: x rounded,
        C_i from the u's, GPUs held after the done slot dropped (they do no work)."""
        data, horizon = self.data, self.horizon
        i, t = self.live
        n_live, n_machines = len(i), data.num_machines
        gpus = np.zeros((data.num_apps, horizon, n_machines), dtype=np.int64)
        gpus[i, t, :] = np.rint(values[self.x_start: self.x_start + n_live * n_machines]).reshape(n_live, n_machines)
        done = np.rint(values[self.u_start: self.u_start + data.num_apps * horizon]).reshape(
            data.num_apps, horizon).sum(axis=1).astype(np.int64)
        gpus[np.arange(horizon)[None, :] > (horizon - done)[:, None]] = 0
        return OfflineSchedule(completion=data.slot * (horizon + 1 - done), gpus=gpus)

    def lexicographic(self, rho_star: float) -> ArrayProgram:
        """The re-solve of :func:`solve_offline`: min sum_i C_i subject to
        rho_max <= rho* (1 + LEX_TOLERANCE) + LEX_TOLERANCE (as rho_max's upper bound)."""
        data, horizon = self.data, self.horizon
        cost = np.zeros(self.num_columns)
        cost[self.u_start: self.u_start + data.num_apps * horizon] = -data.slot
        upper = self.program.col_upper.copy()
        upper[self.rho_column] = rho_star * (1 + LEX_TOLERANCE) + LEX_TOLERANCE
        return replace(self.program, cost=cost, col_upper=upper, offset=data.slot * (horizon + 1) * data.num_apps)


def build_offline_arrays(data: OfflineData, t_id: np.ndarray, horizon: int, *, relax: bool = False,
                         tiebreak: float) -> OfflineArrays:
    """O1 (or, with ``relax``, its LP relaxation) of ``data`` over ``horizon`` slots with fixed
    denominators ``t_id`` and weight ``tiebreak`` on sum_i C_i, as arrays (module docstring)."""
    tick = time.perf_counter()
    n_apps, n_machines, n_racks = data.num_apps, data.num_machines, data.num_racks
    delta, first = data.slot, data.first_slot
    slots = np.arange(horizon)
    alive = slots[None, :] >= first[:, None]
    li, lt = np.nonzero(alive)
    n_live = len(li)
    # (live pair, machine) cells: pair j = cell // M, machine = cell % M
    cell_pair = np.repeat(np.arange(n_live), n_machines)
    cell_machine = np.tile(np.arange(n_machines), n_live)
    cell_app, cell_slot = li[cell_pair], lt[cell_pair]
    n_cells = n_live * n_machines

    lower: list[np.ndarray] = []
    upper: list[np.ndarray] = []
    integer: list[np.ndarray] = []
    next_col = 0

    def columns(count: int, high: np.ndarray | float, is_integer: bool) -> int:
        nonlocal next_col
        first_col = next_col
        lower.append(np.zeros(count))
        upper.append(np.broadcast_to(np.asarray(high, dtype=float), (count,)))
        integer.append(np.full(count, is_integer and not relax))
        next_col += count
        return first_col

    x0 = columns(n_cells, np.minimum(data.kappa[cell_machine], data.demand[cell_app]), True)
    w0 = columns(n_cells, 1.0, True)
    l0 = columns(n_live, 1.0, True)
    q0 = columns(n_live, np.inf, False)
    p0 = columns(n_live, np.inf, False)
    u0 = columns(n_apps * horizon, 1.0, True)
    rho = columns(1, np.inf, False)
    racked = n_racks > 1
    v0 = columns(n_apps * n_racks * horizon, 1.0, True) if racked else None
    k0 = columns(n_live, 1.0, True) if racked else None
    g0 = columns(n_live, np.inf, False) if racked else None

    x_cols, w_cols = x0 + np.arange(n_cells), w0 + np.arange(n_cells)
    pairs = np.arange(n_live)
    l_cols, q_cols, p_cols = l0 + pairs, q0 + pairs, p0 + pairs
    ones_cells, ones_live = np.ones(n_cells), np.ones(n_live)
    kappa, cap = data.kappa.astype(float), data.demand.astype(float)
    rows = ArrayRows()
    # (1) sum_i x_imt <= kappa_m, for every (m, t) some app is live in
    used_slots = np.unique(lt)
    slot_row = np.full(horizon, -1, dtype=np.int64)
    slot_row[used_slots] = np.arange(len(used_slots))
    rows.add(slot_row[cell_slot] * n_machines + cell_machine, x_cols, ones_cells,
             np.full(len(used_slots) * n_machines, -np.inf), np.tile(kappa, len(used_slots)))
    # (2) X_it <= d_i
    rows.add(cell_pair, x_cols, ones_cells, np.full(n_live, -np.inf), cap[li])
    # (4) x_imt - kappa_m w_imt <= 0
    cells = np.arange(n_cells)
    rows.add(np.concatenate([cells, cells]), np.concatenate([x_cols, w_cols]),
             np.concatenate([ones_cells, -kappa[cell_machine]]), np.full(n_cells, -np.inf), np.zeros(n_cells))
    # (5) sum_m w_imt + (M - 1) l_it <= M
    rows.add(np.concatenate([cell_pair, pairs]), np.concatenate([w_cols, l_cols]),
             np.concatenate([ones_cells, np.full(n_live, n_machines - 1.0)]),
             np.full(n_live, -np.inf), np.full(n_live, float(n_machines)))
    # (6) q_it - X_it <= 0;  (7) q_it - d_i l_it <= 0
    _bounded_by_total(rows, q_cols, cell_pair, x_cols)
    _bounded_by_indicator(rows, q_cols, l_cols, cap[li])
    spread, cross = data.spread[li], data.cross_rack[li]
    if racked:
        k_cols, g_cols = k0 + pairs, g0 + pairs
        # (R1) w_imt - v_i,r(m),t <= 0
        v_of_cell = v0 + (cell_app * n_racks + data.rack[cell_machine]) * horizon + cell_slot
        rows.add(np.concatenate([cells, cells]), np.concatenate([w_cols, v_of_cell]),
                 np.concatenate([ones_cells, -ones_cells]), np.full(n_cells, -np.inf), np.zeros(n_cells))
        # (R2) sum_r v_irt + (R - 1) k_it <= R
        pair_rack = np.repeat(pairs, n_racks)
        rack_of = np.tile(np.arange(n_racks), n_live)
        v_cols = v0 + (li[pair_rack] * n_racks + rack_of) * horizon + lt[pair_rack]
        rows.add(np.concatenate([pair_rack, pairs]), np.concatenate([v_cols, k_cols]),
                 np.concatenate([np.ones(len(pair_rack)), np.full(n_live, n_racks - 1.0)]),
                 np.full(n_live, -np.inf), np.full(n_live, float(n_racks)))
        # (R3) g_it - X_it <= 0;  (R4) g_it - d_i k_it <= 0
        _bounded_by_total(rows, g_cols, cell_pair, x_cols)
        _bounded_by_indicator(rows, g_cols, k_cols, cap[li])
        # (8R) p_it - Delta (X_it / s'_i + (1/s_i - 1/s'_i) g_it + (1 - 1/s_i) q_it) <= 0
        extra_cols = [g_cols, q_cols]
        extra_vals = [-delta * (1 / spread - 1 / cross), -delta * (1 - 1 / spread)]
        per_gpu = delta / data.cross_rack[cell_app]
    else:
        # (8) p_it - Delta (X_it / s_i + (1 - 1/s_i) q_it) <= 0
        extra_cols, extra_vals = [q_cols], [-delta * (1 - 1 / spread)]
        per_gpu = delta / data.spread[cell_app]
    row_ids = np.concatenate([pairs, cell_pair, *[pairs] * len(extra_cols)])
    col_ids = np.concatenate([p_cols, x_cols, *extra_cols])
    vals = np.concatenate([ones_live, -per_gpu, *extra_vals])
    present = vals != 0.0                           # s_i = 1 (or s_i = s'_i) drops the q (g) term, as in Pyomo
    rows.add(row_ids[present], col_ids[present], vals[present], np.full(n_live, -np.inf), np.zeros(n_live))
    # (9) sum_{first_i <= s <= t} p_is - W_i u_it >= 0, for every (i, t)
    u_cols = u0 + np.arange(n_apps * horizon)
    pair_of = np.full((n_apps, horizon), -1, dtype=np.int64)
    pair_of[li, lt] = pairs
    work_i, work_s, work_t = later_pairs(alive)
    rows.add(np.concatenate([work_i * horizon + work_t, np.arange(n_apps * horizon)]),
             np.concatenate([p0 + pair_of[work_i, work_s], u_cols]),
             np.concatenate([np.ones(len(work_i)), -np.repeat(data.work, horizon)]),
             np.zeros(n_apps * horizon), np.full(n_apps * horizon, np.inf))
    # (10) u_it - u_i,t+1 <= 0
    earlier = (u_cols.reshape(n_apps, horizon)[:, :-1]).reshape(-1)
    n_stays = len(earlier)
    stays = np.arange(n_stays)
    rows.add(np.concatenate([stays, stays]), np.concatenate([earlier, earlier + 1]),
             np.concatenate([np.ones(n_stays), -np.ones(n_stays)]), np.full(n_stays, -np.inf), np.zeros(n_stays))
    # (11) u_i,H-1 = 1
    apps = np.arange(n_apps)
    rows.add(apps, u0 + apps * horizon + horizon - 1, np.ones(n_apps), np.ones(n_apps), np.ones(n_apps))
    # (13) rho_max - (C_i - a_i) / T_id_i >= 0 with (12): rho_max + Delta / T_i sum_t u_it >= (Delta (H + 1) - a_i) / T_i
    u_app = np.repeat(apps, horizon)
    rows.add(np.concatenate([apps, u_app]), np.concatenate([np.full(n_apps, rho), u_cols]),
             np.concatenate([np.ones(n_apps), delta / t_id[u_app]]),
             (delta * (horizon + 1) - data.arrival) / t_id, np.full(n_apps, np.inf))

    cost = np.zeros(next_col)
    cost[rho] = 1.0
    cost[u_cols] = -tiebreak * delta
    program = rows.program(cost, np.concatenate(lower), np.concatenate(upper), integer=not relax, sense="min")
    program = replace(program, integer_columns=np.concatenate(integer),
                      offset=tiebreak * delta * (horizon + 1) * n_apps)
    return OfflineArrays(data, t_id, horizon, program, (li, lt), x0, w0, l0, q0, p0, u0, rho, v0, k0, g0,
                         time.perf_counter() - tick)


def _bounded_by_total(rows: ArrayRows, cols: np.ndarray, cell_pair: np.ndarray, x_cols: np.ndarray) -> None:
    """Rows (6) and (R3): a per-pair column minus X_it (the sum of its x over machines) <= 0."""
    n_live = len(cols)
    rows.add(np.concatenate([np.arange(n_live), cell_pair]), np.concatenate([cols, x_cols]),
             np.concatenate([np.ones(n_live), -np.ones(len(x_cols))]), np.full(n_live, -np.inf), np.zeros(n_live))


def _bounded_by_indicator(rows: ArrayRows, cols: np.ndarray, indicator_cols: np.ndarray, cap: np.ndarray) -> None:
    """Rows (7) and (R4): a per-pair column minus d_i times its indicator (l_it, k_it) <= 0."""
    n_live = len(cols)
    pairs = np.arange(n_live)
    rows.add(np.concatenate([pairs, pairs]), np.concatenate([cols, indicator_cols]),
             np.concatenate([np.ones(n_live), -cap]), np.full(n_live, -np.inf), np.zeros(n_live))
