"""DNN workload profiles (``mlsched/data/models/*.json``) that instance files may reference by name.

A profile gives, per GPU type, the time of one training iteration (mini-batch) alone on one GPU
and the measured throughput on 1, 2, 4 and 8 GPUs, plus the gradient size in MB; ``job_types``
(optional) holds the measured throughputs (steps/s) of every batch size, by Gavel job type name
("ResNet-50 (batch size 32)"), GPU type and GPU count (0: it does not fit). The folder is
``$MLSCHED_MODELS`` if set, else the profiles shipped with the package.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from mlsched.errors import UsageError
from mlsched.resources import data_file

GPU_TYPES = ("k80", "p100", "v100")
DEFAULT_GPU_TYPE = "v100"


@dataclass(frozen=True)
class Profile:
    name: str
    model: str
    batch_size: int | None
    iteration_seconds: dict[str, float]
    throughput: dict[str, dict[int, float]]
    gradient_mb: float
    job_types: dict[str, dict[str, dict[int, float]]] = field(default_factory=dict)

    def speedup(self, gpu_type: str, gpus: int) -> float:
        """Measured throughput on ``gpus`` GPUs relative to one GPU."""
        curve = self.throughput[gpu_type]
        return curve[gpus] / curve[1]


def models_folder() -> Path:
    override = os.environ.get("MLSCHED_MODELS")
    return Path(override) if override else Path(str(data_file("models")))


def available_profiles() -> list[str]:
    return sorted(p.stem for p in models_folder().glob("*.json"))


PROFILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@cache
def load_profile(name: str) -> Profile:
    """The profile called ``name`` (letters, digits, ``_ . -``; no path), read from the profiles
    folder only; a missing or malformed profile file is one UsageError line."""
    if not PROFILE_NAME.fullmatch(name):
        raise UsageError(f"model profile {name!r}: must be a profile name (letters, digits, '_', '.', '-'; "
                         f"at most 64, no path)")
    path = models_folder() / f"{name}.json"
    if not path.is_file():
        raise UsageError(f"unknown model profile {name!r}; available: {', '.join(available_profiles()) or 'none'} "
                         f"(in {models_folder()})")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Profile(
            name=data["name"], model=data["model"], batch_size=data["batch_size"],
            iteration_seconds=dict(data["iteration_seconds"]),
            throughput={g: {int(n): v for n, v in curve.items()}
                        for g, curve in data["throughput_steps_per_second"].items()},
            gradient_mb=float(data["gradient_mb"]),
            job_types={job: {g: {int(n): float(v) for n, v in curve.items()} for g, curve in per_gpu.items()}
                       for job, per_gpu in data.get("job_types", {}).items()},
        )
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise UsageError(f"{path}: not a valid model profile ({type(exc).__name__}: {exc})") from None
