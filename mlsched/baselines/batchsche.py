"""BatchSche (spec §5.2, [R]): Astraea's Alg. 1-3 run by every tenant alone on its own partition,
phase 2 off, no payments: the "no sharing" benchmark.

Each tenant's run sees only its servers (``tenants[].servers``) and its own jobs; theta and lambda
are the whole instance's (§3.1, the same prices and rounds Astraea would use), so the two differ
only in sharing. The tenants' schedules are mapped back onto the cluster, where the checker
judges them together. The same per-tenant runs give g_u^excl of SI_u (:func:`exclusive_gains`, with
one synthetic server holding the tenant's quotas when the instance lists no partition).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_tenant import MultiTenantInstance, Tenant, TenantServer
from mlsched.online.astraea.parameters import Constants, constants, fitting_configurations
from mlsched.online.astraea.policy import Astraea, AstraeaRun
from mlsched.sim.multi_tenant_check import TenantSchedule


class BatchSche:
    name = "batchsche"

    def __init__(self, **astraea_options: Any):
        self.options = astraea_options

    def configure(self, *, lambda_mode: str | None = None, theta_scale: float | None = None) -> None:
        """Override the rounds-per-batch mode or the theta scale after construction (as Astraea)."""
        self.options.update({k: v for k, v in (("lambda_mode", lambda_mode), ("theta_scale", theta_scale))
                             if v is not None})

    @staticmethod
    def cannot_run(instance: MultiTenantInstance) -> str | None:
        """Why BatchSche cannot run on ``instance`` (a tenant without its partition), or None."""
        if any(t.servers is None for t in instance.tenants):
            return (f"{instance.name}: BatchSche runs each tenant on its own servers; "
                    "give every tenant its partition (tenants[].servers)")
        return None

    def run(self, instance: MultiTenantInstance, *,
            on_progress: Callable[[int, int], None] | None = None) -> AstraeaRun:
        """Astraea's phase 1 per tenant on its partition; ``on_progress`` hears (tenants done,
        tenants in all)."""
        reason = self.cannot_run(instance)
        if reason is not None:
            raise UsageError(reason)
        whole, rest = _split_options(instance, self.options)
        n_jobs, n_tenants = instance.num_jobs, len(instance.tenants)
        record = AstraeaRun(
            algorithm=self.name, schedule=TenantSchedule.empty(instance, self.name),
            phase=np.zeros(n_jobs, dtype=np.int64), batch=np.zeros(n_jobs, dtype=np.int64),
            round=np.zeros(n_jobs, dtype=np.int64), mu=np.zeros(n_jobs), ideal=np.zeros(n_jobs),
            cost=np.zeros(n_jobs), payments=np.zeros((n_jobs, n_tenants)), shared={}, dropped=[], constants=whole,
            time_origin=instance.time_origin)
        for u, tenant in enumerate(instance.tenants):
            if on_progress is not None:
                on_progress(u, n_tenants)
            mine = [j for j, job in enumerate(instance.jobs) if job.owner == u]
            servers = list(tenant.servers or ())
            if not mine or not servers:
                continue        # nothing to run, or no partition: the tenant's jobs cannot run
            part, run = _alone(instance, u, whole, rest, self.name)
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
        if on_progress is not None:
            on_progress(n_tenants, n_tenants)
        record.dropped.sort()
        return record


def exclusive_gains(instance: MultiTenantInstance, **astraea_options: Any) -> np.ndarray:
    """g_u^excl (spec §4.2 BSI-2, §5.3 SI_u): each tenant's realized revenue when its jobs run alone,
    phase 1 only, on its partition (its servers; one synthetic server holding its quotas when the
    instance gives none) at the whole instance's theta and lambda, as in BatchSche; NaN for a tenant
    without worker or PS quota (A23)."""
    whole, rest = _split_options(instance, astraea_options)
    out = np.full(len(instance.tenants), np.nan)
    for u, tenant in enumerate(instance.tenants):
        if tenant.workers > 0 and tenant.ps > 0:
            part, run = _alone(instance, u, whole, rest, "exclusive")
            out[u] = float(run.utilities(part).sum())
    return out


def _split_options(instance: MultiTenantInstance, options: dict[str, Any]) -> tuple[Constants, dict[str, Any]]:
    """The whole instance's theta, sigma and lambda under ``options``, and the options left for the runs."""
    keys = ("theta", "theta_scale", "lambda_mode", "lambda_fixed", "log_base")
    capped = bool(options.get("cap_by_trace_gpus", False))
    fit = [fitting_configurations(instance, job, capped) for job in instance.jobs]
    whole = constants(instance, fit, **{k: v for k, v in options.items() if k in keys})
    return whole, {k: v for k, v in options.items() if k not in keys}


def _alone(instance: MultiTenantInstance, u: int, whole: Constants, rest: dict[str, Any],
           name: str) -> tuple[MultiTenantInstance, AstraeaRun]:
    """Tenant u's jobs run by Astraea, phase 1 only, on its partition (or one server of its quotas)."""
    tenant = instance.tenants[u]
    servers = (tuple(instance.servers[s] for s in tenant.servers) if tenant.servers is not None
               else (TenantServer(f"{tenant.name}-own", tenant.workers, tenant.ps),))
    part = dataclasses.replace(
        instance, servers=servers, tenants=(Tenant(tenant.name, tenant.workers, tenant.ps),),
        jobs=tuple(dataclasses.replace(job, owner=0) for job in instance.jobs if job.owner == u), expected={})
    run = Astraea(theta=(whole.theta_w, whole.theta_p), lambda_mode="fixed", lambda_fixed=whole.rounds,
                  sharing=False, name=name, **rest).run(part)
    return part, run
