"""Speed of the SoW mechanism and its benchmark.

1. One birth (sampled failure oracle, exponential menu, launch plan) at C = 64, 50 active earlier
   jobs, eps = 0.2 (gamma = zeta = 0.05 -> M = 1,476), Delta = 10, D = 4: goal median < 20 ms, p95 < 100 ms.
2. A 1,000-job adversarial run (one realization, the sampled oracle): goal < 60 s.
3. E[OPT] of a 50-job instance over 2,000 paired ILP H solves: goal < 60 s.
4. LP-E plus FUA-Dyadic (the stochastic variant's offline step, kappa fallback included) for 100
   jobs: goal < 30 s.

    python benchmarks/sow_speed.py [--skip-run] [--skip-opt]

Every figure is given as CPU time (time.process_time) beside wall time: on a shared machine the wall
time measures the load as much as the code.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from mlsched.exact import exact_sow
from mlsched.instance.generators.sow import generate_sow
from mlsched.online.sow.mechanism import SowMechanism
from mlsched.sim.sow_run import realizations

from mlsched.online.sow import ExpPrices, interval_prices, launch_plan
from mlsched.online.sow.oracle import failure_table, lemma_f1_samples, load_paths, sample_futures, threshold_closure
from mlsched.online.sow.reduction import Reduction


def one_birth(rng: np.random.Generator, red: Reduction, alg: ExpPrices, usage: np.ndarray) -> None:
    window, dur, tau = red.delta_window, red.max_duration, 1
    widths = rng.integers(1, red.d_max + 1, size=50)
    jobs = [[(1 / 3, int(rng.integers(1, window + 1)), int(rng.integers(1, dur + 1))) for _ in range(3)]
            for _ in widths]
    starts, durs, weights = sample_futures(jobs, red.samples, rng)
    loads = load_paths(widths, starts, durs, tau, tau + window + dur, red.capacity)
    width = int(rng.integers(1, red.d_max + 1))
    raw = np.stack([failure_table(loads, weights, d, red.capacity, dur) for d in range(1, width + 1)])
    fail = np.zeros((usage.shape[0], dur))
    fail[tau:tau + raw.shape[1]] = threshold_closure(raw, red.threshold)[-1][:usage.shape[0] - tau]
    price = interval_prices(alg.unit(usage), width, dur)
    value = np.where(np.arange(usage.shape[0] + dur) <= tau + window - 1, 5.0, 0.0)
    arrivals = rng.integers(1, window + 1, size=6).tolist()
    durations = rng.integers(1, dur + 1, size=6).tolist()
    launch_plan(arrivals, durations, durations, [1 / 6] * 6, tau + window - 1, value, price, fail)


def full_run() -> None:
    inst = generate_sow(jobs=1000, capacity=64, d_max=4, max_duration=4, window=10, max_value=8.0, seed=0)
    real = realizations(inst, samples=1, exact_limit=0).row(0)
    tick, cpu = time.perf_counter(), time.process_time()
    out = SowMechanism(eps=0.2).simulate(inst, real)
    print(f"1,000-job adversarial run (C = 64, T = {inst.horizon}): {time.process_time() - cpu:.1f} s CPU, "
          f"{time.perf_counter() - tick:.1f} s wall (goal 60 s), "
          f"welfare {out.welfare:.1f}, completed {sum(j.status == 'completed' for j in out.jobs)}")


def expected_opt() -> None:
    inst = generate_sow(jobs=50, capacity=16, d_max=2, max_duration=4, window=10, max_value=8.0, seed=0)
    tick, cpu = time.perf_counter(), time.process_time()
    report = exact_sow(inst, samples=2000, verify=False)
    print(f"E[OPT] of 50 jobs over 2,000 paired ILP H solves: {time.process_time() - cpu:.1f} s CPU, "
          f"{time.perf_counter() - tick:.1f} s wall (goal 60 s); {report.message}")


def offline_bundles() -> None:
    inst = generate_sow(jobs=100, capacity=32, d_max=4, max_duration=4, window=10, max_value=8.0,
                        variant="stochastic", seed=0)
    mech = SowMechanism(menu="bundles", eps=0.2)
    tick, cpu = time.perf_counter(), time.process_time()
    mech.prepare(inst)
    report = mech.constants(inst)
    print(f"LP-E + FUA-Dyadic for 100 jobs (C = 32): {time.process_time() - cpu:.1f} s CPU, "
          f"{time.perf_counter() - tick:.1f} s wall (goal 30 s); kappa "
          f"{report['kappa']:.3f}, {int(report['bundles'])} bundles, FUA loss {report['fua_loss']:.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-run", action="store_true")
    parser.add_argument("--skip-opt", action="store_true")
    args = parser.parse_args()
    one_birth_figures()
    if not args.skip_run:
        full_run()
    if not args.skip_opt:
        expected_opt()
    offline_bundles()


def one_birth_figures() -> None:
    red = Reduction(capacity=64, d_max=4, max_duration=4, delta_window=10, eps=0.2)
    assert red.samples == lemma_f1_samples(10, 4, 0.05, 0.05) == 1476
    alg = ExpPrices(capacity=red.relaxed_capacity, d_max=4, max_duration=4, max_value=8.0)
    rng = np.random.default_rng(0)
    usage = rng.random(16) * 20
    wall, cpu = [], []
    for _ in range(200):
        t0, c0 = time.perf_counter(), time.process_time()
        one_birth(rng, red, alg, usage)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    ms, cms = np.array(wall) * 1e3, np.array(cpu) * 1e3
    print(f"one birth (M = {red.samples}, 50 active jobs): CPU median {np.median(cms):.2f} ms, p95 "
          f"{np.percentile(cms, 95):.2f} ms; wall median {np.median(ms):.2f} ms, p95 {np.percentile(ms, 95):.2f} ms "
          f"(goals 20 / 100 ms)")


if __name__ == "__main__":
    main()
