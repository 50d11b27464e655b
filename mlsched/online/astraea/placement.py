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

Every (o, W) pair is evaluated, vectorised over o: window minima come from a sparse table, window
price sums from prefix sums; placements are built only for the winner (the costs do not depend on
which server of H is chosen). All float comparisons use EPS = 1e-9.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlsched.instance.multi_tenant import TenantJob

EPS = 1e-9
CENTRAL_SERVER_RULES = ("best_fit", "lowest_index")
MINCOSTC_COSTS = ("per_slot", "literal")


class WindowMinimum:
    """Minima of every row of a (rows, T) array over windows [o, o + d), answered in O(1) per window."""

    def __init__(self, values: np.ndarray):
        self.levels = [values]
        span = 1
        while 2 * span <= values.shape[1]:
            prev = self.levels[-1]
            self.levels.append(np.minimum(prev[:, :-span], prev[:, span:]))
            span *= 2

    def __call__(self, length: int) -> np.ndarray:
        """(rows, T - length + 1): the minimum over [o, o + length) for every start o."""
        level = length.bit_length() - 1
        table = self.levels[level]
        count = self.levels[0].shape[1] - length + 1
        return np.minimum(table[:, :count], table[:, length - (1 << level):length - (1 << level) + count])


@dataclass
class RoundView:
    """What one job sees of its round: per-slot free capacity, the quota bounds and the prices."""

    free_w: np.ndarray     # (S, tau) C_sw - h_sw(t)
    free_p: np.ndarray     # (S, tau)
    quota_w: np.ndarray    # (tau,) max{q_w^u - Uw^u(t), a_w(t)}
    quota_p: np.ndarray    # (tau,)
    eta_w: np.ndarray      # (tau,) posted prices
    eta_p: np.ndarray


@dataclass(frozen=True)
class JobShape:
    """The job's durations and ideal utility as Alg. 3 needs them."""

    chunks: int                   # D_j: W = 1..D_j
    central: np.ndarray           # d_j(W, cent) for W = 1..D_j (index W - 1)
    distributed: np.ndarray       # d_j(W, dist)
    utility: object               # phi_j, vectorised ``value``


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


def job_shape(job: TenantJob) -> JobShape:
    """The durations of every worker count in both modes, and the utility."""
    return JobShape(chunks=job.chunks, central=durations(job.workload, job.rate_centralized, job.chunks),
                    distributed=durations(job.workload, job.rate_distributed, job.chunks), utility=job.utility)


def best_candidate(job: JobShape, view: RoundView, *, bandwidth_ratio: float, central_rule: str = "best_fit",
                   mincostc_cost: str = "per_slot") -> Candidate | None:
    """The job's best schedule in this round (Alg. 3 lines 2-11), or None when no mu > 0."""
    tau = view.eta_w.shape[0]
    n_servers = view.free_w.shape[0]
    window = WindowMinimum(np.vstack([view.free_w, view.free_p, view.quota_w[None, :],
                                      view.quota_p[None, :]]).astype(float))
    minima: dict[int, np.ndarray] = {}
    sums = (np.concatenate([[0.0], np.cumsum(view.eta_w)]), np.concatenate([[0.0], np.cumsum(view.eta_p)]))
    literal = mincostc_cost == "literal"

    def side(w: int, centralized: bool) -> np.ndarray:
        """mu = phi(o + d - 1) - cost for every offset o (-inf where this side has no placement)."""
        out = np.full(tau, -np.inf)
        d = int((job.central if centralized else job.distributed)[w - 1])
        if d > tau:
            return out
        if d not in minima:
            minima[d] = window(d)
        table = minima[d]
        fw, fp = table[:n_servers], table[n_servers:2 * n_servers]
        qw, qp = table[2 * n_servers], table[2 * n_servers + 1]
        count = tau - d + 1
        win_w, win_p = sums[0][d:d + count] - sums[0][:count], sums[1][d:d + count] - sums[1][:count]
        if centralized:
            ok = (qw >= w) & (qp >= 1) & ((fw >= w) & (fp >= 1)).any(axis=0)
            cost = d * (w * view.eta_w[:count] + view.eta_p[:count]) if literal else w * win_w + win_p
        else:
            local = np.minimum(w - 1, fw)
            need = np.ceil((w - local) * bandwidth_ratio - EPS)
            usable = (need <= fp) & (need <= qp)
            first = np.argmin(np.where(usable, need, np.inf), axis=0)
            cols = np.arange(count)
            ok = usable.any(axis=0) & (qw >= w) & (fw.sum(axis=0) - fw[first, cols] >= w - local[first, cols])
            cost = w * win_w + need[first, cols] * win_p
        value = np.asarray(job.utility.value(np.arange(1, count + 1) + d - 1), dtype=float)
        out[:count] = np.where(ok, value - cost, -np.inf)
        return out

    grid = np.full((tau, job.chunks), -np.inf)       # mu of the chosen side, o-major as Alg. 3 scans
    central = np.zeros((tau, job.chunks), dtype=bool)
    for w in range(1, job.chunks + 1):
        mu_c, mu_d = side(w, True), side(w, False)
        take_c = (mu_c > -np.inf) & (mu_c >= mu_d - EPS)      # line 6: C wins ties
        grid[:, w - 1] = np.where(take_c, mu_c, mu_d)
        central[:, w - 1] = take_c
    flat = grid.ravel()
    best, best_at = 0.0, -1
    records = np.flatnonzero(flat > np.maximum.accumulate(np.concatenate([[0.0], flat[:-1]])))
    for idx in records:                                  # line 10, strict with EPS, first in scan order
        if flat[idx] > best + EPS:
            best, best_at = float(flat[idx]), int(idx)
    if best_at < 0:
        return None
    offset, w = best_at // job.chunks + 1, best_at % job.chunks + 1
    chosen = placement_at(job, view, offset, w, bool(central.ravel()[best_at]), best, bandwidth_ratio, central_rule,
                          literal)
    assert chosen is not None, "the enumeration's winner has a placement"
    return chosen


def placement_at(job: JobShape, view: RoundView, offset: int, w: int, centralized: bool, mu: float | None = None,
                 ratio: float = 1.0, central_rule: str = "best_fit", literal: bool = False) -> Candidate | None:
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
        need = np.ceil((w - local) * ratio - EPS).astype(np.int64)
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
