"""The Themis agent's estimator places every phase as the simulator executes it (spec §1.7 step 3:
a phase needing fewer GPUs than the bundle takes them from the machine with the most remaining
GPUs), and the count-only auction path is chosen from what an app reports."""

from __future__ import annotations

import math
from dataclasses import replace
from unittest import mock

import numpy as np
import pytest

from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import ThemisApp, ThemisInstance, ThemisJob
from mlsched.instance.generators.themis import generate_themis
from mlsched.online.themis import policy as themis_policy
from mlsched.online.themis.arbiter import RoundApp, arbiter_round, participants
from mlsched.online.themis.policy import Themis, count_only, lie_profile
from mlsched.online.themis.rho import App, Phase, _in_waves, _shape, _waves_rate, estimate, rho, view_rho, view_rho_bounds
from mlsched.sim.event_engine import SimOptions, simulate

# one rack; machine 0 holds GPU 0, machine 1 holds GPUs 1 and 2 in one slot
SMALL = GpuTopology(((0, (1,)), (0, (2,))))
PROFILE = (1.0, 1.0, 1.5, 2.0)


class GrantOnce:
    """Gives the app the GPUs ``gpus`` at the first round and nothing more."""

    name = "grant-once"

    def __init__(self, gpus: frozenset[int]) -> None:
        self.gpus = gpus

    def start(self, instance, options) -> None:
        self.done = False

    def round(self, view):
        if self.done:
            return {}
        self.done = True
        return {view.apps[0].index: self.gpus}


def alone(phases, gpus, topology, profile) -> float:
    """Finish time of a single app run by the simulator on ``gpus`` (leases never expire)."""
    app = ThemisApp("a", 0.0, tuple(tuple(ThemisJob(w, 1.0, c) for w, c in phase) for phase in phases), profile)
    run = simulate(ThemisInstance("alone", topology, (app,)), GrantOnce(frozenset(gpus)), SimOptions(lease=1e9))
    return float(run.finish[0])


def test_smallest_case_of_the_spec():
    app = App((Phase((100.0, 100.0, 100.0), (1, 1, 1)), Phase((100.0,), (2,))), t_id=100.0, profile=PROFILE)
    assert rho(app, [0, 1, 2], SMALL) == pytest.approx(1.5)   # the last job on {1, 2}: 100 + 50
    finish = alone([[(100, 1), (100, 1), (100, 1)], [(100, 2)]], [0, 1, 2], SMALL, PROFILE)
    assert finish == pytest.approx(150.0)


def test_estimate_equals_execution_for_one_job_phases():
    """Random topologies and bundles G; phases of one job each, every phase but the last able to
    use all of G, the last needing any number of GPUs (fewer than |G| exercises step 3; the
    simulator then releases the rest, A17, which no later phase could miss)."""
    rng = np.random.default_rng(7)
    for _ in range(200):
        machines = tuple((int(rng.integers(2)), tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(1, 3))))
                         for _ in range(rng.integers(2, 5)))
        topology = GpuTopology(machines)
        profile = (1.0, *np.round(np.sort(rng.uniform(1.0, 3.0, size=3)), 3))
        k = int(rng.integers(1, min(topology.num_gpus, 5) + 1))
        gpus = sorted(rng.choice(topology.num_gpus, size=k, replace=False).tolist())
        phases = [[(float(rng.integers(10, 200)), int(rng.integers(k, k + 3)))] for _ in range(rng.integers(1, 3))]
        phases.append([(float(rng.integers(10, 200)), int(rng.integers(1, k + 2)))])
        app = App(tuple(Phase((w,), (c,)) for [(w, c)] in phases), t_id=1.0, profile=profile)
        assert rho(app, gpus, topology) == pytest.approx(alone(phases, gpus, topology, profile), rel=1e-9), \
            (machines, profile, phases, gpus)


class _View:
    def __init__(self, app: ThemisApp) -> None:
        self.app = app


def test_count_only_is_decided_on_the_reported_profile():
    flat = ThemisApp("flat", 0.0, ((ThemisJob(10, 1.0, 4),),), (1.0, 1.0, 1.0, 1.0))
    sensitive = ThemisApp("net", 0.0, ((ThemisJob(10, 1.0, 4),),), (1.0, 1.1, 1.5, 2.0))
    assert count_only(_View(flat)) and not count_only(_View(sensitive))
    assert not count_only(_View(flat), lie_profile(flat.profile, 0.2))      # a liar is priced on its report
    assert count_only(_View(sensitive), (1.0, 1.0, 1.0, 1.0))


def test_split_follows_the_largest_w_over_g_rule():
    """§1.7 step 1 by its definition (each further GPU to the job with the largest w_j / g_j below its
    cap, ties to the lower index, one scan per GPU) against the simulator's heap-based split."""
    from mlsched.instance.themis_physics import split

    def by_definition(work, caps, k):
        g = [1] * len(work)
        for _ in range(k - len(work)):
            open_jobs = [j for j in range(len(work)) if g[j] < caps[j]]
            if not open_jobs:
                break
            g[max(open_jobs, key=lambda j: (work[j] / g[j], -j))] += 1
        return g

    rng = np.random.default_rng(11)
    for _ in range(2000):
        n = int(rng.integers(1, 9))
        work = [float(rng.choice([rng.uniform(0.1, 10), rng.integers(1, 4)])) for _ in range(n)]   # ties included
        caps = rng.integers(1, 7, n).tolist()
        k = int(rng.integers(n, 40))
        assert split(work, caps, k) == by_definition(work, caps, k)


class ComparingThemis(Themis):
    """Themis that, before each round, prices random bundles of every active app through the
    cached path (view_rho with its kept times, keyed by count for count-only apps and by count and
    speed in LPT waves; and its bounds, taken first)
    and through the plain estimator (rho of a fresh estimate), and records every disagreement."""

    name = "themis"

    def __init__(self, seed: int, **options) -> None:
        super().__init__(**options)
        self.draw = np.random.default_rng(seed)
        self.checked = 0
        self.kept_hits = 0
        self.ranged = 0        # bounds that were a range, not the exact value
        self.waves = 0         # bundles under which every phase runs in LPT waves (priced without the estimate)
        self.disagreements: list[tuple[float, int, tuple[int, ...]]] = []

    def round(self, view):
        topology = self.instance.topology
        for app in view.apps:
            profile, flat = self._reported(app), count_only(app, self._reported(app))
            kept = app.carry.get("times")
            for _ in range(3):
                size = int(self.draw.integers(0, len(view.free) + 1))
                bundle = frozenset(self.draw.choice(view.free, size=size, replace=False).tolist()) if size else frozenset()
                gpus = app.holdings | bundle
                if kept is not None and gpus and _shape(gpus, flat, _waves_rate(app, gpus, topology)) in kept[1]:
                    self.kept_hits += 1
                self.waves += _in_waves(app, len(gpus))
                plain = rho(estimate(app, profile), sorted(gpus), topology)
                low, high = view_rho_bounds(app, topology, bundle, profile, count_only=flat)   # before it is known
                cached = view_rho(app, topology, bundle, profile, count_only=flat)
                self.checked += 1
                self.ranged += low < high
                if not (cached == plain and low <= plain <= high):
                    self.disagreements.append((view.now, app.index, tuple(sorted(gpus))))
        return super().round(view)


@pytest.mark.parametrize("workload,lies", [("W1", {}), ("W2", {3: 0.3, 5: 0.2})])
def test_kept_estimates_equal_the_plain_estimator_on_simulated_states(workload, lies):
    """The estimates an app keeps from round to round (by GPU set, by count for count-only apps, by
    count and speed in LPT waves) equal the plain estimator's, and its bounds hold them, on the
    states of a contended run, liars included."""
    base = generate_themis(workload=workload, gpus=16, apps=24)
    inst = replace(base, topology=GpuTopology.uniform(racks=2, machines_per_rack=2, slots_per_machine=2,
                                                      gpus_per_slot=2))
    policy = ComparingThemis(seed=3, lies=lies)
    run = simulate(inst, policy, SimOptions(lease=60.0))
    assert run.rounds > 20 and policy.checked > 200 and policy.kept_hits > 20 and policy.ranged > 20
    assert policy.waves > 20 or workload == "W2"   # no bundle of this W2 run leaves a phase in LPT waves
    assert policy.disagreements == []


@pytest.mark.parametrize("workload,apps,lies", [("W1", 120, {}), ("W2", 24, {3: 0.3, 5: 0.2})])
def test_bounded_ranking_equals_the_plain_ranking_on_simulated_states(workload, apps, lies):
    """At every round of contended runs (liars included) the participants chosen with bounds (LPT
    waves bounded, contenders computed by decreasing upper bound) are those of the plain ranking,
    which computes every candidate's rho_cur; and the bounds spare estimates. (W1's 120 apps give
    about 200 rounds with more contenders than participants.)"""
    base = generate_themis(workload=workload, gpus=16, apps=apps)
    inst = replace(base, topology=GpuTopology.uniform(racks=2, machines_per_rack=2, slots_per_machine=2,
                                                      gpus_per_slot=2))
    compared, spared, differing = 0, 0, []

    def checked_round(round_apps, offered, **options):
        nonlocal compared, spared
        plain = [RoundApp(a.bidder, a.report, a.start) for a in round_apps]
        f, cap = options["fairness_knob"], len(offered) if options["cap_participants"] else len(round_apps)
        bounded = participants(round_apps, f, cap)
        candidates = [i for i, a in enumerate(plain) if a.bidder.unmet > 0]   # spec §2.5 literally
        top = max(1, min(math.ceil((1.0 - f) * len(plain) - 1e-9), cap))
        literal = sorted(sorted(candidates, key=lambda i: (-plain[i].rho_current, plain[i].start, i))[:top]) if cap else []
        if bounded != participants(plain, f, cap) or bounded != literal:
            differing.append(tuple(bounded))
        compared += 1
        spared += sum(a._rho is None for a in round_apps if a.bidder.unmet and a.finite)
        return arbiter_round(round_apps, offered, **options)

    with mock.patch.object(themis_policy, "arbiter_round", checked_round):
        run = simulate(inst, Themis(seed=5, lies=lies), SimOptions(lease=60.0))
    assert run.rounds > 20 and compared == run.rounds and spared > 20
    assert differing == []


@pytest.mark.parametrize("cluster", ["testbed64", "sim_256", "gavel108"])
def test_phase_time_is_the_slowest_jobs_time_by_the_physics(cluster):
    """A phase's time under G (k >= jobs) is max_j w_j S_j / (g_j speed_j) with the split, the
    placement, the slowdown and the speed of the family's physics, float for float, on an untyped
    cluster (every speed 1) and a typed one."""
    from mlsched.instance.themis_clusters import preset
    from mlsched.instance.themis_physics import assign, slowdown, speed, split
    from mlsched.online.themis.rho import phase_time

    topology = preset(cluster)
    rng = np.random.default_rng(7)
    speeds = {name: float(rng.uniform(0.2, 1.0)) for name in topology.type_names}
    assert bool(speeds) == (cluster == "gavel108")
    for _ in range(200):
        jobs = int(rng.integers(1, 6))
        phase = Phase(tuple(float(w) for w in rng.uniform(1.0, 1e4, jobs)), tuple(int(c) for c in rng.integers(1, 9, jobs)))
        gpus = sorted(int(g) for g in rng.choice(topology.num_gpus, size=int(rng.integers(jobs, 2 * jobs + 4)), replace=False))
        counts = split(phase.work, phase.caps, len(gpus))
        times = [w * slowdown(PROFILE, job, topology) / (g * speed(speeds, job, topology))
                 for w, g, job in zip(phase.work, counts, assign(gpus, counts, topology))]
        assert phase_time(phase, gpus, topology, PROFILE, speeds) == max(times)
