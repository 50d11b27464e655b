"""The exact speed-ups of Astraea's enumeration and of the baselines do not change runs: every
multi-tenant policy on 20 generated instances reproduces the record written before them
(fingerprints in tests/data/astraea-run-fingerprints.json, see tests/astraea_fingerprints.py)."""

from __future__ import annotations

import json

import pytest

from astraea_fingerprints import STORE, cases, fingerprint, policies
from mlsched.systems import get_system

STORED = json.loads(STORE.read_text())
CASES = list(cases())


def test_the_store_covers_every_case():
    assert len(CASES) == 20
    assert sorted(STORED) == sorted(f"{label}/{name}" for label, inst in CASES for name in policies(inst))


@pytest.mark.parametrize("label,inst", CASES, ids=[label for label, _ in CASES])
def test_every_policy_reproduces_the_stored_run_record(label, inst):
    system = get_system("astraea")
    for name in policies(inst):
        assert fingerprint(system.execute(inst, system.policy(name))) == STORED[f"{label}/{name}"], f"{label}/{name}"
