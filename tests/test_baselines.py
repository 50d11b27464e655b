"""The OASiS baselines of spec §5.3 on hand-computed instances, plus invariants on random ones.

Conventions of the hand-computed cases: one resource "cpu", W_i = 1 slot per chunk (one
mini-batch of 1 slot, no gradients), so Theta_i = E_i N_i worker-slots; f(x) = 10 - x unless
stated; jobs with chunks = 1 have fixed n_w = min(1, U{1..30}) = 1 whatever the seed; PS demand
{} (zero) makes the PS pool never binding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from builders import cluster, job, random_tiny

from mlsched import sim
from mlsched.baselines import BASELINES, DRF, FIFO, RRH, Dorm
from mlsched.baselines.drf import progressive_filling
from mlsched.baselines.fixed_counts import draw_fixed_counts
from mlsched.baselines.placement import RoundRobin, cyclic_fill
from mlsched.instance import ClusterJobsInstance, load
from mlsched.instance.cluster_jobs import EPS
from mlsched.instance.generators import generate_oasis
from mlsched.metrics import job_utilities, total_utility

NO_PS: dict[str, float] = {}


def slot_cpu(inst: ClusterJobsInstance, schedule: sim.ClusterSchedule, t: int) -> float:
    """Worker-pool cpu used in slot t (1-based)."""
    return float(np.einsum("ih,i->", schedule.workers[:, t - 1, :].astype(float), inst.worker_demand[:, 0]))


# --- round-robin placement ------------------------------------------------------------------------

def test_round_robin_follows_the_cursor_and_rolls_back():
    inst = cluster([job("1"), job("2"), job("3")], horizon=1,
                   workers=[{"cpu": 2}, {"cpu": 2}, {"cpu": 2}], ps=[{"cpu": 9}])
    placer = RoundRobin(inst)
    residual_w, residual_ps = inst.worker_capacity.copy(), inst.ps_capacity.copy()
    y, z = placer.place(0, 4, 1, residual_w, residual_ps)   # w1 w2 w3 w1
    assert y.tolist() == [2, 1, 1] and z.tolist() == [1] and placer.cursor == {"worker": 1, "ps": 0}
    y, _ = placer.place(1, 2, 1, residual_w, residual_ps)   # w2 w3, cursor wraps to w1
    assert y.tolist() == [0, 1, 1] and placer.cursor["worker"] == 0
    assert residual_w[:, 0].tolist() == [0, 0, 0] and residual_ps[:, 0].tolist() == [7]
    assert placer.place(2, 1, 1, residual_w, residual_ps) is None   # a full cycle finds no server
    assert residual_w[:, 0].tolist() == [0, 0, 0] and residual_ps[:, 0].tolist() == [7]
    assert placer.cursor == {"worker": 0, "ps": 0}


def test_round_robin_skips_full_servers_and_fails_as_a_whole():
    inst = cluster([job("1", ps={"cpu": 2})], horizon=1,
                   workers=[{"cpu": 2}, {"cpu": 0}, {"cpu": 3}], ps=[{"cpu": 3}])
    placer = RoundRobin(inst)
    placer.cursor["worker"] = 2
    residual_w, residual_ps = inst.worker_capacity.copy(), inst.ps_capacity.copy()
    # workers fit (w3 w1 w3 w1), but two PS of 2 cpu do not fit the 3-cpu PS server: roll back
    assert placer.place(0, 4, 2, residual_w, residual_ps) is None
    assert placer.cursor == {"worker": 2, "ps": 0} and residual_w[:, 0].tolist() == [2, 0, 3]
    y, z = placer.place(0, 4, 1, residual_w, residual_ps)
    assert y.tolist() == [2, 0, 2] and z.tolist() == [1] and placer.cursor == {"worker": 1, "ps": 0}
    assert residual_w[:, 0].tolist() == [0, 0, 1] and residual_ps[:, 0].tolist() == [1]


def _one_by_one(residual: np.ndarray, demand: np.ndarray, count: int, cursor: int) -> tuple[list[int], int] | None:
    """The spec's rule literally: each unit on the next server from the cursor that fits it."""
    residual = residual.copy()
    counts = [0] * len(residual)
    for _ in range(count):
        fitting = [(cursor + step) % len(residual) for step in range(len(residual))
                   if np.all(residual[(cursor + step) % len(residual)] >= demand)]
        if not fitting:
            return None
        server = fitting[0]
        residual[server] -= demand
        counts[server] += 1
        cursor = (server + 1) % len(residual)
    return counts, cursor


def test_vectorised_round_robin_equals_the_one_by_one_rule():
    rng = np.random.default_rng(0)
    for _ in range(400):
        servers, resources = int(rng.integers(1, 6)), int(rng.integers(1, 3))
        residual = rng.integers(0, 7, size=(servers, resources)).astype(float)
        demand = rng.integers(0, 3, size=resources).astype(float)
        count, cursor = int(rng.integers(0, 9)), int(rng.integers(0, servers))
        expected = _one_by_one(residual, demand, count, cursor)
        got = cyclic_fill(residual, demand, count, cursor)
        if expected is None:
            assert got is None
        else:
            assert got is not None and (got[0].tolist(), got[1]) == expected


# --- FIFO -----------------------------------------------------------------------------------------

def test_fifo_blocks_the_head_of_the_line():
    # one 2-cpu server; job 1 (1 cpu, 3 slots), job 2 (2 cpu, 1 slot), job 3 (1 cpu, 1 slot), all at slot 1
    inst = cluster([job("1", epochs=3, ps=NO_PS), job("2", worker={"cpu": 2}, ps=NO_PS), job("3", ps=NO_PS)],
                   horizon=5, workers=[{"cpu": 2}], ps=[{"cpu": 1}])
    schedule = sim.run(inst, FIFO()).schedule
    # job 2 does not fit beside job 1 and waits for its completion; job 3 fits beside job 1 but
    # waits behind job 2 (no backfilling), then behind job 2's 2 cpu
    assert schedule.workers_per_slot.tolist() == [[1, 1, 1, 0, 0], [0, 0, 0, 1, 0], [0, 0, 0, 0, 1]]
    assert schedule.completion_slots().tolist() == [3, 4, 5]
    assert total_utility(inst, schedule) == pytest.approx((10 - 2) + (10 - 3) + (10 - 4))


def test_fixed_counts_follow_the_seeded_draw():
    # N = 100 > 30, b/B = 1/3: n_w = U{1..30} from default_rng(seed), n_ps = ceil(n_w / 3)
    jobs = [job(str(n), chunks=100, epochs=5, worker={"cpu": 1}, ps={"cpu": 1}, bandwidth=(1, 3)) for n in (1, 2, 3)]
    inst = cluster(jobs, horizon=1, workers=[{"cpu": 200}], ps=[{"cpu": 200}])
    for seed in (0, 1, 7):
        n_w = np.random.default_rng(seed).integers(1, 31, size=3)
        counts = draw_fixed_counts(inst, seed)
        assert counts[:, 0].tolist() == n_w.tolist()
        assert counts[:, 1].tolist() == [math.ceil(w / 3) for w in n_w]
        schedule = sim.run(inst, FIFO(seed=seed)).schedule
        assert schedule.workers_per_slot[:, 0].tolist() == n_w.tolist()
        assert schedule.ps_per_slot[:, 0].tolist() == [math.ceil(w / 3) for w in n_w]


# --- DRF ------------------------------------------------------------------------------------------

def test_drf_splits_a_server_evenly():
    inst = cluster([job("1", chunks=4, ps=NO_PS), job("2", chunks=4, ps=NO_PS)],
                   horizon=3, workers=[{"cpu": 4}], ps=[{"cpu": 1}])
    schedule = sim.run(inst, DRF()).schedule
    assert schedule.workers_per_slot.tolist() == [[2, 2, 0], [2, 2, 0]]
    assert total_utility(inst, schedule) == pytest.approx(9 + 9)


def _dominant_pair() -> ClusterJobsInstance:
    # server (9 cpu, 18 mem); job 1 (1 cpu, 4 mem: mem-dominant 4/18), job 2 (3 cpu, 1 mem: cpu-dominant 3/9)
    return cluster([job("1", chunks=5, worker={"cpu": 1, "mem": 4}, ps=NO_PS),
                    job("2", chunks=5, worker={"cpu": 3, "mem": 1}, ps=NO_PS)],
                   horizon=3, workers=[{"cpu": 9, "mem": 18}], ps=[{"cpu": 1, "mem": 1}], resources=("cpu", "mem"))


def test_drf_progressive_filling_on_dominant_shares():
    inst = _dominant_pair()
    residual_w, residual_ps = inst.worker_capacity.copy(), inst.ps_capacity.copy()
    alloc_w, _, shares = progressive_filling(inst, np.array([0, 1]), RoundRobin(inst), residual_w, residual_ps)
    # 1 (.22) 2 (.33) 1 (.44) 2 (.67) 1 (.67); tie at 2/3 goes to job 1, whose 4th worker finds no
    # cpu left, nor does job 2's 3rd worker
    assert alloc_w[:, 0].tolist() == [3, 2] and shares.tolist() == [12 / 18, 6 / 9]
    schedule = sim.run(inst, DRF()).schedule
    # job 1 finishes its 5 worker-slots in slot 2; at the completion event job 2 takes the whole
    # cpu (3 workers) and finishes 2 + 2 + 3 >= 5 in slot 3
    assert schedule.workers_per_slot.tolist() == [[3, 3, 0], [2, 2, 3]]
    assert total_utility(inst, schedule) == pytest.approx(9 + 8)


# --- RRH ------------------------------------------------------------------------------------------

def test_rrh_rejects_a_job_whose_delay_cost_exceeds_its_gain():
    hurried = {"kind": "linear", "intercept": 10, "slope": 5}
    small = {"kind": "linear", "intercept": 1, "slope": 1}
    inst = cluster([job("1", epochs=2, ps=NO_PS, utility=hurried), job("2", ps=NO_PS, utility=small)],
                   horizon=2, workers=[{"cpu": 1}], ps=[{"cpu": 1}])
    schedule = sim.run(inst, RRH()).schedule
    # job 1: rt = 2, gain f1(1 + 2 - 1 - 1) = f1(1) = 5 > 0 -> admitted.
    # job 2: rt = 1, gain f2(0) = 1, delay cost to job 1 f1(1) - f1(1 + 1) = 5 - 0 -> score -4 <= 0
    assert schedule.admitted.tolist() == [True, False]
    assert schedule.workers_per_slot.tolist() == [[1, 1], [0, 0]]
    assert total_utility(inst, schedule) == pytest.approx(5)


def test_rrh_pauses_a_running_job_and_resumes_it_with_its_progress():
    patient = {"kind": "constant", "value": 1}
    urgent = {"kind": "linear", "intercept": 10, "slope": 5}
    inst = cluster([job("1", epochs=3, ps=NO_PS, utility=patient), job("2", arrival=2, ps=NO_PS, utility=urgent)],
                   horizon=4, workers=[{"cpu": 1}], ps=[{"cpu": 1}])
    schedule = sim.run(inst, RRH()).schedule
    # slot 2: job 2 gain f2(0) = 10, delay cost to job 1 (constant) 0 -> admitted; job 1 (rt = 2):
    # gain 1 - delay cost to job 2 f2(0) - f2(2) = 10 -> score -9, paused; job 2 runs and is done.
    # slot 3 (completion event): job 1 scores 1 > 0 and resumes, 1 + 2 = 3 worker-slots in slot 4.
    assert schedule.workers_per_slot.tolist() == [[1, 0, 1, 1], [0, 1, 0, 0]]
    assert schedule.completion_slots().tolist() == [4, 2]
    assert total_utility(inst, schedule) == pytest.approx(1 + 10)


# --- Dorm -----------------------------------------------------------------------------------------

def test_dorm_packs_what_round_robin_fragments():
    # two 4-cpu servers; job 1: 1 cpu, N = 2; job 2: 3 cpu, N = 2.
    # DRF: 1 -> w1, 2 -> w2, 1 -> w1, then 2's second worker (3 cpu) finds 2 + 1 cpu: 5 of 8 cpu.
    # Dorm: each server takes one worker of each job (8 of 8 cpu; any other count pair leaves
    # > 1% of utilization unused); fairness n_1 >= 0.9 * 2, n_2 >= 0.9 * 1 holds.
    inst = cluster([job("1", chunks=2, epochs=3, ps=NO_PS), job("2", chunks=2, epochs=3, worker={"cpu": 3}, ps=NO_PS)],
                   horizon=1, workers=[{"cpu": 4}, {"cpu": 4}], ps=[{"cpu": 1}])
    drf = sim.run(inst, DRF()).schedule
    dorm = sim.run(inst, Dorm()).schedule
    assert drf.workers_per_slot[:, 0].tolist() == [2, 1] and slot_cpu(inst, drf, 1) == 5
    assert dorm.workers_per_slot[:, 0].tolist() == [2, 2] and slot_cpu(inst, dorm, 1) == 8
    assert dorm.workers[:, 0, :].tolist() == [[1, 1], [1, 1]]


def test_dorm_drops_an_infeasible_fairness_row():
    # one worker (1 of 10 cpu) needs ceil(1/2) = 1 PS (4 of 4 cpu): DRF share 1, delta = max(0.1, 0.5 * 1);
    # fairness 0.5 n >= 0.9 needs n >= 2 > N = 1, so it is dropped and the job runs in slot 1
    inst = cluster([job("1", ps={"cpu": 4}, bandwidth=(1, 2))], horizon=2,
                   workers=[{"cpu": 10}], ps=[{"cpu": 4}])
    schedule = sim.run(inst, Dorm()).schedule
    assert schedule.workers_per_slot.tolist() == [[1, 0]] and schedule.ps_per_slot.tolist() == [[1, 0]]
    assert total_utility(inst, schedule) == pytest.approx(10)


@pytest.mark.parametrize("name", ["oasis/fig5-small-seed0", "oasis/feasible-j12-t20-seed0"])
def test_dorms_array_program_is_its_pyomo_model(name, monkeypatch):
    """Every event's program, built as arrays (what runs solve) and as the Pyomo model, has the same
    optimum (both solved to gap 0), or both have none, whichever rows (fairness, overhead) it holds."""
    from mlsched.solve import Status, solve, solve_arrays

    events = []
    real_program = Dorm.program

    def recording(self, *args):
        events.append((self, args))
        return real_program(self, *args)

    monkeypatch.setattr(Dorm, "program", recording)
    sim.run(load(name), Dorm())
    assert len(events) >= 5 and any("overhead" in args[-1] for _, args in events)
    for policy, args in events:
        arrays = solve_arrays(real_program(policy, *args).arrays)
        model = solve(policy.model(*args))
        assert arrays.status is model.status, args[-1]
        if arrays.status is Status.OPTIMAL:
            assert arrays.objective == pytest.approx(model.objective, rel=1e-9, abs=1e-9), args[-1]
            y, z = real_program(policy, *args).allocation(arrays.schedule)   # the allocation scores it
            jobs = args[0]
            scored = policy.weight_w[jobs] @ y.sum(axis=1) + policy.weight_ps[jobs] @ z.sum(axis=1)
            assert scored == pytest.approx(arrays.objective, rel=1e-9, abs=1e-9), args[-1]


# --- invariants on random instances ---------------------------------------------------------------

def _random_instances() -> list[ClusterJobsInstance]:
    tiny = [random_tiny(np.random.default_rng(seed), jobs=5, horizon=5, workers=2, ps=2, resources=("cpu", "mem"))
            for seed in range(4)]
    small = [generate_oasis(6, 6, seed, profile="small") for seed in range(2)]
    return tiny + small


@pytest.mark.parametrize("instance", _random_instances(), ids=lambda inst: inst.name)
@pytest.mark.parametrize("name", sorted(BASELINES))
def test_baseline_schedules_are_feasible_event_driven_and_scored_by_completion(instance, name):
    inst = instance
    schedule = sim.run(inst, BASELINES[name]()).schedule       # sim.run also runs the checker
    assert sim.check(inst, schedule) == []
    y, z = schedule.workers_per_slot, schedule.ps_per_slot
    n_jobs, horizon = y.shape
    done_by = np.cumsum(y, axis=1) >= inst.workload[:, None] * (1 - EPS) - EPS
    completed = schedule.admitted & done_by[:, -1]
    first_done = np.where(completed, np.argmax(done_by, axis=1) + 1, 0)
    expected = np.zeros(n_jobs)
    for i in range(n_jobs):
        if completed[i]:
            assert y[i, first_done[i]:].sum() == 0 and z[i, first_done[i]:].sum() == 0   # nothing once done
            expected[i] = float(inst.jobs[i].utility.value(first_done[i] - inst.jobs[i].arrival))
    assert schedule.completion_slots()[completed].tolist() == first_done[completed].tolist()
    assert np.all(job_utilities(inst, schedule)[~completed] == 0)
    assert job_utilities(inst, schedule) == pytest.approx(expected)
    assert total_utility(inst, schedule) == pytest.approx(expected.sum())
    # allocations change only at events: an arrival in t or a completion in t - 1
    for t in range(2, horizon + 1):
        event = np.any(inst.arrival == t) or np.any(first_done == t - 1)
        if not event:
            assert np.array_equal(schedule.workers[:, t - 1], schedule.workers[:, t - 2])
            assert np.array_equal(schedule.ps[:, t - 1], schedule.ps[:, t - 2])
    if name != "dorm":   # FIFO, DRF, RRH run exactly ceil(n_w b / B) PS
        ps_needed = np.vectorize(lambda i, n: inst.jobs[i].ps_needed(int(n)))(np.arange(n_jobs)[:, None], y)
        assert np.array_equal(z, ps_needed)
    if name in ("fifo", "rrh"):  # fixed counts: n_w or nothing; FIFO never pauses a started job
        counts = draw_fixed_counts(inst, 0)[:, 0]
        assert np.all((y == 0) | (y == counts[:, None]))
        if name == "fifo":
            for i in range(n_jobs):
                slots = np.flatnonzero(y[i])
                assert slots.size == 0 or slots[-1] - slots[0] + 1 == slots.size


def test_dorm_stops_on_a_deterministic_limit(monkeypatch):
    """Dorm's per-event programs stop on a node count, never on wall-clock time, so the same seed
    gives the same run on any machine (a loaded machine once gave 268.45 and 327.21)."""
    import mlsched.baselines.dorm as dorm_module

    seen = []
    real = dorm_module.solve_arrays

    def recording(program, **kwargs):
        seen.append(kwargs)
        return real(program, **kwargs)

    monkeypatch.setattr(dorm_module, "solve_arrays", recording)
    inst = load("oasis/fig5-small-seed0")
    first = sim.run(inst, Dorm()).schedule
    assert seen and all(k["time_limit"] is None and k["mip_max_nodes"] == dorm_module.NODE_LIMIT for k in seen)
    again = sim.run(inst, Dorm()).schedule
    assert np.array_equal(first.workers, again.workers) and np.array_equal(first.ps, again.ps)


def test_dorms_run_budget_bounds_each_event_and_binds_only_when_spent(monkeypatch):
    """With a run budget every event's solves get at least EVENT_FLOOR_SECONDS and at most what
    is left of the budget over the slots left; a budget never reached leaves the run as it is."""
    import mlsched.baselines.dorm as dorm_module

    seen = []
    real = dorm_module.solve_arrays

    def recording(program, **kwargs):
        seen.append(kwargs["time_limit"])
        return real(program, **kwargs)

    monkeypatch.setattr(dorm_module, "solve_arrays", recording)
    inst = load("oasis/fig5-small-seed0")
    plain = sim.run(inst, Dorm()).schedule
    seen.clear()
    roomy = sim.run(inst, Dorm(run_budget=1e6)).schedule
    assert seen and all(limit <= 1e6 for limit in seen)
    assert np.array_equal(plain.workers, roomy.workers) and np.array_equal(plain.ps, roomy.ps)
    seen.clear()
    spent = sim.run(inst, Dorm(run_budget=1e-9))
    assert seen and all(limit == pytest.approx(dorm_module.EVENT_FLOOR_SECONDS) for limit in seen)
    assert sim.check(inst, spent.schedule) == []
