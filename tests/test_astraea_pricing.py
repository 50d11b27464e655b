"""Problem (9) as a Pyomo model against Algorithm 3's enumeration (spec §2.4, §4.3): the
enumeration's mu never exceeds the optimum of (9), and equals it on one-server instances."""

from __future__ import annotations

import numpy as np
import pytest
from astraea_builders import ex

from mlsched.formulations.astraea_pricing import pricing_optimum
from mlsched.instance.generators.astraea import tiny_astraea
from mlsched.online.astraea import RoundView, best_candidate, job_shape
from mlsched.online.astraea.invariants import random_view
from mlsched.solve import Status


def enumeration_mu(inst, job, view) -> float:
    best = best_candidate(job_shape(job), view, bandwidth=(inst.worker_bandwidth, inst.ps_bandwidth))
    return 0.0 if best is None else best.mu


def cases(seed: int, servers: int):
    rng = np.random.default_rng(seed)
    inst = tiny_astraea(5000 + seed, max_servers=servers, max_jobs=4)
    for _ in range(4):
        job = inst.jobs[int(rng.integers(inst.num_jobs))]
        yield inst, job, random_view(rng, inst, int(2 ** rng.integers(1, 4)))


@pytest.mark.parametrize("seed", range(30))
def test_enumeration_never_exceeds_problem_9(seed):
    for inst, job, view in cases(seed, servers=6):
        report = pricing_optimum(inst, job, view)
        assert report.status is Status.OPTIMAL
        assert enumeration_mu(inst, job, view) <= report.objective + 1e-6


@pytest.mark.parametrize("seed", range(30))
def test_enumeration_equals_problem_9_on_one_server(seed):
    for inst, job, view in cases(seed, servers=1):
        assert len(inst.servers) == 1
        report = pricing_optimum(inst, job, view, verify=True)
        assert report.status is Status.OPTIMAL and report.verified is not False
        assert enumeration_mu(inst, job, view) == pytest.approx(report.objective, abs=1e-6)


def test_problem_9_on_the_papers_round():
    """EX's j11 on an empty round of 4 slots at unit prices: centralized W = 2 in 2 slots,
    96 - 2 * (2 * 1 + 1) = 90 (the distributed W = 2 run costs 12 for 92)."""
    inst = ex()
    view = RoundView(free_w=np.full((4, 4), 2), free_p=np.full((4, 4), 1), quota_w=np.full(4, 4),
                     quota_p=np.full(4, 2), eta_w=np.ones(4), eta_p=np.ones(4))
    assert pricing_optimum(inst, inst.jobs[0], view).objective == pytest.approx(90)
    assert enumeration_mu(inst, inst.jobs[0], view) == pytest.approx(90)


def test_problem_9_with_nothing_free_is_zero():
    inst = ex()
    view = RoundView(free_w=np.zeros((4, 4), dtype=int), free_p=np.zeros((4, 4), dtype=int),
                     quota_w=np.full(4, 4), quota_p=np.full(4, 2), eta_w=np.zeros(4), eta_p=np.zeros(4))
    assert pricing_optimum(inst, inst.jobs[0], view).objective == pytest.approx(0)
