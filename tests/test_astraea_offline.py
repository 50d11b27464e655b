"""Astraea's multi-tenant family and its exact offline program P-OFF (spec §1, §2.5, §7.5):
the hand-checked optima, a brute force written apart from the MILP, the bounds, bad input."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
from astraea_builders import ex, job, system
from model_rows import violated_rows

from mlsched import bruteforce
from mlsched.cli import main
from mlsched.errors import UsageError
from mlsched.exact import exact_astraea
from mlsched.formulations import astraea
from mlsched.formulations.astraea import Config
from mlsched.instance import dumps, load, loads
from mlsched.instance.multi_tenant import duration
from mlsched.instance.parameter_server import eq1_rates
from mlsched.sim.multi_tenant_check import TenantSchedule, check, realized_utilities
from mlsched.solve import Status, solve


def opt(inst, variant="admission", **kwargs):
    report = solve(astraea.build(inst, variant=variant), verify=True, **kwargs)
    assert report.status is Status.OPTIMAL and report.verified, report.message
    schedule = report.schedule
    assert check(inst, schedule, astraea.offline_horizon(inst, variant)) == []
    assert realized_utilities(inst, schedule).sum() >= report.objective - 1e-6   # the checked schedule scores it
    return report.objective


def o1(phi_b_g: float = 50.0):
    """O1/O3: 1 server (2 workers, 1 PS), jobs A (B = 4, 100 - 10x) and B (B = 2, g - 10x), D = 2."""
    return system([job("A", "u1", arrival=0, chunks=2, epochs=2, minibatches=1, k=-10, g=100),
                   job("B", "u1", arrival=0, chunks=2, epochs=1, minibatches=1, k=-10, g=phi_b_g)],
                  servers=[(2, 1)], tenants=[(2, 1)], horizon=6)


def test_durations_of_the_spec():
    e = ex()
    j11, j12, _, j22 = e.jobs
    assert (duration(j11, 2, True), duration(j11, 2, False), duration(j11, 1, False)) == (2, 4, 8)
    assert (duration(j12, 2, True), duration(j12, 3, False)) == (3, 4)
    assert (duration(j22, 2, True), duration(j22, 3, False)) == (30, 40)


def test_eq1_rates():
    cent, dist = eq1_rates(0.5, 3600.0, 225.0, 1.0)     # m = 0.5 h, G = 1 ms-hour, 2 * 8 * 225 / 1 / 3600 = 1 h
    assert cent == pytest.approx(1 / 0.501) and dist == pytest.approx(1 / 1.501)


def test_o1_order_matters():
    assert opt(o1()) == pytest.approx(110)


def test_o2_bandwidth():
    def o2(b_p):
        return system([job("J", "u1", arrival=0, chunks=4, epochs=3, central=1.0, distributed=0.8, k=-1, g=100)],
                      servers=[(2, 1), (2, 1)], tenants=[(4, 2)], bandwidth=(1, b_p),
                      horizon=10)
    assert opt(o2(2)) == pytest.approx(96)
    assert opt(o2(1)) == pytest.approx(95)


def test_o3_admission_and_all_jobs():
    inst = o1(phi_b_g=5.0)
    assert opt(inst, "admission") == pytest.approx(80)
    assert opt(inst, "all-jobs") == pytest.approx(65)


def test_ex_and_ex_share_optima():
    """§7.2, §7.3 (horizons cut to what the optimal schedules need, keeping the tests quick; the
    spec's horizon rule, 53 slots here, gives the same optima)."""
    assert astraea.offline_horizon(ex(), "admission") == 53
    assert opt(ex(horizon=34)) == pytest.approx(326)
    assert opt(ex(("j11", "j12", "j21"), tenants=((2, 1), (6, 3)), horizon=8)) == pytest.approx(286)


def test_lp_and_ub_pool_bound_opt():
    for inst in (o1(), o1(5.0), ex(("j11", "j12", "j21"), horizon=8)):
        best = opt(inst)
        lp = solve(astraea.build(inst, relax=True)).objective
        pool = solve(astraea.build(inst, variant="ub-pool")).objective
        assert lp >= best - 1e-6 and pool >= best - 1e-6


def brute_force(inst, horizon):
    """max of (3) with admission by enumeration: every job's (start, W, per-server split of workers
    and PS) with zeta read from the placement, checked by the independent checker."""
    options = []
    for jb in inst.jobs:
        mine = [None]
        for w in range(1, jb.chunks + 1):
            for ys in itertools.product(*(range(min(c, w) + 1) for c in inst.worker_capacity)):
                if sum(ys) != w:
                    continue
                for zs in itertools.product(*(range(c + 1) for c in inst.ps_capacity)):
                    if sum(zs) < 1:
                        continue
                    for t0 in range(inst.first_slot(jb), horizon + 1):
                        mine.append((t0, ys, zs))
        options.append(mine)
    best = 0.0
    for pick in itertools.product(*options):
        schedule = TenantSchedule.empty(inst)
        for j, choice in enumerate(pick):
            if choice is not None:
                schedule.start[j], schedule.workers[j], schedule.ps[j] = choice[0], choice[1], choice[2]
        if not check(inst, schedule, horizon):
            best = max(best, float(realized_utilities(inst, schedule).sum()))
    return best


@pytest.mark.parametrize("seed", range(6))
def test_p_off_meets_brute_force(seed):
    rng = np.random.default_rng(seed)
    servers = [(int(rng.integers(1, 3)), int(rng.integers(1, 2))) for _ in range(2)]
    total_w, total_p = sum(w for w, _ in servers), sum(p for _, p in servers)
    jobs = [job(f"j{i}", "u1", arrival=int(rng.integers(0, 2)), chunks=int(rng.integers(1, 3)),
                epochs=int(rng.integers(1, 4)), central=1.0, distributed=float(rng.choice([0.5, 1.0])),
                k=-float(rng.integers(1, 20)), g=float(rng.integers(5, 60))) for i in range(2)]
    inst = system(jobs, servers=servers, tenants=[(total_w, total_p)], horizon=4)
    assert opt(inst) == pytest.approx(brute_force(inst, 4), abs=1e-7)


def two_wide_jobs_on_one_server():
    """One server of 2 workers and 1 PS; two jobs of 6 chunks released at 0 (first slot 1): K_j
    holds distributed configurations of up to 6 workers (W = 6: 2 slots), but no more than 2
    workers fit the cluster (W = 2 centralized: 3 slots)."""
    jobs = [job(f"j{i}", "u1", arrival=0, chunks=6, central=1.0, distributed=0.5) for i in range(2)]
    return system(jobs, servers=[(2, 1)], tenants=[(2, 1)])


def test_horizon_counts_only_configurations_that_fit_the_cluster():
    inst = two_wide_jobs_on_one_server()
    configs = astraea.configurations(inst, inst.jobs[0])
    assert min(c.duration for c in configs) == 2 and not astraea.runs_alone(inst, Config(6, False, 2))
    assert [c.duration for c in configs if astraea.runs_alone(inst, c)] == [6, 3, 12, 6]
    # the jobs one after another at 3 slots each: slots 1..6 (the shortest of every configuration,
    # 2 + 2, would give 4 slots, in which the all-jobs program has no schedule)
    assert astraea.offline_horizon(inst, "all-jobs") == 6
    report = exact_astraea(inst, variant="all-jobs")
    assert report.status is Status.OPTIMAL
    assert report.objective == pytest.approx(bruteforce.astraea_opt(dataclasses.replace(inst, horizon=6),
                                                                    variant="all-jobs"))
    assert bruteforce.astraea_opt(dataclasses.replace(inst, horizon=4), variant="all-jobs") is None


@pytest.mark.parametrize("seed", range(12))
def test_all_jobs_is_feasible_within_the_horizon_rule(seed):
    # random tiny instances without a horizon whose jobs all fit the cluster alone, some with
    # configurations that fit no server set (W up to 4 on 2-4 workers): the rule's horizon holds
    # a schedule of every job, and P-OFF's all-jobs optimum is the brute force's at that horizon
    rng = np.random.default_rng(100 + seed)
    servers = [(int(rng.integers(1, 3)), 1) for _ in range(int(rng.integers(1, 3)))]
    total_w = sum(w for w, _ in servers)
    jobs = [job(f"j{i}", "u1", arrival=int(rng.integers(0, 3)), chunks=int(rng.integers(1, 5)),
                central=1.0, distributed=float(rng.choice([0.5, 1.0])), k=-float(rng.integers(1, 10)),
                g=float(rng.integers(20, 60))) for i in range(int(rng.integers(1, 4)))]
    inst = system(jobs, servers=servers, tenants=[(total_w, len(servers))])
    horizon = astraea.offline_horizon(inst, "all-jobs")
    report = exact_astraea(inst, variant="all-jobs")
    assert report.status is Status.OPTIMAL
    assert report.objective == pytest.approx(bruteforce.astraea_opt(dataclasses.replace(inst, horizon=horizon),
                                                                    variant="all-jobs"), abs=1e-7)


def test_horizon_reaches_the_runs_latest_completion():
    # spec §2.5: T = max(ALG makespan, ...). A run ending at slot 8, after the rule's 6, is a point of
    # P-OFF over slots 1..8, so OPT >= its utility; the admission variant of affine utilities keeps
    # its exact horizon (a later completion is worth less than nothing).
    inst = two_wide_jobs_on_one_server()
    late = TenantSchedule(np.array([1, 6]), np.array([[2], [2]]), np.array([[1], [1]]), "late")
    assert check(inst, late, 8) == [] and late.completions(inst).tolist() == [3, 8]
    report = exact_astraea(inst, variant="all-jobs", starts=[late])
    assert report.status is Status.OPTIMAL and "horizon 8 slots" in report.message
    assert report.objective >= realized_utilities(inst, late).sum()
    assert report.objective == pytest.approx(bruteforce.astraea_opt(dataclasses.replace(inst, horizon=8),
                                                                    variant="all-jobs"))
    admission = exact_astraea(inst, starts=[late])
    assert astraea.exact_horizon(inst, "admission") and "horizon" not in admission.message
    given = exact_astraea(dataclasses.replace(inst, horizon=6), variant="all-jobs", starts=[late])
    assert "horizon" not in given.message
    assert given.objective == pytest.approx(bruteforce.astraea_opt(dataclasses.replace(inst, horizon=6), variant="all-jobs"))


def test_round_trip_and_bad_input(tmp_path, capsys):
    inst = ex()
    assert loads(dumps(inst)).to_dict() == inst.to_dict()
    doc = json.loads(dumps(inst))
    doc["tenants"][0]["workers"] = 5
    doc["jobs"][1]["rates"]["distributed"] = 3
    doc["jobs"][2]["utility"] = {"kind": "affine", "k": 2, "g": 100}
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"{bad}: tenants: quotas of workers sum to 9, the servers hold 8 (§1.1: equal)",
                   f"{bad}: jobs[1].rates.distributed: must be <= the centralized rate 1 (Eq. 1)",
                   f"{bad}: jobs[2].utility.k: must be <= 0, got 2"]


def test_cli_solve(tmp_path, capsys):
    target = tmp_path / "o1.json"
    target.write_text(dumps(o1()))
    assert main(["solve", str(target), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "optimal" and doc["objective"] == pytest.approx(110)
    assert main(["solve", str(target), "--variant", "ub-pool"]) == 0
    assert main(["solve", str(target), "--variant", "all-jobs", "--relax"]) == 0


def test_oasis_and_astraea_share_the_minibatch_time_and_ps_count():
    """One definition of a mini-batch's time (Eq. (1), OASiS's W_i) and of the PS count of (3i) / eq. (6)."""
    from mlsched.instance import load
    from mlsched.instance.parameter_server import minibatch_slots, ps_needed

    oasis = load("oasis/fig5-small-seed0")
    for task in oasis.jobs:
        assert task.chunk_time(oasis.slot_seconds) == task.minibatches * minibatch_slots(
            task.minibatch_time, task.gradient_mb, task.worker_bandwidth, oasis.slot_seconds)
        assert [task.ps_needed(y) for y in range(6)] == [ps_needed(y, task.worker_bandwidth, task.ps_bandwidth)
                                                        for y in range(6)]
    assert ps_needed(np.arange(6), 1, 2).tolist() == [0, 1, 1, 2, 2, 3]
    assert ps_needed(3, 0.1, 0.3) == 1                                   # 1.0000000000000002 is one PS, not two
    e = system([job("J", "u1", arrival=0, chunks=4, epochs=3, central=1.0, distributed=0.8)],
               servers=[(2, 1), (2, 1)], tenants=[(4, 2)], bandwidth=(1, 2))
    schedule = TenantSchedule.empty(e)
    schedule.start[0], schedule.workers[0], schedule.ps[0] = 1, [2, 2], [1, 0]
    assert check(e, schedule, 10) == []                                    # 2 remote workers, 1 PS of twice their bandwidth
    schedule.workers[0] = [1, 3]
    assert any("(3i)" in line for line in check(e, schedule, 10))         # 3 remote workers need 2 PS


def test_irmp_of_ex():
    """IRMP(J_2, tau_2) of EX (Lemma 1): the four jobs from time 0, 4 slots; j22 cannot finish, the
    others run centralized at their fastest on their own servers: 96 + 94 + 96."""
    e = ex()
    irmp = astraea.irmp(e, range(4), 4)
    assert [j.arrival for j in irmp.jobs] == [0] * 4 and irmp.horizon == 4
    assert opt(irmp) == pytest.approx(286)
    assert opt(astraea.irmp(e, [0, 1], 2)) == pytest.approx(96)       # j12 needs 3 slots


def identical_servers_instance(seed: int):
    """Three servers, two of them identical, two or three jobs: (O9) has a pair to order."""
    rng = np.random.default_rng([11, seed])
    servers = [(2, 1), (2, 1), (int(rng.integers(1, 4)), 1)]
    jobs = [job(f"j{i}", "u1", arrival=int(rng.integers(0, 2)), chunks=int(rng.integers(1, 4)),
                epochs=int(rng.integers(1, 3)), central=1.0, distributed=float(rng.choice([0.5, 1.0])),
                k=-float(rng.integers(1, 20)), g=float(rng.integers(5, 60))) for i in range(int(rng.integers(2, 4)))]
    return system(jobs, servers=servers, tenants=[(sum(w for w, _ in servers), 3)], horizon=4)


@pytest.mark.parametrize("seed", range(4))
def test_each_tightening_keeps_the_optimum_and_pooled_rows_cap_the_lp_at_ub_pool(seed):
    inst = identical_servers_instance(seed)
    plain = solve(astraea.build(inst, tightenings=())).objective
    assert plain == pytest.approx(bruteforce.astraea_opt(inst), abs=1e-7)
    for subset in [(t,) for t in astraea.TIGHTENINGS] + [astraea.TIGHTENINGS]:
        assert solve(astraea.build(inst, tightenings=subset)).objective == pytest.approx(plain, abs=1e-7), subset
    pool = solve(astraea.build(inst, variant="ub-pool")).objective
    lp = solve(astraea.build(inst, relax=True, tightenings=("pooled",))).objective
    assert plain - 1e-6 <= lp <= pool + 1e-6


def test_a_start_is_renumbered_onto_the_identical_servers_order():
    """A job on the second of two identical servers reads as the same job on the first: (O9)
    holds at the loaded point, the checker passes it and it scores the same."""
    inst = system([job("A", "u1", arrival=0, chunks=2, epochs=1, minibatches=1, k=-10, g=100)],
                  servers=[(2, 1), (2, 1)], tenants=[(4, 2)], horizon=6)
    late = TenantSchedule(np.array([1]), np.array([[0, 2]]), np.array([[0, 1]]), "hand")
    start = astraea.program_schedule(inst, late)
    assert start.workers.tolist() == [[2, 0]] and start.ps.tolist() == [[1, 0]]
    assert check(inst, start, astraea.offline_horizon(inst, "admission")) == []
    assert realized_utilities(inst, start).sum() == pytest.approx(realized_utilities(inst, late).sum())
    built = astraea.build(inst, tightenings=astraea.TIGHTENINGS)
    built.load_start(start)
    assert violated_rows(built.model) == []
    built.load_start(late)
    assert [name for name in violated_rows(built.model) if name.startswith("o9")]


def test_an_unknown_tightening_is_refused():
    with pytest.raises(UsageError, match="tightening 'cuts'"):
        astraea.build(o1(), tightenings=("cuts",))


def test_checker_requires_whole_slots_workers_and_ps():
    """(3o): a start at slot 10.5 would overlap a full slot unseen by the capacity sweep and end
    half a slot earlier; half workers or PS are no allocation either."""
    import copy

    from mlsched.online.astraea.policy import Astraea

    inst = load("multi-tenant/ex")
    schedule = Astraea().run(inst).schedule
    assert check(inst, schedule, online=True) == []
    for field, value in (("start", 10.5), ("workers", np.nan), ("ps", 0.5)):
        forged = copy.deepcopy(schedule)
        values = getattr(forged, field).astype(float)
        if field == "start":
            values[2] = value
        else:
            values[3, 0] += value
        setattr(forged, field, values)
        problems = check(inst, forged, online=True)
        assert problems and all("not whole numbers (3o)" in p for p in problems), field
