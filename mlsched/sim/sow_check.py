"""Independent checker of one SoW mechanism run (spec §10, T11), reading only the instance, the
realization and the run's outcome; it imports nothing from the mechanism.

Each job's record must first be well formed: a final status, rounds that are whole numbers in
1..T or absent, a start for a completed job and a removal round for a job with a start that ended
as not launched or outside its report (a job whose record is not is reported once and left out of
the other rules, LIFO's among them).

Per job, from its recorded plan, start, status, removal round and announced price table:
  * a launched job starts at pi_j(a_j, sigma_j) >= a_j; a realization outside the reported support
    or a bottom plan entry is not launched; a launched job is stopped at the first round r > s at
    which its announced price p(s, d'_j, r - s + 1) is infinite and it is still running (l_j > r - s),
    and otherwise runs to its completion;
  * a completed job ends at c = s + l_j - 1 <= T, gets v_j(c) (0 when it ran on fewer nodes than its
    true width) and pays exactly p_{b_j}(s, d'_j, l_j); every other job gets 0 and pays 0;
  * the load of the jobs that ran in round r (completed: s..c; evicted at e: s..e - 1) is <= C;
  * LIFO (when the run says so): at each round r, with the active jobs in birth order and P_j(r) the
    committed load of those up to j that run or start at r, job j is removed at r iff P_j(r) > C;
  * every job's plan has an estimated utility U_hat(pi_j) >= 0 (T11);
  * welfare = revenue + the sum of utilities.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from mlsched.instance.sow import SowInstance

TOL = 1e-9
_ENDED_AT_ARRIVAL = ("not_launched", "outside_support")
_STATUSES = ("completed", "evicted", "cancelled", *_ENDED_AT_ARRIVAL)


def check(instance: SowInstance, realization: Any, outcome: Any) -> list[str]:
    """Every violated rule, one line each (empty: the run is consistent)."""
    problems: list[str] = []
    T = instance.horizon
    occupied = np.zeros(T + 2)
    malformed = False
    for i, (job, out) in enumerate(zip(instance.jobs, outcome.jobs, strict=True)):
        a, l, sig = realization.arrival[i], realization.duration[i], realization.signal[i]
        width = job.reported.width
        planned = out.plan.get((a, sig), "outside")
        where = f"job {job.id}"
        shape = _malformed(out, T)
        if shape:
            problems.append(f"{where}: its record is malformed: {shape}")
            malformed = True
            continue
        if not out.estimated_utility >= -TOL:   # NaN-safe
            problems.append(f"{where}: its plan's estimated utility {out.estimated_utility:.12g} is negative (T11)")
        if out.status in _ENDED_AT_ARRIVAL and out.start is None:
            expected = "outside_support" if planned == "outside" else "not_launched"
            if out.status != expected or (planned not in (None, "outside")):
                problems.append(f"{where}: status {out.status} but the plan gives {planned!r} for (a, sigma) = ({a}, {sig})")
        elif out.status == "outside_support":     # stopped: its completion would meet an infinite price
            stop = _first_unpriced_round(out.prices, out.start, l)
            if out.start != planned or stop is None or out.removed_at != stop:
                problems.append(f"{where}: stopped at {out.removed_at} as outside its report, but it starts at "
                                f"{out.start} (plan {planned!r}), runs {l} rounds and meets an infinite price at "
                                f"{stop}")
            occupied[out.start:out.removed_at] += width
        elif out.start is not None or out.status == "completed":
            if out.start != planned:
                problems.append(f"{where}: starts at {out.start}, the plan says {planned!r}")
            if out.start is not None and out.start < a:
                problems.append(f"{where}: starts at {out.start} before its arrival {a}")
        if out.status == "completed":
            c = out.start + l - 1
            if _first_unpriced_round(out.prices, out.start, l) is not None:
                problems.append(f"{where}: completes although its price became infinite while it ran")
            if out.completion != c or c > T:
                problems.append(f"{where}: completes at {out.completion}, expected {c} (<= T = {T})")
            value = job.sow.value(job.birth, c) if width >= job.width else 0.0
            price = float(out.prices[out.start, l - 1])
            if not abs(out.value - value) <= TOL:   # NaN-safe
                problems.append(f"{where}: value {out.value:.12g}, v(c) is {value:.12g}")
            if not abs(out.payment - price) <= TOL * max(1.0, abs(price)):
                problems.append(f"{where}: pays {out.payment:.12g}, the announced price is {price:.12g}")
            occupied[out.start:c + 1] += width
        else:
            if out.value != 0 or out.payment != 0:
                problems.append(f"{where}: {out.status} but gets {out.value:g} and pays {out.payment:g}")
            if out.status == "evicted" and out.start is not None and out.removed_at is not None:
                occupied[out.start:out.removed_at] += width
    for r in np.nonzero(occupied > instance.capacity + TOL)[0]:
        problems.append(f"round {r}: load {occupied[r]:g} > C = {instance.capacity}")
    if outcome.eviction == "lifo" and not malformed:
        problems.extend(_lifo_problems(instance, realization, outcome))
    total = sum(o.payment for o in outcome.jobs) + sum(o.value - o.payment for o in outcome.jobs)
    if abs(total - sum(o.value for o in outcome.jobs)) > TOL * max(1.0, abs(total)):
        problems.append("welfare differs from revenue plus utilities")
    return problems


def _malformed(out: Any, horizon: int) -> str:
    """What makes one job's record unreadable by the rules (empty: nothing): a status that is not
    final, a round that is not a whole number in 1..``horizon``, a completed job without a start, a
    job ended at arrival (not launched, outside its report) that has a start but no removal round."""
    if out.status not in _STATUSES:
        return f"status {out.status!r} is not one of {', '.join(_STATUSES)}"
    for name in ("start", "removed_at", "completion"):
        r = getattr(out, name)
        if r is not None and (isinstance(r, bool) or not isinstance(r, Integral) or not 1 <= r <= horizon):
            return f"{name} {r!r} is not a round in 1..{horizon}"
    if out.status == "completed" and out.start is None:
        return "completed without a start"
    if out.status in _ENDED_AT_ARRIVAL and out.start is not None and out.removed_at is None:
        return f"{out.status} after its start without a removal round"
    return ""


def _first_unpriced_round(prices: Any, start: int, duration: int) -> int | None:
    """The first round r in (s, s + l - 1] whose completion price p(s, d', r - s + 1) is infinite."""
    for k in range(2, duration + 1):
        if not np.isfinite(prices[start, k - 1]):
            return start + k - 1
    return None


def _lifo_problems(instance: SowInstance, realization: Any, outcome: Any) -> list[str]:
    """Removals at each round must be exactly the jobs whose birth-order prefix load exceeds C."""
    problems = []
    for r in range(1, instance.horizon + 1):
        prefix = 0
        for i, (job, out) in enumerate(zip(instance.jobs, outcome.jobs, strict=True)):
            if not _active_at(job, out, realization.arrival[i], r):
                continue
            l = realization.duration[i]
            if out.start is not None and out.start <= r <= out.start + l - 1:
                prefix += job.reported.width
            removed_here = out.removed_at == r and out.status in ("evicted", "cancelled")
            if (prefix > instance.capacity) != removed_here:
                problems.append(f"round {r}: job {job.id} {'removed' if removed_here else 'kept'} with prefix "
                                f"load {prefix} and C = {instance.capacity} (LIFO)")
    return problems


def _active_at(job: Any, out: Any, arrival: int, r: int) -> bool:
    """Active at round r's removal step: born, not ended at an earlier round, not unlaunched at arrival."""
    if job.birth > r:
        return False
    if out.status in _ENDED_AT_ARRIVAL and (arrival if out.start is None else out.removed_at) <= r:
        return False
    if out.status == "completed" and out.completion is not None and out.completion < r:
        return False
    if out.status in ("evicted", "cancelled") and out.removed_at is not None and out.removed_at < r:
        return False
    return True
