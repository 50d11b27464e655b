"""Astraea's exact skips (policy module docstring) change nothing: on random instances, in both
lambda modes, with and without phase 2, the lazy run reproduces the run record of the full re-scan
(every round of every batch, every pending job enumerated at every A_maxIrev call), while making
fewer calls and enumerations."""

from __future__ import annotations

import numpy as np
import pytest

from astraea_fingerprints import fingerprint
from mlsched.instance.generators.astraea import generate_astraea, tiny_astraea
from mlsched.instance.utility import Affine
from mlsched.online.astraea import Astraea
from mlsched.online.astraea import policy as astraea_policy
from mlsched.online.astraea.placement import JobShape, RoundView, placement_at

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


def test_mincostd_alone_is_not_monotone_but_the_better_side_is():
    """Why the lazy run does not reuse a job's earlier mu as a bound (docs/decisions.md, lazy
    rounds): using up the PS of server a (MINCOSTD's first PS server by (N_s, s)) makes W = 2
    distributed feasible, with a's workers remote; MINCOSTC on a was feasible before, at a mu at
    least as high (d(W, cent) <= d(W, dist), prices only rise)."""
    shape = JobShape(chunks=2, central=np.array([4, 2]), distributed=np.array([4, 3]),
                     utility=Affine(k=-1.0, g=50.0))

    def view(h_w: list[int], h_p: list[int]) -> RoundView:
        cap_w, cap_p = np.array([2, 0]), np.array([1, 2])   # a: 2 workers, 1 PS; b: no worker, 2 PS
        used_w, used_p = np.array(h_w)[:, None].repeat(4, 1), np.array(h_p)[:, None].repeat(4, 1)
        eta_w = np.full(4, 0.1 * used_w.sum(axis=0)[0])
        eta_p = np.full(4, 0.2 * used_p.sum(axis=0)[0])
        return RoundView(free_w=cap_w[:, None] - used_w, free_p=cap_p[:, None] - used_p,
                         quota_w=np.full(4, 9), quota_p=np.full(4, 9), eta_w=eta_w, eta_p=eta_p)

    empty, a_ps_used = view([0, 0], [0, 0]), view([0, 0], [1, 0])
    assert placement_at(shape, empty, 1, 2, centralized=False) is None   # a first (N = 1), no remote
    later = placement_at(shape, a_ps_used, 1, 2, centralized=False)     # b first (N = 2), a's workers
    assert later is not None and later.z.tolist() == [0, 2] and later.y.tolist() == [2, 0]
    central = placement_at(shape, empty, 1, 2, centralized=True)
    assert central is not None and central.mu >= later.mu
