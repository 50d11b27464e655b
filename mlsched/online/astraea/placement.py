r"""One job's candidate schedules in one round: Alg. 3 lines 3-11 with MINCOSTD (Alg. 4) and
MINCOSTC (Alg. 5), as the spec reads them (§3.4-3.6).

For start offset o = 1..tau_l and worker count W = 1..D_j, with t^- = rho0 + o and
t^+ = t^- + d - 1 <= rho1, over the slots [t^-, t^+]:

  Qw = min_t max{q_w^u - Uw^u(t), a_w(t)},  Qp likewise;  Fw_s = min_t (C_sw - h_sw(t)),  Fp_s likewise
  MINCOSTD  d = d_j(W, dist); needs Qw >= W; D_sw = min(W - 1, Fw_s), N_s = ceil((W - D_sw) b_w / b_p);
            H = {s : N_s <= Fp_s, N_s <= Qp}; s1 = H's first by (N_s, s); y_s1 = D_s1w, z_s1 = N_s1;
            the other W - D_s1w workers fill the other servers by (Fw_s, s) ascending;
            cost = sum_t (eta_w(t) W + eta_p(t) N_s1)                                     (Alg. 4)
  MINCOSTC  d = d_j(W, cent); needs Qw >= W, Qp >= 1; H = {s : Fw_s >= W, Fp_s >= 1};
            s1 = argmin (Fw_s, Fp_s, s) ("best_fit") or the lowest index; y_s1 = W, z_s1 = 1;
            cost = sum_t (eta_w(t) W + eta_p(t)), or d (eta_w(t^-) W + eta_p(t^-)) ("literal")  (Alg. 5)
  value     phi_j(t^+ - rho0) - cost; centralized wins ties (line 6, each side its own t^+);
            the job's best is the first (o outer, W inner) strictly above the best so far and 0 (line 10)

Every (o, W) pair is evaluated, vectorised over o (and over W for the price bounds): window minima
come from sparse tables a round shares between allocations (the quota's per owner, until the owner's
quota use or the pool changes), window price sums from prefix sums a round shares likewise;
placements are built only for the winner (the costs do not depend on
which server of H is chosen). All float comparisons use EPS = 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlsched.instance.multi_tenant import TenantJob
from mlsched.instance.parameter_server import ps_needed
from mlsched.instance.utility import Affine

EPS = 1e-9
CENTRAL_SERVER_RULES = ("best_fit", "lowest_index")
MINCOSTC_COSTS = ("per_slot", "literal")


class WindowMinimum:
    """Minima of every row of a (rows, T) array over windows [o, o + d), answered in O(1) per window
    from a sparse table whose levels (minima over 2^k slots) are built as lengths need them, over
    the first columns queries reach (doubled, and the levels rebuilt, when a query reaches further).
    The rows may be given as blocks, stacked (as floats) at the first query."""

    def __init__(self, *blocks: np.ndarray):
        self.blocks, self.columns, self._values = blocks, 0, None
        self.levels: list[np.ndarray] = []

    @property
    def values(self) -> np.ndarray:
        if self._values is None:
            self._values = np.vstack(self.blocks).astype(float)
            self.levels = [self._values[:, :0]]
        return self._values

    def _level(self, level: int, columns: int) -> np.ndarray:
        if columns > self.columns:
            self.columns = min(self.values.shape[1], max(columns, 2 * self.columns))
            self.levels = [self.values[:, :self.columns]]
        while len(self.levels) <= level:
            prev, span = self.levels[-1], 1 << (len(self.levels) - 1)
            self.levels.append(np.minimum(prev[:, :-span], prev[:, span:]))
        return self.levels[level]

    def __call__(self, length: int, start: int, stop: int, rows: slice = slice(None)) -> np.ndarray:
        """(rows, stop - start): the minimum over [o, o + length) for every start o in [start, stop)."""
        level = length.bit_length() - 1
        table = self._level(level, stop + length - 1)
        shift = length - (1 << level)
        return np.minimum(table[rows, start:stop], table[rows, start + shift:stop + shift])


@dataclass
class RoundView:
    """What one job sees of its round: per-slot free capacity, the quota bounds and the prices."""

    free_w: np.ndarray     # (S, tau) C_sw - h_sw(t)
    free_p: np.ndarray     # (S, tau)
    quota_w: np.ndarray    # (tau,) max{q_w^u - Uw^u(t), a_w(t)}
    quota_p: np.ndarray    # (tau,)
    eta_w: np.ndarray      # (tau,) posted prices
    eta_p: np.ndarray
    free_minimum: WindowMinimum | None = None   # minima of free_w, free_p (stacked) over windows
    load_minimum: WindowMinimum | None = None   # minima of the cluster's free-capacity bounds over windows
    quota_minimum: WindowMinimum | None = None  # minima of quota_w, quota_p (stacked) over windows
    price_sums: tuple[np.ndarray, np.ndarray] | None = None   # (tau + 1,) prefix sums of eta_w, eta_p

    def __post_init__(self) -> None:
        """The window minima and price sums are built here unless given (a round shares them while
        the arrays they come from hold)."""
        if self.free_minimum is None:
            self.free_minimum = WindowMinimum(self.free_w, self.free_p)
        if self.load_minimum is None:
            self.load_minimum = load_minimum(self.free_w, self.free_p)
        if self.quota_minimum is None:
            self.quota_minimum = WindowMinimum(self.quota_w[None, :], self.quota_p[None, :])
        if self.price_sums is None:
            self.price_sums = price_sums(self.eta_w, self.eta_p)


def price_sums(eta_w: np.ndarray, eta_p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Prefix sums of the posted prices: a window's price sum is the difference of two entries."""
    return np.concatenate([[0.0], np.cumsum(eta_w)]), np.concatenate([[0.0], np.cumsum(eta_p)])


def load_minimum(free_w: np.ndarray, free_p: np.ndarray) -> WindowMinimum:
    """Window minima of sum_s free_w(s, t), max_s free_w(s, t) and max_s free_p(s, t): over a run,
    sum_s Fw_s, max_s Fw_s and max_s Fp_s are at most these minima, so a run where they fall short
    of W workers in all (MINCOSTD), of W on one server (MINCOSTC) or of one PS (both) has no
    placement."""
    return WindowMinimum(free_w.sum(axis=0)[None, :], free_w.max(axis=0, initial=0)[None, :],
                         free_p.max(axis=0, initial=0)[None, :])


@dataclass(frozen=True)
class JobShape:
    """The job's durations and ideal utility as Alg. 3 needs them."""

    chunks: int                   # the most workers: W = 1..D_j (or the A13 cap)
    central: np.ndarray           # d_j(W, cent) for W = 1..D_j (index W - 1)
    distributed: np.ndarray       # d_j(W, dist)
    utility: object               # phi_j, vectorised ``value``
    worth: int | None = None      # phi_j(x) <= EPS for every x > worth (None: phi_j stays positive)

    def span(self, tau: int) -> int:
        """The slots of a round of tau slots in which the job can complete with mu > 0: a candidate
        completing later has phi_j <= EPS and cost >= 0, so it never passes Alg. 3 line 10."""
        return tau if self.worth is None else max(0, min(tau, self.worth))


@dataclass(frozen=True)
class Candidate:
    offset: int            # o: t^- = rho0 + o
    workers: int           # W
    centralized: bool
    duration: int
    value: float           # phi_j(t^+ - rho0)
    cost: float
    mu: float
    y: np.ndarray          # (S,) workers per server
    z: np.ndarray          # (S,) PS per server


def durations(workload: int, rate: float, chunks: int) -> np.ndarray:
    """d_j(W, zeta) = ceil(B_j / (n W)) for W = 1..D_j (§1.3)."""
    w = np.arange(1, chunks + 1, dtype=float)
    return np.ceil(workload / (rate * w) - 1e-9).astype(np.int64)


def job_shape(job: TenantJob, max_workers: int | None = None) -> JobShape:
    """The durations of every worker count W = 1..D_j (or ``max_workers``) in both modes, the utility
    and, for a decreasing affine one, the last elapsed time it can exceed EPS at (one slot spare)."""
    most = max_workers or job.chunks
    u = job.utility
    worth = int(np.floor((u.g - EPS) / -u.k)) + 1 if isinstance(u, Affine) and u.k < 0 else None
    return JobShape(chunks=most, central=durations(job.workload, job.rate_centralized, most),
                    distributed=durations(job.workload, job.rate_distributed, most), utility=job.utility,
                    worth=worth)


def best_candidate(job: JobShape, view: RoundView, *, bandwidth: tuple[float, float], central_rule: str = "best_fit",
                   mincostc_cost: str = "per_slot", first_chunk: int = 32) -> Candidate | None:
    """The job's best schedule in this round (Alg. 3 lines 2-11), or None when no mu > 0.

    Offsets are scanned in chunks of doubling length; a (side, W) is left out of a chunk when
    phi_j at the chunk's first completion is at most the best mu so far, and the scan stops when
    every (side, W) is left out: the exact speed-up of spec §3.4 (cost >= 0, phi non-increasing).
    Within a chunk, placements are sought only at offsets where the quota admits W, the cluster's
    free-capacity bounds (:func:`load_minimum`) leave room for a placement, and phi_j - (the least
    cost: W workers' prices, plus one PS's for MINCOSTC) exceeds the best mu so far less EPS (the
    price bound first, for all open W of a side at once): any other offset's mu is at most best - EPS, so neither wins line 10 nor turns the
    line-6 choice of an offset that could (the output is unchanged). Before any of these, W and the
    chunk's offsets are cut to what the quota and the free-capacity bounds at each window's first slot
    admit (a window's minimum is at most its first slot's value), without window queries."""
    tau = view.eta_w.shape[0]
    n_servers = view.free_w.shape[0]
    free, load, quotas, sums = view.free_minimum, view.load_minimum, view.quota_minimum, view.price_sums
    literal = mincostc_cost == "literal"
    needs = np.asarray(ps_needed(np.arange(job.chunks + 1), *bandwidth))   # MINCOSTD's N, 0..D_j remote

    def open_workers(d: np.ndarray, start: int, stop: int, best: float) -> np.ndarray:
        """Per W (durations ``d``): whether some offset o in [start + 1, stop] ends in the round
        (o <= tau - d + 1) with phi_j at the first completion above ``best`` + EPS, so that the
        side could beat ``best`` in this chunk."""
        ends_in_round = np.minimum(stop, tau - d + 1) > start
        return ends_in_round & ~(np.asarray(job.utility.value(start + d), dtype=float) <= best + EPS)

    def side(workers: np.ndarray, centralized: bool, start: int, stop: int, best: float) -> np.ndarray:
        """(stop - start, D_j): mu = phi(o + d - 1) - cost for offsets o in [start + 1, stop] and the
        open ``workers`` W of one side (-inf without a placement or past the round, or where even
        the least cost leaves mu <= best - EPS; -inf for the other W)."""
        mu = np.full((stop - start, job.chunks), -np.inf)
        begin = np.arange(start, stop)                       # o - 1
        # a window's minima are at most their values at its first slot: the most workers that slot's quota
        # and free capacity admit bound W at each offset (no placement beyond it; checked without tables)
        at_first = load.values[:, begin]
        most = np.minimum(view.quota_w[begin], at_first[1 if centralized else 0])
        most[(at_first[2] < 1) | ((view.quota_p[begin] < 1) if centralized else False)] = 0
        workers = workers[workers <= most.max(initial=0)]
        if not workers.size:
            return mu
        room_for_some = np.flatnonzero(most >= workers[0])   # the offsets left, narrowed to their range
        trim, end = int(room_for_some[0]), int(room_for_some[-1]) + 1
        out, begin, most = mu[trim:end], begin[trim:end], most[trim:end]
        start, stop = start + trim, start + end
        d = (job.central if centralized else job.distributed)[workers - 1]
        w = workers[:, None]
        ends = np.minimum(begin[None, :] + d[:, None], tau)   # o - 1 + d (clipped past the round)
        in_round = begin[None, :] < (tau - d + 1)[:, None]    # o <= tau - d + 1
        value = np.asarray(job.utility.value(begin[None, :] + d[:, None]), dtype=float)
        win_w = sums[0][ends] - sums[0][begin]
        win_p = sums[1][ends] - sums[1][begin]
        if centralized:
            cost = (d[:, None] * (w * view.eta_w[begin] + view.eta_p[begin]) if literal else w * win_w + win_p)
            priced = in_round & (value - cost > best - EPS)
        else:                                    # the cost is at least the workers' (one PS or more on top)
            priced = in_round & (value - w * win_w > best - EPS)
        priced &= most[None, :] >= w
        for row in np.flatnonzero(priced.any(axis=1)).tolist():
            wr, dr = int(workers[row]), int(d[row])
            last = min(stop, tau - dr + 1)            # the offsets that end in the round
            quota, room = quotas(dr, start, last), load(dr, start, last)
            hopeful = (priced[row, :last - start] & (quota[0] >= wr)
                       & (room[1 if centralized else 0] >= wr) & (room[2] >= 1))
            if centralized:
                hopeful &= quota[1] >= 1
            cand = np.flatnonzero(hopeful)
            if not cand.size:
                continue
            lo, hi = int(cand[0]), int(cand[-1]) + 1      # the offsets worth placing, from start
            table = free(dr, start + lo, start + hi)
            fw, fp = table[:n_servers], table[n_servers:]
            qw, qp = quota[0, lo:hi], quota[1, lo:hi]
            if centralized:
                ok = (qw >= wr) & (qp >= 1) & ((fw >= wr) & (fp >= 1)).any(axis=0)
                cost_row = cost[row, lo:hi]
            else:
                local = np.minimum(wr - 1, fw)
                need = needs[(wr - local).astype(np.int64)]
                usable = (need <= fp) & (need <= qp)
                first = np.argmin(np.where(usable, need, np.inf), axis=0)
                cols = np.arange(hi - lo)
                ok = usable.any(axis=0) & (qw >= wr) & (fw.sum(axis=0) - fw[first, cols] >= wr - local[first, cols])
                cost_row = wr * win_w[row, lo:hi] + need[first, cols] * win_p[row, lo:hi]
            out[lo:hi, wr - 1] = np.where(ok, value[row, lo:hi] - cost_row, -np.inf)
        return mu

    best, best_at, best_central = 0.0, (0, 0), False
    start, size = 0, first_chunk
    while start < tau:
        stop = min(tau, start + size)
        open_c = open_workers(job.central, start, stop, best)
        open_d = open_workers(job.distributed, start, stop, best)
        if not (open_c.any() or open_d.any()):
            break
        mu_c = side(np.flatnonzero(open_c) + 1, True, start, stop, best)       # o-major, as Alg. 3 scans
        mu_d = side(np.flatnonzero(open_d) + 1, False, start, stop, best)
        central = (mu_c > -np.inf) & (mu_c >= mu_d - EPS)      # line 6: C wins ties
        flat = np.where(central, mu_c, mu_d).ravel()
        records = np.flatnonzero(flat > np.maximum.accumulate(np.concatenate([[best], flat[:-1]])))
        for idx in records:                              # line 10, strict with EPS, first in scan order
            if flat[idx] > best + EPS:
                best, best_central = float(flat[idx]), bool(central.ravel()[idx])
                best_at = (start + idx // job.chunks + 1, idx % job.chunks + 1)
        start, size = stop, 2 * size
    if best_at == (0, 0):
        return None
    chosen = placement_at(job, view, best_at[0], best_at[1], best_central, best, bandwidth, central_rule,
                          literal)
    assert chosen is not None, "the enumeration's winner has a placement"
    return chosen


def placement_at(job: JobShape, view: RoundView, offset: int, w: int, centralized: bool, mu: float | None = None,
                 bandwidth: tuple[float, float] = (1.0, 1.0), central_rule: str = "best_fit",
                 literal: bool = False) -> Candidate | None:
    """MINCOSTC (Alg. 5 lines 3-13) or MINCOSTD (Alg. 4 lines 3-23) for one (o, W): the placement
    and its cost, or None where the side has none (mu defaults to value - cost)."""
    d = int((job.central if centralized else job.distributed)[w - 1])
    if offset + d - 1 > view.eta_w.shape[0]:
        return None
    run = slice(offset - 1, offset - 1 + d)
    fw, fp = view.free_w[:, run].min(axis=1), view.free_p[:, run].min(axis=1)
    qw, qp = view.quota_w[run].min(), view.quota_p[run].min()
    n_servers = fw.shape[0]
    y, z = np.zeros(n_servers, dtype=np.int64), np.zeros(n_servers, dtype=np.int64)
    if qw < w:
        return None
    if centralized:
        hosts = [s for s in range(n_servers) if fw[s] >= w and fp[s] >= 1]
        if not hosts or qp < 1:
            return None
        s1 = min(hosts, key=(lambda s: (fw[s], fp[s], s)) if central_rule == "best_fit" else (lambda s: s))
        y[s1], z[s1] = w, 1
        cost = (d * (w * view.eta_w[offset - 1] + view.eta_p[offset - 1]) if literal
                else float(w * view.eta_w[run].sum() + view.eta_p[run].sum()))
    else:
        local = np.minimum(w - 1, fw)
        need = ps_needed(w - local, *bandwidth)
        hosts = [s for s in range(n_servers) if need[s] <= fp[s] and need[s] <= qp]
        if not hosts:
            return None
        s1 = min(hosts, key=lambda s: (need[s], s))
        y[s1], z[s1] = local[s1], need[s1]
        rest = w - int(local[s1])
        for s in sorted((s for s in range(n_servers) if s != s1), key=lambda s: (fw[s], s)):
            y[s] = min(int(fw[s]), rest)
            rest -= int(y[s])
        if rest > 0:
            return None
        cost = float(w * view.eta_w[run].sum() + need[s1] * view.eta_p[run].sum())
    value = float(job.utility.value(offset + d - 1))
    return Candidate(offset=offset, workers=w, centralized=centralized, duration=d, value=value, cost=float(cost),
                     mu=value - float(cost) if mu is None else mu, y=y, z=z)
