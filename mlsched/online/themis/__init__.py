"""Themis (Mahajan et al., NSDI 2020): finish-time fairness through partial-allocation auctions."""
