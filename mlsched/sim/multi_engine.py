"""Slot engine of the multi-server family: each slot the policy allocates y(t), the arrivals
x(t) score it with q(x(t), y(t)) (OgaSched eq. 7-8), and the policy gets its feedback. Every
allocation is checked against eqs. (5) and (6) by the independent checker."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from mlsched.instance.multi_server import MultiServerInstance
from mlsched.multiserver import ChannelModel
from mlsched.sim.check import ScheduleViolation, check_allocation


class SlotPolicy(Protocol):
    name: str

    def start(self, instance: MultiServerInstance) -> None: ...

    def decide(self, t: int, x: np.ndarray) -> np.ndarray: ...

    def feedback(self, t: int, x: np.ndarray, y: np.ndarray) -> None: ...


@dataclass
class SlotRun:
    """Per-slot rewards and their parts; ``allocations`` only when kept (``keep=True``)."""

    algorithm: str
    rewards: np.ndarray
    gains: np.ndarray
    overheads: np.ndarray
    wall_seconds: float
    decision_seconds: np.ndarray
    allocations: list[np.ndarray] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def total(self) -> float:
        return float(self.rewards.sum())


def run_slots(instance: MultiServerInstance, policy: SlotPolicy, *, check: bool = True, keep: bool = False,
              arrivals: np.ndarray | None = None, on_slot: Callable[[int, int], None] | None = None) -> SlotRun:
    """Run ``policy`` over the instance's arrivals (or the given ``arrivals`` (T, L)); ``on_slot``
    hears (slots done, slots in all) after each slot."""
    tick = time.perf_counter()
    x_all = instance.arrivals() if arrivals is None else arrivals
    model = ChannelModel(instance)
    policy.start(instance)
    horizon = x_all.shape[0]
    rewards, gains, overheads, decision = (np.zeros(horizon) for _ in range(4))
    kept = []
    for t in range(horizon):
        x = x_all[t]
        start = time.perf_counter()
        y = policy.decide(t, x)
        decision[t] = time.perf_counter() - start
        if check:
            problems = check_allocation(instance, y)
            if problems:
                raise ScheduleViolation(policy.name, [f"slot {t + 1}: {p}" for p in problems])
        gains[t], overheads[t] = model.parts(x, y)
        rewards[t] = gains[t] - overheads[t]
        if keep:
            kept.append(y.copy())
        start = time.perf_counter()
        policy.feedback(t, x, y)
        decision[t] += time.perf_counter() - start
        if on_slot is not None:
            on_slot(t + 1, horizon)
    return SlotRun(policy.name, rewards, gains, overheads, time.perf_counter() - tick, decision, kept)
