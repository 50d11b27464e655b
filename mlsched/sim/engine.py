"""Discrete-time engine: drives an online policy slot by slot over a cluster-jobs instance.

At the start of slot t the engine tells the policy which jobs arrived (a_i = t, in id order,
spec A17) and which completed in slot t-1; the policy answers with the workers and PS each job
holds in slot t and the jobs it rejects. Progress follows eq. (2): a job accumulates
sum_h y_ih(t) worker-slots per slot and has completed once the total reaches Theta_i.
The engine records the schedule, times every slot's decision, and finally runs the independent
checker on the schedule.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.check import assert_feasible
from mlsched.sim.schedule import ClusterSchedule


@dataclass
class SlotState:
    """What a policy sees at the start of slot ``t`` (1-based)."""

    t: int
    arrivals: list[int]
    completions: list[int]
    progress: np.ndarray
    done: np.ndarray


@dataclass
class SlotDecision:
    """Workers (I, H) and PS (I, K) per job for this slot, and jobs rejected at this slot."""

    workers: np.ndarray
    ps: np.ndarray
    rejected: list[int] = field(default_factory=list)


class Policy(Protocol):
    """An online scheduler of the cluster-jobs family."""

    name: str
    promises_completion: bool

    def start(self, instance: ClusterJobsInstance) -> None:
        """Reset all state for a run over ``instance``."""

    def decide(self, state: SlotState) -> SlotDecision:
        """Allocations for slot ``state.t``."""


@dataclass
class RunResult:
    schedule: ClusterSchedule
    wall_seconds: float
    decision_seconds: np.ndarray      # time the policy took to decide each slot


def run(instance: ClusterJobsInstance, policy: Policy, *, check: bool = True,
        on_slot: Callable[[int, int], None] | None = None) -> RunResult:
    """Run ``policy`` over the whole horizon and return its checked schedule; ``on_slot`` is
    called with (slots done, horizon) after each slot."""
    start = time.perf_counter()
    policy.start(instance)
    schedule = ClusterSchedule.empty(instance, policy.name, promises_completion=policy.promises_completion)
    n_jobs = instance.num_jobs
    progress = np.zeros(n_jobs)
    done = np.zeros(n_jobs, dtype=bool)
    rejected = np.zeros(n_jobs, dtype=bool)
    arrived = np.zeros(n_jobs, dtype=bool)
    order = sorted(range(n_jobs), key=lambda i: (instance.jobs[i].arrival, i))
    by_slot: dict[int, list[int]] = {}
    for i in order:
        by_slot.setdefault(instance.jobs[i].arrival, []).append(i)
    threshold = instance.workload * (1 - EPS) - EPS
    completions: list[int] = []
    decision_seconds = np.zeros(instance.horizon)
    for t in range(1, instance.horizon + 1):
        arrivals = by_slot.get(t, [])
        arrived[arrivals] = True
        state = SlotState(t=t, arrivals=arrivals, completions=completions, progress=progress.copy(), done=done.copy())
        tick = time.perf_counter()
        decision = policy.decide(state)
        decision_seconds[t - 1] = time.perf_counter() - tick
        rejected[decision.rejected] = True
        schedule.workers[:, t - 1, :] = decision.workers
        schedule.ps[:, t - 1, :] = decision.ps
        progress += decision.workers.sum(axis=1)
        newly = ~done & (progress >= threshold) & arrived & ~rejected
        completions = [int(i) for i in np.flatnonzero(newly)]
        done |= newly
        if on_slot is not None:
            on_slot(t, instance.horizon)
    schedule.admitted = arrived & ~rejected
    if check:
        assert_feasible(instance, schedule)
    return RunResult(schedule=schedule, wall_seconds=time.perf_counter() - start, decision_seconds=decision_seconds)
