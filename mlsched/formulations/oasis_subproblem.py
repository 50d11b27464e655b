r"""OASiS per-job subproblem (paper eq. 27, chunk or worker-slot form) as one reusable Pyomo model.

Built once per cluster shape (slots S, worker servers H, PS servers K); every job only changes
mutable parameters, so HiGHS re-solves the same model (no rebuild per arrival). It cross-checks
Algorithm 2 (spec §7.2 BF-Alg2).

Parameters for job i (rows s = t - a_i, padded to the horizon with zero caps):
  kappa[s,h], lambda[s,k]   per-worker / per-PS prices;  capw[s,h], capk[s,k]  residual caps (30, 31)
  f[s] = f_i(s) utilities;  N, W, EN, Theta;  ratio = b_i / B_i
Variables: u[s] in {0,1} completion slot; y[s,h], z[s,k] in Z+; d[s] in Z+ (chunk form only).
  max   sum_s f[s] u[s] - sum_{s,h} kappa y - sum_{s,k} lambda z                     (27)
  s.t.  sum_s u[s] <= 1                                       (at most one schedule l)
        sum_h y[s,h] <= N sum_{s' >= s} u[s']                 (3) and nothing after t_hat
        chunk:       sum_h y[s,h] >= W d[s],  sum_s d[s] = EN sum_s u[s]   (32) summed = (29)
        worker_slot: sum_{s,h} y[s,h] >= Theta sum_s u[s]                  (29)
        ratio sum_h y[s,h] <= sum_k z[s,k] <= sum_h y[s,h]     (6), (7)
        y[s,h] <= capw[s,h],  z[s,k] <= capk[s,k]              (30), (31)
The optimum max(0, objective) equals mu_i of Algorithm 2.
"""

from __future__ import annotations

import numpy as np
import pyomo.environ as pyo
from pyomo.contrib.solver.solvers.highs import Highs

from mlsched.errors import MlschedError
from mlsched.formulations.oasis_terms import GRANULARITIES, JobTerms, SlotPrices


class SubproblemModel:
    """A reusable Pyomo model of eq. (27) for windows of up to ``slots`` slots."""

    def __init__(self, slots: int, workers: int, ps: int, *, granularity: str = "chunk") -> None:
        if granularity not in GRANULARITIES:
            raise MlschedError(f"unknown granularity {granularity!r}")
        self.granularity = granularity
        m = pyo.ConcreteModel(name=f"oasis_subproblem_{granularity}")
        m.S = pyo.RangeSet(0, slots - 1)
        m.H = pyo.RangeSet(0, workers - 1)
        m.K = pyo.RangeSet(0, ps - 1)
        mutable = dict(mutable=True, initialize=0.0)
        m.kappa = pyo.Param(m.S, m.H, **mutable)
        m.lam = pyo.Param(m.S, m.K, **mutable)
        m.capw = pyo.Param(m.S, m.H, **mutable)
        m.capk = pyo.Param(m.S, m.K, **mutable)
        m.f = pyo.Param(m.S, **mutable)
        m.n = pyo.Param(**mutable)
        m.w = pyo.Param(**mutable)
        m.passes = pyo.Param(**mutable)
        m.theta = pyo.Param(**mutable)
        m.ratio = pyo.Param(**mutable)
        m.u = pyo.Var(m.S, domain=pyo.Binary)
        m.y = pyo.Var(m.S, m.H, domain=pyo.NonNegativeIntegers)
        m.z = pyo.Var(m.S, m.K, domain=pyo.NonNegativeIntegers)
        m.obj = pyo.Objective(sense=pyo.maximize, expr=sum(m.f[s] * m.u[s] for s in m.S)
                              - sum(m.kappa[s, h] * m.y[s, h] for s in m.S for h in m.H)
                              - sum(m.lam[s, k] * m.z[s, k] for s in m.S for k in m.K))
        m.one = pyo.Constraint(expr=sum(m.u[s] for s in m.S) <= 1)
        workers_at = {s: sum(m.y[s, h] for h in m.H) for s in m.S}
        ps_at = {s: sum(m.z[s, k] for k in m.K) for s in m.S}
        m.last = pyo.Constraint(m.S, rule=lambda _, s: workers_at[s] <= m.n * sum(m.u[q] for q in m.S if q >= s))
        if granularity == "chunk":
            m.d = pyo.Var(m.S, domain=pyo.NonNegativeIntegers)
            m.chunk = pyo.Constraint(m.S, rule=lambda _, s: workers_at[s] >= m.w * m.d[s])
            m.work = pyo.Constraint(expr=sum(m.d[s] for s in m.S) == m.passes * sum(m.u[s] for s in m.S))
        else:
            m.work = pyo.Constraint(expr=sum(workers_at[s] for s in m.S) >= m.theta * sum(m.u[s] for s in m.S))
        m.bw = pyo.Constraint(m.S, rule=lambda _, s: m.ratio * workers_at[s] <= ps_at[s])
        m.ps_le = pyo.Constraint(m.S, rule=lambda _, s: ps_at[s] <= workers_at[s])
        m.ycap = pyo.Constraint(m.S, m.H, rule=lambda _, s, h: m.y[s, h] <= m.capw[s, h])
        m.zcap = pyo.Constraint(m.S, m.K, rule=lambda _, s, k: m.z[s, k] <= m.capk[s, k])
        self.model = m
        self.slots = slots
        self.solver = Highs()

    def payoff(self, job: JobTerms, prices: SlotPrices) -> float:
        """mu_i = max(0, optimum of eq. 27) for ``job`` at ``prices``."""
        m = self.model
        n_slots = prices.worker_price.shape[0]
        if n_slots > self.slots:
            raise MlschedError(f"window of {n_slots} slots exceeds the model's {self.slots}")
        pad = self.slots - n_slots
        for name, values in (("kappa", prices.worker_price), ("lam", prices.ps_price),
                             ("capw", prices.worker_cap), ("capk", prices.ps_cap)):
            padded = np.pad(np.asarray(values, dtype=float), ((0, pad), (0, 0)))
            getattr(m, name).store_values({(s, j): float(padded[s, j]) for s in range(self.slots)
                                           for j in range(padded.shape[1])})
        m.f.store_values({s: float(v) for s, v in enumerate(np.pad(job.utility, (0, pad)))})
        m.n.set_value(job.chunks)
        m.w.set_value(job.chunk_time)
        m.passes.set_value(job.passes)
        m.theta.set_value(job.workload)
        m.ratio.set_value(job.worker_bandwidth / job.ps_bandwidth)
        result = self.solver.solve(m, load_solutions=False, raise_exception_on_nonoptimal_result=False,
                                   solver_options={"mip_rel_gap": 0.0, "mip_abs_gap": 0.0})
        if result.incumbent_objective is None:
            raise MlschedError(f"subproblem solve failed: {result.termination_condition}")
        return max(0.0, float(result.incumbent_objective))
