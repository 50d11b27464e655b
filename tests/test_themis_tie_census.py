"""The tie census of ``benchmarks/themis_speed.py --ties`` (how often A8's fewest-GPU re-solve
chooses among exact ties) against brute force on small auctions: the re-solve's program has the
fewest GPUs as its optimum, HiGHS's pick is one of the allocations with them, and "another tie"
is reported exactly when brute force finds a second one."""

from __future__ import annotations

import importlib.util
import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mlsched.formulations.themis import fewest_gpu_program, log_values, pf_arrays, tie_threshold


SPEED = Path(__file__).resolve().parents[1] / "benchmarks" / "themis_speed.py"


@pytest.fixture(scope="module")
def speed():
    spec = importlib.util.spec_from_file_location("themis_speed", SPEED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _random_tables(seed):
    """Three bidders valuing every bundle of at most two of four GPUs: values from a coarse grid
    for odd seeds (exact ties common) and continuous for even seeds (ties rare)."""
    rng = np.random.default_rng(seed)
    offered = [0, 1, 2, 3]
    bundles = [frozenset(c) for k in range(3) for c in itertools.combinations(offered, k)]
    value = (lambda: 2.0 ** -float(rng.integers(0, 3))) if seed % 2 else (lambda: float(rng.uniform(0.1, 1.0)))
    return [[(b, value()) for b in bundles] for _ in range(3)], offered


def _fewest(tables, phi):
    """Brute force: Phi* (welfare summed in bidder order) and the 0/1 column vectors of every
    allocation meeting A8's threshold with the fewest GPUs."""
    sizes = [len(t) for t in tables]
    offsets = np.cumsum([0, *sizes])[:-1]
    every = []
    for rows in itertools.product(*(range(size) for size in sizes)):
        bundles = [tables[i][b][0] for i, b in enumerate(rows)]
        if sum(map(len, bundles)) == len(frozenset().union(*bundles)):   # no GPU twice
            every.append((sum(phi[i][b] for i, b in enumerate(rows)), sum(map(len, bundles)), rows))
    phi_star = max(w for w, _, _ in every)
    meeting = [(g, rows) for w, g, rows in every if w >= tie_threshold(phi_star)]
    fewest = min(g for g, _ in meeting)
    chosen = []
    for g, rows in meeting:
        if g == fewest:
            x = np.zeros(sum(sizes))
            x[offsets + np.array(rows)] = 1.0
            chosen.append(x)
    return phi_star, chosen


@pytest.mark.parametrize("seed", range(12))
def test_census_of_a_small_auction_equals_brute_force(speed, seed):
    tables, offered = _random_tables(seed)
    phi = log_values(tables)
    phi_star, fewest = _fewest(tables, phi)
    program = fewest_gpu_program(pf_arrays(tables, phi, offered), tables, phi_star)
    chosen, before, total, incumbents = speed.search_before_incumbent(program)
    assert any(np.array_equal(chosen, x) for x in fewest)
    assert 0.0 <= before <= total and incumbents >= 1
    assert speed.another_tie(program, chosen) == ("tie" if len(fewest) > 1 else "unique")


def test_both_census_outcomes_occur_in_the_small_auctions():
    """Not vacuous: the small auctions above include both a unique fewest-GPU allocation and ties."""
    outcomes = Counter()
    for seed in range(12):
        tables, _ = _random_tables(seed)
        outcomes[len(_fewest(tables, log_values(tables))[1]) > 1] += 1
    assert outcomes[True] >= 2 and outcomes[False] >= 2
