"""Euclidean projections onto Y = {0 <= y <= a (per channel), sum_{l in L_r} y[l,r,k] <= c[r,k]}.

Y splits into independent (r, k) blocks (OgaSched spec §1.3).

- ``project_exact`` (default, spec §3.3): per block, y = clip(z - tau, 0, u) with tau = 0 if that
  fits, else the tau > 0 where g(tau) = sum clip(z - tau, 0, u) = cap. All blocks at once:
  bisection on tau (g is non-increasing, piecewise linear), then the exact tau on the final
  linear piece; the end with g <= cap is kept so capacity holds in floating point.
- ``project_paper`` (spec §3.4): the paper's Algorithm 1 lines 7-40 per block, with the minimal
  repairs D3-D6 (B2 entries reset to 0, S reset per pass, R x K blocks, empty-B3 guard). It may
  return infeasible points (defects D1, D2); ``repair`` clips and scales them into Y.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

BISECTION_STEPS = 64


def block_sums(values: np.ndarray, node_matrix: sp.csr_matrix) -> np.ndarray:
    """sum over channels of each node: (R, K)."""
    return node_matrix @ values


def project_exact(z: np.ndarray, cap: np.ndarray, capacity: np.ndarray, channel_node: np.ndarray,
                  node_matrix: sp.csr_matrix) -> np.ndarray:
    """Exact projection of z (E, K) onto Y with per-channel caps ``cap`` (E, K) and ``capacity`` (R, K)."""
    y = np.clip(z, 0.0, cap)
    over = block_sums(y, node_matrix) > capacity
    if not over.any():
        return y
    lo = np.zeros_like(capacity)
    hi = np.zeros_like(capacity)
    np.maximum.at(hi, channel_node, np.maximum(z, 0.0))
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        fits = block_sums(np.clip(z - mid[channel_node], 0.0, cap), node_matrix) <= capacity
        hi = np.where(over & fits, mid, hi)
        lo = np.where(over & ~fits, mid, lo)
    # exact tau on the linear piece around hi: free elements are strictly between their bounds
    shifted = z - hi[channel_node]
    free = (shifted > 0.0) & (shifted < cap)
    at_cap = shifted >= cap
    n_free = block_sums(free.astype(float), node_matrix)
    fixed = block_sums(np.where(at_cap, cap, 0.0), node_matrix)
    free_sum = block_sums(np.where(free, z, 0.0), node_matrix)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.where(n_free > 0, (free_sum + fixed - capacity) / n_free, hi)
    candidate = np.clip(z - exact[channel_node], 0.0, cap)
    ok = block_sums(candidate, node_matrix) <= capacity * (1 + 1e-15) + 1e-15
    tau = np.where(over & ok & (exact >= lo) & (exact <= hi), exact, hi)
    tau = np.where(over, tau, 0.0)
    return np.clip(z - tau[channel_node], 0.0, cap)


def project_block_paper(z: np.ndarray, u: np.ndarray, cap: float) -> np.ndarray:
    """Algorithm 1 lines 7-40 on one (r, k) block with repairs D3-D6 (spec §3.4)."""
    n = len(z)
    order = np.argsort(-z, kind="stable")
    zs, us = z[order], u[order]
    yh = np.zeros(n)
    first = True
    while True:                                                        # line 11
        if first:                                                      # lines 13-16
            in_b1 = np.zeros(n, dtype=bool)
            in_b3 = np.ones(n, dtype=bool)
            yh[:] = 0.0
            first = False
        elif yh[0] > us[0]:                                            # lines 18-19 (top sorted port)
            in_b1 = np.zeros(n, dtype=bool)
            in_b1[0] = True
            in_b3 = ~in_b1
        else:
            break
        in_b2 = np.zeros(n, dtype=bool)
        while True:                                                    # repeat (line 25)
            cut = n
            if not in_b3.any():                                        # D6 guard
                yh[in_b1] = us[in_b1]
                break
            half_rho = (zs[in_b3].sum() - cap + us[in_b1].sum()) / in_b3.sum()   # eq. 40, rho / 2
            for i in range(n):                                         # lines 27-36
                if in_b1[i]:
                    yh[i] = us[i]
                elif in_b3[i]:
                    yh[i] = zs[i] - half_rho
                    if yh[i] < 0:
                        cut = i
                        break
            cut_set = np.zeros(n, dtype=bool)
            cut_set[cut:] = True
            in_b2 |= cut_set & ~in_b1
            in_b3 &= ~cut_set
            yh[in_b2] = 0.0                                            # D3 fix
            if cut == n:                                               # until S = {}
                break
        if not in_b3.any() and not in_b1.any():
            break
    y = np.zeros(n)
    y[order] = yh
    return y


def project_paper(z: np.ndarray, cap: np.ndarray, capacity: np.ndarray, channel_node: np.ndarray,
                  *, repair: bool = False) -> tuple[np.ndarray, int]:
    """The paper variant over every (r, k) block; returns y and the number of infeasible blocks."""
    y = np.zeros_like(z)
    infeasible = 0
    for r in range(capacity.shape[0]):
        members = np.flatnonzero(channel_node == r)
        if members.size == 0:
            continue
        for k in range(capacity.shape[1]):
            block = project_block_paper(z[members, k], cap[members, k], capacity[r, k])
            bad = np.any(block < -1e-9) or np.any(block > cap[members, k] + 1e-9) or block.sum() > capacity[r, k] + 1e-9
            infeasible += int(bad)
            if repair and bad:
                block = np.clip(block, 0.0, cap[members, k])
                total = block.sum()
                if total > capacity[r, k]:
                    block *= capacity[r, k] / total
            y[members, k] = block
    return y, infeasible
