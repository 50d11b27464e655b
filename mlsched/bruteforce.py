"""Brute-force enumeration for tiny instances, written independently of the formulations and
of Algorithm 2 (no greedy, no DP, no solver): the oracle that solver optima and the online
subroutine are checked against.

- ``oasis_subproblem``: mu_i of eq. (27) by enumerating every per-slot placement and every
  split of the workload over slots (chunk or worker-slot form), spec §7.2 BF-Alg2.
- ``oasis_opt``: OPT_paper / OPT_chunk of program (1)-(13) by enumerating admitted subsets,
  per-job per-slot worker counts and their splits over servers, spec §7.2 BF-OPT.
- ``astraea_opt``: P-OFF of the Astraea spec (§2.1 (3), §2.5; admission or all-jobs) by a depth-first
  search over every job's start slot and constant per-server worker and PS allocation, zeta read
  from the placement and the duration recomputed; no configuration pruning.
- ``themis_o1``: Themis's O1 (spec §5.6), the lexicographic least (max rho, sum of completions) over
  every per-slot map of GPU counts per machine to the apps, with exact rational progress.
- ``sow_hindsight``: ILP H of the truthful SoW spec (§2.5) for one realization, by enumerating a
  start (or none) per job and keeping the best choice that never puts more than C nodes in a round.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from fractions import Fraction
from functools import cache

import numpy as np

from mlsched.instance import ClusterJobsInstance, MultiTenantInstance, SowInstance
from mlsched.instance.sow import Realization

EPS = 1e-9


def _vectors(caps: np.ndarray, total_max: int) -> Iterator[tuple[int, ...]]:
    for combo in itertools.product(*(range(int(c) + 1) for c in caps)):
        if sum(combo) <= total_max:
            yield combo


def _slot_min_costs(worker_price: np.ndarray, worker_cap: np.ndarray, ps_price: np.ndarray,
                    ps_cap: np.ndarray, n: int, ratio: float) -> list[float]:
    """Cheapest cost of exactly Y workers (and a valid PS set) in one slot, Y = 0..n."""
    best = [math.inf] * (n + 1)
    ps_options = [(sum(z), float(np.dot(ps_price, z))) for z in _vectors(ps_cap, n)]
    for y in _vectors(worker_cap, n):
        total = sum(y)
        cost_y = float(np.dot(worker_price, y))
        for z_total, cost_z in ps_options:
            if ratio * total <= z_total + EPS and z_total <= total:
                best[total] = min(best[total], cost_y + cost_z)
    return best


def oasis_subproblem(utility: np.ndarray, worker_price: np.ndarray, worker_cap: np.ndarray,
                     ps_price: np.ndarray, ps_cap: np.ndarray, *, chunks: int, chunk_time: float,
                     passes: int, workload: float, ratio: float, granularity: str = "chunk") -> float:
    """max(0, best payoff) over every schedule of one job (rows = slots a_i..T)."""
    n_slots = len(utility)
    per_slot = [_slot_min_costs(worker_price[s], worker_cap[s], ps_price[s], ps_cap[s], chunks, ratio)
                for s in range(n_slots)]
    best = 0.0
    for last in range(n_slots):
        if granularity == "chunk":
            # every composition (d_0..d_last) of the passes; slot s needs >= ceil(d W) workers
            for split in _compositions(passes, last + 1):
                cost = 0.0
                for s, d in enumerate(split):
                    need = math.ceil(d * chunk_time - EPS)
                    cost += min(per_slot[s][need:], default=math.inf)
                best = max(best, utility[last] - cost)
        else:
            for counts in itertools.product(range(chunks + 1), repeat=last + 1):
                if sum(counts) >= workload - EPS:
                    cost = sum(per_slot[s][y] for s, y in enumerate(counts))
                    best = max(best, utility[last] - cost)
    return best


def _compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    if parts == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, parts - 1):
            yield (first,) + rest


def oasis_opt(instance: ClusterJobsInstance, *, variant: str = "paper") -> float:
    """OPT of program (1)-(13) (``variant="chunk"``: Alg. 2's schedule space) by enumeration.

    Per job, every minimal completing sequence of per-slot worker totals; per slot, whether the
    jobs' worker (PS) totals can be split over the servers within capacity is decided by
    enumerating every split. Exponential: for a handful of jobs, slots and servers only.
    """
    inst = instance
    horizon = inst.horizon
    options = [_job_options(inst, i, variant) for i in range(inst.num_jobs)]
    best = 0.0

    def search(i: int, loads: tuple[tuple[tuple[int, int], ...], ...], value: float) -> None:
        nonlocal best
        if i == inst.num_jobs:
            best = max(best, value)
            return
        search(i + 1, loads, value)  # job i rejected
        for util, counts in options[i]:
            arrival = inst.jobs[i].arrival
            new_loads = list(loads)
            ok = True
            for k, y in enumerate(counts):
                if y == 0:
                    continue
                t = arrival - 1 + k
                new_loads[t] = loads[t] + ((i, y),)
                if not _slot_fits(inst, new_loads[t]):
                    ok = False
                    break
            if ok:
                search(i + 1, tuple(new_loads), value + util)

    search(0, tuple(() for _ in range(horizon)), 0.0)
    return best


def _splits(total: int, parts: int, caps: list[int]) -> Iterator[tuple[int, ...]]:
    """Every way to write ``total`` as ``parts`` non-negative integers within ``caps``."""
    if parts == 1:
        if total <= caps[0]:
            yield (total,)
        return
    for first in range(min(total, caps[0]) + 1):
        for rest in _splits(total - first, parts - 1, caps[1:]):
            yield (first,) + rest


def _pool_fits(demands: list[np.ndarray], totals: list[int], capacity: np.ndarray) -> bool:
    """Can each job's ``totals[j]`` units of ``demands[j]`` be spread over the servers?"""
    n_servers = capacity.shape[0]

    def place(j: int, residual: np.ndarray) -> bool:
        if j == len(totals):
            return True
        caps = [_units_that_fit(residual[s], demands[j], totals[j]) for s in range(n_servers)]
        for split in _splits(totals[j], n_servers, caps):
            used = np.outer(split, demands[j])
            if place(j + 1, residual - used):
                return True
        return False

    return place(0, capacity.astype(float))


def _units_that_fit(residual: np.ndarray, demand: np.ndarray, limit: int) -> int:
    used = demand > 0
    if not used.any():
        return limit
    return int(min(limit, max(0.0, np.floor(residual[used] / demand[used] + EPS).min())))


def _slot_fits(inst: ClusterJobsInstance, load: tuple[tuple[int, int], ...]) -> bool:
    jobs = [i for i, _ in load]
    workers = [y for _, y in load]
    ps = [inst.jobs[i].ps_needed(y) for i, y in load]
    return (_pool_fits([inst.worker_demand[i] for i in jobs], workers, inst.worker_capacity)
            and _pool_fits([inst.ps_demand[i] for i in jobs], ps, inst.ps_capacity))


def _job_options(inst: ClusterJobsInstance, i: int, variant: str) -> list[tuple[float, tuple[int, ...]]]:
    """Minimal completing per-slot worker totals of job i, with their utility."""
    job = inst.jobs[i]
    w = inst.worker_demand[i]
    per_server = [min([math.floor(c / d + EPS) for c, d in zip(caps, w) if d > 0], default=job.chunks)
                  for caps in inst.worker_capacity]
    top = min(job.chunks, sum(per_server))
    window = inst.horizon - job.arrival + 1
    by_last: dict[int, list[tuple[int, ...]]] = {}
    for counts in itertools.product(range(top + 1), repeat=window):
        if not any(counts) or not _completes(counts, inst, i, variant):
            continue
        last = max(k for k, y in enumerate(counts) if y > 0)
        by_last.setdefault(last, []).append(counts)
    out = []
    for last, seqs in by_last.items():
        minimal = [a for a in seqs if not any(b != a and all(x <= y for x, y in zip(b, a)) for b in seqs)]
        out += [(float(job.utility.value(last)), counts) for counts in minimal]
    return out


def _completes(counts: tuple[int, ...], inst: ClusterJobsInstance, i: int, variant: str) -> bool:
    if variant == "paper":
        return sum(counts) >= inst.workload[i] - EPS
    job = inst.jobs[i]
    w = inst.chunk_time[i]
    return sum(math.floor(y / w + EPS) for y in counts) >= job.epochs * job.chunks


def themis_pf(rho: list, unmet: list[int], offered: list[int]) -> tuple[float, list[float]]:
    """Phi* = max sum_i -log rho_i(X_i) over every map of the offered GPUs to bidders or nobody
    (bundles within each bidder's unmet demand), and Phi*_{-i} for each bidder removed.

    ``rho[i]`` is bidder i's valuation oracle on a frozenset of GPUs; +inf is replaced by
    max(1e4, 10 x the largest finite rho over every admissible bundle), as in the auction.
    """
    n = len(rho)
    finite = [r for i in range(n) for k in range(min(unmet[i], len(offered)) + 1)
              for b in itertools.combinations(offered, k) if math.isfinite(r := rho[i](frozenset(b)))]
    cap = max(1e4, 10 * max(finite, default=0.0))

    def phi(i: int, bundle: frozenset) -> float:
        r = rho[i](bundle)
        return -math.log(r if math.isfinite(r) else cap)

    def best(bidders: list[int]) -> float:
        top = -math.inf
        for owners in itertools.product([None, *bidders], repeat=len(offered)):
            bundles = {i: frozenset(g for g, o in zip(offered, owners) if o == i) for i in bidders}
            if any(len(bundles[i]) > unmet[i] for i in bidders):
                continue
            top = max(top, sum(phi(i, bundles[i]) for i in bidders))
        return top

    everyone = list(range(n))
    return best(everyone), [best([j for j in everyone if j != i]) if n > 1 else 0.0 for i in everyone]


def themis_o1(machines: Sequence[tuple[int, int]], apps: Sequence[tuple[Fraction, ...]], t_id: Sequence[Fraction],
              slot: Fraction, horizon: int) -> tuple[Fraction | float, Fraction | float]:
    """Lexicographic min of (max_i (C_i - a_i) / T_id_i, sum_i C_i) over all slotted schedules of
    ``horizon`` slots; (inf, inf) when none finishes every app. ``apps``: (a, W, d, s, s') as
    Fractions; ``machines``: [(rack, GPUs)]. An app holding GPUs of one machine progresses at their
    count per second, of one rack at count / s, of several racks at count / s'; it is done at the end
    of the first slot in which its work is reached (C_i), and starts no earlier than the first slot
    beginning at or after its arrival."""
    n = len(apps)
    kappa = [k for _, k in machines]
    rack_of = [r for r, _ in machines]

    def speed(i: int, counts: tuple[int, ...]) -> Fraction:
        used = [m for m, c in enumerate(counts) if c]
        total = Fraction(sum(counts))
        if len(used) <= 1:
            return total
        if len({rack_of[m] for m in used}) == 1:
            return total / apps[i][3]
        return total / apps[i][4]

    def allocations(active: list[int]) -> Iterator[dict[int, tuple[int, ...]]]:
        per_machine = [[c for c in itertools.product(range(k + 1), repeat=len(active)) if sum(c) <= k]
                       for k in kappa]
        for choice in itertools.product(*per_machine):        # choice[m][j]: GPUs of machine m to active[j]
            counts = {i: tuple(choice[m][j] for m in range(len(kappa))) for j, i in enumerate(active)}
            if all(sum(c) <= apps[i][2] for i, c in counts.items()):
                yield counts

    @cache
    def best(t: int, done: tuple[Fraction, ...], worst: Fraction) -> tuple[Fraction | float, Fraction | float]:
        if all(w >= apps[i][1] for i, w in enumerate(done)):
            return worst, Fraction(0)
        if t == horizon:
            return math.inf, math.inf
        active = [i for i in range(n) if done[i] < apps[i][1] and slot * t >= apps[i][0]]
        answer: tuple[Fraction | float, Fraction | float] = (math.inf, math.inf)
        for counts in allocations(active):
            work = list(done)
            new_worst, added = worst, Fraction(0)
            for i, c in counts.items():
                work[i] += slot * speed(i, c)
                if work[i] >= apps[i][1]:
                    finish = slot * (t + 1)
                    added += finish
                    new_worst = max(new_worst, (finish - apps[i][0]) / t_id[i])
            rest = best(t + 1, tuple(work), new_worst)
            answer = min(answer, (rest[0], rest[1] + added))
        return answer

    return best(0, tuple(Fraction(0) for _ in range(n)), Fraction(0))


def sow_hindsight(instance: SowInstance, realization: Realization) -> float:
    """max sum_j v_j(s_j + l_j - 1) over starts s_j in [a_j, min(T, b_j + Delta - 1) - l_j + 1] or none,
    with the widths of the jobs running in each round at most C."""
    drawn = instance.concrete(realization.sow_index)
    options = []
    for j, job in enumerate(drawn.jobs):
        a, l = realization.arrival[j], realization.duration[j]
        options.append([None, *range(a, drawn.last_start(job) - l + 2)])
    best = 0.0
    for choice in itertools.product(*options):
        load = np.zeros(drawn.horizon + drawn.max_duration + 2)
        value = 0.0
        for j, s in enumerate(choice):
            if s is not None:
                job, l = drawn.jobs[j], realization.duration[j]
                load[s:s + l] += job.width
                value += job.sow.value(job.birth, s + l - 1)
        if load.max() <= drawn.capacity:
            best = max(best, value)
    return best


def astraea_opt(instance: MultiTenantInstance, *, variant: str = "admission") -> float | None:
    """The best total realized utility of a feasible schedule over slots 1..``instance.horizon``
    (required); None when ``variant="all-jobs"`` and no schedule runs every job."""
    if instance.horizon is None:
        raise ValueError("the brute force needs the instance's horizon")
    horizon, n_servers = instance.horizon, len(instance.servers)
    cap_w, cap_p = instance.worker_capacity, instance.ps_capacity
    options = [_tenant_job_options(instance, j, horizon) for j in range(instance.num_jobs)]
    used_w = np.zeros((horizon + 2, n_servers), dtype=np.int64)
    used_p = np.zeros_like(used_w)
    best: list[float | None] = [None]

    def search(j: int, value: float) -> None:
        if j == instance.num_jobs:
            if best[0] is None or value > best[0]:
                best[0] = value
            return
        if variant != "all-jobs":
            search(j + 1, value)
        for start, end, workers, ps, utility in options[j]:
            block_w, block_p = used_w[start:end + 1], used_p[start:end + 1]
            if ((block_w + workers) > cap_w).any() or ((block_p + ps) > cap_p).any():
                continue
            block_w += workers
            block_p += ps
            search(j + 1, value + utility)
            block_w -= workers
            block_p -= ps

    search(0, 0.0)
    return best[0]


def _tenant_job_options(instance: MultiTenantInstance, j: int,
                        horizon: int) -> list[tuple[int, int, np.ndarray, np.ndarray, float]]:
    """Every (start, end, workers per server, PS per server, f_j(end)) one job can run with."""
    job = instance.jobs[j]
    n_servers = len(instance.servers)
    cap_w, cap_p = instance.worker_capacity, instance.ps_capacity
    out = []
    for workers in itertools.product(*(range(min(int(c), job.chunks) + 1) for c in cap_w)):
        total = sum(workers)
        if not 1 <= total <= job.chunks:
            continue
        for ps in itertools.product(*(range(int(c) + 1) for c in cap_p)):
            if sum(ps) < 1 or any((total - workers[s]) * instance.worker_bandwidth > ps[s] * instance.ps_bandwidth
                                  * (1 + 1e-12) for s in range(n_servers) if ps[s] > 0):
                continue
            hosts = {s for s in range(n_servers) if workers[s] > 0 or ps[s] > 0}
            rate = job.rate_centralized if len(hosts) == 1 else job.rate_distributed
            slots = math.ceil(job.workload / (rate * total) - 1e-9)
            for start in range(instance.first_slot(job), horizon - slots + 2):
                end = start + slots - 1
                out.append((start, end, np.array(workers), np.array(ps), instance.realized(job, end)))
    return out
