"""The simulator's run records do not change with its fast paths: every policy of the Themis
family on the shipped Themis instances and two generated slices reproduces the record the
straightforward simulator wrote (fingerprints in tests/data/themis-run-fingerprints.json, see
tests/themis_fingerprints.py)."""

from __future__ import annotations

import json

import pytest

from mlsched.sim.event_engine import simulate
from mlsched.systems import get_system
from themis_fingerprints import POLICIES, STORE, cases, fingerprint

STORED = json.loads(STORE.read_text())
CASES = list(cases())


@pytest.mark.parametrize("label,inst", CASES, ids=[label for label, _ in CASES])
def test_every_policy_reproduces_the_stored_run_record(label, inst):
    system = get_system("themis")
    for name in POLICIES:
        run = simulate(inst, system.policy(name))
        assert fingerprint(run) == STORED[f"{label}/{name}"], f"{label}/{name}"
