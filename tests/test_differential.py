"""A seeded subset (50 per program) of the differential test: SCIP and mlsched's cross-certified
answer always equal brute force (raw HiGHS defects are counted, and each one is caught); on the
OgaSched linear hindsight program Clarabel and HiGHS agree."""

from __future__ import annotations

import pytest

from mlsched.differential import differential


@pytest.mark.parametrize("program", ["oasis-opt_paper", "oasis-opt_chunk", "themis-nsw-auction"])
def test_certified_answers_equal_bruteforce(program):
    tally = differential(program, 50, seed=2026)
    assert tally.instances == 50
    assert tally.disagreements["scip-vs-bruteforce"] == 0, tally.cases
    assert tally.disagreements["mlsched-verified-vs-bruteforce"] == 0, tally.cases
    assert tally.agreements + tally.disagreements["highs-vs-bruteforce"] == 50


def test_ogasched_linear_hindsight_solvers_agree():
    tally = differential("ogasched-hindsight-linear", 50, seed=2026)
    assert tally.instances == 50 and tally.agreements == 50, tally.cases
