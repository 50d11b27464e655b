"""Baselines of the OgaSched paper (§4 "Baselines"; spec §5), one allocation per slot from full
capacities, only for ports with an arrival, ties by lowest index.

Demand scope (spec A10, kept as in the authors' code): Fairness caps each channel at a[l,k];
DRF, BinPacking and Spreading give a job at most a[l,k] in total per resource type.

- DRF: ports in ascending static dominant share s_l = max_k a[l,k] / sum_{r in R_l} c[r,k]; each
  fills a[l,k] over its nodes in ascending index order.
- Fairness: node r's type-k capacity split among arrived connected ports by a[l,k] / sum a,
  capped at a[l,k] (arrived-only denominator, A13; ``denominator="all_connected"`` for the paper's).
- BinPacking: per port and type, the feasible node with the least free capacity (best fit), else
  the node with the most, which gives what it has.
- Spreading: per port and type, the node with the most free capacity gives min(a, free).
"""

from __future__ import annotations

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_server import MultiServerInstance


class _SlotBaseline:
    promises_completion = False
    name = "baseline"

    def start(self, instance: MultiServerInstance) -> None:
        self.instance = instance
        inst = instance
        self.port_channels = [np.flatnonzero(inst.channel_port == l) for l in range(inst.num_ports)]

    def feedback(self, t: int, x: np.ndarray, y: np.ndarray) -> None:
        """Slot baselines keep no state between slots."""

    def decide(self, t: int, x: np.ndarray) -> np.ndarray:
        y = np.zeros_like(self.instance.channel_cap)
        free = self.instance.capacity.copy()
        for l in self.order():
            if x[l]:
                self.serve(l, y, free)
        return y

    def order(self) -> np.ndarray:
        return np.arange(self.instance.num_ports)

    def serve(self, l: int, y: np.ndarray, free: np.ndarray) -> None:
        raise NotImplementedError


class MultiServerDRF(_SlotBaseline):
    name = "drf"

    def start(self, instance: MultiServerInstance) -> None:
        super().start(instance)
        share = np.zeros(instance.num_ports)
        for l, channels in enumerate(self.port_channels):
            total = instance.capacity[instance.channel_node[channels]].sum(axis=0)
            a = instance.request[l]
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(total > 0, a / np.where(total > 0, total, 1.0), np.where(a > 0, np.inf, 0.0))
            share[l] = ratio.max(initial=0.0)
        self._order = np.argsort(share, kind="stable")

    def order(self) -> np.ndarray:
        return self._order

    def serve(self, l: int, y: np.ndarray, free: np.ndarray) -> None:
        channels = self.port_channels[l]
        nodes = self.instance.channel_node[channels]          # ascending node index (channels sorted by r)
        available = free[nodes]                               # (n, K)
        before = np.cumsum(available, axis=0) - available
        give = np.clip(self.instance.request[l][None, :] - before, 0.0, available)
        y[channels] = give
        free[nodes] -= give


class Fairness(_SlotBaseline):
    name = "fairness"

    def __init__(self, *, denominator: str = "arrived") -> None:
        if denominator not in ("arrived", "all_connected"):
            raise UsageError("denominator must be 'arrived' or 'all_connected'")
        self.denominator = denominator

    def decide(self, t: int, x: np.ndarray) -> np.ndarray:
        inst = self.instance
        cap = inst.channel_cap
        weight = cap if self.denominator == "all_connected" else cap * x[inst.channel_port][:, None]
        totals = np.zeros_like(inst.capacity)
        np.add.at(totals, inst.channel_node, weight)
        denom = totals[inst.channel_node]
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(denom > 0, cap / denom * inst.capacity[inst.channel_node], 0.0)
        return np.minimum(share, cap) * x[inst.channel_port][:, None]


class _OneNodePerType(_SlotBaseline):
    """Per arrived port and resource type, one node chosen by ``pick`` gives min(a[l,k], free)."""

    def pick(self, available: np.ndarray, request: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def serve(self, l: int, y: np.ndarray, free: np.ndarray) -> None:
        channels = self.port_channels[l]
        if channels.size == 0:
            return
        nodes = self.instance.channel_node[channels]
        request = self.instance.request[l]
        available = free[nodes]                                # (n, K)
        pick = self.pick(available, request)
        columns = np.arange(len(request))
        give = np.minimum(request, np.maximum(available[pick, columns], 0.0))
        y[channels[pick], columns] = give
        free[nodes[pick], columns] -= give


class BinPacking(_OneNodePerType):
    name = "binpacking"

    def pick(self, available: np.ndarray, request: np.ndarray) -> np.ndarray:
        """Best fit: the feasible node with the least free capacity, else the one with the most."""
        fits = available >= request[None, :]
        best_fit = np.argmin(np.where(fits, available, np.inf), axis=0)
        return np.where(fits.any(axis=0), best_fit, np.argmax(available, axis=0))


class Spreading(_OneNodePerType):
    name = "spreading"

    def pick(self, available: np.ndarray, request: np.ndarray) -> np.ndarray:
        """Worst fit: the node with the most free capacity."""
        return np.argmax(available, axis=0)


MULTI_SERVER_BASELINES = {"drf": MultiServerDRF, "fairness": Fairness, "binpacking": BinPacking,
                          "spreading": Spreading}
