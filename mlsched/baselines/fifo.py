"""FIFO baseline (paper §V-A (i); operational rule of spec §5.3, whose details are [R] choices,
A13, A14): every job is admitted and queued by (a_i, index); each runs with fixed (n_w, n_ps)
(see :mod:`mlsched.baselines.fixed_counts`). At each event, from the head of the queue, waiting
jobs are started with a round-robin placement until the first one that does not fit (strict
head-of-line blocking, no backfilling). A running job keeps its allocation until it completes.
"""

from __future__ import annotations

from mlsched.baselines.fixed_counts import FixedCountPolicy
from mlsched.sim.engine import SlotState


class FIFO(FixedCountPolicy):
    name = "fifo"

    def reschedule(self, state: SlotState) -> None:
        residual_w, residual_ps = self.residual()
        for job in self.active(state):
            if not self.running(int(job)) and not self.launch(int(job), residual_w, residual_ps):
                break
