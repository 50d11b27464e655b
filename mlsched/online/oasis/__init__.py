"""OASiS (Bao et al., INFOCOM 2018): online primal-dual admission with worker/PS scaling."""

from mlsched.online.oasis.constants import PriceConstants, oracle_constants, prices
from mlsched.online.oasis.policy import OASiS, job_terms
from mlsched.online.oasis.subproblem import (
    BestSchedule, JobTerms, SlotPrices, best_schedule, best_schedule_literal, slot_costs)

__all__ = ["BestSchedule", "JobTerms", "OASiS", "PriceConstants", "SlotPrices", "best_schedule",
           "best_schedule_literal", "job_terms", "oracle_constants", "prices", "slot_costs"]
