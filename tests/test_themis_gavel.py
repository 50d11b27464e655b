"""Gavel's traces and its finish-time-fairness policy on the Themis simulator: the trace reader
(hand-checked fields of the shipped Philly trace, one-line errors), heterogeneous GPU types in the
family's physics, the estimator and the checker, the gavel-ftf policy's invariants, and the
shipped Gavel-trace instance's expected runs."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
import pytest

from mlsched.baselines.gavel_ftf import GavelFTF
from mlsched.cli import main
from mlsched.instance import load
from mlsched.instance.generators.gavel import DEFAULT_TRACE, generate_gavel, read_gavel_trace
from mlsched.instance.gpu_topology import GpuTopology
from mlsched.instance.themis import COMPUTE_PROFILE, ThemisApp, ThemisInstance, ThemisJob
from mlsched.instance.themis_clusters import gavel, preset
from mlsched.metrics import themis_summary
from mlsched.online.themis.rho import App, Phase, rho
from mlsched.resources import shipped_instance
from mlsched.sim.event_check import check_run
from mlsched.sim.event_engine import SimOptions, simulate
from mlsched.systems import get_system

# Gavel's simulation_throughputs.json, steps/s of the job type alone ("null"), read by hand
TRANSFORMER_128 = {"v100": 5.44610521981264, "p100": 3.0735350560514787, "k80": 0.9815827061299781}
RESNET50_128_ON_2 = {"v100": 4.2230145549692715, "p100": 2.8808978271495276, "k80": 0.0}


def test_shipped_trace_lines_read_as_written():
    jobs = read_gavel_trace(DEFAULT_TRACE)
    assert len(jobs) == 1181
    assert [(j.job_type, j.steps, j.arrival, j.scale) for j in jobs[:2]] == [
        ("Transformer (batch size 128)", 95121, 0.0, 1), ("Recommendation (batch size 8192)", 10000, 6.0, 1)]
    assert (jobs[41].job_type, jobs[41].steps, jobs[41].arrival, jobs[41].scale) == (
        "Recommendation (batch size 512)", 74483, 291313.0, 4)
    assert sum(j.scale > 1 and j.job_type.split(" (")[0] in ("A3C", "CycleGAN", "Recommendation")
               for j in jobs) == 197


def test_trace_jobs_become_apps_with_measured_speeds():
    inst = generate_gavel(apps=8)
    assert inst.topology == preset("gavel108") and inst.num_gpus == 108
    assert inst.topology.type_names == ("v100", "p100", "k80")
    first = inst.apps[0]
    assert (first.name, first.arrival, first.model, first.profile) == ("j0", 0.0, "transformer", COMPUTE_PROFILE)
    job = first.phases[0][0]
    assert (job.iterations, job.cap) == (95121.0, 1)
    assert job.tau == pytest.approx(1 / TRANSFORMER_128["v100"], rel=1e-12)
    assert first.speed_of == pytest.approx({t: v / TRANSFORMER_128["v100"] for t, v in TRANSFORMER_128.items()})
    assert [a.arrival for a in inst.apps] == [0.0, 6.0, 6.0, 6.0, 10.0, 11.0, 12.0, 14.0]


def test_multi_gpu_job_without_throughputs_runs_on_one_gpu():
    inst = generate_gavel(start=291313, apps=1)
    (app,) = inst.apps
    assert (app.name, app.arrival, app.phases[0][0].cap, app.phases[0][0].iterations) == ("j41", 0.0, 1, 74483.0)
    assert inst.meta["single_gpu_fallback"] == 1 and inst.meta["time_origin_seconds"] == 291313.0


def test_a_job_that_does_not_fit_a_type_gets_speed_zero_there(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("ResNet-50 (batch size 128)\tcd x\t--num_minibatches\t1\t500\t3.5\t2\n")
    (app,) = generate_gavel(trace=trace, gpus=24).apps
    assert app.phases[0][0].tau == pytest.approx(2 / RESNET50_128_ON_2["v100"], rel=1e-12)
    assert app.speed_of == pytest.approx({t: v / RESNET50_128_ON_2["v100"] for t, v in RESNET50_128_ON_2.items()})
    assert app.phases[0][0].cap == 2 and app.arrival == 0.0


GOOD = "ResNet-50 (batch size 32)\tcd x\t--num_steps\t1\t100\t0.0\t1\n"


@pytest.mark.parametrize("line,problem", [
    ("ResNet-50 (batch size 32)\tcd x\t1\t100\t0.0\t1\n", "line 2: must have 7 tab-separated columns"),
    ("ResNet-51 (batch size 32)\tcd x\t-n\t1\t100\t0.0\t1\n", "line 2, column 'job type': must name a job type"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t2\t100\t0.0\t1\n", "line 2, column 'needs data dir': must be 0 or 1"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t1e3\t0.0\t1\n", "line 2, column 'total steps': must be an integer > 0"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t0\t0.0\t1\n", "line 2, column 'total steps': must be an integer > 0"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t100\tsoon\t1\n", "line 2, column 'arrival': must be a number"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t100\tnan\t1\n", "line 2, column 'arrival': must be a number"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t100\t-1\t1\n", "line 2, column 'arrival': must be a number"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t100\t0.0\t0\n", "line 2, column 'scale factor': must be an integer >= 1"),
    ("ResNet-50 (batch size 32)\tcd x\t-n\t1\t100\t0.0\t2.5\n", "line 2, column 'scale factor': must be an integer >= 1"),
])
def test_bad_trace_line_is_one_line_and_exit_2(capsys, tmp_path, line, problem):
    trace = tmp_path / "bad.trace"
    trace.write_text(GOOD + line)
    out = tmp_path / "out.json"
    code = main(["generate", "themis", "--trace-format", "gavel", "--trace", str(trace), "-o", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert len(err.splitlines()) == 1 and err.startswith(f"{trace}: ") and problem in err


def test_arrivals_must_not_go_back(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text(GOOD.replace("0.0", "9.0") + GOOD + GOOD)
    with pytest.raises(Exception, match=r"line 2, column 'arrival': must not be earlier than the previous job's "
                                        r"\(9 s\), got '0.0' \(1 more bad lines\)"):
        read_gavel_trace(trace)


# --- heterogeneous physics -------------------------------------------------------------------
def two_type_instance(speeds: dict[str, float], cap: int = 2) -> ThemisInstance:
    topology = GpuTopology(((0, (1,)), (0, (1,)), (1, (1, 1))), ("v100", "v100", "k80"))
    app = ThemisApp("a", 0.0, ((ThemisJob(100.0, 1.0, cap),),), COMPUTE_PROFILE, speeds=tuple(speeds.items()))
    return ThemisInstance("t", topology, (app,))


class Fixed:
    """Grants fixed GPUs to app 0 at its first round."""

    name = "fixed"

    def __init__(self, gpus):
        self.gpus = frozenset(gpus)

    def start(self, instance, options):
        self.done = False

    def round(self, view):
        if self.done:
            return {}
        self.done = True
        return {0: self.gpus}


def test_a_job_on_mixed_types_runs_at_its_slowest_type():
    inst = two_type_instance({"v100": 1.0, "k80": 0.25})
    fast = simulate(inst, Fixed([0, 1]), SimOptions(lease=1e6))
    mixed = simulate(inst, Fixed([0, 2]), SimOptions(lease=1e6))
    assert fast.finish[0] == pytest.approx(50.0) and mixed.finish[0] == pytest.approx(200.0)
    assert [iv.speed for iv in mixed.jobs] == [0.25]
    tampered = replace(mixed, jobs=[iv._replace(speed=1.0) for iv in mixed.jobs])
    assert any("runs at speed 1.0, its GPU types give 0.25" in p for p in check_run(tampered))


def test_estimator_prices_slow_types():
    topology = GpuTopology(((0, (1,)), (0, (1,)), (1, (1, 1))), ("v100", "v100", "k80"))
    app = App((Phase((100.0,), (2,)),), t_id=50.0, speeds={"v100": 1.0, "k80": 0.25})
    assert rho(app, [0, 1], topology) == pytest.approx(1.0)
    assert rho(app, [2, 3], topology) == pytest.approx(4.0)
    assert rho(app, [0, 2], topology) == pytest.approx(4.0)
    zero = replace(app, speeds={"v100": 1.0, "k80": 0.0})
    assert rho(zero, [2], topology) == float("inf")


# --- gavel-ftf -------------------------------------------------------------------------------
def ftf_invariants(run, inst, round_seconds):
    """Each app holds GPUs of one type, at most its cap, granted at round starts for at most a
    round; GPUs of one type in use never exceed the type's count."""
    types = inst.topology.gpu_types
    spans = defaultdict(list)
    for h in run.holdings:
        spans[h.app, h.start].append(h)
    for (a, _), held in spans.items():
        assert len({types[h.gpu] for h in held}) == 1
        assert len(held) <= inst.apps[a].demand
        assert all(h.end - h.start <= round_seconds + 1e-9 for h in held)
    starts = sorted({h.start for h in run.holdings})
    for t in starts:
        live = [h for h in run.holdings if h.start <= t < h.end]
        for kind in inst.topology.type_names:
            assert sum(types[h.gpu] == kind for h in live) <= types.count(kind)


@pytest.mark.parametrize("start,apps,gpus", [(0, 16, 12), (44_000, 20, 12), (290_000, 12, 24)])
def test_gavel_ftf_runs_checked_and_never_over_allocates(start, apps, gpus):
    inst = generate_gavel(start=start, apps=apps, gpus=gpus)
    run = get_system("themis").execute(inst, GavelFTF())      # the checker runs inside
    assert run.options.lease == 360.0
    assert not check_run(run)
    ftf_invariants(run, inst, 360.0)
    assert run.stats["allocations"] >= 1 and run.stats["allocation_failures"] == 0


def test_gavel_ftf_reads_a_computation_at_time_zero_as_none_as_gavel_does():
    """j0 arrives at 0 (the allocation is computed then, for j0 alone) and j1 at 6 s. Gavel's
    scheduler stores the last reset as 0, its "never", so the round at 360 s recomputes and j1
    starts there; waiting the 1,920-s interval after every computation, j1 starts at the first
    round boundary past it, 6 x 360 = 2,160 s."""
    inst = generate_gavel(apps=2, gpus=12)
    assert [a.arrival for a in inst.apps] == [0.0, 6.0]
    system = get_system("themis")
    first_start = {}
    for sentinel in (True, False):
        run = system.execute(inst, GavelFTF(zero_sentinel=sentinel))
        first_start[sentinel] = min(h.start for h in run.holdings if h.app == 1)
        assert min(h.start for h in run.holdings if h.app == 0) == 0.0
    assert first_start == {True: 360.0, False: 2160.0}


def test_gavel_ftf_on_an_untyped_cluster_is_one_type():
    inst = load(shipped_instance("themis/o1-small"))
    run = simulate(inst, GavelFTF(), SimOptions(lease=360.0))
    assert np.all(np.isfinite(run.finish))


def test_gavel_cluster_presets():
    topology = gavel(8)
    assert topology.num_gpus == 24 and topology.gpu_types == ("v100",) * 8 + ("p100",) * 8 + ("k80",) * 8
    assert [rack for rack, _ in topology.machines] == [0, 0, 1, 1, 2, 2]
    with pytest.raises(Exception, match="multiple of 4"):
        gavel(6)


def test_shipped_gavel_instance_reproduces_its_runs():
    inst = load(shipped_instance("themis/gavel-philly-first24"))
    system = get_system("themis")
    for name, expected in inst.expected["runs"].items():
        summary = themis_summary(system.execute(inst, system.policy(name)))
        for key, value in expected.items():
            assert summary[key] == pytest.approx(value, rel=1e-9), (name, key)
