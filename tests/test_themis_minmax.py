"""Gavel-style min-max rho comparator (R3, spec §2.4): oracle T12, a grid search on two apps and
a bisection on the common rho level for more apps."""

from __future__ import annotations

import numpy as np
import pytest

from mlsched.errors import UsageError
from mlsched.formulations.themis_minmax import (
    accumulate_isolated_time,
    isolated_share,
    min_max_rho,
    rho_values,
)
from mlsched.solve import Status


@pytest.mark.parametrize(("n", "scale", "gpus"), [(2, 1, 1), (3, 2, 4), (4, 4, 8), (3, 1, 8)])
def test_t12_identical_apps_split_equally(n, scale, gpus):
    result = min_max_rho([100.0] * n, [500.0] * n, [2.0] * n, [scale] * n, [40.0] * n, gpus)
    assert result.status is Status.OPTIMAL
    expected = min(1.0, gpus / (n * scale))
    assert result.x == pytest.approx([expected] * n, abs=1e-6)
    assert result.rho == pytest.approx([result.max_rho] * n, abs=1e-7)


@pytest.mark.parametrize(("scale", "gpus", "elapsed"), [(2, 8, 0.0), (8, 4, 0.0), (4, 4, 250.0)])
def test_t12_single_app_isolated_share_gives_one(scale, gpus, elapsed):
    """rho = 1 at x = x_iso when t = iso_cum; the optimum is x_iso itself (the app may use its
    whole share and no more)."""
    args = ([elapsed], [300.0], [1.5], [scale], [elapsed])
    x_iso = isolated_share([scale], gpus)
    assert rho_values(x_iso, args[0], args[1], args[2], args[4], 1.5 * x_iso) == pytest.approx([1.0])
    result = min_max_rho(*args, gpus)
    assert result.status is Status.OPTIMAL
    assert result.x == pytest.approx(x_iso, abs=1e-7)
    assert result.max_rho == pytest.approx(1.0, abs=1e-7)


def grid_minimum(elapsed, steps, thr, scale, iso, gpus, thr_iso, points=200_001):
    """min over x1 on a fine grid of max(rho_1(x1), rho_2(x2)), x2 as large as (2)-(3) allow
    (rho_2 is non-increasing in x2, so that choice is optimal for each x1)."""
    x1 = np.linspace(0.0, min(1.0, gpus / scale[0]), points)[1:]
    x2 = np.minimum(1.0, (gpus - scale[0] * x1) / scale[1])
    keep = x2 > 0
    x1, x2 = x1[keep], x2[keep]
    rho1 = (elapsed[0] + steps[0] / (thr[0] * x1)) / (iso[0] + steps[0] / thr_iso[0])
    rho2 = (elapsed[1] + steps[1] / (thr[1] * x2)) / (iso[1] + steps[1] / thr_iso[1])
    return float(np.max([rho1, rho2], axis=0).min())


@pytest.mark.parametrize("seed", range(12))
def test_two_apps_against_grid(seed):
    rng = np.random.default_rng(seed)
    gpus = float(rng.choice([2, 4, 8]))
    scale = rng.choice([1, 2, 4], size=2).astype(float)
    elapsed = rng.uniform(0, 500, size=2)
    iso = elapsed * rng.uniform(0.3, 1.0, size=2)
    steps = rng.uniform(100, 2000, size=2)
    thr = rng.uniform(0.5, 5.0, size=2)
    result = min_max_rho(elapsed, steps, thr, scale, iso, gpus)
    assert result.status is Status.OPTIMAL
    assert scale @ result.x <= gpus + 1e-7
    best = grid_minimum(elapsed, steps, thr, scale, iso, gpus, result.thr_iso)
    assert result.max_rho == pytest.approx(best, abs=1e-5)
    assert result.max_rho <= best + 1e-7          # the grid never beats the convex optimum


def bisection_minimum(elapsed, steps, thr, scale, iso, gpus, thr_iso):
    """Smallest level r such that every app reaches rho_i <= r within (2)-(3): app i needs
    x_i >= n_i / (thr_i (r D_i - t_i))."""
    den = iso + steps / thr_iso

    def feasible(r):
        slack = r * den - elapsed
        if np.any(slack <= 0):
            return False
        need = steps / (thr * slack)
        return bool(np.all(need <= 1) and scale @ need <= gpus)

    lo, hi = 0.0, 1.0
    while not feasible(hi):
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if feasible(mid) else (mid, hi)
    return hi


@pytest.mark.parametrize("seed", range(6))
def test_many_apps_against_bisection(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(3, 7))
    gpus = float(rng.choice([4, 8, 16]))
    scale = rng.choice([1, 2, 4, 8], size=n).astype(float)
    elapsed = rng.uniform(0, 1000, size=n)
    iso = elapsed * rng.uniform(0.2, 1.0, size=n)
    steps = rng.uniform(10, 5000, size=n)
    thr = rng.uniform(0.2, 10.0, size=n)
    result = min_max_rho(elapsed, steps, thr, scale, iso, gpus)
    assert result.status is Status.OPTIMAL
    best = bisection_minimum(elapsed, steps, thr, scale, iso, gpus, result.thr_iso)
    assert result.max_rho == pytest.approx(best, rel=1e-6)


def test_isolated_time_accumulates():
    iso = accumulate_isolated_time([10.0, 0.0], [100.0, 50.0], [60.0, 50.0], [2.0, 4.0])
    assert iso.tolist() == [30.0, 0.0]
    assert isolated_share([1, 2, 8], 6).tolist() == [1.0, 1.0, 0.25]


def test_finished_app_and_bad_data():
    result = min_max_rho([50.0, 10.0], [0.0, 100.0], [1.0, 1.0], [1, 1], [40.0, 0.0], 1)
    assert result.status is Status.OPTIMAL
    assert result.rho[0] == pytest.approx(50.0 / 40.0)
    with pytest.raises(UsageError):
        min_max_rho([0.0], [10.0], [0.0], [1], [0.0], 1)
    with pytest.raises(UsageError):
        min_max_rho([0.0, 1.0], [10.0], [1.0], [1], [0.0], 1)
    with pytest.raises(UsageError):
        min_max_rho([0.0], [0.0], [1.0], [1], [0.0], 1)


@pytest.mark.parametrize("seed", range(8))
def test_direct_cone_program_matches_the_cvxpy_model(seed):
    """Heterogeneous rounds (three GPU types, some throughputs 0): Clarabel's native interface and
    the cvxpy model reach the same min-max rho, and the direct answer is feasible."""
    rng = np.random.default_rng(200 + seed)
    n = int(rng.integers(2, 30))
    thr = rng.uniform(0.1, 5.0, size=(n, 3)) * (rng.random((n, 3)) > 0.15)
    thr[:, 0] = np.maximum(thr[:, 0], 0.5)
    scale = rng.choice([1, 2, 4, 8], size=n).astype(float)
    capacity = rng.choice([4.0, 8.0, 36.0], size=3)
    elapsed = rng.uniform(0, 1000, size=n)
    iso = elapsed * rng.uniform(0.2, 1.0, size=n)
    steps = rng.uniform(10, 5000, size=n) * (rng.random(n) > 0.1)
    direct = min_max_rho(elapsed, steps, thr, scale, iso, capacity)
    model = min_max_rho(elapsed, steps, thr, scale, iso, capacity, method="cvxpy")
    assert direct.status is Status.OPTIMAL and model.status is Status.OPTIMAL
    assert direct.max_rho == pytest.approx(model.max_rho, rel=1e-7)
    assert direct.x.shape == (n, 3)
    assert np.all(scale @ direct.x <= capacity + 1e-7) and np.all(direct.x.sum(axis=1) <= 1 + 1e-7)


@pytest.mark.parametrize("seed", range(4))
def test_types_with_equal_throughputs_pool_into_one(seed):
    """When every app runs equally fast on every type, the typed program is the one-type program
    on all the GPUs (fractions split freely over the types)."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(2, 8))
    thr = rng.uniform(0.2, 10.0, size=n)
    scale = rng.choice([1, 2, 4], size=n).astype(float)
    capacity = np.array([2.0, 4.0, 2.0])
    elapsed = rng.uniform(0, 1000, size=n)
    iso = elapsed * rng.uniform(0.2, 1.0, size=n)
    steps = rng.uniform(10, 5000, size=n)
    pooled = min_max_rho(elapsed, steps, thr, scale, iso, float(capacity.sum()))
    typed = min_max_rho(elapsed, steps, np.repeat(thr[:, None], 3, axis=1), scale, iso, capacity,
                        thr_iso=pooled.thr_iso)
    assert typed.max_rho == pytest.approx(pooled.max_rho, rel=1e-7)
    best = bisection_minimum(elapsed, steps, thr, scale, iso, float(capacity.sum()), pooled.thr_iso)
    assert typed.max_rho == pytest.approx(best, rel=1e-6)


def test_isolated_share_over_types_follows_gavel():
    """(C_k / n) / scale_i per type, each row scaled to sum to at most 1."""
    share = isolated_share([1, 4], [4.0, 2.0])
    assert share.tolist() == [[2 / 3, 1 / 3], [0.5, 0.25]]
