"""BatchSche (spec §5.2, [R]): Astraea's Alg. 1-3 run by every tenant alone on its own partition,
phase 2 off, no payments: the "no sharing" benchmark.

Each tenant's run sees only its servers (``tenants[].servers``) and its own jobs; theta and lambda
are the whole instance's (§3.1, the same prices and rounds Astraea would use), so the two differ
only in sharing. The tenants' schedules are mapped back onto the cluster, where the checker
judges them together.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_tenant import MultiTenantInstance, Tenant
from mlsched.online.astraea.parameters import constants, fitting_configurations
from mlsched.online.astraea.policy import Astraea, AstraeaRun
from mlsched.sim.multi_tenant_check import TenantSchedule


class BatchSche:
    name = "batchsche"

    def __init__(self, **astraea_options: Any):
        self.options = astraea_options

    def configure(self, **options: Any) -> None:
        self.options.update({k: v for k, v in options.items() if v is not None})

    def run(self, instance: MultiTenantInstance) -> AstraeaRun:
        if any(t.servers is None for t in instance.tenants):
            raise UsageError(f"{instance.name}: BatchSche runs each tenant on its own servers; "
                             "give every tenant its partition (tenants[].servers)")
        fit = [fitting_configurations(instance, job) for job in instance.jobs]
        keys = ("theta", "theta_scale", "lambda_mode", "lambda_fixed", "log_base")
        whole = constants(instance, fit, **{k: v for k, v in self.options.items() if k in keys})
        rest = {k: v for k, v in self.options.items() if k not in keys}
        n_jobs, n_tenants = instance.num_jobs, len(instance.tenants)
        record = AstraeaRun(
            algorithm=self.name, schedule=TenantSchedule.empty(instance, self.name),
            phase=np.zeros(n_jobs, dtype=np.int64), batch=np.zeros(n_jobs, dtype=np.int64),
            round=np.zeros(n_jobs, dtype=np.int64), mu=np.zeros(n_jobs), ideal=np.zeros(n_jobs),
            cost=np.zeros(n_jobs), payments=np.zeros((n_jobs, n_tenants)), shared={}, dropped=[], constants=whole,
            time_origin=instance.time_origin)
        for u, tenant in enumerate(instance.tenants):
            mine = [j for j, job in enumerate(instance.jobs) if job.owner == u]
            if not mine:
                continue
            servers = list(tenant.servers or ())
            if not servers:
                continue        # no partition: the tenant's jobs cannot run
            part = dataclasses.replace(
                instance, servers=tuple(instance.servers[s] for s in servers),
                tenants=(Tenant(tenant.name, tenant.workers, tenant.ps),),
                jobs=tuple(dataclasses.replace(instance.jobs[j], owner=0) for j in mine), expected={})
            run = Astraea(theta=(whole.theta_w, whole.theta_p), lambda_mode="fixed", lambda_fixed=whole.rounds,
                          sharing=False, name=self.name, **rest).run(part)
            for k, j in enumerate(mine):
                record.schedule.start[j] = run.schedule.start[k]
                record.schedule.workers[j, servers] = run.schedule.workers[k]
                record.schedule.ps[j, servers] = run.schedule.ps[k]
                for name in ("phase", "batch", "round", "mu", "ideal", "cost"):
                    getattr(record, name)[j] = getattr(run, name)[k]
            record.dropped += [mine[k] for k in run.dropped]
            record.batches = max(record.batches, run.batches)
            record.wall_seconds += run.wall_seconds
            record.call_seconds += run.call_seconds
        record.dropped.sort()
        return record
