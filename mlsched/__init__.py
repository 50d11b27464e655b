"""mlsched: scheduling distributed ML training jobs in shared GPU clusters.

Exact programs (Pyomo + HiGHS), online algorithms, the papers' baselines and competitive-ratio
studies and sweeps for OASiS, OgaSched, Themis, Astraea and truthful SoW scheduling.

``load`` and ``save`` are imported on first use, so that importing the package (as the ``mlsched``
command does first, see :mod:`mlsched.entry`) costs no numpy.
"""

from __future__ import annotations

from mlsched.errors import InstanceError, MlschedError, UsageError

__version__ = "0.1.0"

__all__ = ["InstanceError", "MlschedError", "UsageError", "__version__", "load", "save"]


def __getattr__(name: str) -> object:
    if name in ("load", "save"):
        from mlsched import instance
        return getattr(instance, name)
    raise AttributeError(f"module 'mlsched' has no attribute {name!r}")
