"""Helpers shared by the builders: Pyomo rule values and rows collected as arrays."""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
import scipy.sparse as sp

from mlsched.solve import ArrayProgram


def row(relation: object) -> object:
    """A constraint rule's value; a relation between constants (e.g. a job no server can host,
    whose sums are empty) is skipped when true and kept as infeasible when false."""
    if relation is True:
        return pyo.Constraint.Skip
    if relation is False:
        return pyo.Constraint.Infeasible
    return relation


class ArrayRows:
    """Rows collected as COO triplets with their bounds, assembled into an :class:`ArrayProgram`."""

    def __init__(self) -> None:
        self.rows: list[np.ndarray] = []
        self.cols: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.lower: list[np.ndarray] = []
        self.upper: list[np.ndarray] = []
        self.count = 0

    def add(self, row: np.ndarray, col: np.ndarray, val: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> None:
        """Rows numbered 0..len(lower)-1 locally; entries (row, col, val)."""
        self.rows.append(np.asarray(row, dtype=np.int64) + self.count)
        self.cols.append(np.asarray(col, dtype=np.int64))
        self.vals.append(np.asarray(val, dtype=float))
        self.lower.append(np.asarray(lower, dtype=float))
        self.upper.append(np.asarray(upper, dtype=float))
        self.count += len(lower)

    def program(self, cost: np.ndarray, col_lower: np.ndarray, col_upper: np.ndarray, *, integer: bool,
                sense: str) -> ArrayProgram:
        """The program with these rows over ``len(cost)`` columns (duplicate entries summed)."""
        matrix = sp.csc_matrix((np.concatenate(self.vals), (np.concatenate(self.rows), np.concatenate(self.cols))),
                               shape=(self.count, len(cost)))
        matrix.sum_duplicates()
        return ArrayProgram(cost=np.asarray(cost, dtype=float), col_lower=np.asarray(col_lower, dtype=float),
                            col_upper=np.asarray(col_upper, dtype=float), row_lower=np.concatenate(self.lower),
                            row_upper=np.concatenate(self.upper), a_start=matrix.indptr.astype(np.int32),
                            a_index=matrix.indices.astype(np.int32), a_value=matrix.data, integer=integer,
                            sense=sense)


def later_pairs(alive: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (i, t, s) with t <= s and both (i, t) and (i, s) alive, for ``alive`` of shape
    (items, slots) true from some slot on (rows that sum a column over the slots up to, or from, one)."""
    i, t = np.nonzero(alive)
    horizon = alive.shape[1]
    counts = horizon - t
    ii = np.repeat(i, counts)
    tt = np.repeat(t, counts)
    offsets = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return ii, tt, tt + offsets
