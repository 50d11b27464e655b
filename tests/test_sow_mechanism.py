"""SoW mechanism: LIFO eviction (spec §3.3, test oracle T1)."""

import numpy as np

from mlsched.online.sow import lifo_removals_prefix, lifo_removals_sequential

FORMS = (lifo_removals_prefix, lifo_removals_sequential)


def test_t1a_running_jobs_and_waiting_latecomer() -> None:
    # J1, J2, J3 running; J4 arrived, scheduled at 7 (not contributing at r = 5); C = 2.
    for form in FORMS:
        assert form([1, 1, 1, 1], [True, True, True, False], 2).tolist() == [False, False, True, True]


def test_t1b_later_born_running_job_removed_only() -> None:
    # J1, J2, J4 running; J3 scheduled later; prefix loads 1, 2, 2, 3 -> only J4 removed.
    for form in FORMS:
        assert form([1, 1, 1, 1], [True, True, False, True], 2).tolist() == [False, False, False, True]


def test_t1c_wide_first_job_evicts_second() -> None:
    for form in FORMS:
        assert form([2, 1], [True, True], 2).tolist() == [False, True]


def test_t1_both_forms_agree_on_random_configurations() -> None:
    rng = np.random.default_rng(20220302)
    for _ in range(10_000):
        n = int(rng.integers(0, 9))
        widths = rng.integers(1, 5, size=n)
        contributing = rng.random(n) < 0.6
        capacity = int(rng.integers(1, 9))
        a = lifo_removals_prefix(widths, contributing, capacity)
        b = lifo_removals_sequential(widths, contributing, capacity)
        assert np.array_equal(a, b)
        kept_load = int(widths[contributing & ~a].sum())
        assert kept_load <= capacity
