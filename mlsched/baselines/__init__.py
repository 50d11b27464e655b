"""The baselines of the OASiS paper (§V-A), each a :class:`mlsched.sim.Policy`."""

from mlsched.baselines.dorm import Dorm
from mlsched.baselines.drf import DRF
from mlsched.baselines.fifo import FIFO
from mlsched.baselines.rrh import RRH

BASELINES = {"fifo": FIFO, "drf": DRF, "rrh": RRH, "dorm": Dorm}

__all__ = ["BASELINES", "DRF", "FIFO", "RRH", "Dorm"]
