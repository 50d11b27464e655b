"""Figures of the SoW report (truthful SoW spec §8) beyond one run's summary, as table columns.

  ratio        = E[OPT] / E[W] (a ratio of means over the same realizations, §2.5)
  95% interval = ratio -+ 1.96 se, se from the delta method on the paired draws:
                 se^2 = Var_m[(H_m - ratio W_m) / E[W]] / M   (0 when the realizations are enumerated)
  ratio_bound  = alpha (1 + delta) / ((1 - B_evict)(1 - B_switch))   (Theorem 4.1 with B1: E[OPT] <= LP-R(C);
                 alpha = alpha_3, or alpha_E = 4 c_E with c_E = LP-E(C_E) / V(FUA) measured; inf when
                 B_evict or B_switch >= 1)
  LP-R(C), LP-RP(C) (fixed SoWs) and LP-E(C): the relaxed benchmarks at the instance's supply (§2.3)
  price trajectory: per round, A's relaxed usage u_t after every job, Alg. 3's per-node price p(u_t)
  and the committed load
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from mlsched.exact import exact_sow
from mlsched.instance.sow import SowInstance
from mlsched.solve import Status


def ratio_interval(opt: np.ndarray, welfare: np.ndarray, weights: np.ndarray, *, exact: bool) -> dict[str, float]:
    """E[OPT] / E[W] and its 95% interval over paired realizations (a point when enumerated)."""
    mo, mw = float(weights @ opt), float(weights @ welfare)
    if mw <= 0:
        return {"ratio_ci_low": math.nan, "ratio_ci_high": math.nan}
    r = mo / mw
    if exact:
        return {"ratio_ci_low": r, "ratio_ci_high": r}
    resid = (opt - r * welfare) / mw
    half = 1.96 * float(np.sqrt((weights @ (resid - weights @ resid) ** 2) / len(weights)))
    return {"ratio_ci_low": r - half, "ratio_ci_high": r + half}


def ratio_bound(constants: dict[str, float]) -> float:
    """Theorem 4.1's bound on E[OPT] / E[W] from a mechanism's reported constants (inf when vacuous)."""
    alpha = constants.get("alpha_3", constants.get("alpha_e"))
    if alpha is None or "b_evict" not in constants:
        return math.nan
    keep = (1 - constants["b_evict"]) * (1 - constants["b_switch"])
    return alpha * (1 + constants["delta"]) / keep if keep > 0 and constants["b_evict"] < 1 else math.inf


def benchmark_columns(instance: SowInstance) -> dict[str, float]:
    """LP-R(C), LP-RP(C) and LP-E(C): LP-R and LP-RP only when the SoWs are fixed."""
    variants = ("lp-e",) if instance.stochastic else ("lp-r", "lp-rp", "lp-e")
    out = {}
    for variant in variants:
        report = exact_sow(instance, variant=variant)
        out[variant.replace("-", "_")] = math.nan if report.objective is None else float(report.objective)
    return out


def paired_columns(opt: Any, runs: Any) -> dict[str, float]:
    """The ratio's 95% interval from E[H] per realization (``opt.schedule``) and the runs' welfare;
    NaN unless every realization's H is proven (``opt`` OPTIMAL): an unsolved realization's entry
    is 0 and a time-limited one's an incumbent, neither of them H."""
    if opt.status is not Status.OPTIMAL or opt.schedule is None or len(opt.schedule) != len(runs.realizations):
        return {"ratio_ci_low": math.nan, "ratio_ci_high": math.nan}
    return ratio_interval(np.asarray(opt.schedule, dtype=float), runs.welfare(), runs.realizations.weights,
                          exact=runs.realizations.exact)


def price_trajectory(mechanism: Any, instance: SowInstance, outcome: Any) -> pd.DataFrame:
    """One row per round of a run: A's final relaxed usage, Alg. 3's per-node price and the load."""
    prices = mechanism.prices(instance)
    usage = outcome.relaxed_usage
    return pd.DataFrame({"round": np.arange(usage.shape[0]), "relaxed_usage": usage,
                         "unit_price": prices.unit(usage), "load": outcome.load})
