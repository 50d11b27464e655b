"""mlsched: scheduling distributed ML training jobs in shared GPU clusters.

Exact programs (Pyomo + HiGHS), online algorithms, the papers' baselines and competitive-ratio
studies for OASiS, with OgaSched, Themis, Astraea and truthful SoW scheduling to follow.
"""

from mlsched.errors import InstanceError, MlschedError, UsageError
from mlsched.instance import load, save

__version__ = "0.1.0"

__all__ = ["InstanceError", "MlschedError", "UsageError", "__version__", "load", "save"]
