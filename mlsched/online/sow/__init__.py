"""Truthful statement-of-work scheduling (Babaioff et al., WWW 2022): posted prices, LIFO eviction."""

from mlsched.online.sow.launch import (
    LAUNCH_THRESHOLD, best_start, group_gains, launch_plan, relaxed_usage)
from mlsched.online.sow.lifo import lifo_removals_prefix, lifo_removals_sequential
from mlsched.online.sow.prices import ExpPrices, interval_prices

__all__ = ["LAUNCH_THRESHOLD", "ExpPrices", "best_start", "group_gains", "interval_prices", "launch_plan",
           "lifo_removals_prefix", "lifo_removals_sequential", "relaxed_usage"]
