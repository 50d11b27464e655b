"""The ``mlsched sweep`` and ``mlsched plot`` subcommands (registered by :mod:`mlsched.cli`).

``mlsched sweep FILE -o RESULTS`` runs a sweep file into a results directory (resumable;
``--force`` recomputes), ``--dry-run`` prints the cell count and a work estimate. Progress goes
to stderr, the summary to stdout; exit 0 when every cell succeeded, 1 when some failed, 130 when
interrupted by Ctrl-C or SIGTERM (the finished cells stay stored).

``mlsched plot RESULTS --x COL --y COL -o fig.png`` draws a sweep's results (or a ``study`` CSV):
``--kind line`` (default) the statistic of Y against X per ``--hue``, with intervals where OPT
is not proven; ``--kind box|ecdf`` Y's distribution per hue.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from mlsched.errors import UsageError

EXIT_FAILED_CELLS = 1
EXIT_INTERRUPTED = 130
IMAGE_SUFFIXES = (".png", ".pdf", ".svg")


def add_commands(sub: Any, *, whole_number: Callable[[int], Callable[[str], int]],
                 positive_float: Callable[[str], float]) -> None:
    """Add ``sweep`` and ``plot`` to the ``mlsched`` parser's subcommands (with the parser's
    argument types: ``whole_number(minimum)``, ``positive_float``)."""
    sw = sub.add_parser("sweep", help="run a sweep file on local cores or a Dask cluster into a results directory")
    sw.add_argument("file", help="sweep file (YAML or JSON)")
    sw.add_argument("-o", "--output", metavar="RESULTS", help="results directory (Parquet, one file per cell)")
    sw.add_argument("--dry-run", action="store_true", help="print the number of cells and a work estimate")
    sw.add_argument("--force", action="store_true", help="recompute every cell (replaces RESULTS' results)")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress output")
    sw.add_argument("--executor", choices=("serial", "processes", "dask"),
                    help="where cells run (default: the file's, else processes)")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="a Dask scheduler (implies --executor dask)")
    where.add_argument("--scheduler-file", metavar="FILE", help="a Dask scheduler file (implies --executor dask)")
    sw.add_argument("--workers", type=whole_number(1), metavar="N", help="local workers (default: every core)")
    sw.add_argument("--cell-time-limit", type=positive_float, metavar="S", help="wall seconds per cell attempt")
    sw.add_argument("--retries", type=whole_number(0), metavar="N", help="further attempts of a failed cell (1)")
    sw.set_defaults(handler=_sweep)

    pl = sub.add_parser("plot", help="plot a sweep's results (or a study CSV) to an image")
    pl.add_argument("results", help="results directory, .parquet or .csv file")
    pl.add_argument("--x", help="column on the x axis (line plots)")
    pl.add_argument("--y", default="ratio", help="column to plot (default ratio = OPT / ALG)")
    pl.add_argument("--hue", default="algorithm", help="one line / box / curve per value of this column")
    pl.add_argument("--kind", choices=("line", "box", "ecdf"), default="line")
    pl.add_argument("--stat", choices=("mean", "median", "max"), default="mean", help="line plots: per point")
    pl.add_argument("--where", action="append", default=[], metavar="COL=VALUE", help="keep rows with COL = VALUE")
    pl.add_argument("--title")
    pl.add_argument("-o", "--output", required=True, metavar="FIG", help="image file (.png, .pdf, .svg)")
    pl.add_argument("--force", action="store_true", help="overwrite FIG if it exists")
    pl.set_defaults(handler=_plot)


def _sweep(args: argparse.Namespace) -> int:
    from mlsched.sweep.runner import plan, sweep
    from mlsched.sweep.spec import load_spec

    spec = load_spec(args.file)
    if args.dry_run:
        for line in plan(spec, results=args.output, workers=args.workers, executor=args.executor).lines():
            print(line)
        return 0
    if not args.output:
        raise UsageError("sweep: -o RESULTS is required (a directory; --dry-run needs none)")
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _interrupt) if main_thread else None   # a batch system's stop
    try:
        frame = sweep(spec, results=args.output, executor=args.executor, workers=args.workers,
                      scheduler=args.scheduler, scheduler_file=args.scheduler_file,
                      cell_time_limit=args.cell_time_limit, retries=args.retries, force=args.force,
                      progress=not args.quiet)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)
    summary = frame.attrs["summary"]
    print(f"{summary.line()}; {len(frame)} rows in {args.output}")
    if summary.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_FAILED_CELLS if sum(summary.failed.values()) else 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _plot(args: argparse.Namespace) -> int:
    from mlsched.fileio import write_atomic

    target = Path(args.output)
    if target.suffix.lower() not in IMAGE_SUFFIXES:
        raise UsageError(f"{target}: -o takes a file ending in {', '.join(IMAGE_SUFFIXES)}")
    if target.exists() and not args.force:
        raise UsageError(f"{target}: exists; pass --force to overwrite it")
    frame = _rows(args.results, args.where)
    needed = [c for c in (args.x, args.hue) if c] + [args.y]
    if args.kind == "line" and not args.x:
        raise UsageError("plot: --kind line needs --x COLUMN")
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise UsageError(f"{args.results}: no column {', '.join(repr(c) for c in missing)}; "
                         f"columns: {', '.join(frame.columns)}")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mlsched import plot

    fig, ax = plt.subplots(figsize=(7, 4.5))
    if args.kind == "line":
        plot.sweep_line(frame, args.x, args.y, hue=args.hue, stat=args.stat, ax=ax)
    else:
        plot.distribution(frame, args.y, hue=args.hue, kind=args.kind, ax=ax)
    ax.set_title(args.title or f"{plot.label(args.y)}" + (f" vs {plot.label(args.x)}" if args.kind == "line" else
                                                           f" by {args.hue}"))
    fig.tight_layout()
    write_atomic(target, lambda tmp: fig.savefig(tmp, format=target.suffix[1:].lower(), dpi=150), force=True)
    plt.close(fig)
    print(f"wrote {target} ({len(frame)} rows)")
    return 0


def _rows(source: str, conditions: list[str]) -> pd.DataFrame:
    """The rows to plot: a results directory or file, failed cells left out, ``COL=VALUE`` filters."""
    path = Path(source)
    if not path.exists():
        raise UsageError(f"{source}: not found")
    try:
        frame = pd.read_csv(path) if path.suffix.lower() == ".csv" else pd.read_parquet(path)
    except Exception as exc:   # a file of another kind: one line, not a traceback
        raise UsageError(f"{source}: cannot be read as results ({type(exc).__name__}: {exc})") from None
    if "status" in frame.columns:
        failed = int((frame["status"] != "ok").sum())
        if failed:
            print(f"{source}: leaving out {failed} row(s) of failed cells", file=sys.stderr)
        frame = frame[frame["status"] == "ok"]
    for condition in conditions:
        column, sep, value = condition.partition("=")
        if not sep or column not in frame.columns:
            raise UsageError(f"--where {condition}: expected COLUMN=VALUE with a column of {source}")
        frame = frame[frame[column].astype(str) == value]
    if frame.empty:
        raise UsageError(f"{source}: no rows to plot")
    return frame
