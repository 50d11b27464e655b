"""Sweeps: a study declared in a file, run cell by cell on this process, local processes or a Dask
cluster, stored as it goes in a Parquet dataset, resumable.

- :mod:`mlsched.sweep.spec`: the sweep file, its validation and its cells;
- :mod:`mlsched.sweep.parameters`: what a sweep may set per system;
- :mod:`mlsched.sweep.cells`: one cell run on a worker, and its rows;
- :mod:`mlsched.sweep.guard`: a cell under a wall-clock limit;
- :mod:`mlsched.sweep.executors`: serial, processes, Dask;
- :mod:`mlsched.sweep.store`: the results directory;
- :mod:`mlsched.sweep.runner`: the loop, retries, progress, the dry-run plan.
"""

from mlsched.sweep.runner import Plan, Summary, plan, sweep
from mlsched.sweep.spec import Cell, SweepSpec, load_spec, spec_from_dict

__all__ = ["Cell", "Plan", "Summary", "SweepSpec", "load_spec", "plan", "spec_from_dict", "sweep"]
