"""The record of a run of the Themis family's event simulator, what its checker reads.

``ThemisRun`` holds the instance, the options, every GPU holding and every job interval with the
GPUs, slowdown and resume time it ran with, and each app's finish and T_id. The simulator
(:mod:`mlsched.sim.event_engine`) writes it; the checker (:mod:`mlsched.sim.event_check`) reads it
with the instance alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.themis import ThemisInstance

TID_MODES = ("paper", "exact_share")
DONE_TOLERANCE = 1e-9   # relative: a job with remaining work below this share of its work is done


@dataclass(frozen=True)
class SimOptions:
    lease: float = 600.0               # L, seconds (§1.4: 10 min)
    restart_overhead: float = 0.0      # seconds per GPU-set change of a job (A18)
    tid_mode: str = "paper"            # A13
    max_time: float = math.inf         # stop (with an error) if apps are still running then

    def __post_init__(self) -> None:
        if not self.lease > 0:
            raise UsageError(f"the lease must be positive, got {self.lease}")
        if self.restart_overhead < 0:
            raise UsageError(f"the restart overhead must be >= 0, got {self.restart_overhead}")
        if self.tid_mode not in TID_MODES:
            raise UsageError(f"unknown tid_mode {self.tid_mode!r}; choose one of {', '.join(TID_MODES)}")


class JobInterval(NamedTuple):
    """Job ``job`` of phase ``phase`` of app ``app`` ran on ``gpus`` over [start, end), progressing
    from ``resume`` on at ``len(gpus) * speed / slowdown`` GPU-seconds per second. (An immutable
    named tuple: a run records millions, and a frozen dataclass takes three times as long to build.)"""

    app: int
    phase: int
    job: int
    start: float
    end: float
    resume: float
    gpus: frozenset[int]
    slowdown: float
    speed: float = 1.0


class Holding(NamedTuple):
    """App ``app`` held ``gpu`` over [start, end) (an immutable named tuple, like :class:`JobInterval`)."""

    app: int
    gpu: int
    start: float
    end: float


@dataclass
class ThemisRun:
    instance: ThemisInstance
    policy: str
    options: SimOptions
    finish: np.ndarray                  # per app
    t_id: np.ndarray                    # per app, with N_avg over its lifetime
    holdings: list[Holding]
    jobs: list[JobInterval]
    rounds: int = 0
    round_seconds: list[float] = field(default_factory=list)
    stats: dict[str, float] = field(default_factory=dict)

    @property
    def rho(self) -> np.ndarray:
        arrival = np.array([a.arrival for a in self.instance.apps])
        return (self.finish - arrival) / self.t_id

    @property
    def gpu_time(self) -> float:
        return float(sum(h.end - h.start for h in self.holdings))
