"""Theorem 3.2 by brute force (spec T9): with the exact failure oracle and no thresholding, no
misreport of the T9 families raises an agent's expected true utility when sigma = l."""

import pytest

from mlsched.instance.generators.sow import tiny_sow
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.online.sow.truthfulness import best_gain, expected_utility, misreports

CHUNKS = 4
INSTANCES = 100


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_truth_is_a_best_report_when_the_signal_is_the_duration(chunk: int) -> None:
    tried = 0
    for seed in range(chunk, INSTANCES, CHUNKS):
        inst = tiny_sow(600 + seed, jobs=4, capacity=3 + seed % 3, d_max=1 + seed % 2, births=2)
        cheap = {"low": 0.01, "mu": 2.0} if seed % 2 else {}
        mech = SowMechanism(oracle="exact", eps=0.05, eps0=0.0, **cheap)
        for j in range(inst.num_jobs):
            gain, kind = best_gain(inst, j, mech)
            assert gain <= 1e-9, (seed, j, kind, gain)
            tried += 1
    assert tried == 4 * len(range(chunk, INSTANCES, CHUNKS))


def test_misreport_families_cover_t9() -> None:
    inst = tiny_sow(3, jobs=2, d_max=3, max_duration=3, window=4)
    kinds = {k.split()[0] for j in range(inst.num_jobs) for k, _ in misreports(inst, j)}
    assert {"width", "values", "step"} <= kinds
    assert all(s != inst.jobs[j].sow for j in range(inst.num_jobs) for _, s in misreports(inst, j))


def test_a_narrower_report_earns_nothing() -> None:
    inst = tiny_sow(11, jobs=3, capacity=4, d_max=2)
    mech = SowMechanism(oracle="exact", eps=0.05, eps0=0.0, low=0.01, mu=2.0)
    assert any(job.width == 2 for job in inst.jobs)
    for j, job in enumerate(inst.jobs):
        if job.width == 2:
            narrow = expected_utility(inst, j, type(job.sow)(1, job.sow.values, job.sow.support), mech)
            assert narrow <= 1e-12 <= expected_utility(inst, j, None, mech) + 1e-12
