"""A seeded subset (50 per program) of the differential test: SCIP and mlsched's cross-certified
answer always equal brute force (raw HiGHS defects are counted, and each one is caught); on the
continuous programs (OgaSched's linear hindsight program, SoW's LP-R, LP-RP, LP-E) Clarabel and
HiGHS agree, and around SoW's relaxations the benchmark inequalities (B1)-(B4) hold."""

from __future__ import annotations

import pytest

from mlsched.differential import differential


@pytest.mark.parametrize("program", ["oasis-opt_paper", "oasis-opt_chunk", "themis-nsw-auction", "themis-o1", "sow-ilp-h",
                                     "astraea-poff-admission", "astraea-poff-alljobs"])
def test_certified_answers_equal_bruteforce(program):
    tally = differential(program, 50, seed=2026)
    assert tally.instances == 50
    assert tally.disagreements["scip-vs-bruteforce"] == 0, tally.cases
    assert tally.disagreements["mlsched-verified-vs-bruteforce"] == 0, tally.cases
    assert tally.disagreements["mlsched-arrays-vs-bruteforce"] == 0, tally.cases   # SoW's E[H] path, Themis's O1
    assert tally.disagreements["lp-bound-vs-bruteforce"] == 0, tally.cases         # Astraea: LP >= OPT
    assert tally.disagreements["ub-pool-vs-bruteforce"] == 0, tally.cases          # Astraea: UB-POOL >= OPT
    assert tally.agreements + tally.disagreements["highs-vs-bruteforce"] == 50


@pytest.mark.parametrize("program", ["ogasched-hindsight-linear", "sow-lp-r", "sow-lp-rp", "sow-lp-e"])
def test_continuous_programs_solvers_agree(program):
    tally = differential(program, 50, seed=2026)
    assert tally.instances == 50 and tally.agreements == 50, tally.cases


def test_sow_benchmark_inequalities_catch_a_wrong_relaxation():
    # (B1)-(B4) are answered with the reference when they hold, with the breaking side when not.
    import numpy as np

    from mlsched.differential import _sow_inequalities, random_sow_instance
    from mlsched.exact import exact_sow

    inst = random_sow_instance(np.random.default_rng([2026, 0]))
    if inst.stochastic:
        inst = inst.concrete(tuple(0 for _ in inst.jobs))
    lp_r = exact_sow(inst, variant="lp-r").objective
    assert lp_r > 0
    good = _sow_inequalities(inst, "lp-r", lp_r, lp_r)
    assert set(good) == {"b1-hindsight", "b2-scaling", "b4-lp-rp"} and all(v == lp_r for v in good.values())
    low = _sow_inequalities(inst, "lp-r", lp_r / 3, lp_r / 3)     # a relaxation reported far too low
    assert low["b1-hindsight"] != lp_r / 3 or low["b2-scaling"] != lp_r / 3
    stochastic = random_sow_instance(np.random.default_rng([2026, 3]))
    assert stochastic.stochastic
    lp_e = exact_sow(stochastic, variant="lp-e").objective
    assert _sow_inequalities(stochastic, "lp-e", lp_e, lp_e)["b3-expected-lp-r"] == lp_e
    assert _sow_inequalities(stochastic, "lp-e", lp_e / 3, lp_e / 3)["b3-expected-lp-r"] != lp_e / 3
