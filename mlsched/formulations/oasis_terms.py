"""The data of OASiS's per-job subproblem (paper eqs. 27-32): one job's terms and the prices and
residual caps of its slots. Shared by the exact routines of Algorithm 2
(:mod:`mlsched.online.oasis.subproblem`) and their Pyomo cross-check
(:mod:`mlsched.formulations.oasis_subproblem`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mlsched.instance.cluster_jobs import EPS
from mlsched.instance.parameter_server import ps_needed

GRANULARITIES = ("chunk", "worker_slot")


@dataclass(frozen=True)
class JobTerms:
    """What Algorithm 2 needs to know about job i."""

    arrival: int
    chunks: int                 # N_i, max concurrent workers (eq. 3)
    chunk_time: float           # W_i
    passes: int                 # E_i N_i chunk-passes
    workload: float             # Theta_i worker-slots
    worker_bandwidth: float     # b_i
    ps_bandwidth: float         # B_i
    utility: np.ndarray         # f_i(t - a_i) for t = a_i..T

    def ps_needed(self, workers: np.ndarray | int) -> np.ndarray | int:
        """Z(Y) = ceil(Y b_i / B_i) (eq. 6 with integer PS counts)."""
        return ps_needed(workers, self.worker_bandwidth, self.ps_bandwidth)

    def units(self, granularity: str) -> int:
        """Total workload in DP units: E_i N_i chunk-passes or ceil(Theta_i) worker-slots."""
        return self.passes if granularity == "chunk" else math.ceil(self.workload - EPS)

    def step(self, granularity: str) -> np.ndarray:
        """Workload units done by Y = 0..N_i workers in one slot."""
        y = np.arange(self.chunks + 1)
        if granularity == "chunk":
            return np.floor(y / self.chunk_time + EPS).astype(np.int64)
        return y


@dataclass(frozen=True)
class SlotPrices:
    """Per-slot prices and caps of the job's window, rows s = t - a_i."""

    worker_price: np.ndarray    # kappa, (S, H)
    worker_cap: np.ndarray      # (S, H) integer
    ps_price: np.ndarray        # lambda, (S, K)
    ps_cap: np.ndarray          # (S, K) integer
