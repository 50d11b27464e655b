"""The simulator's run records do not change with its fast paths: every policy of the Themis
family on the shipped Themis instances and two generated slices reproduces the record the
straightforward simulator wrote (fingerprints in tests/data/themis-run-fingerprints.json, see
tests/themis_fingerprints.py), without and with a restart overhead (the engine's step for jobs
that resume later than now)."""

from __future__ import annotations

import json

import pytest

from mlsched.sim.event_engine import SimOptions, simulate
from mlsched.systems import get_system
from themis_fingerprints import POLICIES, RESTART_OVERHEAD, STORE, cases, fingerprint, key

STORED = json.loads(STORE.read_text())
CASES = list(cases())


@pytest.mark.parametrize("label,inst", CASES, ids=[label for label, _ in CASES])
def test_every_policy_reproduces_the_stored_run_record(label, inst):
    system = get_system("themis")
    for name in POLICIES:
        run = simulate(inst, system.policy(name))
        assert fingerprint(run) == STORED[key(label, name)], key(label, name)


@pytest.mark.parametrize("label,inst", CASES, ids=[label for label, _ in CASES])
def test_every_policy_reproduces_the_stored_run_record_with_restart_overhead(label, inst):
    system = get_system("themis")
    options = SimOptions(restart_overhead=RESTART_OVERHEAD)
    for name in POLICIES:
        run = simulate(inst, system.policy(name), options)
        assert fingerprint(run) == STORED[key(label, name, RESTART_OVERHEAD)], key(label, name, RESTART_OVERHEAD)
