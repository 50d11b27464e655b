"""Brute-force enumeration for tiny instances, written independently of the formulations and
of Algorithm 2 (no greedy, no DP, no solver): the oracle that solver optima and the online
subroutine are checked against.

- ``oasis_subproblem``: mu_i of eq. (27) by enumerating every per-slot placement and every
  split of the workload over slots (chunk or worker-slot form), spec §7.2 BF-Alg2.
- ``oasis_opt``: OPT_paper / OPT_chunk of program (1)-(13) with one worker and one PS server by
  enumerating admitted subsets and per-job per-slot worker counts, spec §7.2 BF-OPT.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from mlsched.instance import ClusterJobsInstance

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
    """OPT of program (1)-(13) (``variant="chunk"``: Alg. 2's schedule space) with H = K = 1."""
    inst = instance
    if len(inst.worker_servers) != 1 or len(inst.ps_servers) != 1:
        raise ValueError("brute-force OPT handles one worker and one PS server")
    cap_w, cap_ps = inst.worker_capacity[0], inst.ps_capacity[0]
    horizon = inst.horizon
    options = [_job_options(inst, i, variant) for i in range(inst.num_jobs)]

    best = 0.0

    def search(i: int, used_w: np.ndarray, used_ps: np.ndarray, value: float) -> None:
        nonlocal best
        if i == inst.num_jobs:
            best = max(best, value)
            return
        search(i + 1, used_w, used_ps, value)  # job i rejected
        for util, load_w, load_ps in options[i]:
            new_w, new_ps = used_w + load_w, used_ps + load_ps
            if np.all(new_w <= cap_w + EPS) and np.all(new_ps <= cap_ps + EPS):
                search(i + 1, new_w, new_ps, value + util)

    search(0, np.zeros((horizon, len(inst.resources))), np.zeros((horizon, len(inst.resources))), 0.0)
    return best


def _job_options(inst: ClusterJobsInstance, i: int, variant: str) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """Minimal completing worker sequences of job i with their utility and per-slot loads."""
    job = inst.jobs[i]
    horizon, arrival = inst.horizon, job.arrival
    w, s = inst.worker_demand[i], inst.ps_demand[i]
    per_server = [math.floor(c / d + EPS) for c, d in zip(inst.worker_capacity[0], w) if d > 0]
    top = min([job.chunks] + per_server)
    window = horizon - arrival + 1
    by_last: dict[int, list[tuple[int, ...]]] = {}
    for counts in itertools.product(range(top + 1), repeat=window):
        if not any(counts) or not _completes(counts, inst, i, variant):
            continue
        last = max(k for k, y in enumerate(counts) if y > 0)
        by_last.setdefault(last, []).append(counts)
    out = []
    for last, seqs in by_last.items():
        minimal = [a for a in seqs if not any(b != a and all(x <= y for x, y in zip(b, a)) for b in seqs)]
        util = float(job.utility.value(last))
        for counts in minimal:
            load_w = np.zeros((horizon, len(w)))
            load_ps = np.zeros((horizon, len(s)))
            for k, y in enumerate(counts):
                load_w[arrival - 1 + k] = y * w
                load_ps[arrival - 1 + k] = job.ps_needed(y) * s
            out.append((util, load_w, load_ps))
    return out


def _completes(counts: tuple[int, ...], inst: ClusterJobsInstance, i: int, variant: str) -> bool:
    if variant == "paper":
        return sum(counts) >= inst.workload[i] - EPS
    job = inst.jobs[i]
    w = inst.chunk_time[i]
    return sum(math.floor(y / w + EPS) for y in counts) >= job.epochs * job.chunks
