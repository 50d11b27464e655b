"""The independent schedule checker of the cluster-jobs family.

It reads only an instance and a schedule (it imports no formulation, online algorithm or
baseline) and lists every violated rule of OASiS program (1)-(13):

- integrality and non-negativity (12), (13); nothing for rejected jobs;
- nothing before arrival (9), (10); at most N_i workers per slot (3);
- worker and PS server capacities (4), (5) for every slot, server and resource;
- PS bandwidth covers worker bandwidth (6) and no more PS than workers (7);
- for schedules that promise completion: every admitted job gets Theta_i worker-slots (2).
"""

from __future__ import annotations

import numpy as np

from mlsched.errors import MlschedError
from mlsched.instance import ClusterJobsInstance, MultiServerInstance
from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.schedule import ClusterSchedule

_MAX_LISTED = 20


class ScheduleViolation(MlschedError):
    """A schedule broke a rule of the model; ``violations`` lists them."""

    def __init__(self, algorithm: str, violations: list[str]) -> None:
        self.violations = violations
        shown = violations[:_MAX_LISTED]
        more = f" (+{len(violations) - len(shown)} more)" if len(violations) > len(shown) else ""
        super().__init__(f"schedule of {algorithm or 'an algorithm'} is infeasible: " + "; ".join(shown) + more)


def check(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> list[str]:
    """Every violated rule, one string each; an empty list means the schedule is feasible."""
    inst, sch = instance, schedule
    n_jobs, horizon = inst.num_jobs, inst.horizon
    h, k = len(inst.worker_servers), len(inst.ps_servers)
    if sch.workers.shape != (n_jobs, horizon, h) or sch.ps.shape != (n_jobs, horizon, k) or sch.admitted.shape != (n_jobs,):
        return [f"shape: expected workers {(n_jobs, horizon, h)}, ps {(n_jobs, horizon, k)}, admitted {(n_jobs,)}; "
                f"got {sch.workers.shape}, {sch.ps.shape}, {sch.admitted.shape}"]
    out: list[str] = []
    y = np.asarray(sch.workers)
    z = np.asarray(sch.ps)
    for name, a in (("workers", y), ("ps", z)):
        if np.any(a < 0) or np.any(a != np.round(a)):
            out.append(f"(12)-(13): {name} counts must be non-negative integers")
    jobs = inst.jobs
    slot = np.arange(1, horizon + 1)
    y_tot = y.sum(axis=2)
    z_tot = z.sum(axis=2)
    for i, job in enumerate(jobs):
        label = f"job {job.id}"
        if not sch.admitted[i] and (y_tot[i].any() or z_tot[i].any()):
            out.append(f"{label}: resources given to a job that was not admitted")
        early = slot < job.arrival
        if y_tot[i, early].any() or z_tot[i, early].any():
            out.append(f"(9)-(10) {label}: resources before its arrival slot {job.arrival}")
        for t in np.flatnonzero(y_tot[i] > job.chunks):
            out.append(f"(3) {label} slot {t + 1}: {y_tot[i, t]} workers > N = {job.chunks}")
        bad6 = job.worker_bandwidth * y_tot[i] > job.ps_bandwidth * z_tot[i] * (1 + EPS) + EPS
        for t in np.flatnonzero(bad6):
            out.append(f"(6) {label} slot {t + 1}: {z_tot[i, t]} PS cannot carry {y_tot[i, t]} workers' bandwidth")
        for t in np.flatnonzero(z_tot[i] > y_tot[i]):
            out.append(f"(7) {label} slot {t + 1}: {z_tot[i, t]} PS > {y_tot[i, t]} workers")
    out += _capacity("(4) worker server", y, inst.worker_demand, inst.worker_capacity, inst.worker_servers, inst.resources)
    out += _capacity("(5) PS server", z, inst.ps_demand, inst.ps_capacity, inst.ps_servers, inst.resources)
    if sch.promises_completion:
        done = y_tot.sum(axis=1)
        for i in np.flatnonzero(sch.admitted & (done < inst.workload * (1 - EPS) - EPS)):
            out.append(f"(2) job {jobs[i].id}: {done[i]} worker-slots < workload {inst.workload[i]:.6g}")
    return out


def _capacity(label: str, counts: np.ndarray, demand: np.ndarray, capacity: np.ndarray,
              servers: tuple, resources: tuple[str, ...]) -> list[str]:
    # usage[t, s, r] = sum_i counts[i, t, s] * demand[i, r]
    usage = np.einsum("its,ir->tsr", counts.astype(float), demand)
    over = usage > capacity[None, :, :] * (1 + EPS) + EPS
    return [
        f"{label} {servers[s].name} slot {t + 1} {resources[r]}: used {usage[t, s, r]:g} > capacity {capacity[s, r]:g}"
        for t, s, r in zip(*np.nonzero(over))
    ]


def assert_feasible(instance: ClusterJobsInstance, schedule: ClusterSchedule) -> None:
    """Raise :class:`ScheduleViolation` if ``check`` finds anything."""
    violations = check(instance, schedule)
    if violations:
        raise ScheduleViolation(schedule.algorithm, violations)


def check_allocation(instance: MultiServerInstance, y: np.ndarray, tol: float = 1e-9) -> list[str]:
    """Violated rules of one slot's multi-server allocation y[e, k] (OgaSched eqs. 5 and 6)."""
    cap = instance.channel_cap
    if y.shape != cap.shape:
        return [f"shape: expected {cap.shape}, got {y.shape}"]
    out = []
    if not np.all(np.isfinite(y)):
        out.append("allocation is not finite")
    if np.any(y < -tol):
        out.append(f"(5) negative allocation, min {y.min():.3g}")
    if np.any(y > cap + tol * np.maximum(1.0, cap)):
        out.append(f"(5) allocation above a[l,k], excess {np.max(y - cap):.3g}")
    used = np.zeros_like(instance.capacity)
    np.add.at(used, instance.channel_node, y)
    if np.any(used > instance.capacity + tol * np.maximum(1.0, instance.capacity)):
        out.append(f"(6) node capacity exceeded by {np.max(used - instance.capacity):.3g}")
    return out
