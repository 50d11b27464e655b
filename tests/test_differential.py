"""A seeded subset (50 per program) of the differential test: SCIP and mlsched's cross-certified
answer always equal brute force (raw HiGHS defects are counted, and each one is caught); on the
continuous programs (OgaSched's linear hindsight program, SoW's LP-R, LP-RP, LP-E) Clarabel and
HiGHS agree."""

from __future__ import annotations

import pytest

from mlsched.differential import differential


@pytest.mark.parametrize("program", ["oasis-opt_paper", "oasis-opt_chunk", "themis-nsw-auction", "sow-ilp-h",
                                     "astraea-poff-admission", "astraea-poff-alljobs"])
def test_certified_answers_equal_bruteforce(program):
    tally = differential(program, 50, seed=2026)
    assert tally.instances == 50
    assert tally.disagreements["scip-vs-bruteforce"] == 0, tally.cases
    assert tally.disagreements["mlsched-verified-vs-bruteforce"] == 0, tally.cases
    assert tally.disagreements["mlsched-arrays-vs-bruteforce"] == 0, tally.cases   # SoW's E[H] path
    assert tally.disagreements["lp-bound-vs-bruteforce"] == 0, tally.cases         # Astraea: LP >= OPT
    assert tally.disagreements["ub-pool-vs-bruteforce"] == 0, tally.cases          # Astraea: UB-POOL >= OPT
    assert tally.agreements + tally.disagreements["highs-vs-bruteforce"] == 50


@pytest.mark.parametrize("program", ["ogasched-hindsight-linear", "sow-lp-r", "sow-lp-rp", "sow-lp-e"])
def test_continuous_programs_solvers_agree(program):
    tally = differential(program, 50, seed=2026)
    assert tally.instances == 50 and tally.agreements == 50, tally.cases
