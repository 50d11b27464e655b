"""Measures of a schedule: utility (OASiS eq. 1), completion times, admissions, utilization,
and the empirical competitive ratio OPT / ALG as a point or an interval."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlsched.instance import ClusterJobsInstance
from mlsched.sim.schedule import ClusterSchedule


def job_utilities(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> np.ndarray:
    """f_i(t_hat_i - a_i) for completed jobs, 0 for rejected or unfinished ones (eq. 1, 8)."""
    completed = schedule.completed(instance)
    t_hat = schedule.completion_slots()
    out = np.zeros(instance.num_jobs)
    for i in np.flatnonzero(completed):
        out[i] = instance.utility_of(i, int(t_hat[i]))
    return out


def total_utility(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> float:
    return float(job_utilities(instance, schedule).sum())


def job_table(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> pd.DataFrame:
    """One row per job: arrival, admitted, completed, completion slot, delay, utility."""
    completed = schedule.completed(instance)
    t_hat = schedule.completion_slots()
    return pd.DataFrame({
        "job": [j.id for j in instance.jobs],
        "arrival": instance.arrival,
        "admitted": schedule.admitted,
        "completed": completed,
        "completion_slot": np.where(completed, t_hat, 0),
        "delay": np.where(completed, t_hat - instance.arrival, -1),
        "utility": job_utilities(instance, schedule),
    })


def utilization(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> dict[str, float]:
    """Mean share of each resource used over all slots, worker and PS pools pooled."""
    used = (np.einsum("its,ir->r", schedule.workers.astype(float), instance.worker_demand)
            + np.einsum("its,ir->r", schedule.ps.astype(float), instance.ps_demand))
    capacity = (instance.worker_capacity.sum(axis=0) + instance.ps_capacity.sum(axis=0)) * instance.horizon
    return {r: float(u / c) if c > 0 else 0.0 for r, u, c in zip(instance.resources, used, capacity)}


@dataclass(frozen=True)
class Ratio:
    """OPT / ALG: a point when OPT is proven, else the interval [incumbent/ALG, bound/ALG]."""

    low: float
    high: float

    @property
    def is_point(self) -> bool:
        return self.low == self.high

    def __str__(self) -> str:
        if self.is_point:
            return _fmt(self.low)
        return f"[{_fmt(self.low)}, {_fmt(self.high)}]"


def ratio(opt_low: float, opt_high: float, alg: float) -> Ratio:
    """Empirical competitive ratio from OPT's proven interval [opt_low, opt_high] and ALG."""
    def div(a: float) -> float:
        if alg > 0:
            return a / alg
        return 1.0 if a <= 0 else float("inf")
    return Ratio(low=div(opt_low), high=div(opt_high))


def _fmt(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:.4f}"
