"""The registry of systems: for each, its instance family, exact program, online algorithms and
baselines, and how a schedule is scored. The CLI and studies look everything up here."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsched.errors import UsageError
from mlsched.solve import Built


@dataclass(frozen=True)
class System:
    name: str
    family: str
    build: Callable[..., Built]
    variants: tuple[str, ...]
    algorithms: dict[str, Callable[..., Any]]
    score: Callable[[Any, Any], float]
    score_name: str
    default_algorithms: tuple[str, ...]

    def policy(self, algorithm: str, *, seed: int = 0) -> Any:
        """A fresh policy object; ``seed`` is passed to policies that draw random numbers."""
        if algorithm not in self.algorithms:
            raise UsageError(f"unknown algorithm {algorithm!r} for {self.name}; "
                             f"choose from {', '.join(self.algorithms)}")
        factory = self.algorithms[algorithm]
        if "seed" in inspect.signature(factory).parameters:
            return factory(seed=seed)
        return factory()


def _oasis() -> System:
    from functools import partial

    from mlsched.baselines import BASELINES
    from mlsched.formulations import oasis
    from mlsched.metrics import total_utility
    from mlsched.online.oasis import OASiS

    algorithms: dict[str, Callable[..., Any]] = {
        "oasis": OASiS,
        "oasis-ws": partial(OASiS, granularity="worker_slot"),
    }
    algorithms.update(BASELINES)
    return System(name="oasis", family="cluster-jobs", build=oasis.build, variants=oasis.VARIANTS,
                  algorithms=algorithms, score=total_utility, score_name="total_utility",
                  default_algorithms=("oasis", "fifo", "drf", "rrh", "dorm"))


_FACTORIES: dict[str, Callable[[], System]] = {"oasis": _oasis}
_DEFAULT_FOR_FAMILY = {"cluster-jobs": "oasis"}


def get_system(name: str | None = None, *, family: str | None = None) -> System:
    """A system by name, or the default system of an instance family."""
    if name is None:
        if family not in _DEFAULT_FOR_FAMILY:
            raise UsageError(f"no system handles the instance family {family!r}")
        name = _DEFAULT_FOR_FAMILY[family]
    if name not in _FACTORIES:
        raise UsageError(f"unknown system {name!r}; choose from {', '.join(_FACTORIES)}")
    system = _FACTORIES[name]()
    if family is not None and system.family != family:
        raise UsageError(f"system {name} works on {system.family} instances, not {family}")
    return system
