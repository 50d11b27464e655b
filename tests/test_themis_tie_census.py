"""The tie census of ``benchmarks/themis_speed.py --ties`` (how often A8's fewest-GPU re-solve
chooses among exact ties) against brute force on small auctions: the re-solve's program has the
fewest GPUs as its optimum, HiGHS's pick is one of the allocations with them, and "another tie"
is reported exactly when brute force finds a second one."""

from __future__ import annotations

import importlib.util
import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mlsched.formulations.themis import (_FixedWelfare, _fewest_gpus, _indicator, bundle_sizes, fewest_gpu_program, log_values,
                                         pa_auction, pf_arrays, tie_threshold)
from mlsched.errors import UsageError
from mlsched.instance.themis_clusters import preset
from mlsched.online.themis.bids import Offer, canonical_bids
from mlsched.online.themis.policy import Themis


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
    program = fewest_gpu_program(pf_arrays(tables, phi, offered), bundle_sizes(tables), phi_star)
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


@pytest.mark.parametrize("seed", range(24))
def test_reduced_resolve_picks_a_fewest_gpu_optimum(seed):
    """``tie_break="reduced"``: A8's re-solve on the columns reduced-cost fixing against its
    threshold keeps (with the auction's cuts) returns one of the brute-force fewest-GPU
    allocations meeting the threshold, like the whole re-solve."""
    tables, offered = _random_tables(seed)
    phi = log_values(tables)
    phi_star, fewest = _fewest(tables, phi)
    program = pf_arrays(tables, phi, offered)
    welfare = _FixedWelfare(program, [len(t) for t in tables])
    assert welfare.optimum() == pytest.approx(phi_star, rel=1e-12, abs=1e-12)
    sizes = [len(t) for t in tables]
    for reduced in (welfare, None):
        rows = _fewest_gpus(program, tables, phi_star, reduced)
        assert any(np.array_equal(_indicator(sizes, rows), x) for x in fewest)


def test_the_reduced_resolve_drops_columns_and_keeps_every_tie():
    """Not vacuous: on these auctions the fixing drops columns, yet never a column of a fewest-GPU
    allocation that meets the threshold."""
    dropped = 0
    for seed in range(24):
        tables, offered = _random_tables(seed)
        phi = log_values(tables)
        phi_star, fewest = _fewest(tables, phi)
        welfare = _FixedWelfare(pf_arrays(tables, phi, offered), [len(t) for t in tables])
        welfare.optimum()
        _, keep = welfare.tie_break_columns(tie_threshold(phi_star))
        assert all(keep[x > 0.5].all() for x in fewest)
        dropped += int((~keep).sum())
    assert dropped > 0


@pytest.mark.parametrize("cluster,seed", [("testbed64", 0), ("testbed64", 3), ("sim_256", 1)])
def test_reduced_resolve_gives_the_same_values_on_benchmark_auctions(speed, cluster, seed):
    """On the benchmark's 20-bidder auctions (the LP path with cuts, beyond the machine DP) the
    reduced re-solve gives what the whole one does: Phi*, every Phi*_{-i} and the GPU count; each
    c_i is that of its own allocation (spec §2.3), exp(Phi* - phi_i - Phi*_{-i}) clamped to 1."""
    topology = preset(cluster)
    offered = speed.offer_for(seed, topology, 64)
    group = speed.bidders_for(seed, 20, topology)
    tables = [canonical_bids(b, Offer(offered, topology)) for b in group]
    machine_of = Offer(offered, topology).machine_of
    whole, reduced = (pa_auction(tables, offered, group_of=machine_of, lp_bound=False, tie_break=tie_break)
                      for tie_break in ("whole", "reduced"))
    assert reduced.phi_star == pytest.approx(whole.phi_star, rel=1e-9)
    assert reduced.phi_without == pytest.approx(whole.phi_without, rel=1e-9)
    assert sum(map(len, reduced.bundles)) == sum(map(len, whole.bundles))
    phi = log_values(tables)
    for i, (row, c) in enumerate(zip(reduced.rows, reduced.payments)):
        if reduced.bundles[i]:
            expected = min(1.0, math.exp(reduced.phi_star - phi[i][row] - reduced.phi_without[i]))
            assert c == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_tie_break_is_validated():
    tables, offered = _random_tables(0)
    with pytest.raises(UsageError, match="unknown auction tie_break"):
        pa_auction(tables, offered, tie_break="first")
    with pytest.raises(UsageError, match="solves='fixed'"):
        pa_auction(tables, offered, solves="fresh", tie_break="reduced")
    with pytest.raises(UsageError, match="unknown auction tie_break"):
        Themis(tie_break="first")


def test_benchmark_reports_the_reduced_resolve_against_the_oracle(speed, capsys, monkeypatch):
    """`benchmarks/themis_speed.py --tie-break reduced` compares the default path's values (Phi*,
    GPU count, every c_i) with the fresh path's and counts the auctions with other bundles."""
    from mlsched.formulations import themis

    monkeypatch.setattr(themis, "_fewest_gpus", themis._fewest_gpus)   # the benchmark wraps both for its counts
    monkeypatch.setattr(themis._FixedWelfare, "optimum", themis._FixedWelfare.optimum)
    speed.auction_times("testbed64", preset("testbed64"), 1, 20, None, "reduced")
    out = capsys.readouterr().out
    assert "re-solve (reduced program)" in out
    assert "fixed vs fresh (Phi*, GPU count, every c_i): 1 of 1 agree; the same bundles in" in out
    assert "persistent vs fresh (Phi*, PF bundles, every c_i): 1 of 1 agree" in out


def test_benchmark_repeats_the_default_path_and_counts_one_run(speed, capsys, monkeypatch):
    """`--repeat 2` times the default path (its own tie-break, the reduced program) twice per auction
    and prints both runs and their minimum; the settled programs are counted for one run, as
    without ``--repeat``."""
    from mlsched.formulations import themis

    def printed(repeat):
        monkeypatch.setattr(themis, "_fewest_gpus", themis._fewest_gpus)   # the benchmark wraps both for its counts
        monkeypatch.setattr(themis._FixedWelfare, "optimum", themis._FixedWelfare.optimum)
        speed.auction_times("testbed64", preset("testbed64"), 1, 20, None, None, repeat)
        out = capsys.readouterr().out
        return out, next(line for line in out.splitlines() if "(A8d):" in line)

    once, programs = printed(1)
    twice, programs_twice = printed(2)
    assert "re-solve (reduced program)" in twice and "runs of each auction" not in once
    assert "fixed path, 2 runs of each auction: CPU median / p95 by run" in twice and "per-auction minimum" in twice
    assert programs_twice == programs and " 0 programs" not in programs


def test_each_path_takes_its_own_tie_break_by_default(speed, monkeypatch):
    """Without ``tie_break`` the default path re-solves on the reduced program (the columns of
    :meth:`_FixedWelfare.tie_break_columns`, the same allocation as ``tie_break="reduced"``) and the
    persistent and fresh paths on the whole one (decisions A8e); the Themis policy keeps the whole
    program. The auction is one of the benchmark's, beyond the machine DP."""
    topology = preset("testbed64")
    offered = speed.offer_for(0, topology, 64)
    tables = [canonical_bids(b, Offer(offered, topology)) for b in speed.bidders_for(0, 20, topology)]
    machine_of = Offer(offered, topology).machine_of
    reductions = []
    columns = _FixedWelfare.tie_break_columns

    def counted(self, threshold):
        reductions.append(threshold)
        return columns(self, threshold)

    monkeypatch.setattr(_FixedWelfare, "tie_break_columns", counted)

    def rows(**options):
        before = len(reductions)
        result = pa_auction(tables, offered, group_of=machine_of, lp_bound=False, **options).rows
        return result, len(reductions) - before

    default, reduced = rows(), rows(tie_break="reduced")
    assert default == reduced and default[1] == 1
    assert rows(tie_break="whole")[1] == rows(solves="persistent")[1] == rows(solves="fresh")[1] == 0
    assert Themis().tie_break == "whole"
