"""Runs of multi-tenant schedulers: the policy plans, the independent checker (FEAS, spec §4.2)
judges the schedule it commits."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from typing import Any

from mlsched.errors import MlschedError, UsageError, option_flags
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.sim.multi_tenant_check import check
from mlsched.sim.tenant_slots import run_slots


def run_tenant(instance: MultiTenantInstance, policy: Any, *, time_origin: str | None = None,
               on_progress: Callable[[int, int], None] | None = None, **policy_options: Any) -> Any:
    """``policy.run(instance)``, refused when the committed schedule violates §1.4 or a capacity;
    a preemptive policy (one that decides slot by slot) goes through :func:`run_slots` instead.
    ``time_origin`` overrides the instance's (A2); ``on_progress`` hears how far the run is (its
    policy's count of (done, in all)); other options go to the policy's ``configure``."""
    if time_origin is not None:
        instance = dataclasses.replace(instance, time_origin=time_origin)
    if policy_options:
        accepted = inspect.signature(policy.configure).parameters if hasattr(policy, "configure") else {}
        unknown = [k for k in policy_options if k not in accepted]
        if unknown:
            raise UsageError(f"{getattr(policy, 'name', 'this policy')} takes no "
                             f"{option_flags(policy_options, unknown)} option")
        policy.configure(**policy_options)
    if hasattr(policy, "decide"):
        return run_slots(instance, policy, on_progress=on_progress)
    result = policy.run(instance, on_progress=on_progress)
    problems = check(instance, result.schedule, online=True)
    if problems:
        raise MlschedError(f"{result.algorithm} on {instance.name}: infeasible schedule: " + "; ".join(problems[:5]))
    return result
