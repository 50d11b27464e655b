"""Small helpers shared by several test modules."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from mlsched.online.ogasched import project_exact


def one_block(z, u, cap) -> np.ndarray:
    """The exact projection of a single (r, k) block."""
    z = np.asarray(z, dtype=float)[:, None]
    u = np.asarray(u, dtype=float)[:, None]
    n = len(z)
    return project_exact(z, u, np.array([[float(cap)]]), np.zeros(n, dtype=np.int64),
                         sp.csr_matrix(np.ones((1, n))))[:, 0]


def with_field(doc: dict, path: Sequence[Any], value: Any) -> dict:
    """A deep copy of an instance document with the field at ``path`` set to ``value``, or removed
    when ``value`` is ``KeyError``."""
    out = copy.deepcopy(doc)
    node = out
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out
