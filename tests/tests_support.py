"""Small helpers shared by the OgaSched tests."""

from __future__ import annotations

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
