"""Instance files: one versioned JSON format for every family, one loader, lossless round trips.

A file is a JSON object with ``"format": "mlsched/v1"`` and a ``"family"`` naming its schema.
``load`` validates it fully and raises :class:`mlsched.errors.InstanceError` listing every
problem as ``file: field.path: what is wrong``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mlsched.errors import InstanceError
from mlsched.fileio import write_text_atomic
from mlsched.instance.cluster_jobs import FAMILY as CLUSTER_JOBS
from mlsched.instance.cluster_jobs import ClusterJobsInstance, Job, Server, read_cluster_jobs
from mlsched.instance.fields import Fields, Problems
from mlsched.instance.multi_server import FAMILY as MULTI_SERVER
from mlsched.instance.multi_server import MultiServerInstance, read_multi_server
from mlsched.instance.themis import FAMILY as THEMIS
from mlsched.instance.themis import ThemisApp, ThemisInstance, ThemisJob, read_themis

FORMAT = "mlsched/v1"

Instance = ClusterJobsInstance | MultiServerInstance | ThemisInstance
READERS: dict[str, Callable[[Fields], Any]] = {CLUSTER_JOBS: read_cluster_jobs, MULTI_SERVER: read_multi_server,
                                               THEMIS: read_themis}

__all__ = ["FORMAT", "Instance", "ClusterJobsInstance", "Job", "MultiServerInstance", "Server", "ThemisApp",
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


def loads(text: str, source: str = "<string>") -> Instance:
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InstanceError(source, [f"line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"]) from None
    except ValueError as exc:
        raise InstanceError(source, [str(exc)]) from None
    return from_dict(data, source)


def load(path: str | Path) -> Instance:
    """Read and validate an instance file."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except FileNotFoundError:
        raise InstanceError(str(p), ["file not found"]) from None
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


