"""The baselines of the OASiS paper (§V-A; operational rules of spec §5.3, [R] choices), each an
online :class:`mlsched.sim.Policy` under the event-driven slot simulator of
:mod:`mlsched.baselines.placement`."""

from mlsched.baselines.dorm import Dorm
from mlsched.baselines.drf import DRF
from mlsched.baselines.fifo import FIFO
from mlsched.baselines.rrh import RRH

BASELINES = {"fifo": FIFO, "drf": DRF, "rrh": RRH, "dorm": Dorm}

__all__ = ["BASELINES", "DRF", "FIFO", "RRH", "Dorm"]
