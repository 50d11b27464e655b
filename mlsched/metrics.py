"""Measures of a schedule: utility (OASiS eq. 1), completion times, admissions, utilization,
and the empirical competitive ratio OPT / ALG as a point or an interval."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from mlsched.instance import ClusterJobsInstance
from mlsched.sim.themis_run import ThemisRun
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


def _quotient(num: float, den: float) -> float:
    if den > 0:
        return num / den
    return 1.0 if num <= 0 else float("inf")


def ratio(opt_low: float, opt_high: float, alg: float) -> Ratio:
    """Empirical competitive ratio OPT / ALG from OPT's proven interval [opt_low, opt_high] and ALG."""
    return Ratio(low=_quotient(opt_low, alg), high=_quotient(opt_high, alg))


def cost_ratio(opt_low: float, opt_high: float, alg: float) -> Ratio:
    """ALG / OPT for a cost (lower is better) from OPT's proven interval [opt_low, opt_high]."""
    return Ratio(low=_quotient(alg, opt_high), high=_quotient(alg, opt_low))


def _fmt(x: float) -> str:
    return "inf" if np.isinf(x) else f"{x:.4f}"


def jain_index(values: np.ndarray) -> float:
    """Jain's fairness index (sum x)^2 / (n sum x^2), in (0, 1]; 1 when all values are equal."""
    x = np.asarray(values, dtype=float)
    return float(x.sum() ** 2 / (len(x) * (x ** 2).sum())) if len(x) and (x ** 2).sum() > 0 else 1.0


def placement_scores(run: ThemisRun) -> np.ndarray:
    """1/S per (job, allocation interval), unweighted (Themis §5.5, A20)."""
    return np.array([1.0 / iv.slowdown for iv in run.jobs])


def app_table(run: ThemisRun) -> pd.DataFrame:
    """One row per app: arrival, finish, completion time, T_id, rho_final, GPU time received."""
    inst = run.instance
    gpu_time = np.zeros(len(inst.apps))
    for h in run.holdings:
        gpu_time[h.app] += h.end - h.start
    arrival = np.array([a.arrival for a in inst.apps])
    return pd.DataFrame({"app": [a.name for a in inst.apps], "arrival": arrival, "finish": run.finish,
                         "completion_time": run.finish - arrival, "t_id": run.t_id, "rho": run.rho,
                         "gpu_time": gpu_time, "work": [a.work for a in inst.apps]})


def themis_summary(run: ThemisRun) -> dict[str, float]:
    """Finish-time fairness (max, median, share with rho <= 1, Jain), GPU time (GPU-hours),
    placement score, mean app completion time, rounds and decision time (Themis §5.5)."""
    rho = run.rho
    seconds = np.array(run.round_seconds) if run.round_seconds else np.zeros(1)
    scores = placement_scores(run)
    return {"max_rho": float(rho.max()), "median_rho": float(np.median(rho)),
            "sharing_incentive": float(np.mean(rho <= 1 + 1e-9)), "jain": jain_index(rho),
            "gpu_hours": run.gpu_time / 3600, "placement_score": float(scores.mean()) if scores.size else 1.0,
            "mean_act_hours": float(np.mean(run.finish - [a.arrival for a in run.instance.apps])) / 3600,
            "rounds": run.rounds, "round_ms_median": float(np.median(seconds)) * 1e3,
            "round_ms_p95": float(np.percentile(seconds, 95)) * 1e3}
