"""Brute-force oracles of spec §7.2: Algorithm 2 (fast DP, literal, Pyomo subproblem) against
enumeration, and the offline MILP against enumeration of whole schedules."""

from __future__ import annotations

import numpy as np
import pytest
from builders import random_tiny

from mlsched import bruteforce
from mlsched.formulations import oasis as oasis_milp
from mlsched.formulations.oasis_subproblem import SubproblemModel
from mlsched.online.oasis import JobTerms, SlotPrices, best_schedule, best_schedule_literal
from mlsched.solve import Status, solve


def random_job_and_prices(rng: np.random.Generator) -> tuple[JobTerms, SlotPrices]:
    slots = int(rng.integers(1, 5))
    h, k = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    chunks = int(rng.integers(1, 4))
    epochs = int(rng.integers(1, 3))
    chunk_time = float(rng.choice([0.4, 0.5, 0.6, 1.0, 1.5, 2.0]))
    b = int(rng.integers(1, 3))
    f = np.sort(rng.uniform(0, 30, size=slots))[::-1]
    terms = JobTerms(arrival=1, chunks=chunks, chunk_time=chunk_time, passes=epochs * chunks,
                     workload=epochs * chunks * chunk_time, worker_bandwidth=b, ps_bandwidth=int(rng.integers(b, 4)),
                     utility=f)
    prices = SlotPrices(worker_price=rng.uniform(0, 3, size=(slots, h)).round(3),
                        worker_cap=rng.integers(0, 4, size=(slots, h)),
                        ps_price=rng.uniform(0, 2, size=(slots, k)).round(3),
                        ps_cap=rng.integers(0, 4, size=(slots, k)))
    return terms, prices


def enumerate_mu(terms: JobTerms, prices: SlotPrices, granularity: str) -> float:
    return bruteforce.oasis_subproblem(
        terms.utility, prices.worker_price, prices.worker_cap, prices.ps_price, prices.ps_cap,
        chunks=terms.chunks, chunk_time=terms.chunk_time, passes=terms.passes, workload=terms.workload,
        ratio=terms.worker_bandwidth / terms.ps_bandwidth, granularity=granularity)


@pytest.mark.parametrize("granularity", ["chunk", "worker_slot"])
def test_algorithm2_equals_enumeration(granularity):
    rng = np.random.default_rng(7 if granularity == "chunk" else 8)
    models: dict[tuple[int, int, int], SubproblemModel] = {}
    admitted = 0
    for _ in range(60):
        terms, prices = random_job_and_prices(rng)
        expected = enumerate_mu(terms, prices, granularity)
        fast = best_schedule(terms, prices, granularity=granularity)
        literal = best_schedule_literal(terms, prices, granularity=granularity)
        assert fast.payoff == pytest.approx(expected, abs=1e-9)
        assert literal.payoff == pytest.approx(expected, abs=1e-9)
        shape = (prices.worker_price.shape[0], prices.worker_price.shape[1], prices.ps_price.shape[1])
        model = models.setdefault(shape, SubproblemModel(*shape, granularity=granularity))
        assert model.payoff(terms, prices) == pytest.approx(expected, abs=1e-6)
        if fast.admitted:
            admitted += 1
            # the returned schedule realises the payoff and is tight (I4)
            realised = terms.utility[fast.completion - 1] - (
                (fast.workers * prices.worker_price).sum() + (fast.ps * prices.ps_price).sum())
            assert realised == pytest.approx(fast.payoff, abs=1e-9)
            assert fast.workers[fast.completion - 1].sum() > 0
            assert np.all(fast.workers <= prices.worker_cap) and np.all(fast.ps <= prices.ps_cap)
    assert admitted >= 10  # the sample exercises admissions, not only rejections


@pytest.mark.parametrize("seed", range(12))
def test_milp_equals_enumeration(seed):
    rng = np.random.default_rng(100 + seed)
    inst = random_tiny(rng, jobs=int(rng.integers(2, 4)), horizon=int(rng.integers(2, 4)),
                       resources=("cpu", "mem") if seed % 3 == 0 else ("cpu",))
    for variant in ("paper", "chunk"):
        report = solve(oasis_milp.build(inst, variant=variant))
        expected = bruteforce.oasis_opt(inst, variant=variant)
        if report.status is not Status.OPTIMAL or abs(report.objective - expected) > 1e-6:
            off = solve(oasis_milp.build(inst, variant=variant), presolve=False)
            pytest.fail(f"{variant}: HiGHS {report.status.value} {report.objective}, presolve off "
                        f"{off.objective}, brute force {expected}")
        lp = solve(oasis_milp.build(inst, variant=variant, relax=True))
        assert lp.objective >= expected - 1e-7
