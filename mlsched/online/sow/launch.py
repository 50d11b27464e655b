"""Estimated utility (1) and launch plan (2) with the §3.2 rules.

For a group g = (a, sigma) of the reported support and a start s in [a, b + Delta - 1]:
  G(s) = sum_{l : (a, l, sigma) in supp} F(a, l, sigma) (1 - qt(s, d, l)) (v(s + l - 1) - p(s, d, l)),
a term with infinite price counting as -inf. The group launches at the earliest maximiser if
max_s G(s) > 1e-12, else it is not launched (None).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

LAUNCH_THRESHOLD = 1e-12


def group_gains(arrival: int, durations: Sequence[int], probs: Sequence[float], last_start: int,
                value: npt.NDArray[np.float64], price: npt.NDArray[np.float64],
                fail: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """G(s) for s = arrival..last_start; value[c] is v(c), price/fail are [s, l - 1] tables."""
    starts = np.arange(arrival, last_start + 1)
    gains = np.zeros(starts.shape[0])
    for l, w in zip(durations, probs, strict=True):
        p = price[starts, l - 1]
        c = starts + l - 1
        v = np.where(c < value.shape[0], value[np.minimum(c, value.shape[0] - 1)], 0.0)
        term = np.where(np.isinf(p), -np.inf, w * (1.0 - fail[starts, l - 1]) * (v - np.where(np.isinf(p), 0.0, p)))
        gains = gains + term
    return gains


def best_start(arrival: int, durations: Sequence[int], probs: Sequence[float], last_start: int,
               value: npt.NDArray[np.float64], price: npt.NDArray[np.float64],
               fail: npt.NDArray[np.float64]) -> tuple[int | None, float]:
    """(earliest maximiser of G or None, its estimated utility contribution, 0 when not launched)."""
    if last_start < arrival:
        return None, 0.0
    gains = group_gains(arrival, durations, probs, last_start, value, price, fail)
    k = int(np.argmax(gains))
    if not gains[k] > LAUNCH_THRESHOLD:
        return None, 0.0
    return arrival + k, float(gains[k])


def launch_plan(arrivals: Sequence[int], durations: Sequence[int], signals: Sequence[int],
                probs: Sequence[float], last_start: int, value: npt.NDArray[np.float64],
                price: npt.NDArray[np.float64], fail: npt.NDArray[np.float64]
                ) -> tuple[dict[tuple[int, int], int | None], float]:
    """Plan (2) over the groups (a, sigma) of a support, and its estimated utility U_hat (1)."""
    groups: dict[tuple[int, int], list[int]] = {}
    for k, key in enumerate(zip(arrivals, signals, strict=True)):
        groups.setdefault((int(key[0]), int(key[1])), []).append(k)
    plan: dict[tuple[int, int], int | None] = {}
    total = 0.0
    for (a, sig), ks in sorted(groups.items()):
        s, gain = best_start(a, [durations[k] for k in ks], [probs[k] for k in ks], last_start, value, price, fail)
        plan[(a, sig)] = s
        total += gain
    return plan, total


def relaxed_usage(plan: dict[tuple[int, int], int | None], arrivals: Sequence[int], durations: Sequence[int],
                  signals: Sequence[int], probs: Sequence[float], width: int, horizon: int
                  ) -> npt.NDArray[np.float64]:
    """x(pi)_t = sum_k w_k d 1[pi(a_k, sigma_k) <= t <= pi(a_k, sigma_k) + l_k - 1] for t < horizon."""
    x = np.zeros(horizon)
    for a, l, sig, w in zip(arrivals, durations, signals, probs, strict=True):
        s = plan.get((int(a), int(sig)))
        if s is not None:
            x[s:s + l] += w * width
    return x


def relaxed_utility(plan: dict[tuple[int, int], int | None], arrivals: Sequence[int], durations: Sequence[int],
                    signals: Sequence[int], probs: Sequence[float], value: npt.NDArray[np.float64],
                    price: npt.NDArray[np.float64]) -> float:
    """v(x(pi)) - P(x(pi)): the plan's utility in the relaxed problem (no failures)."""
    total = 0.0
    for a, l, sig, w in zip(arrivals, durations, signals, probs, strict=True):
        s = plan.get((int(a), int(sig)))
        if s is not None:
            c = s + l - 1
            total += -np.inf if np.isinf(price[s, l - 1]) else w * ((value[c] if c < value.shape[0] else 0.0)
                                                                     - price[s, l - 1])
    return total


def is_switched(plan: dict[tuple[int, int], int | None], arrivals: Sequence[int], durations: Sequence[int],
                signals: Sequence[int], probs: Sequence[float], last_start: int,
                value: npt.NDArray[np.float64], price: npt.NDArray[np.float64]) -> bool:
    """switched_j: the plan's relaxed utility is below the relaxed optimum (5) by more than 1e-9."""
    _, best = launch_plan(arrivals, durations, signals, probs, last_start, value, price, np.zeros_like(price))
    return relaxed_utility(plan, arrivals, durations, signals, probs, value, price) < best - 1e-9
