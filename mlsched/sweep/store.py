"""The results of a sweep: a directory of Parquet files, one per cell, that pandas reads in one call.

Layout of ``RESULTS/``:

- ``ok-<cell>.parquet``: a finished cell's rows; ``failed-<cell>.parquet``: the rows of a cell
  whose last attempt failed (status, error). A cell has at most one of them; a later success
  replaces its failure;
- ``_sweep.json``: the sweep's name and identity (the hash of everything that determines its
  results) with the document it came from. Names starting with ``_`` or ``.`` are not data
  (pyarrow skips them), so ``pandas.read_parquet(RESULTS)`` returns exactly the rows.

Every file is written to a temporary name beside it and renamed into place, so a sweep stopped
at any moment (Ctrl-C, a crash, SIGKILL) leaves whole files only. Only the coordinating process
writes. All files share one schema -- a dataset with differing schemas cannot be read in one
call -- so a cell that brings a new column (a metric only some instances have) or a wider type
(a number where earlier cells had only nulls) has the files before it rewritten to the widened
schema; opening the store repairs files a stop left behind on an older schema.

A directory holds the results of one sweep: opening it for a sweep of another identity is
refused unless ``force``, which deletes the earlier results (and only files this module names).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from mlsched.errors import UsageError
from mlsched.fileio import write_atomic, write_text_atomic
from mlsched.sweep.spec import SweepSpec

MANIFEST = "_sweep.json"
OK_PREFIX, FAILED_PREFIX, SUFFIX = "ok-", "failed-", ".parquet"


class ResultStore:
    """Cell files under ``root``; see the module docstring."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.schema: Any = None   # the pyarrow schema every file has

    def open(self, spec: SweepSpec, *, force: bool = False) -> None:
        """Make ``root`` the store of ``spec``: create it, or check it holds this sweep's results."""
        if self.root.exists() and not self.root.is_dir():
            raise UsageError(f"{self.root}: exists and is not a directory; results are a directory of Parquet files")
        manifest = self.root / MANIFEST
        if self.root.is_dir() and any(self.root.iterdir()):
            if not manifest.is_file():
                raise UsageError(f"{self.root}: not empty and not the results of a sweep (no {MANIFEST}); "
                                 f"choose a new directory")
            recorded = _read_manifest(manifest)
            if recorded.get("identity") != spec.identity:
                if not force:
                    raise UsageError(f"{self.root}: holds the results of another sweep "
                                     f"({recorded.get('name', '?')!r}, other settings); pass --force to replace "
                                     f"them or choose another directory")
                self.clear()
            elif force:
                self.clear()
        self.root.mkdir(parents=True, exist_ok=True)
        for leftover in self.root.glob(".*.tmp"):
            leftover.unlink(missing_ok=True)
        for key in self.finished() & self._keys(FAILED_PREFIX):   # a stop between success and cleanup
            self._path(FAILED_PREFIX, key).unlink(missing_ok=True)
        write_text_atomic(manifest, json.dumps({"name": spec.name, "identity": spec.identity, "source": spec.source,
                                                "document": spec.document}, indent=1) + "\n", force=True)
        self._unify()

    def holds(self, spec: SweepSpec) -> bool:
        """Whether ``root`` is the store of ``spec`` (read-only: nothing is created or repaired)."""
        manifest = self.root / MANIFEST
        return manifest.is_file() and _read_manifest(manifest).get("identity") == spec.identity

    def clear(self) -> None:
        """Delete this store's files (cell files and manifest), nothing else."""
        for prefix in (OK_PREFIX, FAILED_PREFIX):
            for key in self._keys(prefix):
                self._path(prefix, key).unlink(missing_ok=True)
        (self.root / MANIFEST).unlink(missing_ok=True)

    def finished(self) -> set[str]:
        """Keys of the cells whose rows are final (their last attempt succeeded)."""
        return self._keys(OK_PREFIX)

    def write(self, key: str, frame: pd.DataFrame, *, ok: bool) -> None:
        """Store a cell's rows atomically, replacing what the store had for it."""
        import pyarrow as pa

        table = pa.Table.from_pandas(frame, preserve_index=False).replace_schema_metadata(None)
        widened = table.schema if self.schema is None else _unify([self.schema, table.schema])
        if self.schema is not None and not widened.equals(self.schema):
            for path in self._files():
                self._write_table(path, _conform(_read_table(path), widened))
        self.schema = widened
        self._write_table(self._path(OK_PREFIX if ok else FAILED_PREFIX, key), _conform(table, widened))
        if ok:
            self._path(FAILED_PREFIX, key).unlink(missing_ok=True)

    def read(self) -> pd.DataFrame:
        """Every row: ``pandas.read_parquet`` of the directory (an empty frame when none)."""
        if not self._files():
            return pd.DataFrame()
        return pd.read_parquet(self.root)

    def _unify(self) -> None:
        import pyarrow.parquet as pq

        files = self._files()
        schemas = {path: pq.read_schema(path).remove_metadata() for path in files}
        if not schemas:
            self.schema = None
            return
        self.schema = _unify(list(schemas.values()))
        for path, schema in schemas.items():
            if not schema.equals(self.schema):
                self._write_table(path, _conform(_read_table(path), self.schema))

    def _write_table(self, path: Path, table: Any) -> None:
        import pyarrow.parquet as pq

        write_atomic(path, lambda tmp: pq.write_table(table, tmp), force=True)

    def _files(self) -> list[Path]:
        return sorted(p for prefix in (OK_PREFIX, FAILED_PREFIX) for p in self.root.glob(f"{prefix}*{SUFFIX}"))

    def _keys(self, prefix: str) -> set[str]:
        if not self.root.is_dir():
            return set()
        return {p.name[len(prefix):-len(SUFFIX)] for p in self.root.glob(f"{prefix}*{SUFFIX}")}

    def _path(self, prefix: str, key: str) -> Path:
        return self.root / f"{prefix}{key}{SUFFIX}"


def _read_manifest(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable sweep manifest ({exc}); remove the directory or choose another") from None


def _read_table(path: Path) -> Any:
    import pyarrow.parquet as pq

    return pq.read_table(path).replace_schema_metadata(None)


def _unify(schemas: list[Any]) -> Any:
    import pyarrow as pa

    return pa.unify_schemas(schemas, promote_options="permissive")


def _conform(table: Any, schema: Any) -> Any:
    """``table`` with every column of ``schema`` (nulls where it has none), cast to its types."""
    import pyarrow as pa

    columns = [table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(len(table), f.type)
               for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)
