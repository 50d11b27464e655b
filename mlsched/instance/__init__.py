"""Instance files: one versioned JSON format for every family, one loader, lossless round trips.

A file is a JSON object with ``"format": "mlsched/v1"`` and a ``"family"`` naming its schema.
``load`` validates it fully and raises :class:`mlsched.errors.InstanceError` listing every
problem as ``file: field.path: what is wrong``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mlsched.errors import InstanceError
from mlsched.fileio import write_text_atomic
from mlsched.instance.cluster_jobs import FAMILY as CLUSTER_JOBS
from mlsched.instance.cluster_jobs import ClusterJobsInstance, Job, Server, read_cluster_jobs
from mlsched.instance.fields import Fields, Problems
from mlsched.instance.multi_server import FAMILY as MULTI_SERVER
from mlsched.instance.multi_server import MultiServerInstance, read_multi_server
from mlsched.instance.multi_tenant import FAMILY as MULTI_TENANT
from mlsched.instance.multi_tenant import MultiTenantInstance, read_multi_tenant
from mlsched.instance.sow import FAMILY as SOW
from mlsched.instance.sow import SowInstance, read_sow
from mlsched.instance.themis import FAMILY as THEMIS
from mlsched.instance.themis import ThemisApp, ThemisInstance, ThemisJob, read_themis
from mlsched.resources import shipped_instance

FORMAT = "mlsched/v1"

Instance = ClusterJobsInstance | MultiServerInstance | ThemisInstance | MultiTenantInstance | SowInstance
READERS: dict[str, Callable[[Fields], Any]] = {CLUSTER_JOBS: read_cluster_jobs, MULTI_SERVER: read_multi_server,
                                               THEMIS: read_themis, MULTI_TENANT: read_multi_tenant,
                                               SOW: read_sow}

__all__ = ["FORMAT", "Instance", "ClusterJobsInstance", "Job", "MultiServerInstance", "MultiTenantInstance",
           "Server", "SowInstance", "ThemisApp",
           "ThemisInstance", "ThemisJob", "load", "loads",
           "from_dict", "save", "dumps"]


def from_dict(data: Any, source: str = "<dict>") -> Instance:
    """Validate a parsed document and build its typed instance."""
    problems = Problems()
    top = Fields(data, "", problems)
    fmt = top.string("format")
    if fmt and fmt != FORMAT:
        problems.add("format", f"unsupported format {fmt!r} (this version reads {FORMAT!r})")
    family = top.string("family", choices=tuple(READERS))
    if problems.items:
        raise InstanceError(source, problems.items)
    instance = READERS[family](top)
    if problems.items:
        raise InstanceError(source, problems.items)
    return instance


MAX_NESTING = 64   # far deeper than any instance format nests; deeper documents are rejected unparsed
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENING = np.frombuffer(b"[{", dtype=np.uint8)
_CLOSING = np.frombuffer(b"]}", dtype=np.uint8)


def loads(text: str, source: str = "<string>") -> Instance:
    depth = _nesting_depth(text)
    if depth > MAX_NESTING:
        raise InstanceError(source, [f"nested {depth} levels deep; instance files nest at most {MAX_NESTING}"])
    try:
        data = json.loads(text, parse_constant=_reject_constant, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as exc:
        raise InstanceError(source, [f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"]) from None
    except ValueError as exc:
        raise InstanceError(source, [str(exc)]) from None
    return from_dict(data, source)


def _nesting_depth(text: str) -> int:
    """The deepest nesting of arrays and objects, brackets inside strings ignored: a linear scan,
    so that no recursive parser meets a hostile document."""
    outside_strings = _JSON_STRING.sub("", text).encode("utf-8", "replace")
    codes = np.frombuffer(outside_strings, dtype=np.uint8)
    steps = np.isin(codes, _OPENING).astype(np.int64) - np.isin(codes, _CLOSING)
    return int(np.cumsum(steps).max(initial=0))


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"duplicate key {key!r} in one object (each key may appear once)")
        seen[key] = value
    return seen


def load(path: str | Path) -> Instance:
    """Read and validate an instance file, or a shipped instance by name (``oasis/fig5-small-seed0``,
    see :func:`mlsched.resources.shipped_instances`) when no file of that name exists."""
    p = Path(path)
    shipped = None if p.exists() else shipped_instance(str(path))
    if shipped is not None:
        return loads(shipped.read_text(encoding="utf-8"), str(path))
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InstanceError(str(p), ["file not found (nor a shipped instance: `mlsched instances` lists them)"]) from None
    except IsADirectoryError:
        raise InstanceError(str(p), ["is a directory, not an instance file"]) from None
    except OSError as exc:
        raise InstanceError(str(p), [f"cannot be read ({exc.strerror})"]) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstanceError(str(p), [f"byte {exc.start}: not UTF-8 text"]) from None
    return loads(text, str(p))


def dumps(instance: Instance) -> str:
    return json.dumps(instance.to_dict(), indent=1, allow_nan=False) + "\n"


def save(instance: Instance, path: str | Path, *, force: bool = False) -> Path:
    """Write ``instance`` atomically; an existing file is replaced only with ``force``."""
    return write_text_atomic(path, dumps(instance), force=force)


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not a number JSON allows (use a finite value)")


