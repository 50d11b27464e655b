"""Readers of the Microsoft Philly job trace (the AdaptDL copy: ``timestamp,duration,num_gpus,
gpu_time,cluster``) and of small CSV side files, with one problem line per bad column."""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from mlsched.errors import InstanceError

COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")
ATTRIBUTION = ("Contains data derived from the Microsoft Philly trace (CC BY 4.0), as processed by the AdaptDL "
               "project (Apache-2.0) and the Gavel project (MIT).")
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def read_philly(path: str | Path) -> pd.DataFrame:
    """The jobs of a Philly CSV, validated, with ``submit`` (seconds since the epoch) added and
    rows in one canonical order (submit, cluster, num_gpus, duration, gpu_time)."""
    p = Path(path)
    frame = read_csv(p)
    require_columns(p, frame, COLUMNS)
    problems = []
    stamp = pd.to_datetime(frame["timestamp"], format=TIME_FORMAT, errors="coerce")
    problems += bad_rows(frame, "timestamp", stamp.isna(), "must be a time like 2017-10-01 00:00:00")
    duration = pd.to_numeric(frame["duration"], errors="coerce")
    good_duration = np.isfinite(duration) & (duration > 0)
    problems += bad_rows(frame, "duration", ~good_duration, "must be a number > 0 (seconds)")
    gpus = pd.to_numeric(frame["num_gpus"], errors="coerce")
    good_gpus = np.isfinite(gpus) & (gpus >= 1) & (gpus == np.floor(gpus))
    problems += bad_rows(frame, "num_gpus", ~good_gpus, "must be an integer >= 1")
    gpu_time = pd.to_numeric(frame["gpu_time"], errors="coerce")
    good_time = np.isfinite(gpu_time) & (gpu_time > 0)
    problems += bad_rows(frame, "gpu_time", ~good_time, "must be a number > 0 (GPU-seconds)")
    product = duration * gpus
    mismatch = good_duration & good_gpus & good_time & ~np.isclose(gpu_time, product, rtol=1e-6, atol=0.0)
    problems += bad_rows(frame, "gpu_time", mismatch, "must equal duration * num_gpus",
                     lambda row: f" = {product.iloc[row]:g}")
    problems += bad_rows(frame, "cluster", frame["cluster"].str.strip() == "", "must be a non-empty cluster id")
    if problems:
        raise InstanceError(str(p), problems)
    jobs = pd.DataFrame({
        "timestamp": frame["timestamp"], "submit": stamp.to_numpy().astype("datetime64[s]").astype(np.int64),
        "duration": duration.astype(float), "num_gpus": gpus.astype(np.int64), "gpu_time": gpu_time.astype(float),
        "cluster": frame["cluster"],
    })
    return jobs.sort_values(["submit", "cluster", "num_gpus", "duration", "gpu_time"], kind="stable",
                            ignore_index=True)


def read_csv(p: Path) -> pd.DataFrame:
    if not p.exists():
        raise InstanceError(str(p), ["file not found"])
    if p.is_dir():
        raise InstanceError(str(p), ["is a directory, not a CSV file"])
    try:
        return pd.read_csv(p, dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, OSError, EOFError,
            gzip.BadGzipFile, zlib.error) as exc:
        detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise InstanceError(str(p), [f"cannot be read as CSV ({detail})"]) from None


def require_columns(p: Path, frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        have = ", ".join(map(str, frame.columns)) or "none"
        raise InstanceError(str(p), [f"column {c!r}: missing (columns found: {have})" for c in missing])


def bad_rows(frame: pd.DataFrame, column: str, mask: pd.Series, what: str,
         detail: Callable[[int], str] | None = None) -> list[str]:
    """One problem line for the first bad row of ``column`` (line numbers count the header)."""
    rows = np.flatnonzero(np.asarray(mask, dtype=bool))
    if not len(rows):
        return []
    row = int(rows[0])
    extra = detail(row) if detail else ""
    more = f" ({len(rows) - 1} more rows like it)" if len(rows) > 1 else ""
    return [f"column {column!r}, line {row + 2}: {what}{extra}, got {frame[column].iloc[row]!r}{more}"]
