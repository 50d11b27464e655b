"""Themis decision speed: (a) one PA auction with hidden payments, 20 bidding apps with
placement-sensitive (network-intensive) profiles and canonical bundles, on the 64-GPU testbed and
on a 64-GPU offer of a multi-rack simulator cluster (goal: median < 100 ms, p95 < 500 ms; the
paper: 354 ms median, 1398 ms p95 with Gurobi), through the default path and the original one
(fresh programs, the oracle), with their agreement and the default path's bid tables and fewest-GPU
re-solve (the part an exact path keeps while that re-solve decides among exact ties, A8); (b) a full simulated Workload 1 run of Themis
on the 64-GPU testbed (goal: < 60 s, checker included), with its rounds and per-round decision time.
Times are CPU time (``time.process_time``) beside wall time: on a loaded machine wall time measures
the load. Each seed's bundles are valued four times here (the bid tables, then each path) and once in a
real round, so each timing starts with the estimator's kept splits, makespans and slowdowns emptied
(:func:`mlsched.online.themis.rho.forget_kept_rules`).

Bidders are random single-job or multi-job (successive-halving or concurrent) apps valued by the
§1.7 estimator (``mlsched.online.themis.rho``) with no holdings; every offered GPU is free.

The default path's fewest-GPU re-solve runs on the columns reduced-cost fixing keeps (its own
default, decisions A8e; ``--tie-break whole`` for the whole program, the other paths' program),
and the simulated run on the Themis policy's default, the whole program. This machine's CPU time
of the same code varies by 10-20 % between runs; ``--repeat N`` times the default path's auctions
N times each and prints each run's figures and the per-auction minimum's.

``--solver-threads N`` runs every HiGHS solve of the process on N threads, the simulated run's
auctions included (0: HiGHS's own pool). Without it the benchmark auctions use HiGHS's own pool and
the simulated run the Themis policy's default, one thread (it spares the CPU time the pool spends
waiting on these small MILPs, with the same answers; decisions A8b).

    python benchmarks/themis_speed.py [--auctions 50] [--bidders 20] [--skip-run | --skip-auctions] [--run-apps N]
                                      [--solver-threads N] [--tie-break whole|reduced] [--repeat N]
    python benchmarks/themis_speed.py --ties [--auctions 50]   # how often the re-solve picks among exact ties
"""

from __future__ import annotations

import argparse
import math
import time
from collections import Counter
from dataclasses import replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlsched.formulations import themis
from mlsched.formulations.themis import Bidder
from mlsched.instance.generators.themis import generate_themis
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import NETWORK_PROFILE
from mlsched.instance.themis_clusters import preset
from mlsched.metrics import themis_summary
from mlsched.online.themis.bids import Offer, canonical_auction, canonical_bids
from mlsched.online.themis.policy import Themis
from mlsched.online.themis.rho import App, Phase, forget_kept_rules, rho
from mlsched.sim.event_engine import SimOptions, simulate
from mlsched.solve import ArrayProgram, Status, load_arrays, set_solver_threads, solve_arrays

PATHS = ("fixed", "persistent", "fresh")   # the default first, the oracle last


def random_app(rng: np.random.Generator, cluster_gpus: int) -> App:
    """A single-job app (cap 1..16) or a multi-job app: successive halving (n jobs, caps doubling
    per phase up to 8) or n concurrent jobs; network-intensive profile, random elapsed and N_avg."""
    kind = rng.choice(["single", "halving", "concurrent"])
    tau_work = float(rng.uniform(1e3, 1e5))
    if kind == "single":
        phases = (Phase((tau_work,), (int(rng.choice([1, 2, 4, 8, 16])),)),)
    elif kind == "halving":
        n, cap = int(rng.choice([2, 4, 8])), int(rng.choice([1, 2, 4]))
        count = int(np.log2(n)) + 1
        phases = tuple(Phase((tau_work / count / (n >> p),) * (n >> p), (min(8, cap << p),) * (n >> p))
                       for p in range(count))
    else:
        n = int(rng.choice([2, 4, 8]))
        phases = (Phase(tuple(rng.uniform(0.5, 1.5, n) * tau_work / n), (int(rng.choice([1, 2, 4])),) * n),)
    demand = max(sum(p.caps) for p in phases)
    work = sum(sum(p.work) for p in phases)
    n_avg = float(rng.integers(5, 25))
    return App(phases, t_id=work / min(cluster_gpus, demand) * n_avg, elapsed=float(rng.uniform(0, 5e3)),
               profile=NETWORK_PROFILE)


def bidders_for(seed: int, count: int, topology: GpuTopology) -> list[Bidder]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        app = random_app(rng, topology.num_gpus)
        out.append(Bidder(str(i), lambda b, app=app: rho(app, sorted(b), topology), app.demand))
    return out


def offer_for(seed: int, topology: GpuTopology, offer_size: int | None) -> list[int]:
    """The GPUs a seeded auction offers: all, or ``offer_size`` drawn at random."""
    rng = np.random.default_rng(10_000 + seed)
    gpus = topology.num_gpus
    if offer_size is None or offer_size >= gpus:
        return list(range(gpus))
    return sorted(int(g) for g in rng.choice(gpus, size=offer_size, replace=False))


def timed_resolve() -> list[float]:
    """The fewest-GPU re-solve of every PA auction (A8) timed from now on: one CPU ms entry per call.
    The re-solve picks among allocations tied exactly in welfare and GPU count, so every exact path
    keeps it as it is."""
    calls: list[float] = []
    resolve = themis._fewest_gpus

    def run(*args: Any) -> Any:
        tick = time.process_time()
        rows = resolve(*args)
        calls.append(1e3 * (time.process_time() - tick))
        return rows
    themis._fewest_gpus = run
    return calls


def counted_settling() -> Counter[str]:
    """How the default path settles Phi* and each Phi*_{-i} from now on (decisions A8d): by the
    multipliers of earlier relaxations ("prices"), by the LP bound with cuts ("lp") or by HiGHS on
    the program with the cuts ("milp"), counted over every program."""
    ways: Counter[str] = Counter()
    settle = getattr(themis._FixedWelfare.optimum, "__wrapped__", themis._FixedWelfare.optimum)

    def run(self: Any, *args: Any, **kwargs: Any) -> float:
        before = Counter(self.settled)
        value = settle(self, *args, **kwargs)
        ways.update(self.settled - before)
        return value
    run.__wrapped__ = settle   # type: ignore[attr-defined]
    themis._FixedWelfare.optimum = run
    return ways


def auction_times(label: str, topology: GpuTopology, auctions: int, bidders: int, offer_size: int | None,
                  tie_break: str | None = None, repeat: int = 1) -> None:
    """Each seeded auction through the default path (the LP relaxation with cuts; its fewest-GPU
    re-solve on the program ``tie_break`` names, None: the path's own), the persistent concrete
    model and the fresh-program path (the oracle): CPU and wall time of each, and whether Phi*, the
    PF bundles and every c_i of the first two agree with the oracle's (with ``tie_break="reduced"``
    the default path's bundles may be another pick among exact ties: Phi*, every c_i and the GPU
    count are compared, and the bundles counted); and the default path's bid tables and re-solve.
    With ``repeat`` > 1 the default path runs each auction that many times in all, and each run's
    median and p95 are printed with those of the per-auction minimum."""
    tie_break = tie_break or themis.DEFAULT_TIE_BREAK[PATHS[0]]
    resolves = timed_resolve()
    ways = counted_settling()
    resolve_ms = []
    cpu: dict[str, list[float]] = {solves: [] for solves in PATHS}
    wall: dict[str, list[float]] = {solves: [] for solves in PATHS}
    bid_ms, rows, winners = [], [], []
    again: list[list[float]] = [[] for _ in range(auctions)]   # the default path's further runs of each auction
    disagreements: dict[str, list[int]] = {solves: [] for solves in PATHS[:-1]}
    other_bundles: dict[str, list[int]] = {solves: [] for solves in PATHS[:-1]}   # the same values, another tie
    for seed in range(auctions):
        offered = offer_for(seed, topology, offer_size)
        group = bidders_for(seed, bidders, topology)
        forget_kept_rules()
        tick = time.process_time()
        offer = Offer(offered, topology)
        tables = [canonical_bids(b, offer) for b in group]
        bid_ms.append(1e3 * (time.process_time() - tick))
        rows.append(sum(map(len, tables)))
        outcomes = {}
        for solves in PATHS:
            resolves.clear()
            forget_kept_rules()   # each path values its bidders' bundles afresh, as an auction on a new offer would
            tick, clock = time.process_time(), time.perf_counter()
            outcomes[solves] = canonical_auction(group, offered, topology, solves=solves,   # bids, PF, tie-break, payments
                                                 tie_break=tie_break if solves == PATHS[0] else "whole")
            cpu[solves].append(1e3 * (time.process_time() - tick))
            wall[solves].append(1e3 * (time.perf_counter() - clock))
            if solves == PATHS[0]:
                resolve_ms.append(sum(resolves))
        settled = Counter(ways)   # the programs of the first run only
        for _ in range(repeat - 1):
            forget_kept_rules()
            tick = time.process_time()
            canonical_auction(group, offered, topology, solves=PATHS[0], tie_break=tie_break)
            again[seed].append(1e3 * (time.process_time() - tick))
        ways.clear()
        ways.update(settled)
        oracle = outcomes["fresh"]
        for solves in PATHS[:-1]:
            fast = outcomes[solves]
            used = [g for bundle in fast.bundles for g in bundle]
            assert len(used) == len(set(used)) and set(used) <= set(offered)
            if not (math.isclose(fast.phi_star, oracle.phi_star, rel_tol=1e-9, abs_tol=1e-12)
                    and sum(map(len, fast.bundles)) == sum(map(len, oracle.bundles))
                    and all(abs(a - b) <= 1e-9 for a, b in zip(fast.payments, oracle.payments))):
                disagreements[solves].append(seed)
            elif fast.bundles != oracle.bundles:
                (other_bundles if solves == PATHS[0] and tie_break == "reduced" else disagreements)[solves].append(seed)
        winners.append(sum(1 for b in oracle.bundles if b))
    print(f"{label}: {auctions} auctions, {len(offered)} offered GPUs, {bidders} bidders, "
          f"{np.mean(rows):.0f} bid rows on average, {np.mean(winners):.1f} winners on average")
    for solves in PATHS:
        c, w = np.array(cpu[solves]), np.array(wall[solves])
        print(f"  {solves:10s} whole auction (bids + PF + tie-break + payments): CPU median {np.median(c):.1f} ms, "
              f"p95 {np.percentile(c, 95):.1f} ms; wall median {np.median(w):.1f} ms, p95 {np.percentile(w, 95):.1f} ms")
    if repeat > 1:
        runs = np.column_stack([cpu[PATHS[0]], np.array(again)])
        each = ", ".join(f"{np.median(run):.1f} / {np.percentile(run, 95):.1f}" for run in runs.T)
        least = runs.min(axis=1)
        print(f"  {PATHS[0]} path, {repeat} runs of each auction: CPU median / p95 by run {each} ms; per-auction "
              f"minimum: median {np.median(least):.1f} ms, p95 {np.percentile(least, 95):.1f} ms")
    print(f"  of which bid tables (agent side): CPU median {np.median(bid_ms):.1f} ms, p95 {np.percentile(bid_ms, 95):.1f} ms")
    kept = np.array(bid_ms) + np.array(resolve_ms)
    print(f"  {PATHS[0]} path's fewest-GPU re-solve ({tie_break} program): CPU median {np.median(resolve_ms):.1f} ms, p95 "
          f"{np.percentile(resolve_ms, 95):.1f} ms; with the bid tables (what stays while the re-solve decides exact "
          f"ties): median {np.median(kept):.1f} ms, p95 {np.percentile(kept, 95):.1f} ms")
    print(f"  {PATHS[0]} path's Phi* and Phi*_{{-i}} (A8d): {sum(ways.values())} programs, {ways['prices']} settled by "
          f"earlier relaxations' multipliers, {ways['lp']} by the LP bound with cuts, {ways['milp']} by HiGHS")
    for solves, seeds in disagreements.items():
        reduced = solves == PATHS[0] and tie_break == "reduced"
        print(f"  {solves} vs fresh (Phi*, {'GPU count' if reduced else 'PF bundles'}, every c_i): "
              f"{auctions - len(seeds)} of {auctions} agree" + (f"; disagree on seeds {seeds}" if seeds else "")
              + (f"; the same bundles in {auctions - len(seeds) - len(other_bundles[solves])} of them, another pick "
                 f"among exact ties in {len(other_bundles[solves])}" if reduced else ""))
    print("  goal median < 100 ms, p95 < 500 ms; paper (Gurobi) median 354 ms, p95 1398 ms")


def search_before_incumbent(program: ArrayProgram) -> tuple[np.ndarray, float, float, int]:
    """``program`` solved by HiGHS as the re-solve is (no presolve), watched by its
    improving-solution callback: the solution, the CPU ms before the first incumbent and in all,
    and the number of incumbents."""
    h = load_arrays(program, presolve=False)
    found: list[float] = []
    tick = time.process_time()
    h.cbMipImprovingSolution.subscribe(lambda _: found.append(time.process_time()))
    h.run()
    total = time.process_time() - tick
    return np.round(h.getSolution().col_value), 1e3 * (found[0] - tick if found else math.nan), 1e3 * total, len(found)


def another_tie(program: ArrayProgram, chosen: np.ndarray) -> str:
    """Whether an allocation other than ``chosen`` (0/1 by column) meets the re-solve's rows (its
    welfare threshold among them) with no more GPUs: ``program`` with the rows GPUs <= chosen's
    and "not all of chosen's columns", solved by HiGHS for feasibility. "tie" when one does, held
    to every row of ``program`` without tolerance; "unique" when none does; "near" when the
    allocation HiGHS finds meets some row only within its feasibility tolerance."""
    feasibility = program.with_rows(sp.csr_matrix(np.vstack([program.cost, chosen])), [-np.inf, -np.inf],
                                    [program.cost @ chosen, chosen.sum() - 1])
    report = solve_arrays(replace(feasibility, cost=np.zeros(len(program.cost))), presolve=False)
    if report.status is Status.INFEASIBLE:
        return "unique"
    if report.status is not Status.OPTIMAL:
        raise RuntimeError(f"tie check not settled: {report.status.value} {report.message}")
    other = np.round(report.schedule)
    activity = program.matrix @ other
    exact = (np.all(activity >= program.row_lower) and np.all(activity <= program.row_upper)
             and program.cost @ other <= program.cost @ chosen and not np.array_equal(other, chosen))
    return "tie" if exact else "near"


def tie_census(label: str, topology: GpuTopology, auctions: int, bidders: int, offer_size: int | None) -> None:
    """For the seeded auctions of :func:`auction_times` (default path): how often the fewest-GPU
    re-solve (A8) on the whole program chooses among exact ties, i.e. another allocation meets its
    welfare threshold with as few GPUs, and how much of HiGHS's search comes before its first
    incumbent. An exact path that shortened the re-solve (a start, fixing, a cutoff) would change
    that search, hence its pick among the ties (the default path's reduced program does, A8e)."""
    programs: list[tuple[ArrayProgram, np.ndarray]] = []   # each re-solve's program and pick (0/1 by column)
    resolve = themis._fewest_gpus

    def run(program: ArrayProgram, tables: Any, phi_star: float, reduced: Any = None) -> list[int]:
        rows = resolve(program, tables, phi_star, reduced)
        programs.append((themis.fewest_gpu_program(program, themis.bundle_sizes(tables), phi_star), themis._indicator(list(map(len, tables)), rows)))
        return rows
    themis._fewest_gpus = run
    try:
        for seed in range(auctions):
            canonical_auction(bidders_for(seed, bidders, topology), offer_for(seed, topology, offer_size), topology,
                              tie_break="whole")
    finally:
        themis._fewest_gpus = resolve
    ties: Counter[str] = Counter()
    before, total, incumbents = [], [], []
    for program, pick in programs:
        chosen, first, whole, count = search_before_incumbent(program)
        if not np.array_equal(chosen, pick):
            raise RuntimeError("HiGHS watched by its callback picked another allocation than the re-solve")
        ties[another_tie(program, chosen)] += 1
        before.append(first)
        total.append(whole)
        incumbents.append(count)
    print(f"{label}: {auctions} auctions, {len(programs)} fewest-GPU re-solves")
    print(f"  another allocation ties with HiGHS's pick (welfare threshold met exactly, no more GPUs): {ties['tie']} of "
          f"{len(programs)}; HiGHS's pick the only one: {ties['unique']}; another only within HiGHS's tolerance: {ties['near']}")
    print(f"  HiGHS's search: {sum(before):.0f} of {sum(total):.0f} CPU ms before its first incumbent "
          f"({sum(before) / sum(total):.1%}); incumbents per re-solve: {dict(sorted(Counter(incumbents).items()))}")


def full_run(apps: int | None, lease: float, solver_threads: int | None, tie_break: str | None = None) -> None:
    """The full W1 run of Themis (``tie_break`` None: the policy's default)."""
    inst = generate_themis(workload="W1", gpus=64)
    if apps is not None:
        inst = replace(inst, apps=tuple(inst.apps[a] for a in inst.arrival_order[:apps]))
    options: dict[str, Any] = {} if tie_break is None else {"tie_break": tie_break}
    if solver_threads is not None:
        options["solver_threads"] = solver_threads
    policy = Themis(**options)
    print(f"Workload 1, {inst.describe()}, Themis f = 0.8, lease {lease:g} s, tie_break {policy.tie_break}")
    tick, cpu = time.perf_counter(), time.process_time()
    run = simulate(inst, policy, SimOptions(lease=lease))
    wall, cpu = time.perf_counter() - tick, time.process_time() - cpu
    s = themis_summary(run)
    print(f"  CPU {cpu:.1f} s, wall {wall:.1f} s, checker included (goal < 60 s); {run.rounds} rounds; per round median {s['round_ms_median']:.2f} ms, "
          f"p95 {s['round_ms_p95']:.2f} ms, max {1e3 * max(run.round_seconds):.1f} ms; "
          f"share of wall time in rounds {sum(run.round_seconds) / wall:.0%}")
    print(f"  auctions {run.stats.get('auctions', 0)} (count DP {run.stats.get('count_auctions', 0)}, "
          f"canonical {run.stats.get('canonical_auctions', 0)}); max rho {s['max_rho']:.3f}, "
          f"median rho {s['median_rho']:.3f}, GPU hours {s['gpu_hours']:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--auctions", type=int, default=50, help="seeded auctions per cluster (>= 30)")
    parser.add_argument("--bidders", type=int, default=20)
    parser.add_argument("--skip-run", action="store_true", help="only the auction timings")
    parser.add_argument("--skip-auctions", action="store_true", help="only the full simulated run")
    parser.add_argument("--ties", action="store_true", help="instead of the timings: how often the fewest-GPU re-solve "
                        "chooses among exact ties, and when HiGHS finds its incumbent")
    parser.add_argument("--run-apps", type=int, default=None, help="first N W1 apps by arrival (default all)")
    parser.add_argument("--lease", type=float, default=600.0)
    parser.add_argument("--tie-break", choices=themis.TIE_BREAKS, default=None,
                        help="the fewest-GPU re-solve of the default path's auctions and of the run: on the whole "
                             "program, or on the columns reduced-cost fixing keeps (decisions A8e; default: each "
                             "one's own, reduced for the auctions, whole for the policy)")
    parser.add_argument("--repeat", type=int, default=1, help="time the default path's auctions N times each and "
                        "report every run and the per-auction minimum (this machine's CPU time of the same code "
                        "varies by 10-20 %% between runs)")
    parser.add_argument("--solver-threads", type=int, default=None, help="HiGHS threads (0: HiGHS's own; default: HiGHS's own "
                        "for the benchmark auctions, the policy's 1 for the run)")
    args = parser.parse_args()
    set_solver_threads(args.solver_threads)
    if args.ties:
        tie_census("testbed64", preset("testbed64"), args.auctions, args.bidders, None)
        tie_census("sim_256, 64 free GPUs", preset("sim_256"), args.auctions, args.bidders, 64)
        return
    if not args.skip_auctions:
        auction_times("testbed64 (1 rack, 20 machines)", preset("testbed64"), args.auctions, args.bidders, None,
                      args.tie_break, args.repeat)
        auction_times("sim_256, 64 free GPUs drawn at random over its 8 racks", preset("sim_256"), args.auctions,
                      args.bidders, 64, args.tie_break, args.repeat)
    if not args.skip_run:
        full_run(args.run_apps, args.lease, args.solver_threads, args.tie_break)


if __name__ == "__main__":
    main()
