"""Clique cuts of the PA auction's program and the default path's ways of settling Phi* and each
Phi*_{-i} (mlsched/formulations/themis_cliques.py, themis._FixedWelfare), against brute force."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from mlsched.formulations.themis import _FixedWelfare, capacity_usage, log_values, pf_arrays
from mlsched.formulations.themis_cliques import ConflictGraph


def _machine_tables(seed: int, bidders: int = 5, rows: int = 5):
    """Canonical-style bid tables on four machines (2, 2, 4 and 4 GPUs): each bidder has the empty
    bundle and ``rows`` bundles of one or two machines (whole machines often, so that the LP
    relaxation splits bidders over machines), with random rho."""
    rng = np.random.default_rng(seed)
    capacity = (2, 2, 4, 4)
    gpus = [list(range(sum(capacity[:m]), sum(capacity[:m + 1]))) for m in range(len(capacity))]
    group_of = {g: m for m, machine in enumerate(gpus) for g in machine}
    tables = []
    for _ in range(bidders):
        table = [(frozenset(), float(rng.uniform(2.0, 8.0)))]
        for _ in range(rows):
            machines = rng.choice(len(capacity), size=int(rng.integers(1, 3)), replace=False)
            bundle = frozenset(g for m in machines
                               for g in gpus[m][:capacity[m] if rng.random() < 0.6 else int(rng.integers(1, capacity[m] + 1))])
            table.append((bundle, float(rng.uniform(0.2, 2.0))))
        tables.append(table)
    return tables, sorted(group_of), group_of


def _program(seed: int):
    tables, offered, group_of = _machine_tables(seed)
    phi = log_values(tables)
    program = pf_arrays(tables, phi, offered, group_of=group_of)
    sizes = [len(t) for t in tables]
    return program, sizes


def _allocations(program, sizes):
    """Every feasible allocation (one column per bidder, capacities kept) as column index tuples."""
    usage = capacity_usage(program, len(sizes))
    capacity = program.row_upper[len(sizes):]
    offsets = np.cumsum([0, *sizes])[:-1]
    return [tuple(offsets + np.array(rows)) for rows in itertools.product(*(range(s) for s in sizes))
            if (usage[offsets + np.array(rows)].sum(axis=0) <= capacity).all()]


@pytest.mark.parametrize("seed", range(6))
def test_conflicts_are_the_pairs_of_columns_no_allocation_takes_together(seed):
    program, sizes = _program(seed)
    usage = capacity_usage(program, len(sizes))
    owner = np.repeat(np.arange(len(sizes)), sizes)
    graph = ConflictGraph(usage, program.row_upper[len(sizes):], owner)
    together = np.zeros((len(owner), len(owner)), dtype=bool)
    for allocation in _allocations(program, sizes):   # every table has an empty row: each feasible pair occurs
        together[np.ix_(allocation, allocation)] = True
    everyone = np.arange(len(owner))
    expected = ~together
    np.fill_diagonal(expected, False)
    assert np.array_equal(graph.among(everyone, everyone), expected)
    assert expected.sum() > 0


def test_clique_cuts_hold_for_every_allocation_and_tighten_the_lp():
    """Every cut the default path adds is a clique of the conflict graph that no allocation takes
    twice; the LP bound with the cuts lies between the optimum and the bound without them; and the
    cuts are not vacuous: over these seeds some are found and some close part of the gap."""
    found = tightened = 0
    for seed in range(12):
        program, sizes = _program(seed)
        allocations = _allocations(program, sizes)
        best = max(math.fsum(program.cost[list(a)]) for a in allocations)
        welfare = _FixedWelfare(program, sizes)
        plain = _FixedWelfare(program, sizes)
        plain.graph.violated_cliques = lambda x, phi: []   # the LP without cuts
        bound, without_cuts = welfare._relaxation(None).value, plain._relaxation(None).value
        assert best - 1e-9 <= bound <= without_cuts + 1e-9
        tightened += bound < without_cuts - 1e-9
        everyone = np.arange(len(program.cost))
        for clique in welfare.cliques:
            conflict = welfare.graph.among(clique, clique)
            assert conflict[~np.eye(len(clique), dtype=bool)].all()
            members = set(clique.tolist())
            assert all(len(members.intersection(a)) <= 1 for a in allocations)
            outside = np.setdiff1d(everyone, clique)   # maximal: no other column conflicts with all members
            assert not welfare.graph.among(clique, outside).all(axis=0).any()
        found += len(welfare.cliques)
    assert found > 0 and tightened > 0


def test_phi_star_and_every_phi_without_equal_the_brute_force_whichever_way_they_are_settled():
    """Phi* and each Phi*_{-i} of the default path equal the best allocation (of all bidders, and of
    all but i) whether the Phi*-relaxation's prices, an LP bound or the reduced integer program
    settled them; every way occurs over these seeds."""
    ways = Counter()
    for seed in range(24):
        program, sizes = _program(seed)
        allocations = _allocations(program, sizes)
        offsets = np.cumsum([0, *sizes])
        welfare = _FixedWelfare(program, sizes)
        best = max(allocations, key=lambda a: math.fsum(program.cost[list(a)]))
        assert welfare.optimum() == pytest.approx(math.fsum(program.cost[list(best)]), abs=1e-9)
        rows = [c - offsets[i] for i, c in enumerate(best)]
        for skip in range(len(sizes)):
            # without i: the allocations giving i its empty row (first in every table), less that row's value
            without = max(math.fsum(program.cost[[c for j, c in enumerate(a) if j != skip]]) for a in allocations
                          if a[skip] == offsets[skip])
            assert welfare.optimum(rows, skip=skip) == pytest.approx(without, abs=1e-9)
        ways.update(welfare.settled)
    assert set(ways) == {"prices", "lp", "milp"}, ways
