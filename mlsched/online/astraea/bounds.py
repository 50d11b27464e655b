r"""Astraea's performance guarantees as printed in Theorem 1 (spec §4.1; the proofs are in the
paper's unavailable supplement, so the property script reports these checks and never asserts them).
t^+ is the absolute completion time (``time_origin="absolute"``), lambda the Lemma 1 value, L the
number of batches run and N the number of jobs.

  (i)  linear f_j(t) = k_j t + g_j (k_j < 0 < g_j):
           OPT - ALG <= N ((2^L - 1) k_max - (2^(L+1) - 1) (2 lambda - 1) k_min)
  (ii) convex f_j(t) = (e_j / t)^kappa_j (A20: transcribed as printed):
           ALG / OPT >= (1 / (4 lambda))^kappa_max (1 / 2^(L-2))^(kappa_max - kappa_min)
                        e_min^kappa_max / e_max^kappa_min
"""

from __future__ import annotations

from mlsched.errors import UsageError
from mlsched.instance.multi_tenant import MultiTenantInstance
from mlsched.instance.utility import Affine, Convex


def linear_gap_bound(jobs: int, batches: int, rounds: int, k_min: float, k_max: float) -> float:
    """Theorem 1 (i): the bound on OPT - ALG."""
    return jobs * ((2 ** batches - 1) * k_max - (2 ** (batches + 1) - 1) * (2 * rounds - 1) * k_min)


def convex_ratio_bound(batches: int, rounds: int, kappa_min: float, kappa_max: float, e_min: float,
                       e_max: float) -> float:
    """Theorem 1 (ii): the bound on ALG / OPT."""
    return ((1 / (4 * rounds)) ** kappa_max * (1 / 2 ** (batches - 2)) ** (kappa_max - kappa_min)
            * e_min ** kappa_max / e_max ** kappa_min)


def theorem1_bound(instance: MultiTenantInstance, batches: int, rounds: int) -> tuple[str, float]:
    """("gap", bound on OPT - ALG) for all-linear instances, ("ratio", bound on ALG / OPT) for
    all-convex ones; other instances have no bound."""
    utilities = [job.utility for job in instance.jobs]
    if utilities and all(isinstance(u, Affine) for u in utilities):
        slopes = [u.k for u in utilities]
        return "gap", linear_gap_bound(len(utilities), batches, rounds, min(slopes), max(slopes))
    if utilities and all(isinstance(u, Convex) for u in utilities):
        kappas, scales = [u.kappa for u in utilities], [u.e for u in utilities]
        return "ratio", convex_ratio_bound(batches, rounds, min(kappas), max(kappas), min(scales), max(scales))
    raise UsageError(f"{instance.name}: Theorem 1 covers all-linear or all-convex utilities only")
