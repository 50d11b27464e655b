"""Job utility functions f(x) of the completion delay x = t_hat - a (slots).

The OASiS kinds are non-negative and non-increasing in x (OASiS §III-C); Astraea's ``affine`` may
go negative (its realized utility is reported as it is, Astraea spec §1.5). Each offers ``value`` and a
numerically stable ``log_value`` (the sigmoid of OASiS eq. 1.5 underflows double precision for
time-critical jobs at large x; prices are computed in log space from ``log_value``).

Kinds (field ``kind`` in an instance file), every value and parameter at most MAX_UTILITY in magnitude:

- ``sigmoid``: f(x) = gamma1 / (1 + exp(gamma2 (x - gamma3))), gamma1 >= 0, 0 <= gamma2 <= MAX_STEEPNESS
  (OASiS §V-A)
- ``linear``:  f(x) = max(0, intercept - slope x), slope >= 0
- ``constant``: f(x) = value
- ``table``:   f(x) = values[min(x, len - 1)] for integer x >= 0 (values non-increasing)
- ``affine``:  f(x) = k x + g, k < 0 < g, unclamped (Astraea's linear utility, Thm 1)
- ``convex``:  f(x) = (e / x)^kappa for x >= 1, e > 0, 0 < kappa <= MAX_KAPPA, f(1) <= MAX_UTILITY
  (Astraea's convex utility, Thm 1)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from mlsched import libm
from mlsched.instance.fields import Fields


class Utility(Protocol):
    kind: str

    def value(self, x: Any) -> Any: ...

    def log_value(self, x: Any) -> Any: ...

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Sigmoid:
    gamma1: float
    gamma2: float
    gamma3: float
    kind: str = "sigmoid"

    def value(self, x: Any) -> Any:
        return libm.exp(self.log_value(x))

    def log_value(self, x: Any) -> Any:
        # ln f = ln gamma1 - softplus(gamma2 (x - gamma3)), softplus(u) = logaddexp(0, u)
        return libm.log(self.gamma1) - np.logaddexp(0.0, self.gamma2 * (np.asarray(x, dtype=float) - self.gamma3))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "gamma1": self.gamma1, "gamma2": self.gamma2, "gamma3": self.gamma3}


@dataclass(frozen=True)
class Linear:
    intercept: float
    slope: float
    kind: str = "linear"

    def value(self, x: Any) -> Any:
        return np.maximum(0.0, self.intercept - self.slope * np.asarray(x, dtype=float))

    def log_value(self, x: Any) -> Any:
        return libm.log(self.value(x))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "intercept": self.intercept, "slope": self.slope}


@dataclass(frozen=True)
class Constant:
    constant: float
    kind: str = "constant"

    def value(self, x: Any) -> Any:
        return np.full(np.shape(x), self.constant, dtype=float) if np.ndim(x) else float(self.constant)

    def log_value(self, x: Any) -> Any:
        return libm.log(self.value(x))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.constant}


@dataclass(frozen=True)
class Table:
    values: tuple[float, ...]
    kind: str = "table"

    def value(self, x: Any) -> Any:
        index = np.clip(np.asarray(x, dtype=float), 0, len(self.values) - 1).astype(int)
        result = np.asarray(self.values, dtype=float)[index]
        return result if np.ndim(result) else float(result)

    def log_value(self, x: Any) -> Any:
        return libm.log(self.value(x))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "values": list(self.values)}


@dataclass(frozen=True)
class Affine:
    k: float
    g: float
    kind: str = "affine"

    def value(self, x: Any) -> Any:
        return self.k * np.asarray(x, dtype=float) + self.g

    def log_value(self, x: Any) -> Any:
        with np.errstate(invalid="ignore"):
            return libm.log(self.value(x))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "k": self.k, "g": self.g}


@dataclass(frozen=True)
class Convex:
    e: float
    kappa: float
    kind: str = "convex"

    def value(self, x: Any) -> Any:
        return libm.exp(self.log_value(x))

    def log_value(self, x: Any) -> Any:
        return self.kappa * (math.log(self.e) - libm.log(np.asarray(x, dtype=float)))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "e": self.e, "kappa": self.kappa}


KINDS = ("sigmoid", "linear", "constant", "table")   # the cluster-jobs family's (non-negative) kinds
ASTRAEA_KINDS = ("affine", "convex")
MAX_UTILITY = 1e12   # utility values and parameters (the papers' are in the hundreds): solvers read 1e20 as infinite
MAX_STEEPNESS = 1e6   # sigmoid gamma2 per slot: steeper is a step, and gamma2 * x must not overflow
MAX_KAPPA = 100.0     # convex exponent (the papers' lie in [1, 2])


def _finite_non_negative(v: Any) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, int) and abs(v) > 2**53:
        return False
    return math.isfinite(v) and v >= 0


def read_utility(fields: Fields, kinds: tuple[str, ...] = KINDS) -> Utility:
    """Parse and validate a utility object of one of ``kinds``; problems are recorded on
    ``fields.problems``."""
    kind = fields.string("kind", choices=kinds)
    if kind == "sigmoid":
        fields.unknown_keys({"kind", "gamma1", "gamma2", "gamma3"})
        return Sigmoid(
            gamma1=float(fields.number("gamma1", minimum=0, maximum=MAX_UTILITY)),
            gamma2=float(fields.number("gamma2", minimum=0, maximum=MAX_STEEPNESS)),
            gamma3=float(fields.number("gamma3", minimum=-MAX_UTILITY, maximum=MAX_UTILITY)),
        )
    if kind == "linear":
        fields.unknown_keys({"kind", "intercept", "slope"})
        return Linear(intercept=float(fields.number("intercept", minimum=0, maximum=MAX_UTILITY)),
                      slope=float(fields.number("slope", minimum=0, maximum=MAX_UTILITY)))
    if kind == "constant":
        fields.unknown_keys({"kind", "value"})
        return Constant(constant=float(fields.number("value", minimum=0, maximum=MAX_UTILITY)))
    if kind == "table":
        fields.unknown_keys({"kind", "values"})
        raw = fields.raw("values")
        path = f"{fields.path}.values"
        if not isinstance(raw, list) or not raw or not all(_finite_non_negative(v) and v <= MAX_UTILITY for v in raw):
            if raw is not None:
                fields.problems.add(path, f"must be a non-empty list of finite numbers in [0, {MAX_UTILITY:g}]")
            return Table(values=(0.0,))
        if any(b > a for a, b in zip(raw, raw[1:])):
            fields.problems.add(path, "must be non-increasing (a utility never grows with delay)")
        return Table(values=tuple(float(v) for v in raw))
    if kind == "affine":
        fields.unknown_keys({"kind", "k", "g"})
        return Affine(k=float(fields.number("k", minimum=-MAX_UTILITY, maximum=0)),
                      g=float(fields.number("g", minimum=0, maximum=MAX_UTILITY)))
    if kind == "convex":
        fields.unknown_keys({"kind", "e", "kappa"})
        convex = Convex(e=float(fields.number("e", greater_than=0, maximum=MAX_UTILITY)),
                        kappa=float(fields.number("kappa", greater_than=0, maximum=MAX_KAPPA)))
        if convex.e > 1 and convex.kappa * math.log(convex.e) > math.log(MAX_UTILITY):
            fields.problems.add(fields.path, f"f(1) = e^kappa = {convex.e:g}^{convex.kappa:g} exceeds {MAX_UTILITY:g}")
        return convex
    return Constant(constant=0.0)
