"""The ``multi-server`` instance family (OgaSched): job types (ports) served by computing nodes.

Data (OgaSched spec §1): ports l = 1..L, nodes r = 1..R, K resource types; a bipartite graph of
channels (l, r) (held as a networkx graph, ``graph``); per-channel caps a[l,k] (eq. 5), node
capacities c[r,k] (eq. 6), utility coefficients alpha[r,k] and utility kinds per (r, k) —
linear, log, reciprocal, poly (eq. 60) — and overhead weights beta[k] in [0, 1] (§2.2).
Arrivals x[t,l] in {0,1} are stored in the file (``{"kind": "explicit", "slots": [[ports...],
...]}``) or drawn from a seeded Bernoulli(rho) process (``{"kind": "bernoulli", "rho": ..,
"seed": ..}``).

Internally channels are enumerated e = 0..|E|-1 sorted by (l, r); allocations are (|E|, K) arrays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import networkx as nx
import numpy as np

from mlsched.instance.fields import Fields, repeated_names

FAMILY = "multi-server"
MAX_AMOUNT = 1e12            # a request or capacity of one resource
MAX_ALPHA = 1e6              # utility coefficients lie in [1 / MAX_ALPHA, MAX_ALPHA]
MAX_ARRIVAL_CELLS = 100_000_000   # horizon x ports: the arrivals matrix x[t, l]
UTILITY_KINDS = ("linear", "log", "reciprocal", "poly")
ARRIVAL_KINDS = ("bernoulli", "explicit")


@dataclass(frozen=True)
class MultiServerInstance:
    name: str
    horizon: int
    resources: tuple[str, ...]
    ports: tuple[str, ...]
    nodes: tuple[str, ...]
    channels: tuple[tuple[int, int], ...]   # (l, r), sorted
    request: np.ndarray                     # a, (L, K)
    capacity: np.ndarray                    # c, (R, K)
    alpha: np.ndarray                       # (R, K)
    utility_kind: np.ndarray                # (R, K) ints indexing UTILITY_KINDS
    beta: np.ndarray                        # (K,)
    arrivals_spec: dict[str, Any]
    reciprocal_scale: float = 1.0
    expected: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    family: ClassVar[str] = FAMILY

    @property
    def num_ports(self) -> int:
        return len(self.ports)

    @property
    def num_nodes(self) -> int:
        return len(self.nodes)

    @cached_property
    def channel_port(self) -> np.ndarray:
        return np.array([l for l, _ in self.channels], dtype=np.int64)

    @cached_property
    def channel_node(self) -> np.ndarray:
        return np.array([r for _, r in self.channels], dtype=np.int64)

    @cached_property
    def channel_cap(self) -> np.ndarray:
        """a[l(e), k], shape (E, K): the per-channel cap of eq. (5)."""
        return self.request[self.channel_port]

    @cached_property
    def graph(self) -> nx.Graph:
        g = nx.Graph()
        g.add_nodes_from((("port", l) for l in range(self.num_ports)), bipartite=0)
        g.add_nodes_from((("node", r) for r in range(self.num_nodes)), bipartite=1)
        g.add_edges_from((("port", l), ("node", r)) for l, r in self.channels)
        return g

    def describe(self) -> str:
        return (f"{self.num_ports} job types, {self.num_nodes} nodes, {len(self.channels)} channels, horizon "
                f"{self.horizon}, resources {', '.join(self.resources)}")

    def arrivals(self) -> np.ndarray:
        """x[t, l] in {0, 1}, shape (T, L) (drawn from the seed for Bernoulli arrivals)."""
        spec = self.arrivals_spec
        if spec["kind"] == "bernoulli":
            rng = np.random.default_rng(spec["seed"])
            return (rng.random((self.horizon, self.num_ports)) < spec["rho"]).astype(float)
        x = np.zeros((self.horizon, self.num_ports))
        for t, ports in enumerate(spec["slots"]):
            x[t, ports] = 1.0
        return x

    def to_dict(self) -> dict[str, Any]:
        def amounts(row: np.ndarray) -> dict[str, float]:
            return {k: float(v) for k, v in zip(self.resources, row)}

        data: dict[str, Any] = {
            "format": "mlsched/v1", "family": FAMILY, "name": self.name, "horizon": self.horizon,
            "resources": list(self.resources),
            "ports": [{"name": p, "request": amounts(self.request[l])} for l, p in enumerate(self.ports)],
            "nodes": [{"name": n, "capacity": amounts(self.capacity[r]), "alpha": amounts(self.alpha[r]),
                       "utility": {k: UTILITY_KINDS[u] for k, u in zip(self.resources, self.utility_kind[r])}}
                      for r, n in enumerate(self.nodes)],
            "channels": [[l, r] for l, r in self.channels],
            "beta": amounts(self.beta),
            "reciprocal_scale": self.reciprocal_scale,
            "arrivals": dict(self.arrivals_spec),
        }
        if self.expected:
            data["expected"] = dict(self.expected)
        if self.meta:
            data["meta"] = dict(self.meta)
        return data


_TOP = {"format", "family", "name", "horizon", "resources", "ports", "nodes", "channels", "beta",
        "reciprocal_scale", "arrivals", "expected", "meta"}


def _row(f: Fields, key: str, resources: tuple[str, ...], **bounds: float) -> list[float]:
    sub = f.obj(key)
    sub.unknown_keys(set(resources))
    return [float(sub.number(k, default=0.0, **bounds)) for k in resources]


def read_multi_server(top: Fields) -> MultiServerInstance:
    """Validate a multi-server document; every problem is recorded on ``top.problems``."""
    top.unknown_keys(_TOP)
    horizon = top.number("horizon", integer=True, minimum=1, maximum=10_000_000) or 1
    resources = tuple(top.string_list("resources"))
    ports, request = [], []
    for n, f in enumerate(top.objects("ports", min_items=1)):
        f.unknown_keys({"name", "request"})
        ports.append(f.string("name", default=f"l{n + 1}"))
        request.append(_row(f, "request", resources, minimum=0, maximum=MAX_AMOUNT))
    nodes, capacity, alpha, kinds = [], [], [], []
    for n, f in enumerate(top.objects("nodes", min_items=1)):
        f.unknown_keys({"name", "capacity", "alpha", "utility"})
        nodes.append(f.string("name", default=f"r{n + 1}"))
        capacity.append(_row(f, "capacity", resources, minimum=0, maximum=MAX_AMOUNT))
        alpha.append(_row(f, "alpha", resources, minimum=1 / MAX_ALPHA, maximum=MAX_ALPHA) if f.has("alpha")
                     else [1.0] * len(resources))
        util = f.obj("utility", default={})
        util.unknown_keys(set(resources))
        names = [util.string(k, default="linear", choices=UTILITY_KINDS) for k in resources]
        kinds.append([UTILITY_KINDS.index(name) if name in UTILITY_KINDS else 0 for name in names])
    repeated_names(top.problems, "ports", ports)
    repeated_names(top.problems, "nodes", nodes)
    channels: set[tuple[int, int]] = set()
    raw = top.raw("channels")
    if raw is not None and not isinstance(raw, list):
        top.problems.add("channels", "must be a list of [port, node] index pairs")
        raw = []
    for i, pair in enumerate(raw or []):
        ok = (isinstance(pair, list) and len(pair) == 2 and all(isinstance(v, int) and not isinstance(v, bool)
                                                                for v in pair))
        if not ok or not (0 <= pair[0] < len(ports) and 0 <= pair[1] < len(nodes)):
            top.problems.add(f"channels[{i}]", f"must be [port index < {len(ports)}, node index < {len(nodes)}]")
            continue
        channels.add((pair[0], pair[1]))
    if isinstance(raw, list) and not raw:
        top.problems.add("channels", "must list at least one [port, node] pair (no port could be served)")
    beta_fields = top.obj("beta")
    beta_fields.unknown_keys(set(resources))
    beta = [float(beta_fields.number(k, default=0.0, minimum=0, maximum=1)) for k in resources]
    scale = float(top.number("reciprocal_scale", default=1.0, greater_than=0))
    if horizon * len(ports) > MAX_ARRIVAL_CELLS:
        top.problems.add("horizon", f"{horizon} slots x {len(ports)} ports exceed {MAX_ARRIVAL_CELLS:.0e} "
                                    "(the arrivals matrix)")
        horizon = 1
    arrivals = _arrivals(top.obj("arrivals"), horizon, len(ports))
    expected, meta = top.free_objects("expected", "meta")
    def matrix(rows: list[list[float]] | list[list[int]], dtype: type = float) -> np.ndarray:
        return np.array(rows, dtype=dtype).reshape(len(rows), len(resources))

    return MultiServerInstance(
        name=top.string("name", default="unnamed"), horizon=horizon, resources=resources,
        ports=tuple(ports), nodes=tuple(nodes), channels=tuple(sorted(channels)),
        request=matrix(request), capacity=matrix(capacity), alpha=matrix(alpha), utility_kind=matrix(kinds, np.int64),
        beta=np.array(beta, dtype=float), arrivals_spec=arrivals, reciprocal_scale=scale,
        expected=expected, meta=meta,
    )


def _arrivals(f: Fields, horizon: int, ports: int) -> dict[str, Any]:
    kind = f.string("kind", choices=ARRIVAL_KINDS)
    if kind == "bernoulli":
        f.unknown_keys({"kind", "rho", "seed"})
        return {"kind": kind, "rho": float(f.number("rho", minimum=0, maximum=1)),
                "seed": int(f.number("seed", integer=True, minimum=0))}
    f.unknown_keys({"kind", "slots"})
    slots = f.raw("slots")
    path = f"{f.path}.slots"
    if not isinstance(slots, list) or len(slots) != horizon:
        if slots is not None:
            f.problems.add(path, f"must be a list of {horizon} lists of port indices (one per slot)")
        return {"kind": "explicit", "slots": [[] for _ in range(horizon)]}
    clean = []
    for t, slot in enumerate(slots):
        if not isinstance(slot, list) or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < ports
                                                 for v in slot):
            f.problems.add(f"{path}[{t}]", f"must be a list of port indices < {ports}")
            slot = []
        clean.append(sorted(set(slot)))
    return {"kind": "explicit", "slots": clean}
