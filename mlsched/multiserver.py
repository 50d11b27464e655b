"""Reward, its parts and its supergradient for the multi-server family (OgaSched eqs. 7-9, 12, 30, 60).

Allocations are y[e, k] over channels e = (l, r) (sorted by (l, r)) and resource types k.

  f_{r,k}(y): linear alpha y | log alpha ln(y + 1) | reciprocal 1/(s alpha) - 1/(y + s alpha)
              | poly alpha sqrt(y + 1) - alpha                         (eq. 60; s = reciprocal scale)
  q(x, y) = sum_l x_l [ sum_k sum_{r in R_l} f_{r,k}(y[l,r,k]) - max_k beta_k sum_{r in R_l} y[l,r,k] ]   (7-8)
  g[l,r,k] = x_l ( f'_{r,k}(y[l,r,k]) - beta_k 1{k = k*_l(y)} ),  k*_l = lowest argmax_k beta_k sum_r y[l,r,k]  (30)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np
import scipy.sparse as sp

from mlsched.instance.multi_server import MultiServerInstance

LINEAR, LOG, RECIPROCAL, POLY = range(4)


@dataclass(frozen=True)
class ChannelModel:
    """Per-channel views of an instance, built once and reused by every slot's computations."""

    instance: MultiServerInstance

    @cached_property
    def alpha(self) -> np.ndarray:
        """alpha[r(e), k] scaled for the reciprocal kind: (E, K)."""
        inst = self.instance
        scale = np.where(inst.utility_kind == RECIPROCAL, inst.reciprocal_scale, 1.0)
        return (inst.alpha * scale)[inst.channel_node]

    @cached_property
    def kind(self) -> np.ndarray:
        return self.instance.utility_kind[self.instance.channel_node]

    @cached_property
    def port_matrix(self) -> sp.csr_matrix:
        """ML (L x E): sums channels per port."""
        inst = self.instance
        e = len(inst.channels)
        return sp.csr_matrix((np.ones(e), (inst.channel_port, np.arange(e))), shape=(inst.num_ports, e))

    @cached_property
    def node_matrix(self) -> sp.csr_matrix:
        """MR (R x E): sums channels per node."""
        inst = self.instance
        e = len(inst.channels)
        return sp.csr_matrix((np.ones(e), (inst.channel_node, np.arange(e))), shape=(inst.num_nodes, e))

    def utility(self, y: np.ndarray) -> np.ndarray:
        a, kind = self.alpha, self.kind
        with np.errstate(invalid="ignore"):
            return np.select(
                [kind == LINEAR, kind == LOG, kind == RECIPROCAL],
                [a * y, a * np.log1p(y), 1.0 / a - 1.0 / (y + a)],
                a * np.sqrt(y + 1.0) - a,
            )

    def utility_slope(self, y: np.ndarray) -> np.ndarray:
        a, kind = self.alpha, self.kind
        return np.select(
            [kind == LINEAR, kind == LOG, kind == RECIPROCAL],
            [a, a / (y + 1.0), 1.0 / (y + a) ** 2],
            a / (2.0 * np.sqrt(y + 1.0)),
        )

    def varpi(self) -> np.ndarray:
        """f'_{r,k}(0) per node and type, (R, K)."""
        inst = self.instance
        scaled = inst.alpha * np.where(inst.utility_kind == RECIPROCAL, inst.reciprocal_scale, 1.0)
        return np.select([inst.utility_kind == LINEAR, inst.utility_kind == LOG, inst.utility_kind == RECIPROCAL],
                         [scaled, scaled, 1.0 / scaled**2], scaled / 2.0)

    def port_loads(self, y: np.ndarray) -> np.ndarray:
        """beta_k sum_{r in R_l} y[l,r,k], (L, K)."""
        return (self.port_matrix @ y) * self.instance.beta[None, :]

    def parts(self, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        """(computation gain, communication overhead) of q(x, y)."""
        gain_per_port = self.port_matrix @ self.utility(y).sum(axis=1)
        overhead_per_port = self.port_loads(y).max(axis=1) if y.shape[1] else np.zeros(len(x))
        return float(x @ gain_per_port), float(x @ overhead_per_port)

    def reward(self, x: np.ndarray, y: np.ndarray) -> float:
        gain, overhead = self.parts(x, y)
        return gain - overhead

    def gradient(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The supergradient of eq. (30), (E, K); lowest-index tie-break for k* (spec A18)."""
        inst = self.instance
        dominant = np.argmax(self.port_loads(y), axis=1)                   # (L,)
        penalty = np.zeros_like(y)
        penalty[np.arange(len(inst.channels)), dominant[inst.channel_port]] = inst.beta[dominant[inst.channel_port]]
        return x[inst.channel_port][:, None] * (self.utility_slope(y) - penalty)
