"""Cut the trace sample shipped in mlsched/data/traces/ from the shared trace files.

    python tools/trim_philly_trace.py [SHARED_TRACES_DIR] [--force]

Writes three files:

- ``philly-2017-10-01-to-15-le2gpu.csv.gz``: the rows of ``philly-jobs.csv`` submitted in
  [2017-10-01 00:00, 2017-10-15 00:00) with ``num_gpus <= 2`` (Themis W1/W2 window, spec A24),
  text unchanged, in the generator's canonical order (submit, cluster, num_gpus, duration,
  gpu_time), gzip with a zero timestamp so the bytes are reproducible;
- ``philly-2017-10-01-to-15-gt2gpu.csv.gz``: the same window's rows with ``num_gpus > 2``, made
  the same way (Astraea reads both files: every GPU request of the window);
- ``gavel-model-mix.csv``: ``job_type,jobs``, the number of jobs of each job type (first column)
  of ``gavel-philly-vc-0e4a51.trace``.
"""

from __future__ import annotations

import argparse
import gzip
import io
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mlsched.errors import MlschedError  # noqa: E402
from mlsched.fileio import write_text_atomic  # noqa: E402
from mlsched.instance.generators.astraea import WIDE_TRACE  # noqa: E402
from mlsched.instance.generators.philly import COLUMNS, read_philly  # noqa: E402
from mlsched.instance.generators.themis import DEFAULT_MODEL_MIX, DEFAULT_TRACE, MAX_GPUS, window_jobs  # noqa: E402

DEFAULT_SOURCE = ROOT.parent / "shared" / "traces"


def write_gzip(target: Path, jobs: pd.DataFrame, force: bool) -> None:
    """The rows as CSV text, gzip with a zero timestamp (reproducible bytes), replaced atomically."""
    text = jobs[list(COLUMNS)].to_csv(index=False, lineterminator="\n")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, mtime=0, compresslevel=9) as out:
        out.write(text.encode())
    if target.exists() and not force:
        raise SystemExit(f"{target}: exists; pass --force to overwrite it")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_bytes(buffer.getvalue())
    tmp.replace(target)
    print(f"wrote {target}: {len(jobs)} jobs, {target.stat().st_size} bytes")


def trim(source: Path, force: bool) -> None:
    window = window_jobs(read_philly(source / "philly-jobs.csv"), max_gpus=10**9)
    write_gzip(DEFAULT_TRACE, window[window["num_gpus"] <= MAX_GPUS], force)
    write_gzip(WIDE_TRACE, window[window["num_gpus"] > MAX_GPUS], force)

    gavel = pd.read_csv(source / "gavel-philly-vc-0e4a51.trace", sep="\t", header=None, dtype=str)
    counts = gavel[0].value_counts().sort_index()
    mix = pd.DataFrame({"job_type": counts.index, "jobs": counts.to_numpy()})
    write_text_atomic(DEFAULT_MODEL_MIX, mix.to_csv(index=False, lineterminator="\n"), force=force)
    print(f"wrote {DEFAULT_MODEL_MIX}: {len(mix)} job types, {int(counts.sum())} jobs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", nargs="?", type=Path, default=DEFAULT_SOURCE, help="folder of the shared trace files")
    parser.add_argument("--force", action="store_true")
    args = parser.parse_args()
    try:
        trim(args.source, args.force)
    except MlschedError as exc:
        raise SystemExit(str(exc)) from None


if __name__ == "__main__":
    main()
