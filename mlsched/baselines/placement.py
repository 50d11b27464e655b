"""Shared pieces of the OASiS baselines (spec §5.3): the round-robin placer, the seeded fixed
worker/PS counts of FIFO and RRH, and the event-driven base class.

Round-robin placement: per pool a cursor; each worker (PS) goes on the next server, cyclically
from the cursor, whose residual capacity fits its demand in every resource, and the cursor moves
past it. If a full cycle finds no server, the placement of that job fails and is rolled back.

Fixed counts (spec §5.1, A14): n_w = min(N_i, U{1..30}), n_ps = ceil(n_w b_i / B_i).

Event semantics (spec §5.3, 1-3): allocations are recomputed only when a job arrives or
completes and are held until the next event; a completed job's resources are freed.
"""

from __future__ import annotations

import numpy as np

from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.engine import SlotDecision, SlotState

MAX_FIXED_WORKERS = 30


class RoundRobin:
    """Cyclic first-fit placement with one cursor per pool."""

    def __init__(self, instance: ClusterJobsInstance) -> None:
        self.instance = instance
        self.cursor = {"worker": 0, "ps": 0}

    def _place_units(self, pool: str, residual: np.ndarray, demand: np.ndarray, count: int) -> np.ndarray | None:
        counts = np.zeros(residual.shape[0], dtype=np.int64)
        n_servers = residual.shape[0]
        cursor = self.cursor[pool]
        for _ in range(count):
            fits = np.flatnonzero(np.all(residual >= demand[None, :] - EPS, axis=1))
            if fits.size == 0:
                return None
            after = fits[fits >= cursor]
            server = int(after[0] if after.size else fits[0])
            residual[server] -= demand
            counts[server] += 1
            cursor = (server + 1) % n_servers
        self.cursor[pool] = cursor
        return counts

    def place(self, job: int, workers: int, ps: int, residual_w: np.ndarray,
              residual_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Place ``workers`` and ``ps`` units of ``job``; residuals are updated only on success."""
        inst = self.instance
        saved = dict(self.cursor)
        trial_w, trial_ps = residual_w.copy(), residual_ps.copy()
        y = self._place_units("worker", trial_w, inst.worker_demand[job], workers)
        z = self._place_units("ps", trial_ps, inst.ps_demand[job], ps) if y is not None else None
        if y is None or z is None:
            self.cursor = saved
            return None
        residual_w[:] = trial_w
        residual_ps[:] = trial_ps
        return y, z


def fixed_counts(instance: ClusterJobsInstance, rng: np.random.Generator) -> np.ndarray:
    """(n_w, n_ps) per job, shape (I, 2): n_w = min(N_i, U{1..30}), n_ps = ceil(n_w b/B)."""
    draws = rng.integers(1, MAX_FIXED_WORKERS + 1, size=instance.num_jobs)
    n_w = np.minimum([j.chunks for j in instance.jobs], draws)
    n_ps = [job.ps_needed(int(w)) for job, w in zip(instance.jobs, n_w)]
    return np.stack([n_w, n_ps], axis=1).astype(np.int64)


class EventPolicy:
    """Holds allocations between events; subclasses recompute them in ``reschedule``."""

    promises_completion = False
    name = "event"

    def start(self, instance: ClusterJobsInstance) -> None:
        self.instance = instance
        self.placer = RoundRobin(instance)
        self.alloc_w = np.zeros((instance.num_jobs, len(instance.worker_servers)), dtype=np.int64)
        self.alloc_ps = np.zeros((instance.num_jobs, len(instance.ps_servers)), dtype=np.int64)
        self.arrived = np.zeros(instance.num_jobs, dtype=bool)
        self.rejected = np.zeros(instance.num_jobs, dtype=bool)

    def residual(self) -> tuple[np.ndarray, np.ndarray]:
        """Capacity left after the current allocations, (H, R) and (K, R)."""
        inst = self.instance
        return (inst.worker_capacity - self.alloc_w.T.astype(float) @ inst.worker_demand,
                inst.ps_capacity - self.alloc_ps.T.astype(float) @ inst.ps_demand)

    def release(self, jobs: np.ndarray | list[int]) -> None:
        self.alloc_w[jobs] = 0
        self.alloc_ps[jobs] = 0

    def active(self, state: SlotState) -> np.ndarray:
        """Arrived, admitted and unfinished jobs in (arrival, id) order."""
        mask = self.arrived & ~self.rejected & ~state.done
        jobs = np.flatnonzero(mask)
        return jobs[np.argsort(self.instance.arrival[jobs], kind="stable")]

    def decide(self, state: SlotState) -> SlotDecision:
        self.arrived[state.arrivals] = True
        before = self.rejected.copy()
        self.release(np.flatnonzero(state.done))
        if state.arrivals or state.completions:
            self.reschedule(state)
        newly = list(np.flatnonzero(self.rejected & ~before))
        return SlotDecision(workers=self.alloc_w.copy(), ps=self.alloc_ps.copy(), rejected=newly)

    def reschedule(self, state: SlotState) -> None:
        raise NotImplementedError
