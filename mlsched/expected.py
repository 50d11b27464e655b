"""Expected values stored in shipped instance files: each exact-program variant's optimum and
the LP-relaxation bound, so tests can assert them after every change."""

from __future__ import annotations

import dataclasses
from typing import Any

from mlsched.errors import MlschedError
from mlsched.instance import Instance
from mlsched.solve import Status
from mlsched.study import solve_exact
from mlsched.systems import get_system


def expected_values(instance: Instance, *, system: str | None = None, time_limit: float = 60.0) -> dict[str, Any]:
    """``{"opt_<variant>": value, ..., "lp_bound": value, "system": name}``, each proven optimal and,
    where a second solver applies, verified by it."""
    sysm = get_system(system, family=instance.family)
    values: dict[str, Any] = {"system": sysm.name}
    for variant in sysm.variants_for(instance):
        report = solve_exact(instance, system=sysm.name, variant=variant, time_limit=time_limit, verify=True)
        if report.status is not Status.OPTIMAL or report.verified is False:
            raise MlschedError(f"{instance.name}: OPT_{variant} not proven and verified "
                               f"({report.status.value}; {report.message})")
        values[f"opt_{variant}"] = report.objective
    if sysm.relaxable:
        lp = solve_exact(instance, system=sysm.name, variant=sysm.variants[0], relax=True, time_limit=time_limit)
        if lp.status is not Status.OPTIMAL:
            raise MlschedError(f"{instance.name}: LP relaxation not solved ({lp.status.value})")
        values["lp_bound"] = lp.objective
    return values


def with_expected(instance: Instance, **kwargs: Any) -> Instance:
    """A copy of ``instance`` carrying its expected values."""
    return dataclasses.replace(instance, expected=expected_values(instance, **kwargs))
