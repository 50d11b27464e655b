"""Astraea's exact skips (policy module docstring) change nothing: on random instances, in both
lambda modes, with and without phase 2, the lazy run reproduces the run record of the full re-scan
(every round of every batch, every pending job enumerated at every A_maxIrev call), while making
fewer calls and enumerations."""

from __future__ import annotations

import numpy as np
import pytest

from astraea_fingerprints import fingerprint
from mlsched.instance.generators.astraea import generate_astraea, tiny_astraea
from mlsched.online.astraea import Astraea
from mlsched.online.astraea import policy as astraea_policy

SEEDS = range(40)


def counted_runs(instance, monkeypatch, **options):
    """The lazy and the full run of ``instance`` and how many times each enumerated a job."""
    calls = []
    enumerate_job = astraea_policy.best_candidate

    def counting(*args, **kwargs):
        calls[-1] += 1
        return enumerate_job(*args, **kwargs)

    monkeypatch.setattr(astraea_policy, "best_candidate", counting)
    runs = []
    for lazy in (True, False):
        calls.append(0)
        runs.append(Astraea(lazy=lazy, **options).run(instance))
    return runs, calls


@pytest.mark.parametrize("lambda_mode", ["fixed", "theory"])
@pytest.mark.parametrize("sharing", [True, False])
def test_the_lazy_run_is_the_full_rescan(lambda_mode, sharing, monkeypatch):
    fewer = 0
    for seed in SEEDS:
        inst = tiny_astraea(seed, max_jobs=14, max_arrival=20)
        (lazy, full), (lazy_calls, full_calls) = counted_runs(
            inst, monkeypatch, lambda_mode=lambda_mode, sharing=sharing, theta=(4.0, 4.0))
        assert fingerprint(lazy) == fingerprint(full), f"seed {seed}"
        assert lazy_calls <= full_calls and len(lazy.call_seconds) <= len(full.call_seconds)
        fewer += lazy_calls < full_calls
    assert fewer > 0   # the skips were exercised


def test_the_lazy_run_is_the_full_rescan_on_a_generated_instance(monkeypatch):
    """A trace-generated instance with lambda from Lemma 1: dozens of rounds per batch."""
    inst = generate_astraea(jobs=24, servers=8, users=3, seed=5)
    (lazy, full), (lazy_calls, full_calls) = counted_runs(inst, monkeypatch, lambda_mode="theory")
    assert fingerprint(lazy) == fingerprint(full)
    assert np.count_nonzero(lazy.phase) > 0
    assert 2 * lazy_calls < full_calls
