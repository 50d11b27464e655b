"""mlsched.libm returns the math module's values elementwise, whatever numpy's SIMD kernels on this
CPU would give, with numpy's conventions at the edges."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlsched import libm

RNG = np.random.default_rng(7)
SIZES = [0, 1, 5, libm.SMALL, libm.SMALL + 1, 1000]   # both the value-by-value and the distinct-values paths


@pytest.mark.parametrize("size", SIZES)
def test_exp_log_power_equal_math_bit_for_bit(size):
    x = np.round(RNG.uniform(-50, 50, size), 1)   # repeated values too
    positive = np.abs(x) + 0.5
    assert libm.exp(x).tolist() == [math.exp(v) for v in x.tolist()]
    assert libm.log(positive).tolist() == [math.log(v) for v in positive.tolist()]
    assert libm.power(1.7, x).tolist() == [math.pow(1.7, v) for v in x.tolist()]


def test_shapes_and_scalars_are_kept():
    grid = np.arange(1, 13, dtype=float).reshape(3, 4)
    assert libm.log(grid).shape == (3, 4)
    assert libm.exp(np.tile(grid, 20)).shape == (3, 80)
    scalar = libm.exp(1.0)
    assert isinstance(scalar, np.float64) and scalar == math.e


def test_edges_follow_numpy():
    assert libm.log(np.array([0.0, -1.0, math.inf])).tolist()[0] == -math.inf
    assert math.isnan(libm.log(-1.0)) and libm.log(math.inf) == math.inf
    assert libm.exp(1e4) == math.inf and libm.exp(-1e4) == 0.0
    assert libm.power(10.0, np.array([400.0])).tolist() == [math.inf]
    assert math.isnan(libm.exp(math.nan))
