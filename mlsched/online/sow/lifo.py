"""LIFO cancellation/eviction over all active jobs (spec §3.3), in both equivalent forms.

Active jobs are given in birth order (ties: submission order). At round r job i contributes its
width d_i to the committed load if it executes at r or is scheduled to start at r.

* Sequential form: while the committed load exceeds C, remove the most recently born active job
  (whether or not it contributes at r).
* Pathwise form: with prefix loads P_j(r) = sum_{i <= j, i contributes} d_i, job j is removed iff
  P_j(r) > C.

Prefix loads are non-decreasing in birth order, so both forms remove the same suffix.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def lifo_removals_prefix(widths: npt.ArrayLike, contributing: npt.ArrayLike,
                         capacity: float) -> npt.NDArray[np.bool_]:
    """Removal mask by the pathwise rule: job j (birth order) is removed iff P_j(r) > capacity."""
    load = np.where(np.asarray(contributing, dtype=bool), np.asarray(widths, dtype=float), 0.0)
    return np.cumsum(load) > capacity


def lifo_removals_sequential(widths: npt.ArrayLike, contributing: npt.ArrayLike,
                             capacity: float) -> npt.NDArray[np.bool_]:
    """Removal mask by the literal rule: pop the latest-born active job while the load exceeds capacity."""
    d = np.asarray(widths, dtype=float)
    on = np.asarray(contributing, dtype=bool)
    removed = np.zeros(d.shape[0], dtype=bool)
    load = float(d[on].sum())
    j = d.shape[0] - 1
    while load > capacity and j >= 0:
        removed[j] = True
        if on[j]:
            load -= d[j]
        j -= 1
    return removed
