r"""Interchangeable servers of the OASiS program and the per-slot order that breaks their symmetry.

Two worker servers h, h' are interchangeable when every job has the same bound on them
(y_ih(t) <= ybar_ih = ybar_ih') and every resource r has a capacity row (4) on both with the
same capacity c_h^r = c_h'^r, or on neither (no row: the jobs' largest load cannot exceed it);
PS servers likewise with z and (5). Servers of equal capacities are the plain case.

Symmetry-breaking rows ("symmetry" of :func:`mlsched.formulations.oasis.build`): within each
class h_1 < h_2 < ... < h_m, in every slot t,

  (sym)  sum_i y_{i h_j}(t) >= sum_i y_{i h_{j+1}}(t)          (PS: sum_i z_{i k_j}(t) likewise)

Validity: take any feasible schedule and, in each slot separately, permute the servers of each
class so that their worker counts are non-increasing (:func:`ordered`). Rows (4)/(5) of a server
only see its own slot's load, and the capacities and bounds of a class are equal, so they still
hold; every other row and the objective sum over the servers. The permuted schedule is feasible,
satisfies (sym), and has the same objective, so the optimum is unchanged. No row couples a
server across slots, which is why the order can be chosen per slot.
"""

from __future__ import annotations

import numpy as np

from mlsched.instance.cluster_jobs import EPS
from mlsched.sim.schedule import ClusterSchedule


def interchangeable(demand: np.ndarray, capacity: np.ndarray, bound: np.ndarray) -> list[np.ndarray]:
    """Classes of at least two interchangeable servers (ascending indices), given the jobs'
    demands (I, R), the servers' capacities (S, R) and the bounds (I, S) of their variables."""
    classes: dict[tuple, list[int]] = {}
    for s in range(capacity.shape[0]):
        load = demand.T @ bound[:, s]                                 # (R,) the jobs' largest load
        rows = tuple((r, float(capacity[s, r])) for r in range(capacity.shape[1])
                     if np.any(demand[:, r] > 0) and load[r] > capacity[s, r] + EPS)
        classes.setdefault((bound[:, s].tobytes(), rows), []).append(s)
    return [np.array(members) for members in classes.values() if len(members) > 1 and bound[:, members[0]].max() >= 1]


def ordered(schedule: ClusterSchedule, worker_classes: list[np.ndarray], ps_classes: list[np.ndarray]) -> ClusterSchedule:
    """``schedule`` with the servers of each class permuted, slot by slot, into non-increasing
    worker (PS) counts: the schedule the validity argument of the module docstring maps it to."""
    workers, ps = schedule.workers.copy(), schedule.ps.copy()
    for use, classes in ((workers, worker_classes), (ps, ps_classes)):
        for members in classes:
            block = use[:, :, members]                                # (I, T, m)
            order = np.argsort(-block.sum(axis=0), axis=1, kind="stable")   # (T, m)
            use[:, :, members] = np.take_along_axis(block, order[None, :, :], axis=2)
    return ClusterSchedule(workers=workers, ps=ps, admitted=schedule.admitted.copy(), algorithm=schedule.algorithm,
                           promises_completion=schedule.promises_completion, info=schedule.info)
