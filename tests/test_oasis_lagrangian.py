"""The Lagrangian bound of the OASiS program: at least the brute-force optimum of both variants,
at most the LP relaxation whose duals start it, and exact when the jobs' best schedules fit."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mlsched import bruteforce
from mlsched.formulations import oasis
from mlsched.formulations.oasis_arrays import build_arrays
from mlsched.oasis_lagrangian import Lagrangian, lagrangian_bound, lp_duals
from mlsched.instance.generators import generate_oasis
from mlsched.solve import solve_arrays

PER_JOB_CUTS = ("rate", "completion")   # the symmetry rows tie jobs together: not in the LP whose duals start L


@pytest.mark.parametrize("variant", oasis.VARIANTS)
def test_bound_holds_and_is_no_looser_than_the_lp(variant):
    below_lp = 0
    for seed in range(10):
        inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
        truth = bruteforce.oasis_opt(inst, variant=variant)
        arrays = build_arrays(inst, variant=variant, relax=True, cuts=PER_JOB_CUTS)
        lp, duals = lp_duals(arrays)
        assert lp == pytest.approx(solve_arrays(arrays.program).objective, rel=1e-7, abs=1e-7)
        bound, evaluated, _ = lagrangian_bound(inst, variant, start=duals, target=truth, iterations=30)
        assert evaluated >= 1
        assert truth - 1e-6 <= bound <= lp + 1e-6 * max(1.0, lp), (seed, truth, bound, lp)
        below_lp += bound < lp - 1e-6
        from_zero, _, _ = lagrangian_bound(inst, variant, target=truth, iterations=30)
        assert from_zero >= truth - 1e-6
    assert below_lp > 0   # the per-job integer schedules cut into the LP somewhere


def test_every_price_gives_a_bound():
    """L at arbitrary non-negative prices is still >= OPT (weak duality), and at zero prices it is
    the sum of the jobs' best payoffs alone."""
    rng = np.random.default_rng(0)
    for seed in range(6):
        inst = generate_oasis(jobs=3, horizon=3, seed=seed, profile="small")
        truth = bruteforce.oasis_opt(inst)
        lagrangian = Lagrangian(inst, "paper")
        shape_w = (inst.horizon, *inst.worker_capacity.shape)
        shape_ps = (inst.horizon, *inst.ps_capacity.shape)
        for _ in range(5):
            value, load_w, load_ps, _ = lagrangian.value(rng.exponential(size=shape_w), rng.exponential(size=shape_ps))
            assert value >= truth - 1e-7
            assert np.all(load_w >= 0) and np.all(load_ps >= 0)
        alone, _, _, _ = lagrangian.value(np.zeros(shape_w), np.zeros(shape_ps))
        assert alone >= truth - 1e-7
        assert alone == pytest.approx(sum(max(0.0, bruteforce.oasis_opt(_only(inst, i))) for i in range(inst.num_jobs)))


def _only(inst, i):
    """The instance with job i alone."""
    return replace(inst, jobs=(inst.jobs[i],))
