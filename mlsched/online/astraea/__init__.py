"""Astraea (Wang et al., IEEE TC 2023): multi-tenant sharing incentive through posted prices."""

from mlsched.online.astraea.parameters import Constants, constants, fitting_configurations, posted_prices
from mlsched.online.astraea.placement import (
    Candidate, JobShape, RoundView, best_candidate, job_shape, placement_at)
from mlsched.online.astraea.policy import Astraea, AstraeaRun, SharedPayment, shared_payment

__all__ = ["Astraea", "AstraeaRun", "Candidate", "Constants", "JobShape", "RoundView", "SharedPayment",
           "best_candidate", "constants", "fitting_configurations", "job_shape", "placement_at", "posted_prices",
           "shared_payment"]
