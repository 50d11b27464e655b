"""The OASiS generator reproduces spec §5.1 / A4: ranges, class mix, feasibility, determinism;
model profiles load."""

from __future__ import annotations

import numpy as np
import pytest

from mlsched.errors import UsageError
from mlsched.instance import from_dict
from mlsched.instance.generators import generate_oasis
from mlsched.profiles import available_profiles, load_profile


def test_same_seed_same_instance_and_lossless():
    a, b = generate_oasis(30, 50, 4), generate_oasis(30, 50, 4)
    assert a.to_dict() == b.to_dict()
    assert generate_oasis(30, 50, 5).to_dict() != a.to_dict()
    assert from_dict(a.to_dict()).to_dict() == a.to_dict()
    assert a.meta["seed"] == 4 and a.meta["profile"] == "feasible"


def test_paper_profile_ranges():
    inst = generate_oasis(300, 300, 1, profile="paper")
    jobs = inst.jobs
    def span(values):
        return min(values), max(values)
    assert 50 <= span([j.epochs for j in jobs])[0] and span([j.epochs for j in jobs])[1] <= 200
    assert 5 <= min(j.chunks for j in jobs) and max(j.chunks for j in jobs) <= 100
    assert 10 <= min(j.minibatches for j in jobs) and max(j.minibatches for j in jobs) <= 100
    assert 0.001 <= min(j.minibatch_time for j in jobs) and max(j.minibatch_time for j in jobs) <= 0.1
    assert 30 <= min(j.gradient_mb for j in jobs) and max(j.gradient_mb for j in jobs) <= 575
    w, s = inst.worker_demand, inst.ps_demand
    for r, (lo, hi) in enumerate([(0, 4), (1, 10), (2, 32), (5, 10), (100, 5000)]):
        assert lo <= w[:, r].min() and w[:, r].max() <= hi and np.all(w[:, r] == np.round(w[:, r]))
    for r, (lo, hi) in enumerate([(0, 0), (1, 10), (2, 32), (5, 10), (5000, 20000)]):
        assert lo <= s[:, r].min() and s[:, r].max() <= hi
    assert {tuple(c[:3]) for c in inst.worker_capacity} <= {(1, 4, 61), (8, 32, 488), (16, 64, 732), (1, 16, 122),
                                                            (2, 32, 244), (4, 64, 488)}
    assert {tuple(c[:3]) for c in inst.ps_capacity} <= {(0, 16, 30), (0, 36, 60)}
    assert np.all(inst.worker_capacity[:, 3] == 1000) and np.all((inst.ps_capacity[:, 4] >= 20000) & (inst.ps_capacity[:, 4] <= 50000))
    assert np.all(np.diff(inst.arrival) >= 0) and inst.arrival.min() >= 1 and inst.arrival.max() <= 300


def test_literal_server_types():
    inst = generate_oasis(5, 20, 0, profile="paper", swap_server_types=False)
    assert np.all(inst.worker_capacity[:, 0] == 0) and np.all(inst.ps_capacity[:, 0] >= 1)


def test_class_mix_and_feasible_profile():
    inst = generate_oasis(2000, 100, 2)
    gamma2 = np.array([j.utility.gamma2 for j in inst.jobs])
    shares = [(gamma2 == 0).mean(), ((gamma2 > 0) & (gamma2 <= 1)).mean(), (gamma2 >= 4).mean()]
    assert shares == pytest.approx([0.10, 0.55, 0.35], abs=0.03)
    assert np.all(inst.min_duration <= np.minimum(inst.horizon - inst.arrival + 1, 15))
    gamma3 = [j.utility.gamma3 for j in inst.jobs]
    assert min(gamma3) >= 1 and max(gamma3) <= 15


def test_small_profile():
    inst = generate_oasis(10, 10, 3, profile="small", workers=4, ps_servers=4)
    assert len(inst.worker_servers) == 4 and len(inst.ps_servers) == 4
    assert np.all(inst.worker_capacity == [2, 8, 32, 100, 10000])
    assert np.all(inst.ps_capacity == [0, 8, 32, 100, 20000])
    assert all(1 <= j.epochs <= 4 and 2 <= j.chunks <= 6 and 1 <= j.minibatches <= 3 for j in inst.jobs)
    assert all(0.05 <= j.minibatch_time <= 0.3 and 1 <= j.utility.gamma3 <= 5 for j in inst.jobs)
    assert inst.min_duration.max() <= 4


def test_poisson_arrivals_and_bad_arguments():
    inst = generate_oasis(50, 40, 0, arrivals="poisson")
    assert inst.num_jobs == 50 and inst.arrival.max() <= 40 and np.all(np.diff(inst.arrival) >= 0)
    for kwargs, message in [({"jobs": 0, "horizon": 5}, r"jobs \(--jobs\) must be >= 1"),
                            ({"jobs": 3, "horizon": 5, "profile": "huge"}, "unknown profile 'huge'"),
                            ({"jobs": 3, "horizon": 5, "arrivals": "bursty"}, "unknown arrivals 'bursty'")]:
        with pytest.raises(UsageError, match=message):
            generate_oasis(**kwargs)


def test_model_profiles():
    names = available_profiles()
    assert {"resnet50", "resnet18", "transformer"} <= set(names)
    for name in names:
        p = load_profile(name)
        assert all(v > 0 for v in p.iteration_seconds.values()) and p.gradient_mb > 0
    assert load_profile("resnet50").speedup("v100", 8) > 1
    with pytest.raises(UsageError, match="unknown model profile 'vgg99'"):
        load_profile("vgg99")


def test_ogasched_generator_names_an_unknown_setting():
    from mlsched.instance.generators.ogasched import generate_ogasched

    with pytest.raises(UsageError, match=r"no setting 'preset'; the settings are ports, nodes, horizon"):
        generate_ogasched(preset="fig7-log")
