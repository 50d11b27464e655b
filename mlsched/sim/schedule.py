"""Schedules of the cluster-jobs family: integer worker and PS counts per job, slot and server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsched.instance import ClusterJobsInstance
from mlsched.instance.cluster_jobs import EPS


@dataclass
class ClusterSchedule:
    """``workers[i, t-1, h]`` = y_ih(t) and ``ps[i, t-1, k]`` = z_ik(t) (eq. 1-13 notation).

    ``admitted[i]`` is x_i. ``promises_completion`` marks schedules that commit to finish every
    admitted job (OASiS, the exact optimum); baselines admit jobs they may never finish, and
    there the checker only requires feasibility. ``info`` holds algorithm-specific records.
    """

    workers: np.ndarray
    ps: np.ndarray
    admitted: np.ndarray
    algorithm: str = ""
    promises_completion: bool = False
    info: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def empty(cls, instance: ClusterJobsInstance, algorithm: str = "", *, promises_completion: bool = False) -> ClusterSchedule:
        i, t = instance.num_jobs, instance.horizon
        return cls(
            workers=np.zeros((i, t, len(instance.worker_servers)), dtype=np.int64),
            ps=np.zeros((i, t, len(instance.ps_servers)), dtype=np.int64),
            admitted=np.zeros(i, dtype=bool),
            algorithm=algorithm,
            promises_completion=promises_completion,
        )

    @property
    def workers_per_slot(self) -> np.ndarray:
        """sum_h y_ih(t), shape (I, T)."""
        return self.workers.sum(axis=2)

    @property
    def ps_per_slot(self) -> np.ndarray:
        """sum_k z_ik(t), shape (I, T)."""
        return self.ps.sum(axis=2)

    def completion_slots(self) -> np.ndarray:
        """t_hat_i (eq. 8): the last slot (1-based) with a worker; 0 where the job never ran."""
        running = self.workers_per_slot > 0
        last = running.shape[1] - np.argmax(running[:, ::-1], axis=1)
        return np.where(running.any(axis=1), last, 0)

    def completed(self, instance: ClusterJobsInstance) -> np.ndarray:
        """Jobs whose worker-slots reach their workload Theta_i (eq. 2)."""
        done = self.workers_per_slot.sum(axis=1)
        return self.admitted & (done >= instance.workload * (1 - EPS) - EPS)
