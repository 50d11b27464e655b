"""OgaSched synthetic instances (spec §6.1-6.2; the paper's Alibaba-trace preprocessing is not
specified, so the generator follows the authors' code distributions, A14).

- capacities c[r,:] = randint[1,128), [2,512), [0,64), [0,8), [0,8), [0,4) for
  (vCPU, MEM GiB, GPU, TPU, NPU, FPGA) (integers, exclusive high end);
- requests a[l,k] = contention * U(min_k, max_k) over the same (min, max) pairs;
- graph of target density delta (A16): each node has degree floor(delta) or ceil(delta) (mean
  delta) and connects that many distinct ports uniformly; re-drawn until every port has a node;
- alpha[r,k] ~ U[1.0, 1.5], beta[k] ~ U[beta range], one utility kind everywhere;
- arrivals i.i.d. Bernoulli(rho) from the instance seed (A15).

Presets name the paper's settings: ``default`` (Tab. II), ``fig2``, ``large`` (Fig. 5), and
sweeps ``fig3-nodes-N``, ``fig3-ports-N``, ``fig3-contention-X``, ``fig7-KIND``, ``tab3-T-N``,
``tab3-rho-X``, ``tab3-dense-X``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.multi_server import UTILITY_KINDS, MultiServerInstance

RESOURCES = ("vcpu", "mem", "gpu", "tpu", "npu", "fpga")
RANGES = ((1, 128), (2, 512), (0, 64), (0, 8), (0, 8), (0, 4))
MAX_GRAPH_DRAWS = 1000


@dataclass(frozen=True)
class Setting:
    ports: int = 10
    nodes: int = 128
    horizon: int = 2000
    beta: tuple[float, float] = (0.3, 0.5)
    contention: float = 10.0
    rho: float = 0.7
    density: float = 2.5
    utility: str = "linear"
    alpha: tuple[float, float] = (1.0, 1.5)


BASE = Setting()


def preset(name: str) -> Setting:
    """The named setting of the paper (spec §6.2-6.3)."""
    fixed = {
        "default": BASE,
        "fig2": replace(BASE, horizon=8000, beta=(0.4, 0.6), contention=11.0),
        "large": replace(BASE, ports=100, nodes=1024, horizon=10000, beta=(0.01, 0.015), contention=5.0),
    }
    if name in fixed:
        return fixed[name]
    sweeps = {"fig3-nodes": "nodes", "fig3-ports": "ports", "fig3-contention": "contention", "tab3-T": "horizon",
              "tab3-rho": "rho", "tab3-dense": "density"}
    for prefix, attribute in sweeps.items():
        if name.startswith(prefix + "-"):
            raw = name[len(prefix) + 1:]
            try:
                value: Any = int(raw) if attribute in ("nodes", "ports", "horizon") else float(raw)
            except ValueError:
                break
            return replace(BASE, **{attribute: value})
    if name.startswith("fig7-") and name[5:] in UTILITY_KINDS:
        return replace(BASE, utility=name[5:])
    raise UsageError(f"unknown preset {name!r}; choose default, fig2, large, fig3-nodes-N, fig3-ports-N, "
                     f"fig3-contention-X, fig7-{{{','.join(UTILITY_KINDS)}}}, tab3-T-N, tab3-rho-X, tab3-dense-X")


def generate_ogasched(seed: int = 0, *, preset_name: str = "default", horizon: int | None = None,
                      **overrides: Any) -> MultiServerInstance:
    """A seeded instance of a preset; ``horizon`` and other Setting fields may be overridden."""
    unknown = sorted(set(overrides) - {f.name for f in fields(Setting)})
    if unknown:
        raise UsageError(f"generate_ogasched: no setting {', '.join(map(repr, unknown))}; the settings are "
                         f"{', '.join(f.name for f in fields(Setting))} (and preset_name, seed)")
    setting = replace(preset(preset_name), **overrides)
    if horizon is not None:
        setting = replace(setting, horizon=horizon)
    if setting.horizon < 1 or setting.ports < 1 or setting.nodes < 1 or not setting.contention > 0:
        raise UsageError("horizon, ports and nodes must be >= 1 and contention > 0")
    if not 1 <= setting.density <= setting.ports:
        raise UsageError(f"density must lie in [1, ports = {setting.ports}], got {setting.density}")
    rng = np.random.default_rng(seed)
    capacity = np.stack([rng.integers(lo, hi, size=setting.nodes) for lo, hi in RANGES], axis=1).astype(float)
    request = setting.contention * np.stack([rng.uniform(lo, hi, size=setting.ports) for lo, hi in RANGES], axis=1)
    channels = _graph(rng, setting)
    alpha = rng.uniform(*setting.alpha, size=(setting.nodes, len(RESOURCES)))
    beta = rng.uniform(*setting.beta, size=len(RESOURCES))
    kind = np.full((setting.nodes, len(RESOURCES)), UTILITY_KINDS.index(setting.utility))
    return MultiServerInstance(
        name=f"ogasched-{preset_name}-s{seed}", horizon=setting.horizon, resources=RESOURCES,
        ports=tuple(f"l{l + 1}" for l in range(setting.ports)), nodes=tuple(f"r{r + 1}" for r in range(setting.nodes)),
        channels=channels, request=request, capacity=capacity, alpha=alpha, utility_kind=kind, beta=beta,
        arrivals_spec={"kind": "bernoulli", "rho": setting.rho, "seed": seed},
        meta={"generator": "ogasched", "preset": preset_name, "seed": seed, **{
            k: (list(v) if isinstance(v, tuple) else v) for k, v in setting.__dict__.items()}},
    )


def _graph(rng: np.random.Generator, setting: Setting) -> tuple[tuple[int, int], ...]:
    low = math.floor(setting.density)
    p_high = setting.density - low
    for _ in range(MAX_GRAPH_DRAWS):
        degrees = low + (rng.random(setting.nodes) < p_high).astype(int)
        pairs = [(int(l), r) for r in range(setting.nodes)
                 for l in rng.choice(setting.ports, size=min(int(degrees[r]), setting.ports), replace=False)]
        if len({l for l, _ in pairs}) == setting.ports:
            return tuple(sorted(pairs))
    raise UsageError("could not draw a graph in which every port has a node; raise the density or the node count")
