"""gavel-ftf's array state against the straightforward per-app dictionaries
(tests/gavel_ftf_reference.py): at every round the same grants and, for every active app, the same
time run per type, deficits, allocation and cumulative isolated time, bit for bit, and the same run
record; on Gavel trace slices (contended, several GPU types, resets and recomputations), an
untyped cluster, multi-phase apps (their scale changes) and a round length whose half is not an
integer number of seconds; with Gavel's reading of a computation at time 0 as none and without it."""

from __future__ import annotations

import numpy as np
import pytest
from gavel_ftf_reference import ReferenceGavelFTF
from themis_fingerprints import fingerprint

from mlsched.baselines.gavel_ftf import GavelFTF, repeated_sum
from mlsched.instance import load
from mlsched.instance.generators.gavel import generate_gavel
from mlsched.instance.generators.themis import generate_themis
from mlsched.resources import shipped_instance
from mlsched.sim.event_engine import SimOptions, simulate


def state_of_reference(policy: ReferenceGavelFTF, apps: list[int]) -> tuple:
    rows = tuple((a, tuple(policy.job_time[a].tolist()), tuple(policy.deficit[a].tolist()),
                  tuple(policy.allocation[a].tolist()) if a in policy.allocation else None,
                  policy.iso_cum.get(a, 0.0)) for a in apps)
    return rows, tuple(policy.worker_time.tolist()), policy.last_reset, policy.stats["allocations"]


def state_of_arrays(policy: GavelFTF, apps: list[int]) -> tuple:
    rows = tuple((a, tuple(policy.job_time[a].tolist()), tuple(policy.deficit[a].tolist()),
                  tuple(policy.allocation[a].tolist()) if policy.allocated[a] else None,
                  float(policy.iso_cum[a])) for a in apps)
    return rows, tuple(policy.worker_time.tolist()), policy.last_reset, policy.stats["allocations"]


def recorded(policy_class: type, state_of, inst, options: SimOptions, **policy_options) -> tuple[list, str]:
    """Every round's (time, grants, policy state after it) and the run's fingerprint."""
    log: list = []

    class Recording(policy_class):
        def round(self, view):
            grants = super().round(view)
            log.append((view.now, sorted((a, sorted(g)) for a, g in grants.items()),
                        state_of(self, [app.index for app in view.apps])))
            return grants

    run = simulate(inst, Recording(**policy_options), options)
    return log, fingerprint(run)


CASES = {
    "gavel-first24": (lambda: load(shipped_instance("themis/gavel-philly-first24")), 360.0),
    "gavel-60-on-12": (lambda: generate_gavel(apps=60, gpus=12), 360.0),
    "gavel-40-on-24-later": (lambda: generate_gavel(start=44_000, apps=40, gpus=24), 360.0),
    "gavel-30-odd-round": (lambda: generate_gavel(apps=30, gpus=12), 333.3),
    "untyped-o1-small": (lambda: load(shipped_instance("themis/o1-small")), 360.0),
    "w2-multi-phase": (lambda: generate_themis(workload="W2", gpus=16, apps=20), 360.0),
}


@pytest.mark.parametrize("zero_sentinel", [True, False])
@pytest.mark.parametrize("case", list(CASES))
def test_array_state_gives_the_reference_rounds_and_record(case, zero_sentinel):
    make, round_seconds = CASES[case]
    inst = make()
    options = SimOptions(lease=round_seconds)
    expected, expected_print = recorded(ReferenceGavelFTF, state_of_reference, inst, options,
                                        zero_sentinel=zero_sentinel)
    got, got_print = recorded(GavelFTF, state_of_arrays, inst, options, zero_sentinel=zero_sentinel)
    assert len(got) == len(expected) and len(expected) > 10
    for mine, theirs in zip(got, expected):
        assert mine == theirs, f"round at t = {theirs[0]}"
    assert got_print == expected_print
    assert expected[-1][2][3] >= 2     # the allocation was recomputed along the way


def test_repeated_sum_adds_one_value_at_a_time():
    assert repeated_sum(0.1, 10) == 0.9999999999999999 != 10 * 0.1     # a product would not do
    assert repeated_sum(180.0, 283) == 50_940.0 and repeated_sum(1 / 3, 0) == 0.0


def test_priorities_per_candidate_equal_the_reference_formula():
    """Types that have run for no time, apps that have run for no time and apps without
    allocation, against the per-app-and-type formula of the reference (np.where with the
    floating-point warnings silenced)."""
    rng = np.random.default_rng(7)
    allocation = rng.random((40, 3)) * (rng.random((40, 3)) > 0.3)
    spent = rng.random((40, 3)) * 900 * (rng.random((40, 3)) > 0.2)
    for worker_time in (np.array([0.0, 1234.5, 7.25]), np.array([333.3, 0.0, 0.0]), np.array([0.1, 2.0, 1e6])):
        with np.errstate(divide="ignore", invalid="ignore"):
            fraction = np.where(worker_time > 0, spent / worker_time, 0.0)
            expected = np.where(fraction > 0, allocation / fraction, allocation * 1e9)
        expected[allocation == 0.0] = 0.0
        kinds, apps = np.nonzero(np.ones((3, 40), dtype=bool))
        got = GavelFTF._priorities(allocation[apps, kinds], spent[apps, kinds], kinds, worker_time)
        assert got.tolist() == expected[apps, kinds].tolist()
