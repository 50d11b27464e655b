"""Round-robin placement and the event-driven slot simulator shared by the OASiS baselines
(spec §5.3; the paper only says "placed round-robin on available servers", A13, so these rules
are the spec's [R] choices).

Round-robin placement: each pool (worker servers, PS servers) keeps one cursor for the whole run.
Each worker (PS) of a job goes on the next server, cyclically from the cursor, whose residual
capacity fits its demand in every resource, and the cursor moves past that server. If a full
cycle finds no such server, the placement of the job fails and is rolled back: residual
capacities and both cursors are left as they were.

Slot simulator (spec §5.3, items 1-3): at the start of slot t the resources of jobs that completed
in slot t-1 are freed; if a job arrived or completed, the policy recomputes its allocations,
which are then held until the next event. A done job gets nothing.
"""

from __future__ import annotations

import numpy as np

from mlsched.formulations.oasis import per_server_cap
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotDecision, SlotState


def cyclic_fill(residual: np.ndarray, demand: np.ndarray, count: int,
                cursor: int) -> tuple[np.ndarray, int] | None:
    """Place ``count`` units of ``demand`` (R,) on servers with ``residual`` capacity (S, R), one
    by one, each on the next server from ``cursor`` (cyclic) that still fits a unit.

    Returns units per server (S,) and the cursor after the last unit, or None if they do not all
    fit. Vectorised: the units fill passes over the servers in cyclic order, pass q giving one
    unit to every server that fits at least q units, so only the last pass can be partial.
    """
    n = residual.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    if count == 0:
        return counts, cursor
    order = (cursor + np.arange(n)) % n
    fit = np.clip(per_server_cap(demand[None, :], residual)[0, order], 0, count).astype(np.int64)
    if fit.sum() < count:
        return None
    after_passes = np.minimum(fit[None, :], np.arange(count + 1)[:, None]).sum(axis=1)
    full = int(np.count_nonzero(after_passes < count)) - 1   # complete passes before the last one
    last_pass = np.flatnonzero(fit > full)[: count - int(after_passes[full])]
    in_order = np.minimum(fit, full)
    in_order[last_pass] += 1
    counts[order] = in_order
    return counts, int(order[last_pass[-1]] + 1) % n


class RoundRobin:
    """Cyclic first-fit placement with one cursor per pool (``cursor["worker"]``, ``cursor["ps"]``)."""

    def __init__(self, instance: ClusterJobsInstance) -> None:
        self.instance = instance
        self.cursor = {"worker": 0, "ps": 0}

    def place(self, job: int, workers: int, ps: int, residual_w: np.ndarray,
              residual_ps: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """Workers per worker server (H,) and PS per PS server (K,) of ``job``, or None if either
        pool cannot take them all; the residuals (H, R), (K, R) and cursors change only on success."""
        inst = self.instance
        y = cyclic_fill(residual_w, inst.worker_demand[job], workers, self.cursor["worker"])
        z = cyclic_fill(residual_ps, inst.ps_demand[job], ps, self.cursor["ps"])
        if y is None or z is None:
            return None
        (y_counts, self.cursor["worker"]), (z_counts, self.cursor["ps"]) = y, z
        residual_w -= y_counts[:, None] * inst.worker_demand[job][None, :]
        residual_ps -= z_counts[:, None] * inst.ps_demand[job][None, :]
        return y_counts, z_counts


class EventPolicy:
    """A baseline under the slot simulator: holds allocations (I, H), (I, K) between events and
    recomputes them in ``reschedule`` when a job arrives or completes."""

    promises_completion = False
    name = "event"

    def start(self, instance: ClusterJobsInstance) -> None:
        self.instance = instance
        self.placer = RoundRobin(instance)
        self.alloc_w = np.zeros((instance.num_jobs, len(instance.worker_servers)), dtype=np.int64)
        self.alloc_ps = np.zeros((instance.num_jobs, len(instance.ps_servers)), dtype=np.int64)
        self.arrived = np.zeros(instance.num_jobs, dtype=bool)
        self.rejected = np.zeros(instance.num_jobs, dtype=bool)

    def decide(self, state: SlotState) -> SlotDecision:
        self.arrived[state.arrivals] = True
        rejected_before = self.rejected.copy()
        self.release(np.flatnonzero(state.done))
        if state.arrivals or state.completions:
            self.reschedule(state)
        newly = [int(i) for i in np.flatnonzero(self.rejected & ~rejected_before)]
        return SlotDecision(workers=self.alloc_w.copy(), ps=self.alloc_ps.copy(), rejected=newly)

    def reschedule(self, state: SlotState) -> None:
        """Recompute ``alloc_w`` and ``alloc_ps`` (and ``rejected``) at an event."""
        raise NotImplementedError

    def residual(self) -> tuple[np.ndarray, np.ndarray]:
        """Capacity left after the current allocations, (H, R) and (K, R)."""
        inst = self.instance
        return (inst.worker_capacity - self.alloc_w.T.astype(float) @ inst.worker_demand,
                inst.ps_capacity - self.alloc_ps.T.astype(float) @ inst.ps_demand)

    def release(self, jobs: np.ndarray | list[int]) -> None:
        self.alloc_w[jobs] = 0
        self.alloc_ps[jobs] = 0

    def running(self, job: int) -> bool:
        return bool(self.alloc_w[job].any())

    def active(self, state: SlotState) -> np.ndarray:
        """Arrived, not rejected and unfinished jobs in (arrival, index) order (spec A17)."""
        jobs = np.flatnonzero(self.arrived & ~self.rejected & ~state.done)
        return jobs[np.argsort(self.instance.arrival[jobs], kind="stable")]
