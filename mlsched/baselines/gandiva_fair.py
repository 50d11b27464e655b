"""Gandiva_fair (Astraea spec §5.2 [R]; Chaudhary et al., EuroSys 2020): slot-by-slot weighted
max-min sharing of GPUs among tenants, with tickets proportional to their worker quotas q_w^u.

Each slot: the free GPUs are water-filled over the tenants with pending demand (the gang sizes of
their released, unfinished jobs), in proportion to their tickets; each tenant then starts its jobs
FIFO while they fit in its entitlement. Idle entitlement is redistributed, free and work-conserving:
the jobs left over are placed in order of their tenant's usage per ticket, then FIFO. A job runs
W = min(g_j^tr, D_j) workers and one PS, placed first-fit over the servers with no locality
preference; its rate follows that placement. Preemption and migration at slot boundaries keep
progress and cost ``migration_cost`` of a slot (default 0, :class:`GangScheduler`). No payments.
"""

from __future__ import annotations

import numpy as np

from mlsched.baselines.tenant_placement import FreeSlots, GangScheduler, first_fit
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.sim.tenant_slots import Allocation


def water_fill(total: float, demand: np.ndarray, tickets: np.ndarray) -> np.ndarray:
    """Weighted max-min shares of ``total``: no tenant above its demand, the rest in ticket proportion."""
    share = np.zeros_like(demand, dtype=float)
    open_ = (demand > 0) & (tickets > 0)
    left = float(total)
    while open_.any() and left > 1e-12:
        offer = left * tickets / tickets[open_].sum()
        sated = open_ & (demand - share <= offer + 1e-12)
        if not sated.any():
            share[open_] += offer[open_]
            break
        left -= float((demand - share)[sated].sum())
        share[sated] = demand[sated]
        open_ &= ~sated
    return share


class GandivaFair(GangScheduler):
    name = "gandiva_fair"

    def start(self, instance: MultiTenantInstance) -> None:
        super().start(instance)
        self.tickets = self.quota.astype(float)

    def decide(self, t: int, pending: list[int], progress: np.ndarray) -> list[Allocation]:
        inst = self.instance
        free = FreeSlots.of(inst)
        owners = np.array([inst.jobs[j].owner for j in pending], dtype=np.int64)
        sizes = np.array([self.size[j] for j in pending], dtype=float)
        demand = np.bincount(owners, weights=sizes, minlength=len(inst.tenants)) if pending else \
            np.zeros(len(inst.tenants))
        entitled = water_fill(float(free.workers.sum()), demand, self.tickets)
        used = np.zeros(len(inst.tenants))
        servers = range(len(inst.servers))
        chosen: list[Allocation] = []
        left = []
        for j in pending:                              # within a tenant, FIFO
            u = inst.jobs[j].owner
            placed = first_fit(inst, free, self.size[j], servers) if used[u] + self.size[j] <= entitled[u] + 1e-9 \
                else None
            if placed is None:
                left.append(j)
                continue
            free.take(*placed)
            used[u] += self.size[j]
            chosen.append((j, *placed))
        per_ticket = np.where(self.tickets > 0, used / np.maximum(self.tickets, 1e-12), np.inf)
        for j in sorted(left, key=lambda j: (per_ticket[inst.jobs[j].owner], pending.index(j))):
            placed = first_fit(inst, free, self.size[j], servers)   # work-conserving redistribution
            if placed is not None:
                free.take(*placed)
                chosen.append((j, *placed))
        return chosen
