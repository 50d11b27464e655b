"""Runs of multi-tenant schedulers: the policy plans, the independent checker (FEAS, spec §4.2)
judges the schedule it commits."""

from __future__ import annotations

from typing import Any

from mlsched.errors import MlschedError
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.sim.multi_tenant_check import check


def run_tenant(instance: MultiTenantInstance, policy: Any) -> Any:
    """``policy.run(instance)``, refused when the committed schedule violates §1.4 or a capacity."""
    result = policy.run(instance)
    problems = check(instance, result.schedule, online=True)
    if problems:
        raise MlschedError(f"{result.algorithm} on {instance.name}: infeasible schedule: " + "; ".join(problems[:5]))
    return result
