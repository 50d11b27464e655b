"""Small SoW instances for tests: the spec's T3 and T4 examples as documents."""

from __future__ import annotations

from typing import Any

from mlsched.instance import from_dict
from mlsched.instance.sow import SowInstance


def document(jobs: list[dict[str, Any]], *, capacity: int, d_max: int, max_duration: int, max_value: float,
             window: int, name: str = "test", **extra: Any) -> dict[str, Any]:
    return {"format": "mlsched/v1", "family": "sow", "name": name, "capacity": capacity, "d_max": d_max,
            "max_duration": max_duration, "max_value": max_value, "window": window, "jobs": jobs, **extra}


def t3_instance() -> SowInstance:
    """Spec T3: nine identical unit jobs born at 1, a = 2, l = 1, v = 4 up to round 3; C = 6."""
    jobs = [{"id": f"j{i + 1}", "birth": 1, "width": 1, "values": [4, 4, 4],
             "support": [{"arrival": 2, "duration": 1, "prob": 1}]} for i in range(9)]
    return from_dict(document(jobs, capacity=6, d_max=1, max_duration=2, max_value=4, window=3, name="T3"))


def t4_instance() -> SowInstance:
    """Spec T4: C = 1, two unit jobs born at 1, a in {1, 2} uniform, l = 1, v = 1 up to round 2."""
    job = {"birth": 1, "width": 1, "values": [1, 1],
           "support": [{"arrival": 1, "duration": 1, "prob": 0.5}, {"arrival": 2, "duration": 1, "prob": 0.5}]}
    return from_dict(document([{"id": "j1", **job}, {"id": "j2", **job}], capacity=1, d_max=1, max_duration=1,
                              max_value=1, window=2, name="T4"))
