"""Runs of a SoW mechanism over the realizations of an instance, each checked independently.

Realizations (spec §2.5, §8): the product of the true supports enumerated with its probabilities
when it has at most ``exact_limit`` points (20,000), else ``samples`` i.i.d. draws of weight
1/samples (2,000 by default; Monte Carlo figures carry 95% intervals). Job j's
draws come from its own stream ``default_rng([seed, j])`` (all at once), so adding later-born jobs
never changes earlier jobs' realizations (T5), and the exact program averages over the same
realizations (paired sampling). Expectations are probability-weighted means; ratios are ratios of
means (E[OPT] / E[W]).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mlsched.errors import UsageError
from mlsched.instance.sow import Realization, SowInstance
from mlsched.sim import sow_check

DEFAULT_SAMPLES = 2000
EXACT_LIMIT = 20_000


@dataclass(frozen=True)
class RealizationSet:
    arrival: np.ndarray      # [m, n]
    duration: np.ndarray
    signal: np.ndarray
    sow_index: np.ndarray    # [m, n]: each job's SoW drawn from G_j (0 for fixed SoWs)
    weights: np.ndarray      # [m], summing to 1
    exact: bool              # enumerated (True) or sampled

    def __len__(self) -> int:
        return self.weights.shape[0]

    def row(self, m: int) -> Realization:
        return Realization(tuple(int(x) for x in self.arrival[m]), tuple(int(x) for x in self.duration[m]),
                           tuple(int(x) for x in self.signal[m]), tuple(int(x) for x in self.sow_index[m]))


def realizations(instance: SowInstance, *, samples: int = DEFAULT_SAMPLES, seed: int = 0,
                 exact_limit: int = EXACT_LIMIT) -> RealizationSet:
    """Every joint realization with its probability when there are at most ``exact_limit``, else
    ``samples`` paired draws (see module doc). In the stochastic variant a job's draw is its SoW from
    G_j together with that SoW's (a, l, sigma)."""
    if samples < 1:
        raise UsageError(f"samples must be >= 1, got {samples}")
    if exact_limit < 0:
        raise UsageError(f"exact_limit must be >= 0, got {exact_limit}")
    n = instance.num_jobs
    options = [[(g * p.prob, k, p) for k, (g, sow) in enumerate(instance.sow_choices(j)) for p in sow.support]
               for j in range(n)]
    if instance.support_points() <= exact_limit:
        picks = np.array(list(itertools.product(*(range(len(o)) for o in options))), dtype=np.int64).reshape(-1, n)
        w = np.prod([np.array([o[0] for o in opts])[picks[:, j]] for j, opts in enumerate(options)], axis=0)
        return _realization_set(options, picks, np.asarray(w, dtype=float) / np.sum(w), exact=True)
    picks = np.zeros((samples, n), dtype=np.int64)
    for j, opts in enumerate(options):
        probs = np.array([o[0] for o in opts])
        picks[:, j] = np.random.default_rng([seed, j]).choice(len(opts), size=samples, p=probs / probs.sum())
    return _realization_set(options, picks, np.full(samples, 1.0 / samples), exact=False)


def _realization_set(options: list[list[tuple[float, int, Any]]], picks: np.ndarray, weights: np.ndarray, *,
                     exact: bool) -> RealizationSet:
    """The realizations whose job j takes option ``picks[m, j]`` (an (SoW, support point) pair)."""
    def column(get: Any) -> np.ndarray:
        out = np.zeros(picks.shape, dtype=np.int64)
        for j, opts in enumerate(options):
            out[:, j] = np.array([get(o) for o in opts], dtype=np.int64)[picks[:, j]]
        return out
    return RealizationSet(column(lambda o: o[2].arrival), column(lambda o: o[2].duration),
                          column(lambda o: o[2].signal), column(lambda o: o[1]), weights, exact=exact)


@dataclass
class SowRuns:
    """A mechanism's runs over a realization set, with the per-run checker verdicts."""

    name: str
    realizations: RealizationSet
    outcomes: list[Any]
    problems: list[str]
    constants: dict[str, float]
    wall_seconds: float
    seed: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def mean(self, per_run: np.ndarray) -> float:
        return float(self.realizations.weights @ per_run)

    def welfare(self) -> np.ndarray:
        return np.array([o.welfare for o in self.outcomes])

    def summary(self, instance: SowInstance) -> dict[str, Any]:
        """The §8 report's per-run quantities as expectations (one row), with the policy's constants
        (C', M, eta, B_switch, B_evict, alpha_3 or alpha_E, kappa, FUA loss, capacity conditions).
        ``eviction_cost`` is W_R - E[W] (both NaN for the baselines, which have no relaxed plan);
        ``max_fill`` the largest bundle fill of any run."""
        w = self.realizations.weights
        welfare = self.welfare()
        revenue = np.array([o.revenue for o in self.outcomes])
        statuses = [[j.status for j in o.jobs] for o in self.outcomes]
        n = max(instance.num_jobs, 1)

        def rate(kind: str) -> float:
            return self.mean(np.array([s.count(kind) / n for s in statuses]))

        switched = np.array([sum(j.switched for j in o.jobs) / n for o in self.outcomes])

        def removed_among(flag: bool) -> float:
            """Share of (non-)switched jobs evicted or cancelled, over every run's jobs."""
            pairs = [(w[m], j.status in ("evicted", "cancelled")) for m, o in enumerate(self.outcomes)
                     for j in o.jobs if j.switched == flag]
            mass = sum(p for p, _ in pairs)
            return float(sum(p for p, gone in pairs if gone) / mass) if mass > 0 else float("nan")

        overloads = [o.overloaded for o in self.outcomes if o.overloaded is not None]
        overload = float(np.max(w @ np.array(overloads, dtype=float))) if overloads and overloads[0].size else 0.0
        used = np.array([float(o.load.sum()) for o in self.outcomes]) / (instance.capacity * instance.horizon)
        mean_w = float(w @ welfare)
        se = float(np.sqrt(max(w @ (welfare - mean_w) ** 2, 0.0) / len(w))) if not self.realizations.exact else 0.0
        relaxed = self.mean(np.array([o.relaxed_welfare for o in self.outcomes]))
        fills = [o.extra["max_fill"] for o in self.outcomes if "max_fill" in o.extra]
        return {"welfare": mean_w, "welfare_se": se, "revenue": float(w @ revenue),
                "utilities": mean_w - float(w @ revenue),
                "relaxed_welfare": relaxed, "eviction_cost": relaxed - mean_w,
                "completed_rate": rate("completed"), "evicted_rate": rate("evicted"),
                "cancelled_rate": rate("cancelled"), "not_launched_rate": rate("not_launched") + rate("outside_support"),
                "switched_rate": self.mean(switched), "removed_switched": removed_among(True),
                "removed_not_switched": removed_among(False), "max_overload_frequency": overload,
                "utilization": float(w @ used),
                "realizations": len(w), "exact_expectation": self.realizations.exact,
                "check_problems": len(self.problems), "wall_seconds": self.wall_seconds,
                **({"max_fill": float(max(fills))} if fills else {}), **self.constants}


def run_sow(instance: SowInstance, policy: Any, *, samples: int = DEFAULT_SAMPLES, seed: int = 0,
            exact_limit: int = EXACT_LIMIT, on_progress: Callable[[int, int], None] | None = None) -> SowRuns:
    """Run ``policy`` (anything with ``simulate(instance, realization, sample)``) on every realization
    and check each run independently; a policy with ``prepare(instance)`` (offline work on the
    whole instance, e.g. the stochastic variant's bundles) gets it first. In the stochastic variant
    each run sees the instance with its SoWs drawn. ``on_progress`` hears (realizations run,
    realizations in all) after each."""
    reals = realizations(instance, samples=samples, seed=seed, exact_limit=exact_limit)
    tick = time.perf_counter()
    if hasattr(policy, "prepare"):
        policy.prepare(instance)
    outcomes, problems = [], []
    for m in range(len(reals)):
        real = reals.row(m)
        drawn = instance.concrete(real.sow_index)
        outcome = policy.simulate(drawn, real, m)
        outcomes.append(outcome)
        problems.extend(f"realization {m}: {p}" for p in sow_check.check(drawn, real, outcome))
        if on_progress is not None:
            on_progress(m + 1, len(reals))
    constants = policy.constants(instance) if hasattr(policy, "constants") else {}
    return SowRuns(name=getattr(policy, "name", type(policy).__name__), realizations=reals, outcomes=outcomes,
                   problems=problems, constants=constants, wall_seconds=time.perf_counter() - tick, seed=seed)
