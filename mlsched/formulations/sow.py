"""The SoW benchmark programs (truthful SoW spec §2.3, §2.5): interval packings over rounds 1..T.

Every program packs columns c (a choice of start for a job, task or group) with a value val_c, a
group g(c) and a usage u_c(t) per round:

    max  sum_c val_c y_c
    s.t. sum_{c in g} y_c <= 1                    for every group g
         sum_c u_c(t) y_c <= supply               for every round t
         y_c in {0, 1} (ILP H) or y_c >= 0 (the LPs)

* ILP H (§2.5), one joint realization (a_j, l_j): columns (j, s), s in [a_j, min(T, b_j + Delta - 1)
  - l_j + 1], val = v_j(s + l_j - 1), u = d_j on [s, s + l_j - 1]; group j.
* LP-R (§2.3): columns (j, k, s) for every task k = (a_k, l_k, sigma_k) of F_j, s in St(j, k) =
  [a_k, min(T, b_j + Delta - 1) - l_k + 1], val = w_k v_j(s + l_k - 1), u = w_k d_j on the interval;
  group (j, k).
* LP-RP (§2.3, A3): columns (j, g, s) for every group g = (a, sigma), a <= s <= min(T, b_j + Delta - 1),
  val = sum_{k in g} w_k v_j(s + l_k - 1), u(t) = sum_{k in g} w_k d_j 1[s <= t <= s + l_k - 1]; group
  (j, g). Completions past min(T, b_j + Delta - 1) are worth 0 (A2, A14).
* LP-E (App. E, stochastic variant): outcomes o = (S, k, I) of job j with S in supp(G_j); with
  y_o = x_o / pr_j(S): columns (j, S, k, s), val = pr_j(S) w_k v_S(s + l_k - 1), u = pr_j(S) w_k d_S on
  the interval, group (j, S, k) (so sum_I x_(S,k,I) <= pr_j(S)). On a fixed-SoW instance LP-E = LP-R.
Columns of value 0 are dropped (they never help). The programs use the true SoWs; LP-R and LP-RP
need them fixed (a stochastic instance's SoWs are drawn per run: use LP-E, or E[H]).
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyomo.environ as pyo

from mlsched.errors import UsageError
from mlsched.instance.sow import Realization, SowInstance, completion
from mlsched.solve import ArrayProgram, Built

SOW_VARIANTS = ("hindsight", "lp-r", "lp-rp", "lp-e")


@dataclass
class Packing:
    """Columns of an interval packing: values, groups and sparse per-round usage."""

    supply: float
    values: list[float] = field(default_factory=list)
    groups: list[tuple] = field(default_factory=list)
    usage: list[dict[int, float]] = field(default_factory=list)
    labels: list[tuple] = field(default_factory=list)

    def add(self, label: tuple, group: tuple, value: float, usage: dict[int, float]) -> None:
        if value > 0:
            self.labels.append(label)
            self.groups.append(group)
            self.values.append(value)
            self.usage.append(usage)

    @property
    def size(self) -> int:
        return len(self.values)

    def rounds(self) -> list[int]:
        return sorted({t for u in self.usage for t in u})

    def arrays(self, *, integer: bool) -> ArrayProgram:
        """The packing as an :class:`ArrayProgram` (group rows first, then round rows)."""
        group_index = {g: i for i, g in enumerate(dict.fromkeys(self.groups))}
        round_index = {t: len(group_index) + i for i, t in enumerate(self.rounds())}
        starts, index, value = [0], [], []
        for g, u in zip(self.groups, self.usage, strict=True):
            index.append(group_index[g])
            value.append(1.0)
            for t in sorted(u):
                index.append(round_index[t])
                value.append(u[t])
            starts.append(len(index))
        rows = len(group_index) + len(round_index)
        upper = np.concatenate([np.ones(len(group_index)), np.full(len(round_index), float(self.supply))])
        return ArrayProgram(cost=np.array(self.values), col_lower=np.zeros(self.size),
                            col_upper=np.ones(self.size), row_lower=np.full(rows, -np.inf), row_upper=upper,
                            a_start=np.array(starts, dtype=np.int64), a_index=np.array(index, dtype=np.int64),
                            a_value=np.array(value), integer=integer, sense="max")

    def cvxpy_problem(self) -> Any:
        """The LP as a cvxpy problem (a second, independent solver path for the relaxations)."""
        import cvxpy as cp

        arrays = self.arrays(integer=False)
        y = cp.Variable(self.size, nonneg=True)
        return cp.Problem(cp.Maximize(arrays.cost @ y), [arrays.matrix @ y <= arrays.row_upper])

    def model(self, name: str, *, integer: bool) -> pyo.ConcreteModel:
        m = pyo.ConcreteModel(name=name)
        cols = range(self.size)
        m.y = pyo.Var(cols, domain=pyo.Binary if integer else pyo.NonNegativeReals)
        m.obj = pyo.Objective(expr=sum(self.values[c] * m.y[c] for c in cols), sense=pyo.maximize)
        members: dict[tuple, list[int]] = defaultdict(list)
        users: dict[int, list[int]] = defaultdict(list)
        for c, (g, u) in enumerate(zip(self.groups, self.usage, strict=True)):
            members[g].append(c)
            for t in u:
                users[t].append(c)
        groups = list(members)
        m.choose = pyo.Constraint(range(len(groups)), rule=lambda _, i: sum(m.y[c] for c in members[groups[i]]) <= 1)
        rounds = sorted(users)
        m.supply = pyo.Constraint(rounds, rule=lambda _, t: sum(self.usage[c][t] * m.y[c] for c in users[t])
                                  <= self.supply)
        return m


def hindsight(instance: SowInstance, realization: Realization, supply: float | None = None) -> Packing:
    """ILP H's columns for one joint realization."""
    pack = Packing(supply=instance.capacity if supply is None else supply)
    for j, job in enumerate(instance.jobs):
        a, l = realization.arrival[j], realization.duration[j]
        for s in range(a, instance.last_start(job) - l + 2):
            pack.add((j, s), (j,), job.sow.value(job.birth, completion(s, l)),
                     {t: float(job.width) for t in range(s, s + l)})
    return pack


def randomized_relaxed(instance: SowInstance, supply: float | None = None) -> Packing:
    """LP-R's columns: one per (job, task, start)."""
    pack = Packing(supply=instance.capacity if supply is None else supply)
    for j, job in enumerate(instance.jobs):
        for k, p in enumerate(job.sow.support):
            for s in range(p.arrival, instance.last_start(job) - p.duration + 2):
                pack.add((j, k, s), (j, k), p.prob * job.sow.value(job.birth, completion(s, p.duration)),
                         {t: p.prob * job.width for t in range(s, s + p.duration)})
    return pack


def expected_relaxed(instance: SowInstance, supply: float | None = None) -> Packing:
    """LP-E's columns: one per (job, SoW of G_j, task, start), scaled by pr_j(S)."""
    pack = Packing(supply=instance.capacity if supply is None else supply)
    for j, job in enumerate(instance.jobs):
        for g, (pr, sow) in enumerate(instance.sow_choices(j)):
            for k, p in enumerate(sow.support):
                for s in range(p.arrival, instance.last_start(job) - p.duration + 2):
                    pack.add((j, g, k, s), (j, g, k), pr * p.prob * sow.value(job.birth, completion(s, p.duration)),
                             {t: pr * p.prob * sow.width for t in range(s, s + p.duration)})
    return pack


def relaxed_packing(instance: SowInstance, variant: str, supply: float | None = None) -> Packing:
    """The columns of LP-R, LP-RP or LP-E."""
    if variant == "lp-e":
        return expected_relaxed(instance, supply)
    if instance.stochastic:
        raise UsageError(f"{variant} needs fixed SoWs; this instance draws them from distributions (use lp-e)")
    return (randomized_relaxed if variant == "lp-r" else plan_consistent)(instance, supply)


def plan_consistent(instance: SowInstance, supply: float | None = None) -> Packing:
    """LP-RP's columns: one per (job, (a, sigma) group, shared start)."""
    pack = Packing(supply=instance.capacity if supply is None else supply)
    for j, job in enumerate(instance.jobs):
        groups: dict[tuple[int, int], list] = defaultdict(list)
        for p in job.sow.support:
            groups[(p.arrival, p.signal)].append(p)
        last = instance.last_start(job)
        for (a, sig), points in sorted(groups.items()):
            for s in range(a, last + 1):
                value = sum(p.prob * job.sow.value(job.birth, completion(s, p.duration))
                            for p in points if completion(s, p.duration) <= last)
                usage: dict[int, float] = defaultdict(float)
                for p in points:
                    for t in range(s, s + p.duration):
                        usage[t] += p.prob * job.width
                pack.add((j, a, sig, s), (j, a, sig), value, dict(usage))
    return pack


def build(instance: SowInstance, *, variant: str = "lp-r", relax: bool = False, supply: float | None = None,
          realization: Realization | None = None) -> Built:
    """The Pyomo model of LP-R, LP-RP or LP-E, or of ILP H for one ``realization``."""
    tick = time.perf_counter()
    if variant == "hindsight":
        if realization is None:
            raise UsageError("ILP H is one program per realization; writing a model applies to lp-r and lp-rp")
        pack, integer = hindsight(instance.concrete(realization.sow_index), realization, supply), not relax
    else:
        pack, integer = relaxed_packing(instance, variant, supply), False
    model = pack.model(f"{instance.name}-{variant}", integer=integer)
    return Built(model=model, name=model.name, sense="max", relaxed=not integer,
                 build_seconds=time.perf_counter() - tick)
