"""Speed of one SoW birth: sampled failure oracle, exponential menu and launch plan.

Setting: C = 64, 50 active earlier jobs, eps = 0.2 (gamma = zeta = 0.05 -> M = 1,476), Delta = 10, D = 4.
Goal: median under 20 ms, p95 under 100 ms.
"""

from __future__ import annotations

import time

import numpy as np

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


def main() -> None:
    red = Reduction(capacity=64, d_max=4, max_duration=4, delta_window=10, eps=0.2)
    assert red.samples == lemma_f1_samples(10, 4, 0.05, 0.05) == 1476
    alg = ExpPrices(capacity=red.relaxed_capacity, d_max=4, max_duration=4, max_value=8.0)
    rng = np.random.default_rng(0)
    usage = rng.random(16) * 20
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        one_birth(rng, red, alg, usage)
        times.append(time.perf_counter() - t0)
    ms = np.array(times) * 1e3
    print(f"one birth (M = {red.samples}, 50 active jobs): median {np.median(ms):.2f} ms, "
          f"p95 {np.percentile(ms, 95):.2f} ms (goals 20 / 100 ms)")


if __name__ == "__main__":
    main()
