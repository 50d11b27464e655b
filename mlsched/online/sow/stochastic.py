"""The stochastic variant's offline step (truthful SoW spec §6.1-6.4): LP-E at C_E = C'/2, FUA-Dyadic
with the kappa fallback, and the bundle menu of Lemma E.3 that the online loop prices with.

For kappa = 1, 2^(-1/2), 1/2, ... down to 1/64: solve LP-E at supply kappa C_E (HiGHS, array form),
keep the outcomes with x_o > 0 and build FUA-Dyadic; stop at the first FUA whose bundles fit in C_E.
The strict (F1)-(F3) checker verifies it. Requires sigma = l for every SoW (§6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mlsched.errors import NotRunnable, UsageError
from mlsched.formulations.sow import expected_relaxed
from mlsched.instance.sow import SowInstance
from mlsched.online.sow.bundles import BundleMenu, fua_violations
from mlsched.online.sow.fua import Fua, Piece, dyadic_kappas, fua_dyadic
from mlsched.solve import Status, solve_arrays

POSITIVE = 1e-12


@dataclass
class BundlePlan:
    """The offline result: the FUA, its bundle menu template and the figures §8 item 6 reports."""

    fua: Fua
    menu: BundleMenu
    kappa: float
    lp_e_half: float      # LP-E(C_E)
    lp_e_full: float      # LP-E(C')

    def report(self) -> dict[str, float]:
        """kappa, bundles, V(FUA), LP-E(C_E), LP-E(C'), the FUA loss V(FUA) / LP-E(C_E), the halving ratio
        LP-E(C_E) / LP-E(C') and alpha_E = 4 c_E with c_E = 1 / (FUA loss) as measured (A9)."""
        loss = self.fua.value / self.lp_e_half if self.lp_e_half > 0 else 1.0
        return {"kappa": self.kappa, "bundles": float(self.menu.rho.shape[0]), "fua_value": self.fua.value,
                "lp_e_half": self.lp_e_half, "lp_e_full": self.lp_e_full, "fua_loss": loss,
                "halving_ratio": self.lp_e_half / self.lp_e_full if self.lp_e_full > 0 else 1.0,
                "alpha_e": 4.0 / loss if loss > 0 else float("inf")}


def require_duration_signals(instance: SowInstance) -> None:
    for j in range(instance.num_jobs):
        for _, sow in instance.sow_choices(j):
            if any(p.signal != p.duration for p in sow.support):
                raise NotRunnable(f"job {instance.jobs[j].id}: the stochastic mechanism needs sigma = l "
                                 "(every support point's signal equal to its duration, §6)")


def lp_e_value(instance: SowInstance, supply: float) -> tuple[float, list[Piece]]:
    """LP-E's optimum at ``supply`` and its outcomes with positive mass."""
    pack = expected_relaxed(instance, supply)
    if pack.size == 0:
        return 0.0, []
    report = solve_arrays(pack.arrays(integer=False))
    if report.status is not Status.OPTIMAL or report.schedule is None:
        raise UsageError(f"LP-E at supply {supply:g} not solved ({report.status.value}: {report.message})")
    y = np.asarray(report.schedule)
    pieces = [Piece(first=min(pack.usage[c]), last=max(pack.usage[c]), mass=y[c] * next(iter(pack.usage[c].values())),
                    value=y[c] * pack.values[c]) for c in range(pack.size) if y[c] > POSITIVE]
    return float(report.objective or 0.0), pieces


def build_bundles(instance: SowInstance, relaxed_capacity: float, *, by_weight: bool = True) -> BundlePlan:
    """LP-E at C_E = C'/2 with the kappa fallback, FUA-Dyadic, checked, and its bundle menu."""
    require_duration_signals(instance)
    supply = relaxed_capacity / 2
    rounds = instance.horizon + instance.max_duration + 2
    full, _ = lp_e_value(instance, relaxed_capacity)
    half, _ = lp_e_value(instance, supply)
    for kappa in dyadic_kappas():
        _, pieces = lp_e_value(instance, kappa * supply)
        fua = fua_dyadic(pieces, instance.d_max, supply, rounds)
        if fua is None:
            continue
        problems = fua_violations(fua.n, fua.outcomes, instance.d_max, supply)
        if problems:
            raise AssertionError(f"FUA-Dyadic broke its own conditions: {problems[0]}")
        menu = BundleMenu.from_fua(fua.n, fua.values, fua.weights, instance.d_max, by_weight=by_weight)
        return BundlePlan(fua=fua, menu=menu, kappa=kappa, lp_e_half=half, lp_e_full=full)
    raise NotRunnable(f"FUA infeasible at supply C_E = {supply:g} for every kappa down to 1/64: the stochastic "
                     "mechanism does not run for this configuration")
