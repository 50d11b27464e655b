"""FIFO baseline (spec §5.3): all jobs admitted and queued by (a_i, id); at each event, from the
head of the queue, start jobs whose fixed (n_w, n_ps) can be placed round-robin, stopping at
the first that cannot (strict head-of-line blocking, no backfilling). A running job keeps its
allocation until it completes."""

from __future__ import annotations

import numpy as np

from mlsched.baselines.placement import EventPolicy, fixed_counts
from mlsched.instance import ClusterJobsInstance
from mlsched.sim.engine import SlotState


class FIFO(EventPolicy):
    name = "fifo"

    def __init__(self, *, seed: int = 0) -> None:
        self.seed = seed

    def start(self, instance: ClusterJobsInstance) -> None:
        super().start(instance)
        self.counts = fixed_counts(instance, np.random.default_rng(self.seed))

    def reschedule(self, state: SlotState) -> None:
        residual_w, residual_ps = self.residual()
        for i in self.active(state):
            if self.alloc_w[i].any():
                continue
            placed = self.placer.place(i, int(self.counts[i, 0]), int(self.counts[i, 1]), residual_w, residual_ps)
            if placed is None:
                break
            self.alloc_w[i], self.alloc_ps[i] = placed
