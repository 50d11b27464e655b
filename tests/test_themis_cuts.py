"""Clique and rounding cuts of the PA auction's program and the default path's ways of settling
Phi* and each Phi*_{-i} (mlsched/formulations/themis_cuts.py, themis._FixedWelfare), against brute
force."""

from __future__ import annotations

import itertools
import math
from collections import Counter

from dataclasses import replace

import numpy as np
import pytest

from mlsched.formulations.themis import _FixedWelfare, capacity_usage, log_values, pf_arrays
from mlsched.solve import load_arrays
from mlsched.formulations.themis_cuts import CUT_VIOLATION, ConflictGraph, _breakpoints, rounding_cuts


def _machine_tables(seed: int, bidders: int = 5, rows: int = 5):
    """Canonical-style bid tables on four machines (2, 3, 4 and 5 GPUs): each bidder has the empty
    bundle and ``rows`` bundles of one or two machines (whole machines often, so that the LP
    relaxation splits bidders over machines), with random rho."""
    rng = np.random.default_rng(seed)
    capacity = (2, 3, 4, 5)
    gpus = [list(range(sum(capacity[:m]), sum(capacity[:m + 1]))) for m in range(len(capacity))]
    group_of = {g: m for m, machine in enumerate(gpus) for g in machine}
    tables = []
    for _ in range(bidders):
        table = [(frozenset(), float(rng.uniform(2.0, 8.0)))]
        for _ in range(rows):
            machines = rng.choice(len(capacity), size=int(rng.integers(1, 3)), replace=False)
            counts = [capacity[m] if rng.random() < 0.6 else int(rng.integers(1, capacity[m] + 1)) for m in machines]
            bundle = frozenset(g for m, count in zip(machines, counts) for g in gpus[m][:count])
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


def test_cuts_hold_for_every_allocation_and_tighten_the_lp():
    """Every cut the default path adds (cliques and rounding cuts) holds for every allocation; each
    clique is a maximal clique of the conflict graph; the LP bound with the cuts lies between the
    optimum and the bound without them; and the cuts are not vacuous: over these seeds both kinds
    are found and they close part of the gap."""
    kinds = Counter()
    tightened = 0
    for seed in range(12):
        program, sizes = _program(seed)
        allocations = _allocations(program, sizes)
        best = max(math.fsum(program.cost[list(a)]) for a in allocations)
        welfare = _FixedWelfare(program, sizes)
        separated = welfare.graph.violated_cliques
        cliques = []

        def recorded(x, phi, separated=separated, cliques=cliques):
            found = separated(x, phi)
            cliques.extend(found)
            return found

        welfare.graph.violated_cliques = recorded
        bound = welfare._relaxation(None).value
        plain = load_arrays(replace(program, integer=False), presolve=False)   # the LP without cuts
        plain.run()
        without_cuts = plain.getInfo().objective_function_value
        assert best - 1e-9 <= bound <= without_cuts + 1e-9
        tightened += bound < without_cuts - 1e-9
        chosen = np.zeros((len(allocations), len(program.cost)))
        for row, allocation in enumerate(allocations):
            chosen[row, list(allocation)] = 1.0
        for cut in welfare.cuts:
            assert (chosen[:, cut.columns] @ cut.values <= cut.rhs + 1e-12).all()
        everyone = np.arange(len(program.cost))
        for clique in cliques:
            conflict = welfare.graph.among(clique, clique)
            assert conflict[~np.eye(len(clique), dtype=bool)].all()
            outside = np.setdiff1d(everyone, clique)   # maximal: no other column conflicts with all members
            assert not welfare.graph.among(clique, outside).all(axis=0).any()
        kinds["clique"] += len(cliques)
        kinds["rounding"] += len(welfare.cuts) - len(cliques)
    assert kinds["clique"] > 0 and kinds["rounding"] > 0 and tightened > 0, (kinds, tightened)


@pytest.mark.parametrize("seed", range(6))
def test_rounding_cuts_are_the_most_violated_chvatal_gomory_cuts_of_each_capacity_row(seed):
    """Against every multiplier j / a (a up to the row's capacity): each returned cut is the rounded
    row for its multiplier, holds for every allocation, is violated by more than CUT_VIOLATION, and
    no multiplier violates that row more; rows with no returned cut have no violated multiplier."""
    program, sizes = _program(seed)
    usage = capacity_usage(program, len(sizes))
    capacity = program.row_upper[len(sizes):]
    allocations = _allocations(program, sizes)
    x = np.random.default_rng(seed).random(len(program.cost)) * 0.6
    found = rounding_cuts(x, usage, capacity)
    violations = {}
    for k, cap in enumerate(capacity.astype(int)):
        rows = []
        for a in range(2, cap + 1):
            for j in range(1, a):
                values = np.array([(j * int(u)) // a for u in usage[:, k]], dtype=float)
                rows.append((float(x @ values) - (j * cap) // a, values, float((j * cap) // a)))
        violations[k] = rows
    matched = 0
    for cut in found:
        full = np.zeros(len(program.cost))
        full[cut.columns] = cut.values
        candidates = [(v, k) for k, rows in violations.items() for v, values, rhs in rows
                      if np.array_equal(values, full) and rhs == cut.rhs]
        assert candidates
        violation, k = max(candidates)
        assert violation > CUT_VIOLATION
        assert violation >= max(v for v, _, _ in violations[k]) - 1e-12
        for allocation in allocations:
            assert full[list(allocation)].sum() <= cut.rhs
        matched += 1
    assert matched == len(found)
    assert len(found) == sum(1 for rows in violations.values() if max(v for v, _, _ in rows) > CUT_VIOLATION)


def test_breakpoints_are_the_fractions_below_one():
    assert _breakpoints(4) == (1 / 4, 1 / 3, 1 / 2, 2 / 3, 3 / 4)
    assert _breakpoints(1) == ()


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


def _is_allocation(program, sizes, x, skip):
    """Whether the 0/1 vector ``x`` gives every bidder but ``skip`` one row (``skip`` none) within
    the capacities."""
    offsets = np.cumsum([0, *sizes])
    chosen = np.add.reduceat(x, offsets[:-1])
    wanted = np.ones(len(sizes))
    if skip is not None:
        wanted[skip] = 0.0
    usage = capacity_usage(program, len(sizes))
    return (set(np.unique(x)) <= {0.0, 1.0} and np.array_equal(chosen, wanted)
            and (usage.T @ x <= program.row_upper[len(sizes):]).all())


def _best_without(program, allocations, offsets, skip):
    return max(math.fsum(program.cost[[c for j, c in enumerate(a) if j != skip]]) for a in allocations
               if skip is None or a[skip] == offsets[skip])


def test_dives_give_allocations_no_better_than_the_optimum_and_leave_the_lp_as_it_was():
    """A dive from the LP relaxation with the auction's cuts (all bidders, then each left out) ends
    in an allocation of that program worth at most its brute-force optimum, or in None; the LP
    afterwards has the bounds and value it had before. Over these seeds some dives start from a
    fractional point (the cuts make most of these small LPs integral)."""
    from_fractional = 0
    for seed in range(48):
        program, sizes = _program(seed)
        allocations = _allocations(program, sizes)
        offsets = np.cumsum([0, *sizes])
        welfare = _FixedWelfare(program, sizes)
        welfare.optimum()   # the auction's cuts, as a dive finds them
        for skip in [None, *range(len(sizes))]:
            relaxation = welfare._relaxation(skip)
            from_fractional += welfare._allocation(relaxation.x, skip) is None
            welfare.lp.run()
            value = welfare.lp.getInfo().objective_function_value
            bounds = [list(welfare.lp.getLp().col_lower_), list(welfare.lp.getLp().row_lower_),
                      list(welfare.lp.getLp().row_upper_)]
            allocation = welfare._dive(relaxation.x, skip)
            welfare.lp.run()
            assert welfare.lp.getInfo().objective_function_value == pytest.approx(value, abs=1e-9)
            assert [list(welfare.lp.getLp().col_lower_), list(welfare.lp.getLp().row_lower_),
                    list(welfare.lp.getLp().row_upper_)] == bounds
            if allocation is not None:
                assert _is_allocation(program, sizes, allocation, skip)
                assert math.fsum(program.cost[allocation > 0.5]) <= _best_without(program, allocations, offsets, skip) + 1e-9
    assert from_fractional >= 10


@pytest.mark.parametrize("seed", range(12))
def test_the_optima_kept_are_optimal_and_give_starts_without_each_bidder(seed):
    """Every allocation the default path keeps is optimal for Phi* or some Phi*_{-i} (brute force),
    and the start built from them without bidder i is an allocation without i."""
    program, sizes = _program(seed)
    allocations = _allocations(program, sizes)
    offsets = np.cumsum([0, *sizes])
    welfare = _FixedWelfare(program, sizes)
    welfare.optimum()
    best = max(allocations, key=lambda a: math.fsum(program.cost[list(a)]))
    for skip in range(len(sizes)):
        welfare.optimum([c - offsets[i] for i, c in enumerate(best)], skip=skip)
    optima = {_best_without(program, allocations, offsets, skip) for skip in [None, *range(len(sizes))]}
    assert welfare.optima
    for allocation in welfare.optima.values():
        left_out = [i for i in range(len(sizes)) if not allocation[offsets[i]:offsets[i + 1]].any()]
        assert len(left_out) <= 1 and _is_allocation(program, sizes, allocation, left_out[0] if left_out else None)
        assert any(math.fsum(program.cost[allocation > 0.5]) == pytest.approx(value, abs=1e-9) for value in optima)
    for skip in range(len(sizes)):
        start = welfare._from_optima(skip)
        assert _is_allocation(program, sizes, start, skip)
        assert math.fsum(program.cost[start > 0.5]) <= _best_without(program, allocations, offsets, skip) + 1e-9
