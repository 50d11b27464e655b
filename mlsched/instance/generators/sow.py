"""Random SoW instances of the adversarial variant (truthful SoW spec §1.2; the §8 protocol's knobs).

The paper has no experiments, so the rule is ours and fixed here:
  * widths d ~ U{1..d_max}; births uniform on rounds 1..B with B = ceil(n E[d] E[l] / (load C)), so the
    expected demand is ``load`` times the supply over the birth window;
  * each SoW has 1..``support`` distinct points (a, l): a = b + U{0..min(2, Delta - 1)}, l ~ U{1..D};
    sigma = l (``signal="l"``) or 0 for every point (``"const"``); probabilities proportional to
    U{1..4} weights;
  * values: a step down from v0 ~ U[1, V] (two decimals) to v0 / 2 (0 when below 1) after a first
    deadline, and to 0 after a second one; both deadlines lie in [b + D - 1, b + Delta - 1];
  * stochastic variant (§1.4): G_j is ``sows`` SoWs drawn by the same rule, with probabilities
    proportional to U{1..4} weights (sigma = l only).
"""

from __future__ import annotations

import math

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.sow import Sow, SowInstance, SowJob, SupportPoint

SIGNALS = ("l", "const")
VARIANTS = ("adversarial", "stochastic")


def generate_sow(*, jobs: int = 20, capacity: int = 8, d_max: int = 2, max_duration: int = 3, window: int = 6,
                 max_value: float = 8.0, signal: str = "l", support: int = 3, load: float = 1.0,
                 variant: str = "adversarial", sows: int = 3, seed: int = 0) -> SowInstance:
    if signal not in SIGNALS:
        raise UsageError(f"signal must be one of {', '.join(SIGNALS)}, got {signal!r}")
    if variant not in VARIANTS:
        raise UsageError(f"variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
    if variant == "stochastic" and signal != "l":
        raise UsageError("the stochastic variant needs sigma = l (signal=\"l\", --signal l)")
    if window < max_duration:
        raise UsageError(f"Delta ({window}) must be at least D ({max_duration}) for the longest job to have value")
    if max_value < 1:
        raise UsageError(f"V must be at least 1, got {max_value}")
    rng = np.random.default_rng(seed)
    demand = (d_max + 1) / 2 * (max_duration + 1) / 2
    span = max(1, math.ceil(jobs * demand / (load * capacity)))
    births = np.sort(rng.integers(1, span + 1, size=jobs))
    out = []
    shape = {"d_max": d_max, "max_duration": max_duration, "window": window, "max_value": max_value,
             "signal": signal, "support": support}
    for n, b in enumerate(births.tolist()):
        if variant == "adversarial":
            out.append(SowJob(id=f"j{n + 1}", birth=b, sow=_sow(rng, b, **shape)))
            continue
        weights = rng.integers(1, 5, size=sows)
        choices = tuple((float(w / weights.sum()), _sow(rng, b, **shape)) for w in weights)
        out.append(SowJob(id=f"j{n + 1}", birth=b, sow=choices[0][1], distribution=choices))
    name = f"sow-{variant[:5]}-n{jobs}-C{capacity}-d{d_max}-D{max_duration}-W{window}-{signal}-seed{seed}"
    return SowInstance(name=name, capacity=capacity, d_max=d_max, max_duration=max_duration,
                       max_value=float(max_value), window=window, jobs=tuple(out),
                       meta={"generator": "mlsched generate sow", "seed": seed, "load": load, "signal": signal,
                             "variant": variant})


def _sow(rng: np.random.Generator, birth: int, *, d_max: int, max_duration: int, window: int, max_value: float,
         signal: str, support: int) -> Sow:
    """One SoW by the module's rule: 1..``support`` points (a, l), a width and step values."""
    points: dict[tuple[int, int], int] = {}
    for _ in range(int(rng.integers(1, support + 1))):
        a = birth + int(rng.integers(0, min(2, window - 1) + 1))
        l = int(rng.integers(1, max_duration + 1))
        points.setdefault((a, l), int(rng.integers(1, 5)))
    total = sum(points.values())
    sup = tuple(SupportPoint(arrival=a, duration=l, signal=l if signal == "l" else 0, prob=c / total)
                for (a, l), c in sorted(points.items()))
    return Sow(width=int(rng.integers(1, d_max + 1)), values=_values(rng, max_duration, window, max_value),
               support=sup)


def _values(rng: np.random.Generator, max_duration: int, window: int, max_value: float) -> tuple[float, ...]:
    """v(b + i) for i = 0..Delta - 1: v0 up to the first deadline, v0 / 2 (or 0) to the second, then 0."""
    v0 = round(float(rng.uniform(1.0, max_value)), 2)
    first, second = sorted(int(x) for x in rng.integers(max_duration - 1, window, size=2))
    half = v0 / 2 if v0 / 2 >= 1 else 0.0
    return tuple(v0 if i <= first else half if i <= second else 0.0 for i in range(window))


def tiny_sow(seed: int, *, jobs: int = 4, capacity: int | None = None, d_max: int = 2, max_duration: int = 3,
             window: int = 4, max_value: float = 6.0, signal: str = "l", births: int = 3) -> SowInstance:
    """A tiny instance for brute force and exact oracles: births on 1..``births``, 1-2 support points per
    job (a in {b, b + 1}), integer step values v0 ~ U{1..V} up to a random cut; C ~ U{3..6} unless given."""
    rng = np.random.default_rng(seed)
    cap = int(rng.integers(3, 7)) if capacity is None else capacity
    out = []
    for j, b in enumerate(sorted(rng.integers(1, births + 1, size=jobs).tolist())):
        points: dict[tuple[int, int], int] = {}
        for _ in range(int(rng.integers(1, 3))):
            points.setdefault((b + int(rng.integers(0, 2)), int(rng.integers(1, max_duration + 1))),
                              int(rng.integers(1, 4)))
        total = sum(points.values())
        v0 = float(rng.integers(1, int(max_value) + 1))
        cut = int(rng.integers(1, window + 1))
        width = int(rng.integers(1, d_max + 1))
        sup = tuple(SupportPoint(arrival=a, duration=l, signal=l if signal == "l" else 0, prob=c / total)
                    for (a, l), c in sorted(points.items()))
        out.append(SowJob(id=f"j{j + 1}", birth=b, sow=Sow(width=width, values=tuple(v0 if i < cut else 0.0
                                                                                     for i in range(window)),
                                                           support=sup)))
    return SowInstance(name=f"tiny-{seed}", capacity=cap, d_max=d_max, max_duration=max_duration,
                       max_value=float(max_value), window=window, jobs=tuple(out))
