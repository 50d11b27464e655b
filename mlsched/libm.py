"""Elementwise exp, log and power through the C library's libm (Python's ``math`` module), for
values that decide schedules.

numpy computes float64 exp, log and power with kernels chosen by the CPU at run time: on a
processor with AVX-512 they are its SIMD versions, elsewhere libm's. The two differ in the last
bit on some inputs, and a last bit can tip an admission, a price comparison or a placement, so
the same instance gave other Astraea and OASiS runs on an AVX-512 machine than on an AVX2 one. These
functions return libm's values on every machine (on the AVX2 machine that wrote the stored Astraea
records, numpy's gave the same records), at the cost of a Python call per distinct input: the
arrays they get (slots, occupancy levels) repeat few values, and each distinct value is computed
once.

Like numpy they return +-inf on overflow and on log(0), NaN for log of a negative number, and a
numpy float64 for a scalar input.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

SMALL = 64   # arrays up to this size are computed value by value (np.unique costs more there)


def _elementwise(function: Callable[[float], float], x: Any) -> Any:
    array = np.asarray(x, dtype=float)
    if array.ndim == 0:
        return np.float64(function(float(array)))
    if array.size <= SMALL:
        return np.array([function(v) for v in array.ravel().tolist()], dtype=float).reshape(array.shape)
    values, inverse = np.unique(array, return_inverse=True)
    return np.array([function(v) for v in values.tolist()], dtype=float)[inverse].reshape(array.shape)


def _or_inf(function: Callable[..., float], *args: float) -> float:
    """``function(*args)``, +inf where the math module raises OverflowError (numpy's convention)."""
    try:
        return function(*args)
    except OverflowError:
        return math.inf


def _log(v: float) -> float:
    if v > 0.0:
        return math.log(v)
    return -math.inf if v == 0.0 else math.nan


def exp(x: Any) -> Any:
    """e^x elementwise, libm's value."""
    return _elementwise(lambda v: _or_inf(math.exp, v), x)


def log(x: Any) -> Any:
    """ln x elementwise, libm's value; -inf at 0 and NaN below it (no warning)."""
    return _elementwise(_log, x)


def power(base: float, exponent: Any) -> Any:
    """base^exponent elementwise for a positive scalar base, libm's value (+inf on overflow)."""
    return _elementwise(lambda v: _or_inf(math.pow, base, v), exponent)
