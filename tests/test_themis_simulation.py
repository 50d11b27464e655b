"""The Themis event simulator, its checker, the arbiter policy and the six baselines (Themis spec
§1.4, §1.7, §2.5-2.6, §3.3, §4, §5.4)."""

import dataclasses
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mlsched.baselines.greedy_rounds import THEMIS_BASELINES
from mlsched.cli import main
from mlsched.formulations.themis import Bidder, pa_auction
from mlsched.instance import save
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, NETWORK_PROFILE, ThemisApp, ThemisInstance, ThemisJob
from mlsched.metrics import app_table, jain_index, themis_summary
from mlsched.online.themis.bids import BIDS_MAX, Offer, canonical_auction, canonical_bids, exhaustive_auction
from mlsched.online.themis.policy import Themis, lie_profile
from mlsched.sim.event_check import RunViolation, check_run
from mlsched.sim.event_engine import Holding, SimOptions, simulate
from themis_fingerprints import cases

TESTBED_LIKE = GpuTopology(((0, (1, 1)), (0, (1, 1)), (0, (1, 1, 1, 1))))


def single(work: float, cap: int, arrival: float = 0.0, profile=COMPUTE_PROFILE, name: str = "a") -> ThemisApp:
    return ThemisApp(name, arrival, ((ThemisJob(work, 1.0, cap),),), profile)


def random_instance(seed: int, apps: int = 12) -> ThemisInstance:
    rng = np.random.default_rng(seed)
    out = []
    for a in range(apps):
        phases = [tuple(ThemisJob(float(rng.integers(200, 3000)), float(rng.choice([0.5, 1.0])), int(rng.integers(1, 4)))
                        for _ in range(int(rng.integers(1, 4))))]
        if rng.random() < 0.3:
            phases.append((ThemisJob(400.0, 1.0, 4),))
        out.append(ThemisApp(f"a{a}", float(rng.uniform(0, 1500)), tuple(phases),
                             NETWORK_PROFILE if rng.random() < 0.5 else COMPUTE_PROFILE))
    return ThemisInstance(f"random-{seed}", TESTBED_LIKE, tuple(out))


POLICIES = {"themis": Themis, **THEMIS_BASELINES}


def test_lone_app_runs_at_its_cap_and_has_rho_one():
    # W = 1200 GPU-s on min(cap 2, 8 GPUs) GPUs of one machine: finish 600 s; N_avg = 1 so T_id = 600.
    inst = ThemisInstance("one", TESTBED_LIKE, (single(1200.0, 2),))
    for name, policy in POLICIES.items():
        run = simulate(inst, policy(), SimOptions(lease=100.0))
        assert run.finish[0] == pytest.approx(600.0, rel=1e-12), name
        assert run.rho[0] == pytest.approx(1.0, rel=1e-12)
        assert run.gpu_time == pytest.approx(1200.0, rel=1e-12)


def test_progress_counts_finished_apps_up_to_all_and_changes_nothing():
    inst = random_instance(3)
    heard: list[tuple[int, int]] = []
    run = simulate(inst, Themis(), SimOptions(lease=300.0), on_progress=lambda done, total: heard.append((done, total)))
    done = [d for d, _ in heard]
    assert {t for _, t in heard} == {12} and done == sorted(done) and heard[-1] == (12, 12)
    assert done.count(12) == 1 and len(set(done)) == 13   # every finish heard: 0 first, each count then
    assert np.array_equal(run.finish, simulate(inst, Themis(), SimOptions(lease=300.0)).finish)


def test_restart_overhead_is_paid_only_when_a_job_changes_gpus():
    # Leases of 100 s are renewed on the same GPUs (A18): only the first start pays the 30 s.
    inst = ThemisInstance("one", TESTBED_LIKE, (single(1200.0, 2),))
    run = simulate(inst, Themis(), SimOptions(lease=100.0, restart_overhead=30.0))
    assert run.finish[0] == pytest.approx(630.0, rel=1e-12)
    assert len(run.jobs) == 1


def test_cross_machine_slowdown_and_n_avg():
    # A network-intensive 4-GPU job arrives first on a cluster of 2-GPU machines: level 2 => S = 1.5.
    topo = GpuTopology(((0, (1, 1)), (0, (1, 1))))
    inst = ThemisInstance("spread", topo, (single(1500.0, 4, profile=NETWORK_PROFILE),))
    run = simulate(inst, Themis(), SimOptions(lease=10_000.0))
    assert run.finish[0] == pytest.approx(1500.0 * 1.5 / 4)
    assert run.jobs[0].slowdown == 1.5
    # Two equal apps on 2 GPUs from t = 0; Tiresias gives the first (tie on service) the whole chunk.
    # x: [0, 300] with N_active = 2 => T_id = 600 / 2 * 2 = 600, rho 0.5;
    # y: [0, 600] with N_avg = (2 * 300 + 1 * 300) / 600 = 1.5 => T_id = 450, rho 4/3 (A11).
    two = ThemisInstance("two", GpuTopology(((0, (1, 1)),)), (single(600.0, 2, name="x"), single(600.0, 2, name="y")))
    run = simulate(two, THEMIS_BASELINES["tiresias"](), SimOptions(lease=10_000.0))
    assert np.allclose(run.finish, [300.0, 600.0]) and np.allclose(run.t_id, [600.0, 450.0])
    assert np.allclose(run.rho, [0.5, 4 / 3])


def test_successive_halving_phases_run_in_order():
    jobs = (ThemisJob(100.0, 1.0, 1), ThemisJob(200.0, 1.0, 1), ThemisJob(300.0, 1.0, 1), ThemisJob(400.0, 1.0, 1))
    app = ThemisApp("sh", 0.0, (jobs, jobs[:2], jobs[:1]), COMPUTE_PROFILE)
    inst = ThemisInstance("sh", GpuTopology(((0, (1, 1)),)), (app,))
    run = simulate(inst, Themis(), SimOptions(lease=50.0))
    # phase 1: LPT of (400, 300, 200, 100) on 2 GPUs = 500; phase 2: max(100, 200) on 1 GPU each = 200;
    # phase 3: one job of cap 1 = 100.
    assert run.finish[0] == pytest.approx(800.0)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("name", sorted(POLICIES))
def test_every_policy_passes_the_checker_and_conserves_work(seed, name):
    inst = random_instance(seed)
    run = simulate(inst, POLICIES[name](), SimOptions(lease=300.0))   # checked inside
    assert not check_run(run)
    assert np.all(np.isfinite(run.finish)) and np.all(run.rho > 0)
    # GPU time >= the work delivered at the best slowdown (no progress without GPUs)
    assert run.gpu_time >= sum(a.work for a in inst.apps) * (1 - 1e-9)


def test_checker_rejects_double_allocation_and_missing_work():
    inst = random_instance(0, apps=4)
    run = simulate(inst, Themis(), SimOptions(lease=300.0))
    h = run.holdings[0]
    other = next(a for a in range(len(inst.apps)) if a != h.app)
    forged = dataclasses.replace(run, holdings=[*run.holdings, Holding(other, h.gpu, h.start, h.end)])
    problems = check_run(forged)
    assert any("held by apps" in p for p in problems)
    short = dataclasses.replace(run, jobs=run.jobs[1:])
    assert any("GPU-seconds" in p for p in check_run(short))
    # a placement the record already had (the checker derives each (app, GPU set)'s physics once)
    seen: set = set()
    repeat = next(n for n, iv in enumerate(run.jobs) if (iv.app, iv.gpus) in seen or seen.add((iv.app, iv.gpus)))
    iv = run.jobs[repeat]
    for field, label in (("slowdown", "runs with slowdown"), ("speed", "runs at speed")):
        forged_iv = iv._replace(**{field: getattr(iv, field) * 1.5})
        tampered = dataclasses.replace(run, jobs=[*run.jobs[:repeat], forged_iv, *run.jobs[repeat + 1:]])
        claim = f"app {iv.app} phase {iv.phase} job {iv.job} {label} {getattr(forged_iv, field)},"
        assert any(p.startswith(claim) for p in check_run(tampered)), claim
    with pytest.raises(RunViolation):
        from mlsched.sim.event_check import assert_valid_run
        assert_valid_run(forged)


def test_themis_is_seeded_and_reproducible():
    inst = random_instance(3)
    a = simulate(inst, Themis(seed=5), SimOptions(lease=300.0))
    b = simulate(inst, Themis(seed=5), SimOptions(lease=300.0))
    assert np.array_equal(a.finish, b.finish)


def test_canonical_auction_matches_exhaustive_when_placement_is_count_and_level_based():
    # s0 = s1 profiles: canonical bundles are exact (spec §1.8); compare welfare with exhaustive bids.
    topo = GpuTopology(((0, (1, 1, 1)), (0, (1, 1)), (1, (1, 1))))
    offered = list(range(7))
    rng = np.random.default_rng(0)
    for _ in range(6):
        bidders = []
        for i in range(3):
            work, cap = float(rng.integers(100, 1000)), int(rng.integers(1, 4))
            profile = NETWORK_PROFILE if rng.random() < 0.6 else COMPUTE_PROFILE

            def rho(bundle, work=work, cap=cap, profile=profile):
                if not bundle:
                    return math.inf
                return (work * profile[topo.level(bundle)] / min(len(bundle), cap)) / 500.0
            bidders.append(Bidder(str(i), rho, cap))
        exact = exhaustive_auction(bidders, offered)
        canon = canonical_auction(bidders, offered, topo)
        assert canon.phi_star == pytest.approx(exact.phi_star, abs=1e-9)
        given = [g for b in canon.bundles for g in b]
        assert len(given) == len(set(given)) and set(given) <= set(offered)
        for b, bundle, c in zip(bidders, canon.bundles, canon.payments):
            assert len(bundle) <= b.unmet and 0 <= c <= 1


def test_canonical_bids_shapes():
    topo = GpuTopology(((0, (2,)), (0, (1, 1)), (1, (2,))))
    offer = Offer(list(range(6)), topo)
    bidder = Bidder("x", lambda b: 1.0 / max(len(b), 1e-9) if b else math.inf, 3)
    table = canonical_bids(bidder, offer)
    assert table[0] == (frozenset(), math.inf)
    sizes = sorted(len(b) for b, _ in table[1:])
    assert set(sizes) == {1, 2, 3} and all(len(b) <= 3 for b, _ in table)
    assert frozenset({0, 1}) in {b for b, _ in table}          # one whole slot (best fit)


def _full_table_auction(bidders, offered, topo, bids_max):
    """The canonical auction without the lone-bidder path: whole tables, the PF program, the mapping."""
    offer = Offer(offered, topo)
    tables = [canonical_bids(b, offer, bids_max=bids_max) for b in bidders]
    result = pa_auction(tables, offered, group_of=offer.machine_of, lp_bound=False)
    return offer.concrete(result.bundles), result.payments, result.phi_star, sum(map(len, tables))


def _same_outcome(fast, bidders, offered, topo, bids_max=BIDS_MAX):
    bundles, payments, phi_star, rows = _full_table_auction(bidders, offered, topo, bids_max)
    assert (fast.bundles, fast.payments, fast.phi_star, fast.bids) == (bundles, payments, phi_star, rows)
    assert math.copysign(1.0, fast.phi_star) == math.copysign(1.0, phi_star)


def test_lone_canonical_auction_equals_the_whole_table_on_random_bidders():
    # coarse values (exact ties within and across sizes), values 1 ulp apart (equal logs), +inf rows,
    # holdings (finite empty row), few bids (truncated tables), one offered GPU
    rng = np.random.default_rng(11)
    topo = GpuTopology(((0, (2, 2)), (0, (1, 3)), (1, (4,)), (1, (2, 1))))
    chosen = Counter()
    for trial in range(400):
        size = 1 if trial % 4 == 0 else int(rng.integers(2, topo.num_gpus + 1))
        offered = sorted(rng.choice(topo.num_gpus, size=size, replace=False).tolist())
        base = [float(rng.choice([0.5, 1.0, 2.0, 3.0])) for _ in range(4)]
        base[1] = float(np.nextafter(base[0], math.inf))
        table = {}
        empty = float(rng.choice([math.inf, 2.5, 1.0]))

        def rho(bundle, table=table, base=base, empty=empty):
            if not bundle:
                return empty
            if bundle not in table:
                table[bundle] = math.inf if rng.random() < 0.15 else base[int(rng.integers(4))] / (1 + len(bundle) % 3)
            return table[bundle]
        bidder = Bidder("x", rho, int(rng.integers(1, 9)))
        bids_max = int(rng.choice([BIDS_MAX, 3, 1]))
        fast = canonical_auction([bidder], offered, topo, bids_max=bids_max)
        _same_outcome(fast, [bidder], offered, topo, bids_max)
        chosen[len(fast.bundles[0])] += 1
    assert chosen[0] > 10 and sum(n for k, n in chosen.items() if k > 1) > 50   # both outcomes exercised


def test_lone_canonical_auction_equals_the_whole_table_in_a_simulation():
    # every lone canonical auction of a contended run of network-intensive apps, against the whole table
    import mlsched.online.themis.bids as bids

    inst = next(inst for label, inst in cases() if label == "w2-2racks-burst")
    seen = Counter()
    plain = bids.canonical_auction

    def checked(bidders, offered, topology, **options):
        fast = plain(bidders, offered, topology, **options)
        if len(bidders) == 1:
            _same_outcome(fast, bidders, offered, topology)
            seen[min(len(offered), 3)] += 1
        return fast
    bids.canonical_auction = checked
    try:
        simulate(inst, Themis(), SimOptions(lease=300.0), check=False)
    finally:
        bids.canonical_auction = plain
    assert seen[1] > 5 and seen[3] > 5, seen


def test_lie_profile():
    assert lie_profile(NETWORK_PROFILE, 0.5) == (0.5, 0.5, 2.25, 3.0)
    assert lie_profile(NETWORK_PROFILE, 1.0)[:2] == (0.05, 0.05)


def test_metrics():
    assert jain_index(np.array([1.0, 1.0, 1.0])) == pytest.approx(1.0)
    assert jain_index(np.array([1.0, 0.0])) == pytest.approx(0.5)
    run = simulate(random_instance(1), Themis(), SimOptions(lease=300.0))
    summary = themis_summary(run)
    table = app_table(run)
    assert summary["max_rho"] == pytest.approx(table["rho"].max())
    assert summary["gpu_hours"] == pytest.approx(table["gpu_time"].sum() / 3600)
    assert 0 < summary["placement_score"] <= 1 and 0 < summary["jain"] <= 1


def test_options_are_validated():
    with pytest.raises(Exception, match="lease"):
        SimOptions(lease=0.0)
    with pytest.raises(Exception, match="realisation"):
        Themis(realization="coin")


def test_cli_solve_run_compare(tmp_path, capsys):
    apps = (single(3000.0, 2, 0.0, NETWORK_PROFILE, "a0"), single(2400.0, 4, 100.0, COMPUTE_PROFILE, "a1"),
            single(1200.0, 1, 700.0, NETWORK_PROFILE, "a2"))
    path = tmp_path / "t.json"
    save(ThemisInstance("tiny", TESTBED_LIKE, apps), path)
    assert main(["solve", str(path)]) == 0
    assert "status optimal" in capsys.readouterr().out
    assert main(["run", str(path), "--algorithm", "tiresias"]) == 0
    assert "max rho" in capsys.readouterr().out
    assert main(["compare", str(path), "--algorithms", "themis,srsf"]) == 0
    out = capsys.readouterr().out
    assert "max_rho" in out and "jain" in out and "gpu_hours" in out and "srsf" in out


def test_current_rho_after_expiry_starves_newcomers_and_running_rho_does_not():
    """Spec §1.5/§3.3 read literally: when all of an app's leases end together its rho_cur is
    +inf, tied with a waiting newcomer, and the older app wins (f = 0.8 leaves one participant).
    Reporting the rho of the running allocation lets the newcomer in at the first expiry."""
    topo = GpuTopology(((0, (1, 1)),))
    inst = ThemisInstance("renew", topo, (single(20_000.0, 2, 0.0, name="long"), single(100.0, 1, 10.0, name="new")))
    literal = simulate(inst, Themis(), SimOptions(lease=600.0))
    assert literal.finish[1] == pytest.approx(literal.finish[0] + 100.0)     # waits for the long app to finish
    running = simulate(inst, Themis(current_rho="running"), SimOptions(lease=600.0))
    assert running.finish[1] == pytest.approx(700.0)                          # first expiry at 600 s


def test_cli_run_options(tmp_path, capsys):
    path = tmp_path / "t.json"
    save(ThemisInstance("one", TESTBED_LIKE, (single(1200.0, 2),)), path)
    assert main(["run", str(path), "-a", "themis", "--lease", "100", "--restart-overhead", "30", "--json"]) == 0
    import json
    doc = json.loads(capsys.readouterr().out)
    assert doc["mean_act_hours"] == pytest.approx(630.0 / 3600)       # 600 s of work + one 30 s start
    with pytest.raises(SystemExit) as stop:
        main(["run", str(path), "-a", "themis", "--lease", "0"])
    assert stop.value.code == 2
    oasis = Path(__file__).resolve().parents[1] / "instances" / "oasis" / "fig5-small-seed0.json"
    assert main(["run", str(oasis), "-a", "oasis", "--lease", "5"]) == 2
    assert "take no --lease option" in capsys.readouterr().err
