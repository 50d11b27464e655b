"""OgaSched (Zhao et al., IEEE TSC 2024): online gradient ascent with projection onto Y.

Per slot (spec §3.7, the OCO protocol of Theorem 1): commit y(t); x(t) is revealed and
q(x(t), y(t)) collected; then
    z = y(t) + eta_t * grad q(x(t), y(t))          (Alg. 1 line 5, gradient eq. 30)
    y(t+1) = Proj_Y(z)                              (exact by default; the paper's Alg. 1 as an option)
Step sizes (§3.5): ``decay`` eta_t = eta0 lambda^(t-1) (paper: eta0 = 25, lambda = 0.9999);
``theory`` eta = D / (G sqrt T) (Theorem 1); ``adaptive55`` eta_t = D / (||g_t|| sqrt T) (eq. 55).
``protocol="lookahead_mask"`` is the authors' code timing (§1.7): the update uses x(t) before
the decision, ports without an arrival are zeroed after the projection, and q is scored on x(t).
"""

from __future__ import annotations

import math

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_server import MultiServerInstance
from mlsched.multiserver import ChannelModel
from mlsched.online.ogasched.projection import project_exact, project_paper

PROJECTIONS = ("exact", "paper")
STEPS = ("decay", "theory", "adaptive55")
INITS = ("zero", "fairness_static")
PROTOCOLS = ("oco", "lookahead_mask")


def diameter_bound(instance: MultiServerInstance) -> float:
    """D = sqrt(2 sum_k sum_r abar[k] c[r,k]) >= diam(Y) (eq. 51-53)."""
    abar = instance.request.max(axis=0)
    return math.sqrt(2.0 * float((instance.capacity * abar[None, :]).sum()))


def gradient_bound(instance: MultiServerInstance) -> float:
    """G = sqrt(sum_l sum_{r in R_l} (beta*^2 + K varpi*_r^2)) >= ||g|| (eq. 45-50)."""
    varpi_star = ChannelModel(instance).varpi().max(axis=1)
    beta_star = float(instance.beta.max(initial=0.0))
    k = len(instance.resources)
    return math.sqrt(float(np.sum(beta_star**2 + k * varpi_star[instance.channel_node] ** 2)))


def regret_bound(instance: MultiServerInstance, horizon: int) -> float:
    """H_G sqrt(T) = D G sqrt(T) of Theorem 1 (eq. 54)."""
    return diameter_bound(instance) * gradient_bound(instance) * math.sqrt(horizon)


def fairness_static(instance: MultiServerInstance) -> np.ndarray:
    """Every connected port's share a[l,k] / sum_{l' in L_r} a[l',k] of c[r,k], capped at a[l,k]."""
    cap = instance.channel_cap
    totals = np.zeros_like(instance.capacity)
    np.add.at(totals, instance.channel_node, cap)
    denom = totals[instance.channel_node]
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(denom > 0, cap / denom * instance.capacity[instance.channel_node], 0.0)
    return np.minimum(share, cap)


class OgaSched:
    """The OgaSched policy; see the module docstring for the options."""

    promises_completion = False

    def __init__(self, *, projection: str = "exact", step: str = "decay", eta0: float = 25.0,
                 decay: float = 0.9999, init: str = "zero", protocol: str = "oco", repair: bool = False) -> None:
        for value, allowed, label in ((projection, PROJECTIONS, "projection"), (step, STEPS, "step"),
                                      (init, INITS, "init"), (protocol, PROTOCOLS, "protocol")):
            if value not in allowed:
                raise UsageError(f"unknown {label} {value!r}; choose one of {', '.join(allowed)}")
        if not eta0 > 0 or not decay > 0:
            raise UsageError("eta0 and decay must be > 0")
        self.projection, self.step, self.eta0, self.decay = projection, step, eta0, decay
        self.init, self.protocol, self.repair = init, protocol, repair
        self.name = "ogasched" if protocol == "oco" else "ogasched-lookahead"

    def start(self, instance: MultiServerInstance) -> None:
        self.instance = instance
        self.model = ChannelModel(instance)
        self.y = np.zeros_like(instance.channel_cap) if self.init == "zero" else fairness_static(instance)
        self.updates = 0
        self.infeasible_blocks = 0
        self.gradient_norms: list[float] = []
        self._d = diameter_bound(instance)
        bound = gradient_bound(instance)
        # G = 0: every gradient is zero and no step size moves the allocation
        self._constant = self._d / (bound * math.sqrt(instance.horizon)) if bound > 0 else 0.0

    def theorem_bound(self) -> float:
        """H_G sqrt(T) of Theorem 1: the regret bound of a run with ``step="theory"`` and the exact projection."""
        return regret_bound(self.instance, self.instance.horizon)

    def _eta(self, gradient: np.ndarray) -> float:
        if self.step == "decay":
            return self.eta0 * self.decay ** self.updates
        if self.step == "theory":
            return self._constant
        norm = float(np.linalg.norm(gradient))
        return self._d / (norm * math.sqrt(self.instance.horizon)) if norm > 0 else 0.0

    def _project(self, z: np.ndarray) -> np.ndarray:
        inst = self.instance
        if self.projection == "exact":
            return project_exact(z, inst.channel_cap, inst.capacity, inst.channel_node, self.model.node_matrix)
        y, bad = project_paper(z, inst.channel_cap, inst.capacity, inst.channel_node, repair=self.repair)
        self.infeasible_blocks += bad
        return y

    def _step(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        g = self.model.gradient(x, y)
        self.gradient_norms.append(float(np.linalg.norm(g)))
        eta = self._eta(g)
        self.updates += 1
        return self._project(y + eta * g)

    def decide(self, t: int, x: np.ndarray) -> np.ndarray:
        """y(t): committed before x(t) under OCO; computed from x(t) under ``lookahead_mask``."""
        if self.protocol == "oco" or t == 0:
            return self.y
        y = self._step(x, self.y)
        y[x[self.instance.channel_port] == 0] = 0.0
        self.y = y
        return y

    def feedback(self, t: int, x: np.ndarray, y: np.ndarray) -> None:
        """After x(t) is revealed: the gradient step of Alg. 1 (OCO protocol only)."""
        if self.protocol == "oco":
            self.y = self._step(x, y)
