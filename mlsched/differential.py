"""Differential testing of exact programs: seeded random tiny instances solved by HiGHS (default
options), SCIP (through the LP file of the same model) and a brute-force enumeration written
independently of the formulation. Counts agreements and disagreements by kind.

Programs covered: OASiS OPT_paper and OPT_chunk, Astraea's P-OFF (admission and all-jobs; its LP
relaxation and UB-POOL must stay above the brute force), the Themis Nash-social-welfare auction, Themis's
offline optimum O1 (its array path and its cross-certified Pyomo model; both the least max rho and, at
it, the least sum of completions against the brute force) and
the SoW hindsight ILP H (HiGHS, SCIP, brute force; for ILP H also the presolve-off array path mlsched's
E[H] uses; for the auction also its persistent-model and fresh-program paths, whose allocations and
payments must match), and the OgaSched linear hindsight program and the SoW relaxations LP-R, LP-RP, LP-E
(cvxpy/Clarabel against the Pyomo LP in HiGHS; a continuous program has no finite enumeration, so
there the two solvers check each other, and the SoW benchmark inequalities (B1)-(B4) must hold around
them). A disagreement is kept with
its seed so it can be minimised into a regression case under ``tests/regressions/``.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from mlsched import bruteforce
from mlsched.exact import exact_astraea, exact_sow
from mlsched.formulations import astraea, oasis, ogasched, sow, themis
from mlsched.formulations.themis import Bidder
from mlsched.formulations.themis_machine_dp import MachineDp
from mlsched.formulations.themis_offline import solve_offline
from mlsched.instance import ClusterJobsInstance, MultiServerInstance, MultiTenantInstance, SowInstance, from_dict
from mlsched.instance.generators.ogasched import generate_ogasched
from mlsched.instance.generators.sow import generate_sow, tiny_sow
from mlsched.instance.sow import Realization
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisApp, ThemisInstance, ThemisJob
from mlsched.online.themis.rho import App, rho
from mlsched.sim.sow_run import realizations
from mlsched.solve import SolveReport, Status, solve, solve_arrays, solve_cvxpy

TOLERANCE = 1e-6


def random_oasis_instance(rng: np.random.Generator) -> ClusterJobsInstance:
    """1-2 worker and 1-2 PS servers, 2-4 jobs, T = 2-3, 1-2 resources: tiny enough to enumerate."""
    resources = ["r1", "r2"][: int(rng.integers(1, 3))]
    jobs = []
    horizon = int(rng.integers(2, 4))
    for n in range(int(rng.integers(2, 5))):
        b = int(rng.integers(1, 4))
        kind = rng.choice(["table", "sigmoid", "linear"])
        if kind == "table":
            values = np.sort(rng.uniform(0, 12, size=horizon))[::-1].round(6).tolist()
            utility = {"kind": "table", "values": values}
        elif kind == "sigmoid":
            utility = {"kind": "sigmoid", "gamma1": float(rng.uniform(1, 20)), "gamma2": float(rng.uniform(0, 2)),
                       "gamma3": float(rng.integers(0, 3))}
        else:
            utility = {"kind": "linear", "intercept": float(rng.integers(1, 15)), "slope": float(rng.integers(0, 5))}
        worker = {r: int(rng.integers(0, 3)) for r in resources}
        if not any(worker.values()):
            worker[resources[0]] = 1
        jobs.append({
            "id": str(n), "arrival": int(rng.integers(1, horizon + 1)), "epochs": int(rng.integers(1, 3)),
            "chunks": int(rng.integers(1, 4)), "minibatches": 1,
            "minibatch_time": float(rng.choice([0.3, 0.5, 0.6, 1.0, 1.5, 2.0, 4.0])),
            "worker_demand": worker, "ps_demand": {r: int(rng.integers(0, 3)) for r in resources},
            "bandwidth": {"worker": b, "ps": int(rng.integers(b, 5))}, "utility": utility,
        })
    return from_dict({
        "format": "mlsched/v1", "family": "cluster-jobs", "name": "differential", "horizon": horizon,
        "resources": resources,
        "worker_servers": [{"name": f"w{h}", "capacity": {r: int(rng.integers(1, 7)) for r in resources}}
                           for h in range(int(rng.integers(1, 3)))],
        "ps_servers": [{"name": f"p{k}", "capacity": {r: int(rng.integers(1, 7)) for r in resources}}
                       for k in range(int(rng.integers(1, 3)))],
        "jobs": jobs,
    })


@dataclass
class Tally:
    program: str
    instances: int = 0
    agreements: int = 0
    disagreements: Counter = field(default_factory=Counter)
    cases: list[tuple[int, str]] = field(default_factory=list)


Answers = dict[str, float | None]


def _oasis_program(variant: str) -> Callable[[ClusterJobsInstance], tuple[Answers, float]]:
    def run(inst: ClusterJobsInstance) -> tuple[Answers, float]:
        highs = solve(oasis.build(inst, variant=variant))
        verified = solve(oasis.build(inst, variant=variant), verify=True)
        truth = bruteforce.oasis_opt(inst, variant=variant)
        answers: Answers = {
            "highs": highs.objective if highs.status is Status.OPTIMAL else None,
            "scip": verified.verifier_objective,
            # what mlsched reports: a verified optimum, or the best checked solution on DISAGREE
            "mlsched-verified": verified.objective if verified.status in (Status.OPTIMAL, Status.DISAGREE) else None,
        }
        return answers, truth
    return run


def random_ogasched_instance(rng: np.random.Generator) -> MultiServerInstance:
    """2-4 job types, as many to 2 more nodes, six resource types, linear utilities, 5-30 slots."""
    ports = int(rng.integers(2, 5))
    return generate_ogasched(int(rng.integers(0, 2**31)), ports=ports, nodes=ports + int(rng.integers(0, 3)),
                             horizon=int(rng.integers(5, 31)), density=min(float(ports), 1.5 + float(rng.random())),
                             contention=float(rng.uniform(0.05, 2.0)), rho=float(rng.uniform(0.2, 1.0)))


def _ogasched_linear(inst: MultiServerInstance) -> tuple[Answers, float]:
    counts = inst.arrivals().sum(axis=0)
    clarabel = ogasched.hindsight_cvxpy(inst, counts).objective
    highs = solve(ogasched.build_linear(inst, counts)).objective
    reference = clarabel if clarabel is not None else float("nan")
    return {"highs": highs, "clarabel": clarabel}, reference


def random_auction(rng: np.random.Generator) -> tuple[list[Bidder], list[int]]:
    """2-3 single-job Themis apps with random work, caps, elapsed time and placement profiles
    bidding for 3-6 of 6 GPUs on three 2-GPU machines in two racks."""
    topology = GpuTopology(((0, (2,)), (0, (2,)), (1, (2,))))
    offered = sorted(int(g) for g in rng.choice(6, size=int(rng.integers(3, 7)), replace=False))
    bidders = []
    for n in range(int(rng.integers(2, 4))):
        app = App.single_job(float(rng.uniform(500, 5000)), int(rng.integers(1, 4)), cluster_gpus=6,
                             n_avg=float(rng.integers(1, 4)), elapsed=float(rng.uniform(0, 500)),
                             profile=(1.0, 1.0, 1.5, 2.0) if rng.random() < 0.5 else (1.0, 1.0, 1.0, 1.0))
        bidders.append(Bidder(str(n), lambda bundle, app=app: rho(app, sorted(bundle), topology), app.demand))
    return bidders, offered


def _themis_auction(case: tuple[list[Bidder], list[int]]) -> tuple[Answers, float]:
    bidders, offered = case
    tables = [themis.exhaustive_bids(b, offered) for b in bidders]
    built = themis.build_pf(tables, themis.log_values(tables), offered)
    highs = solve(built)
    verified = solve(themis.build_pf(tables, themis.log_values(tables), offered), verify=True)
    truth, truth_without = bruteforce.themis_pf([b.rho for b in bidders], [b.unmet for b in bidders], offered)
    auction = themis.pa_auction(tables, offered, lp_bound=False)   # the default path (machine DP or the LP relaxation with cuts)
    persistent = themis.pa_auction(tables, offered, lp_bound=False, solves="persistent")
    fresh = themis.pa_auction(tables, offered, lp_bound=False, solves="fresh")   # the original path, the oracle
    units, capacity = themis.usage_matrices(tables, themis.table_usage(tables, None), Counter(offered))
    dp = MachineDp(themis.log_values(tables), units, capacity)   # every Phi*_{-i}
    dp_values = dp.phi_star if all(abs(a - b) <= TOLERANCE * max(1.0, abs(b)) for a, b in zip(dp.phi_without, truth_without)) \
        else None
    same = all(other.rows == fresh.rows and all(abs(a - b) <= 1e-9 for a, b in zip(other.payments, fresh.payments))
               for other in (auction, persistent))
    return {"highs": highs.objective if highs.status is Status.OPTIMAL else None, "scip": verified.verifier_objective,
            "mlsched-verified": verified.objective if verified.status in (Status.OPTIMAL, Status.DISAGREE) else None,
            "mlsched-auction": auction.phi_star, "mlsched-auction-persistent": persistent.phi_star,
            "mlsched-auction-fresh": fresh.phi_star,
            "mlsched-auction-same-allocation-and-payments": auction.phi_star if same else None,
            "mlsched-machine-dp-with-every-phi-without": dp_values}, truth


@dataclass(frozen=True)
class O1Case:
    """A tiny O1 instance in exact numbers (for the brute force) and as a Themis instance."""

    machines: list[tuple[int, int]]               # (rack, GPUs)
    apps: list[tuple[Fraction, ...]]              # (a, W, d, s, s')
    t_id: list[Fraction]
    slot: Fraction
    horizon: int

    def instance(self) -> ThemisInstance:
        topology = GpuTopology(tuple((rack, (gpus,)) for rack, gpus in self.machines))
        return ThemisInstance("differential", topology, tuple(
            ThemisApp(f"a{i}", float(a), ((ThemisJob(float(w), 1.0, int(d)),),), (1.0, 1.0, float(s), float(s3)))
            for i, (a, w, d, s, s3) in enumerate(self.apps)))


def random_o1_case(rng: np.random.Generator) -> O1Case:
    """2-3 single-job apps (arrivals 0-12 s, work 5-40 GPU-s, caps 1-3, slowdowns s <= s' in
    {1, 5/4, 3/2, 2, 3}) on one 2-GPU machine (3-6 slots of 10 s) or two machines of 1-2 and 2 GPUs
    in one rack or two (3-4 slots): tiny enough to enumerate, and sometimes too short to finish."""
    machines = [(0, 2)] if rng.random() < 0.3 else [(0, int(rng.integers(1, 3))), (int(rng.integers(0, 2)), 2)]
    n = int(rng.integers(2, 4)) if len(machines) == 1 else int(rng.choice([2, 2, 3]))
    horizon = int(rng.integers(3, 7)) if len(machines) == 1 else int(rng.integers(3, 5))
    slowdowns = [Fraction(1), Fraction(5, 4), Fraction(3, 2), Fraction(2), Fraction(3)]
    apps = []
    for _ in range(n):
        s, s3 = sorted(slowdowns[int(k)] for k in rng.integers(0, len(slowdowns), size=2))
        apps.append((Fraction(int(rng.integers(0, 13))), Fraction(int(rng.integers(1, 9)) * 5), int(rng.integers(1, 4)), s, s3))
    return O1Case(machines, apps, [Fraction(int(rng.integers(10, 61))) for _ in range(n)], Fraction(10), horizon)


def _themis_o1(case: O1Case) -> tuple[Answers, float]:
    worst, total = bruteforce.themis_o1(case.machines, case.apps, case.t_id, case.slot, case.horizon)
    inst, t_id = case.instance(), [float(v) for v in case.t_id]
    arrays = solve_offline(inst, t_id=t_id, slot=float(case.slot), horizon=case.horizon)
    verified = solve_offline(inst, t_id=t_id, slot=float(case.slot), horizon=case.horizon, verify=True)
    if worst == math.inf:          # no schedule finishes: both paths must say infeasible
        return {name: 0.0 if result.status is Status.INFEASIBLE else None
                for name, result in (("mlsched-arrays", arrays), ("mlsched-verified", verified))}, 0.0
    truth = float(worst)

    def lexicographic(result: Any) -> float | None:
        """The max rho when the sum of completions at it is the brute force's too."""
        if result.status is not Status.OPTIMAL or result.completion is None:
            return None
        return result.max_rho if abs(float(result.completion.sum()) - float(total)) <= 1e-6 else None

    first = verified.reports[0]
    return {"mlsched-arrays": lexicographic(arrays), "mlsched-verified": lexicographic(verified),
            "scip": first.verifier_objective}, truth


def random_tenant_instance(rng: np.random.Generator) -> MultiTenantInstance:
    """1-2 servers of 1-2 workers and 1-2 PS slots, 1-2 tenants, 1-3 jobs with 1-3 chunks, affine
    utilities (possibly negative when late), b_p / b_w in {0.5, 1, 2}, an explicit horizon of 3-6 slots."""
    servers = [{"name": f"s{n}", "workers": int(rng.integers(1, 3)), "ps": int(rng.integers(1, 3))}
               for n in range(int(rng.integers(1, 3)))]
    tenants = [{"name": "u1", "workers": sum(s["workers"] for s in servers), "ps": sum(s["ps"] for s in servers)}]
    if rng.random() < 0.5 and tenants[0]["workers"] > 1:
        cut = int(rng.integers(1, tenants[0]["workers"]))
        tenants = [{"name": "u1", "workers": cut, "ps": tenants[0]["ps"]},
                   {"name": "u2", "workers": tenants[0]["workers"] - cut, "ps": 0}]
    jobs = []
    for n in range(int(rng.integers(1, 4))):
        central = float(rng.choice([1.0, 2.0]))
        jobs.append({"id": f"j{n}", "owner": tenants[int(rng.integers(len(tenants)))]["name"],
                     "arrival": int(rng.integers(0, 3)), "epochs": 1, "chunks": int(rng.integers(1, 4)),
                     "minibatches": int(rng.integers(1, 3)),
                     "rates": {"centralized": central, "distributed": central * float(rng.choice([0.5, 1.0]))},
                     "utility": {"kind": "affine", "k": -float(rng.integers(1, 6)), "g": float(rng.integers(5, 30))}})
    return from_dict({"format": "mlsched/v1", "family": "multi-tenant", "name": "random", "servers": servers,
                      "tenants": tenants, "bandwidth": {"worker": 1.0, "ps": float(rng.choice([0.5, 1.0, 2.0]))},
                      "jobs": jobs, "horizon": int(rng.integers(3, 7))})


def _astraea_poff(variant: str) -> Callable[[MultiTenantInstance], tuple[Answers, float]]:
    def run(inst: MultiTenantInstance) -> tuple[Answers, float]:
        truth = bruteforce.astraea_opt(inst, variant=variant)
        highs = solve(astraea.build(inst, variant=variant))
        verified = exact_astraea(inst, variant=variant, verify=True)
        lp = exact_astraea(inst, variant=variant, relax=True).objective
        pool = exact_astraea(inst, variant="ub-pool").objective
        if truth is None:        # no schedule runs every job: the solvers must say infeasible
            infeasible = {Status.INFEASIBLE}
            return {"highs": 0.0 if highs.status in infeasible else None,
                    "mlsched-verified": 0.0 if verified.status in infeasible else None}, 0.0
        answers: Answers = {
            "highs": highs.objective if highs.status is Status.OPTIMAL else None,
            "scip": verified.verifier_objective,
            "mlsched-verified": verified.objective if verified.status in (Status.OPTIMAL, Status.DISAGREE) else None,
            # the bounds must not fall below OPT: reported as the optimum when they hold
            "lp-bound": truth if lp is not None and lp >= truth - TOLERANCE * max(1.0, abs(truth)) else lp,
        }
        if variant == "admission":
            answers["ub-pool"] = truth if pool is not None and pool >= truth - TOLERANCE * max(1.0, abs(truth)) \
                else pool
        return answers, truth
    return run


def random_sow_case(rng: np.random.Generator) -> tuple[SowInstance, Realization]:
    """A tiny SoW instance (2-4 jobs, C 1-4, d_max 1-2) and one of its realizations."""
    inst = tiny_sow(int(rng.integers(0, 2**31)), jobs=int(rng.integers(2, 5)), capacity=int(rng.integers(1, 5)),
                    d_max=int(rng.integers(1, 3)), signal="l" if rng.random() < 0.5 else "const")
    reals = realizations(inst)
    return inst, reals.row(int(rng.integers(0, len(reals))))


def _sow_ilp_h(case: tuple[SowInstance, Realization]) -> tuple[Answers, float]:
    inst, real = case
    truth = bruteforce.sow_hindsight(inst, real)
    pack = sow.hindsight(inst, real)
    if pack.size == 0:
        return {"highs": 0.0, "scip": 0.0, "mlsched-verified": 0.0, "mlsched-arrays": 0.0}, truth
    highs = solve(sow.build(inst, variant="hindsight", realization=real))
    verified = solve(sow.build(inst, variant="hindsight", realization=real), verify=True)
    arrays = solve_arrays(pack.arrays(integer=True), presolve=False)
    return {"highs": highs.objective if highs.status is Status.OPTIMAL else None, "scip": verified.verifier_objective,
            "mlsched-verified": verified.objective if verified.status in (Status.OPTIMAL, Status.DISAGREE) else None,
            "mlsched-arrays": arrays.objective if arrays.status is Status.OPTIMAL else None}, truth


def random_sow_instance(rng: np.random.Generator) -> SowInstance:
    """A small SoW instance for the relaxations; every fourth one stochastic (2 SoWs per job)."""
    seed = int(rng.integers(0, 2**31))
    if rng.random() < 0.25:
        return generate_sow(jobs=int(rng.integers(2, 7)), capacity=int(rng.integers(1, 9)), variant="stochastic",
                            sows=2, seed=seed)
    return tiny_sow(seed, jobs=int(rng.integers(2, 7)), capacity=int(rng.integers(1, 9)),
                    signal="l" if rng.random() < 0.5 else "const")


def _sow_relaxation(variant: str) -> Callable[[SowInstance], tuple[Answers, float]]:
    def run(inst: SowInstance) -> tuple[Answers, float]:
        if inst.stochastic and variant != "lp-e":
            inst = inst.concrete(tuple(0 for _ in inst.jobs))
        pack = sow.relaxed_packing(inst, variant)
        if pack.size == 0:
            return {"highs": 0.0, "clarabel": 0.0}, 0.0
        highs = solve(sow.build(inst, variant=variant))
        clarabel = solve_cvxpy(pack.cvxpy_problem(), tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10).objective
        reference = clarabel if clarabel is not None else float("nan")
        answers: Answers = {"highs": highs.objective, "clarabel": clarabel}
        if highs.objective is not None:
            answers.update(_sow_inequalities(inst, variant, highs.objective, reference))
        return answers, reference
    return run


SCALE_DELTA = 0.25   # (B2) is checked at supply C / (1 + SCALE_DELTA)


def _value(report: SolveReport) -> float:
    """A proven optimum's value; NaN otherwise, so that every inequality it enters fails."""
    return float(report.objective) if report.status is Status.OPTIMAL and report.objective is not None else math.nan


def _sow_inequalities(inst: SowInstance, variant: str, value: float, reference: float) -> Answers:
    """The benchmark inequalities (spec §2.4) around ``value`` = the program's optimum at C: each is
    answered with ``reference`` when it holds, else with the side that breaks it.
    (B1) E[H] <= LP-R; (B2) LP(C / (1 + delta)) >= LP(C) / (1 + delta) and <= LP(C); (B3) on stochastic
    instances E_S[LP-R(S)] <= LP-E, on fixed ones LP-E = LP-R; (B4) LP-RP <= LP-R, equal when sigma = l."""
    def holds(ok: bool, broken: float) -> float:
        return reference if ok else broken

    slack = TOLERANCE * max(1.0, abs(value))
    scaled = _value(exact_sow(inst, variant=variant, supply=inst.capacity / (1 + SCALE_DELTA)))
    out: Answers = {"b2-scaling": holds(value / (1 + SCALE_DELTA) - slack <= scaled <= value + slack,
                                        scaled * (1 + SCALE_DELTA))}
    if variant in ("lp-r", "lp-rp"):
        lp_r = value if variant == "lp-r" else _value(exact_sow(inst, variant="lp-r"))
        lp_rp = value if variant == "lp-rp" else _value(exact_sow(inst, variant="lp-rp"))
        signal_is_duration = all(p.signal == p.duration for j in inst.jobs for p in j.sow.support)
        out["b4-lp-rp"] = holds(lp_rp <= lp_r + slack and (not signal_is_duration or abs(lp_rp - lp_r) <= slack),
                                lp_rp)
    if variant == "lp-r":
        expected_h = _value(exact_sow(inst, verify=False))
        out["b1-hindsight"] = holds(expected_h <= value + slack, expected_h)
    if variant == "lp-e":
        draws = itertools.product(*(range(len(inst.sow_choices(j))) for j in range(inst.num_jobs)))
        mean_lp_r = sum(math.prod(inst.sow_choices(j)[k][0] for j, k in enumerate(draw))
                        * _value(exact_sow(inst.concrete(draw), variant="lp-r")) for draw in draws)
        ok = mean_lp_r <= value + slack if inst.stochastic else abs(mean_lp_r - value) <= slack
        out["b3-expected-lp-r"] = holds(ok, mean_lp_r)
    return out


PROGRAMS: dict[str, Callable[[Any], tuple[Answers, float]]] = {
    "oasis-opt_paper": _oasis_program("paper"),
    "oasis-opt_chunk": _oasis_program("chunk"),
    "ogasched-hindsight-linear": _ogasched_linear,
    "themis-nsw-auction": _themis_auction,
    "themis-o1": _themis_o1,
    "astraea-poff-admission": _astraea_poff("admission"),
    "astraea-poff-alljobs": _astraea_poff("all-jobs"),
    "sow-ilp-h": _sow_ilp_h,
    "sow-lp-r": _sow_relaxation("lp-r"),
    "sow-lp-rp": _sow_relaxation("lp-rp"),
    "sow-lp-e": _sow_relaxation("lp-e"),
}
GENERATORS: dict[str, Callable[[np.random.Generator], Any]] = {
    "oasis-opt_paper": random_oasis_instance,
    "oasis-opt_chunk": random_oasis_instance,
    "ogasched-hindsight-linear": random_ogasched_instance,
    "themis-nsw-auction": random_auction,
    "themis-o1": random_o1_case,
    "astraea-poff-admission": random_tenant_instance,
    "astraea-poff-alljobs": random_tenant_instance,
    "sow-ilp-h": random_sow_case,
    "sow-lp-r": random_sow_instance,
    "sow-lp-rp": random_sow_instance,
    "sow-lp-e": random_sow_instance,
}
REFERENCE = {"oasis-opt_paper": "bruteforce", "oasis-opt_chunk": "bruteforce", "ogasched-hindsight-linear": "clarabel",
             "themis-nsw-auction": "bruteforce", "themis-o1": "bruteforce", "astraea-poff-admission": "bruteforce",
             "astraea-poff-alljobs": "bruteforce", "sow-ilp-h": "bruteforce", "sow-lp-r": "clarabel",
             "sow-lp-rp": "clarabel", "sow-lp-e": "clarabel"}


def differential(program: str, count: int, *, seed: int = 0) -> Tally:
    """Run ``count`` seeded instances of ``program``; every answer is compared with the reference
    (brute force for OASiS, Clarabel for the continuous OgaSched program).

    Disagreement kinds are ``"<solver>-vs-<reference>"`` for solver in highs (default options),
    scip, mlsched-verified (the answer mlsched reports after cross-certification) and clarabel.
    """
    tally = Tally(program)
    run = PROGRAMS[program]
    for k in range(count):
        inst = GENERATORS[program](np.random.default_rng([seed, k]))
        answers, truth = run(inst)
        tally.instances += 1
        reference = REFERENCE[program]
        kinds = [f"{name}-vs-{reference}" for name, value in answers.items() if name != reference
                 and (value is None or abs(value - truth) > TOLERANCE * max(1.0, abs(truth)))]
        if not kinds:
            tally.agreements += 1
        for kind in kinds:
            tally.disagreements[kind] += 1
            tally.cases.append((k, kind))
    return tally


def highs_presolve_disagrees(inst: ClusterJobsInstance, variant: str = "paper") -> bool:
    """True when HiGHS with default presolve and with presolve off differ on the exact program."""
    on = solve(oasis.build(inst, variant=variant))
    off = solve(oasis.build(inst, variant=variant), presolve=False)
    if on.objective is None or off.objective is None:
        return on.objective != off.objective
    return abs(on.objective - off.objective) > TOLERANCE * max(1.0, abs(off.objective))


def minimise(inst: ClusterJobsInstance, still_fails: Callable[[ClusterJobsInstance], bool]) -> ClusterJobsInstance:
    """Greedy one-at-a-time reduction: drop jobs, worker servers, PS servers and resources while
    ``still_fails`` holds; returns the smallest instance reached."""
    current = inst.to_dict()
    changed = True
    while changed:
        changed = False
        for candidate in _reductions(current):
            try:
                trial = from_dict(candidate)
            except Exception:  # a reduction that breaks validity is simply not taken
                continue
            if still_fails(trial):
                current, changed = candidate, True
                break
    return from_dict(current)


def _reductions(doc: dict) -> list[dict]:
    import copy

    out = []
    for key in ("jobs", "worker_servers", "ps_servers"):
        for index in range(len(doc[key])):
            if key != "jobs" and len(doc[key]) == 1:
                continue
            smaller = copy.deepcopy(doc)
            del smaller[key][index]
            out.append(smaller)
    for resource in doc["resources"]:
        if len(doc["resources"]) == 1:
            break
        smaller = copy.deepcopy(doc)
        smaller["resources"].remove(resource)
        for item in smaller["worker_servers"] + smaller["ps_servers"]:
            item["capacity"].pop(resource, None)
        for job in smaller["jobs"]:
            job["worker_demand"].pop(resource, None)
            job["ps_demand"].pop(resource, None)
        out.append(smaller)
    return out
