"""HiveD (Astraea spec §5.2 [R]; Zhao et al., OSDI 2020): each tenant owns a virtual private cluster
of q_w^u GPUs in server-sized cells; sharing is safe and affinity is preserved.

Each slot, in release order: a tenant's guaranteed jobs (while its running gangs stay within q_w^u)
get affinity-preserving placements: one server holding all W workers and the PS when W fits a
server, otherwise whole idle servers. Every guaranteed job is first placed within its own tenant's
servers (those the instance lists for it; a tenant listing none owns the servers no tenant lists);
only those that find no room there go, afterwards, to other servers (the tenant's own first), their
quota counted again with the jobs placed meanwhile. So a tenant's guaranteed jobs never wait for
another tenant's (sharing safety): deciding afresh each slot hands a server back to its owner the
slot the owner needs it, and the borrowing job is preempted (progress kept). Jobs beyond the
quota run opportunistically on whole idle servers only, after every guaranteed job, and are
preempted the same way (``opportunistic=False``, the hived_opportunistic toggle of spec §8: they
wait for the quota instead). W = min(g_j^tr, D_j). No payments; ``migration_cost`` as in
:class:`GangScheduler`.
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
        listed = {s for t in instance.tenants for s in t.servers or ()}
        unlisted = [s for s in range(n) if s not in listed]
        self.own = [list(t.servers) if t.servers else unlisted for t in instance.tenants]
        self.order = [own + [s for s in range(n) if s not in own] for own in self.own]

    def decide(self, t: int, pending: list[int], progress: np.ndarray) -> list[Allocation]:
        inst = self.instance
        free = FreeSlots.of(inst)
        used = np.zeros(len(inst.tenants), dtype=np.int64)
        chosen: list[Allocation] = []
        beyond_quota: set[int] = set()

        def guarantee(j: int, servers: list[list[int]]) -> bool:
            """Place guaranteed job j on ``servers[owner]``; False only when it is within the quota and finds no room."""
            u = inst.jobs[j].owner
            if used[u] + self.size[j] > self.quota[u]:
                beyond_quota.add(j)
                return True
            placed = self._affine(free, self.size[j], servers[u])
            if placed is not None:
                free.take(*placed)
                used[u] += self.size[j]
                chosen.append((j, *placed))
            return placed is not None

        elsewhere = [j for j in pending if not guarantee(j, self.own)]
        for j in elsewhere:
            guarantee(j, self.order)
        for j in [j for j in pending if j in beyond_quota] if self.opportunistic else ():
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
