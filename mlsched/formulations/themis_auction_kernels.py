"""The loops of the PA auction's default path (:class:`mlsched.formulations.themis._FixedWelfare`)
that numpy cannot make fast, compiled with numba: the single-bidder moves that improve a start
(about a hundred calls per auction on some 1,100 columns, where numpy's cost per call outweighed
its work). Imported on the first call, so that importing the formulation does not import numba,
and compiled once per machine (numba's cache).

The moves are the ones numpy made, float for float: a column is a candidate when its value exceeds
its bidder's current row's by more than MOVE_MARGIN (one subtraction, as numpy's elementwise one);
it fits when its units of every capacity row are at most the row's free units plus those of the
row it replaces (integers held as floats: every sum is exact); the move taken is the first
candidate, in column order, with the largest gain (numpy's argmax).
"""

from __future__ import annotations

import numba
import numpy as np

MOVE_MARGIN = 1e-12   # a move must gain more than this (in log welfare)


@numba.njit(cache=True)
def improve(cost: np.ndarray, usage: np.ndarray, capacity: np.ndarray, owner: np.ndarray, offsets: np.ndarray,
            rows: np.ndarray, skip: int) -> np.ndarray:   # pragma: no cover - compiled
    """The allocation ``rows`` (one row per bidder, bidder ``skip`` left out; -1 for none) after
    single-bidder moves to better rows that fit, the best move first, until none is left."""
    rows = rows.copy()
    bidders = rows.shape[0]
    columns = offsets + rows
    free = capacity.copy()
    for j in range(bidders):
        if j != skip:
            free -= usage[columns[j]]
    while True:
        best, best_gain = -1, 0.0
        for c in range(cost.shape[0]):
            j = owner[c]
            if j == skip:
                continue
            held = columns[j]
            if not cost[c] - cost[held] > MOVE_MARGIN:
                continue
            fits = True
            for k in range(capacity.shape[0]):
                if usage[c, k] > free[k] + usage[held, k]:
                    fits = False
                    break
            gain = cost[c] - cost[held]
            if fits and gain > best_gain:
                best, best_gain = c, gain
        if best < 0:
            return rows
        j = owner[best]
        free += usage[columns[j]] - usage[best]
        rows[j] = best - offsets[j]
        columns[j] = best
