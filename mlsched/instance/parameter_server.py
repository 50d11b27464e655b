r"""The parameter-server training model OASiS and Astraea share: one definition of a mini-batch's
time (Astraea's Eq. (1) rate, OASiS's chunk time) and of the PS count that covers a worker
bandwidth (Astraea's (3i), OASiS's eq. (6)).

A worker trains one mini-batch in its compute time, then pushes its gradients to its parameter
server and pulls the parameters back: 2 eps MB over the worker's b Mbps, 2 * 8 * eps / b seconds.
In slots of ``slot_seconds`` seconds:

    minibatch_slots(compute, eps, b, slot_seconds) = compute + 2 * 8 * eps / b / slot_seconds

- OASiS (spec ``oasis.md`` §1.4): W_i = M_i * minibatch_slots(tau_i, e_i, b_i, slot_seconds), the
  worker-slots of one pass over a chunk (tau_i in slots).
- Astraea Eq. (1) (spec ``astraea.md`` §1.3), in one-hour slots with compute = m_j + G_j (hours):
      n_j^dist = 1 / minibatch_slots(m_j + G_j, eps_j, b_w, 3600),   n_j^cent = 1 / (m_j + G_j),
  mini-batches per worker per slot (a job on one server exchanges nothing across the network).

PS bandwidth: Y workers of b Mbps need ps_needed(Y, b, B) = ceil(Y b / B) parameter servers of B Mbps.
- OASiS eq. (6): Z(Y) for the job's Y workers.
- Astraea (3i) [P-fix]: a server s that hosts z_s PS of a job with W workers, y_s of them on s,
  covers the workers elsewhere, (W - y_s) b_w <= z_s b_p, i.e. z_s >= ps_needed(W - y_s, b_w, b_p).
Integral bandwidths (below 2^31) are divided exactly in integers; otherwise the quotient is rounded
up after subtracting EPS, so a float quotient a rounding error above an integer needs no extra PS.
"""

from __future__ import annotations

import numpy as np

EPS = 1e-9
EXACT_BANDWIDTH = 2**31      # integral bandwidths below this are divided in integers
SECONDS_PER_HOUR = 3600.0
HOURS_PER_MS = 1.0 / 3.6e6


def minibatch_slots(compute: float | np.ndarray, gradient_mb: float | np.ndarray,
                    bandwidth_mbps: float | np.ndarray, slot_seconds: float) -> float | np.ndarray:
    """Slots one worker needs per mini-batch: compute plus the gradient push and parameter pull."""
    return compute + 2.0 * 8.0 * gradient_mb / bandwidth_mbps / slot_seconds


def eq1_rates(minibatch_hours: float, update_ms: float, gradient_mb: float, worker_mbps: float) -> tuple[float, float]:
    """(n^cent, n^dist) of Astraea's Eq. (1): mini-batches one worker (with its PS) trains per one-hour
    slot, from the compute time m (hours), the PS update time G (ms) and the gradient size eps (MB)."""
    compute = minibatch_hours + update_ms * HOURS_PER_MS
    return 1.0 / compute, 1.0 / minibatch_slots(compute, gradient_mb, worker_mbps, SECONDS_PER_HOUR)


def ps_needed(workers: int | np.ndarray, worker_bandwidth: float, ps_bandwidth: float) -> int | np.ndarray:
    """ceil(Y b / B): the fewest PS of B Mbps covering Y workers of b Mbps (an int for an int Y)."""
    y = np.asarray(workers)
    if all(float(b).is_integer() and b < EXACT_BANDWIDTH for b in (worker_bandwidth, ps_bandwidth)):
        need = (y * int(worker_bandwidth) + int(ps_bandwidth) - 1) // int(ps_bandwidth)
    else:
        need = np.ceil(y * worker_bandwidth / ps_bandwidth - EPS).astype(np.int64)
    return int(need) if need.ndim == 0 else need
