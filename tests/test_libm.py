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


def test_oasis_and_sow_prices_take_libm_values():
    """OASiS's eq. (22) prices and SoW's posted prices decide admissions: libm's values, bit for bit
    (numpy's AVX-512 exp gave another OASiS run of benchmarks/oasis_online_latency.py, seed 0)."""
    from mlsched.online.oasis.constants import prices
    from mlsched.online.sow.prices import ExpPrices

    usage = RNG.integers(0, 9, size=(30, 4, 3)).astype(float)
    capacity = np.array([[8.0, 8.0, 0.0]] * 4)
    ln_high = np.array([2.3, 5.1, 0.7])
    frac = np.where(capacity > 0, usage / np.where(capacity > 0, capacity, 1.0), 0.0)
    ln_p = np.where(frac >= 1.0 - 1e-12, ln_high, (1.0 - frac) * -3.2 + frac * ln_high)
    assert prices(-3.2, ln_high, usage, capacity).ravel().tolist() == [math.exp(v) for v in ln_p.ravel().tolist()]
    sow = ExpPrices(capacity=40.0, d_max=3, max_duration=12, max_value=9.0)
    levels = RNG.integers(0, 38, size=200).astype(float)
    assert sow.unit(levels).tolist() == [sow.L * math.pow(sow.base, u / 40.0) for u in levels.tolist()]
