"""mlsched: scheduling distributed ML training jobs in shared GPU clusters.

Exact programs (Pyomo + HiGHS), online algorithms, the papers' baselines and competitive-ratio
studies and sweeps for OASiS, OgaSched, Themis, Astraea and truthful SoW scheduling.
"""

from mlsched.errors import InstanceError, MlschedError, UsageError
from mlsched.instance import load, save

__version__ = "0.1.0"

__all__ = ["InstanceError", "MlschedError", "UsageError", "__version__", "load", "save"]
