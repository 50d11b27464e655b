"""Truthful statement-of-work scheduling (Babaioff et al., WWW 2022): posted prices, LIFO eviction."""

from mlsched.online.sow.lifo import lifo_removals_prefix, lifo_removals_sequential

__all__ = ["lifo_removals_prefix", "lifo_removals_sequential"]
