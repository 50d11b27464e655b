"""HiveD (Astraea spec §5.2 [R]; Zhao et al., OSDI 2020): each tenant owns a virtual private cluster
of q_w^u GPUs in server-sized cells; sharing is safe and affinity is preserved.

Each slot, in release order: a tenant's guaranteed jobs (while its running gangs stay within q_w^u)
get affinity-preserving placements: one server holding all W workers and the PS when W fits a
server (the tenant's own servers first, when the instance gives its partition), otherwise whole
idle servers. Jobs beyond the quota run opportunistically on whole idle servers only, after every
guaranteed job; deciding afresh each slot preempts them (progress kept) when a guaranteed job needs
their servers (``opportunistic=False``, the hived_opportunistic toggle of spec §8: they wait for the
quota instead). W = min(g_j^tr, D_j). No payments; ``migration_cost`` as in :class:`GangScheduler`.
"""

from __future__ import annotations

import numpy as np

from mlsched.baselines.tenant_placement import FreeSlots, GangScheduler, first_fit, with_ps
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.sim.tenant_slots import Allocation


class HiveD(GangScheduler):
    name = "hived"

    def __init__(self, seed: int = 0, *, migration_cost: float = 0.0, opportunistic: bool = True) -> None:
        super().__init__(seed, migration_cost=migration_cost)
        self.opportunistic = opportunistic

    def configure(self, *, migration_cost: float | None = None, opportunistic: bool | None = None) -> None:
        """Set the migration cost and whether jobs beyond the quota run opportunistically."""
        super().configure(migration_cost=migration_cost)
        if opportunistic is not None:
            self.opportunistic = opportunistic

    def start(self, instance: MultiTenantInstance) -> None:
        super().start(instance)
        n = len(instance.servers)
        self.order = [list(t.servers or ()) + [s for s in range(n) if s not in (t.servers or ())]
                      for t in instance.tenants]

    def decide(self, t: int, pending: list[int], progress: np.ndarray) -> list[Allocation]:
        inst = self.instance
        free = FreeSlots.of(inst)
        used = np.zeros(len(inst.tenants), dtype=np.int64)
        chosen: list[Allocation] = []
        opportunistic = []
        for j in pending:
            u = inst.jobs[j].owner
            if used[u] + self.size[j] > self.quota[u]:
                opportunistic.append(j)
                continue
            placed = self._affine(free, self.size[j], self.order[u])
            if placed is not None:
                free.take(*placed)
                used[u] += self.size[j]
                chosen.append((j, *placed))
        for j in opportunistic if self.opportunistic else ():
            idle_now = free.idle()
            idle = [s for s in self.order[inst.jobs[j].owner] if idle_now[s]]
            placed = self._affine(free, self.size[j], idle, whole_only=True)
            if placed is not None:
                free.take(*placed)
                chosen.append((j, *placed))
        return chosen

    def _affine(self, free: FreeSlots, size: int, servers: list[int], *,
                whole_only: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
        """All on one server when ``size`` fits one, else on whole idle servers; None if neither."""
        inst = self.instance
        idle_now = free.idle()
        for s in servers:
            fits = free.workers[s] >= size and free.ps[s] >= 1
            if fits and (not whole_only or idle_now[s]):
                workers = np.zeros_like(free.workers)
                workers[s] = size
                ps = with_ps(inst, free, workers)
                if ps is not None:
                    return workers, ps
        if size <= int(inst.worker_capacity.max(initial=0)):
            return None       # it fits a server, just not one free now: wait rather than spread
        return first_fit(inst, free, size, [s for s in servers if idle_now[s]])
