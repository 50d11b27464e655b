"""The SoW mechanisms: Algorithm 1's round loop (spec §3.5) instantiated by the reduction
(Algorithm 2, §4.2) over exponential posted prices (Algorithm 3, §5.2; the adversarial variant, §5.4)
or over the bundle menu of the stochastic variant (App. E, §6.4).

For tau = 1..T:
  1. each SoW born at tau, in submission order: menu p_tau(s, d, l) = d * sum_{t=s}^{s+l-1} p(u[t])
     (guard: inf where u[t] > C' - d_max), or d * min{rho_k : bundle k covers [s, s + l - 1] and
     f_k < d_max} (each launched task then charged w d to its cheapest bundle, fills as before the
     job), or the fixed menu d * l * (unit price) of the spec's T2 and §3.4 examples (``menu="fixed"``,
     for the incentive figures); failure estimates qt from the oracle over the earlier-born
     active jobs, zeroed below eps0 and closed monotonically in (d, l); plan pi_j = argmax (1)-(2) on
     the reported SoW; A is forced to allocate x(pi_j): u[t] += x(pi_j)_t; switched_j logged;
  2. each active job arriving at tau reveals (a, sigma); s_j = pi_j(a, sigma) (a realization outside
     the reported support, or bottom, leaves unlaunched); a job still running at tau whose price
     p_{b_j}(s_j, d'_j, tau - s_j + 1) is infinite is stopped (it outlived every duration its report
     priced: outside its reported support, pays 0);
  3. while the committed load at tau exceeds C, remove active jobs latest-born first (LIFO, §3.3;
     ``eviction="fifo"`` removes the earliest-born first: baseline (d) of §8; ``eviction="all"``
     removes every active job: baseline (c), evict everything and reset);
  4. jobs run; a job ending at tau completes, gets v_j(tau) and pays p_{b_j}(s_j, d_j, l_j).
Active jobs left after T are cancelled. Evicted, cancelled and unlaunched jobs get 0 and pay 0.

The mechanism sees only reports: plans, prices and the oracle use the reported SoW (width d'_j runs
the job on d'_j nodes); the true SoW decides the realization and the value (0 when d'_j < d_j: the
job cannot run on fewer nodes than it needs).

Oracle (§4.3): for each earlier-born active job, its residual outcomes given H_tau under its reported
SoW and fixed plan: an arrived job keeps its start, its duration conditioned on still running
(l >= tau - s + 1; one that outlived every duration its report gives for its (a, sigma) is taken to
run on as long as its price stays finite, the longest it can); a job not yet arrived draws
(a, l, sigma) from the reported support with a >= tau.
``oracle="sampled"`` draws M futures (Lemma F.1) from one stream per birth; ``"exact"`` enumerates
them (tiny instances); ``"none"`` gives zero estimates (A's own argmax, for ablations).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from mlsched.errors import UsageError
from mlsched.instance.sow import Realization, SowInstance, SowJob
from mlsched.online.sow.bundles import BundleMenu
from mlsched.online.sow.launch import is_switched, launch_plan, relaxed_usage, relaxed_utility
from mlsched.online.sow.lifo import lifo_removals_prefix, lifo_removals_sequential
from mlsched.online.sow.oracle import (
    Outcome, enumerate_futures, failure_table, load_paths, sample_futures, threshold_closure)
from mlsched.online.sow.prices import ExpPrices, interval_prices
from mlsched.online.sow.reduction import Reduction
from mlsched.online.sow.stochastic import BundlePlan, build_bundles

ORACLES = ("sampled", "exact", "none")
MENUS = ("exponential", "bundles", "fixed")
EVICTIONS = ("lifo", "fifo", "all")
MAX_EXACT_FUTURES = 200_000
Plan = dict[tuple[int, int], int | None]


@dataclass
class JobOutcome:
    """What the mechanism announced, decided and charged for one job."""

    plan: Plan
    prices: npt.NDArray[np.float64]       # p_{b_j}(s, d'_j, l) as [s, l - 1] over absolute rounds
    estimated_utility: float              # U_hat(pi_j) of (1) on the reported SoW
    relaxed_utility: float                # v(x(pi_j)) - P(x(pi_j))
    switched: bool
    max_estimate: float                   # max over the table of qt_{b_j}(., d'_j, .)
    status: str = "waiting"               # completed | evicted | cancelled | not_launched | outside_support
    start: int | None = None
    removed_at: int | None = None
    completion: int | None = None
    value: float = 0.0
    payment: float = 0.0

    @property
    def utility(self) -> float:
        return self.value - self.payment


@dataclass
class SowOutcome:
    """One run of the mechanism on one realization."""

    jobs: list[JobOutcome]
    relaxed_usage: npt.NDArray[np.float64]      # u[t] of A after every job
    load: npt.NDArray[np.int64]                 # committed load per round after removals
    eviction: str
    relaxed_welfare: float = math.nan           # W_R: sum_j v(x(pi_j)) on the reported values (Alg. 2 only)
    overloaded: npt.NDArray[np.bool_] | None = None   # rounds whose committed load exceeded C (before removals)
    extra: dict[str, float] = field(default_factory=dict)    # menu state at the end (bundle fills)

    @property
    def welfare(self) -> float:
        return float(sum(j.value for j in self.jobs))

    @property
    def revenue(self) -> float:
        return float(sum(j.payment for j in self.jobs))


class SowMechanism:
    """Algorithm 2 with LIFO eviction over Algorithm 3's exponential prices (``menu="exponential"``,
    spec §5.4), the stochastic variant's bundle menu (``menu="bundles"``, §6.4: LP-E, FUA-Dyadic
    and Lemma E.3's prices, built by :meth:`prepare`) or a fixed menu of ``unit_price`` per
    node-round (``menu="fixed"``: T2, §3.4); every [RECON] constant is an option.

    ``eps`` sets delta = eps, gamma = zeta = eps / 4 and eps0 = eps / 2 unless given; ``low`` and
    ``mu`` override L and mu of eq. (7); ``bundle_by_weight`` picks rho_k = V_k / (2 W_k) (else
    V_k / (2 d_max), A10).
    """

    def __init__(self, *, eps: float = 0.2, oracle: str = "sampled", eviction: str = "lifo",
                 menu: str = "exponential", delta: float | None = None, gamma: float | None = None,
                 zeta: float | None = None, eps0: float | None = None, low: float | None = None,
                 mu: float | None = None, bundle_by_weight: bool = True, unit_price: float = 1.0, seed: int = 0,
                 name: str = "sow-adversarial") -> None:
        if not 0 < eps < 1:
            raise UsageError(f"eps must be in (0, 1), got {eps}")
        if oracle not in ORACLES:
            raise UsageError(f"unknown oracle {oracle!r}; choose from {', '.join(ORACLES)}")
        if eviction not in EVICTIONS:
            raise UsageError(f"unknown eviction rule {eviction!r}; choose from {', '.join(EVICTIONS)}")
        if menu not in MENUS:
            raise UsageError(f"unknown menu {menu!r}; choose from {', '.join(MENUS)}")
        self.eps, self.oracle, self.eviction, self.menu = eps, oracle, eviction, menu
        self.overrides = {"delta": delta, "gamma": gamma, "zeta": zeta, "eps0": eps0}
        self.low, self.mu, self.seed, self.name = low, mu, seed, name
        self.bundle_by_weight, self.unit_price = bundle_by_weight, unit_price
        self.bundle_plan: BundlePlan | None = None

    def prepare(self, instance: SowInstance) -> None:
        """The bundle menu's offline step on the whole (stochastic) instance; nothing for Alg. 3."""
        if self.menu == "bundles":
            self.bundle_plan = build_bundles(instance, self.reduction(instance).relaxed_capacity,
                                             by_weight=self.bundle_by_weight)

    def configure(self, *, eps: float | None = None) -> None:
        """Run options that override the constructor's (the CLI's ``--eps``)."""
        if eps is not None:
            if not 0 < eps < 1:
                raise UsageError(f"eps must be in (0, 1), got {eps}")
            self.eps = eps

    def reduction(self, instance: SowInstance) -> Reduction:
        return Reduction(capacity=instance.capacity, d_max=instance.d_max, max_duration=instance.max_duration,
                         delta_window=instance.window, eps=self.eps, **self.overrides)

    def prices(self, instance: SowInstance) -> ExpPrices:
        return ExpPrices(capacity=self.reduction(instance).relaxed_capacity, d_max=instance.d_max,
                         max_duration=instance.max_duration, max_value=instance.max_value, low=self.low, mu=self.mu)

    def constants(self, instance: SowInstance) -> dict[str, float]:
        """The reported bounds: delta, C', M, eta, B_switch, B_evict, 2V(eps0 + gamma + zeta), alpha_3 (or
        the bundle plan's alpha_E, kappa and FUA loss) and both capacity conditions."""
        red, exp = self.reduction(instance), self.prices(instance)
        common = {"delta": red.slack, "relaxed_capacity": red.relaxed_capacity, "oracle_samples": red.samples,
                  "eps0": red.threshold,
                  "gamma": red.accuracy, "zeta": red.confidence, "eta": red.eta, "b_switch": red.b_switch,
                  "b_evict": red.b_evict, "truthful_bound": 2 * instance.max_value * (
                      red.threshold + red.accuracy + red.confidence),
                  "reduction_condition": float(red.capacity_condition)}
        if self.menu == "bundles":
            return {**common, **(self.bundle_plan.report() if self.bundle_plan else {})}
        if self.menu == "fixed":
            return {**common, "unit_price": self.unit_price}
        return {**common, "alpha_3": exp.alpha, "price_condition": float(exp.capacity_condition)}

    def simulate(self, instance: SowInstance, realization: Realization, sample: int = 0) -> SowOutcome:
        """Algorithm 1 on one realization; ``sample`` keys the oracle's per-birth random streams."""
        return _Run(self, instance, realization, sample).execute()


class _Run:
    """The state of one run: A's relaxed usage and every job's announced menu, plan and status."""

    def __init__(self, mech: SowMechanism, instance: SowInstance, realization: Realization, sample: int) -> None:
        self.mech, self.inst, self.real, self.sample = mech, instance, realization, sample
        self.red, self.exp = mech.reduction(instance), mech.prices(instance)
        self.rounds = instance.horizon + instance.max_duration + 2
        self.bundles: BundleMenu | None = None
        if mech.menu == "bundles":
            if mech.bundle_plan is None:
                raise UsageError("the bundle menu is built offline: call prepare(instance) first (run_sow does)")
            template = mech.bundle_plan.menu
            self.bundles = BundleMenu(present=template.present, rho=template.rho, d_max=template.d_max)
        self.usage = np.zeros(self.rounds)
        self.outcomes: list[JobOutcome] = []
        self.load = np.zeros(self.rounds, dtype=np.int64)
        self.overloaded = np.zeros(self.rounds, dtype=bool)
        self.relaxed_welfare = 0.0

    def execute(self) -> SowOutcome:
        inst, jobs = self.inst, self.inst.jobs
        born = 0
        for tau in range(1, inst.horizon + 1):
            while born < len(jobs) and jobs[born].birth == tau:
                self.outcomes.append(self._plan(jobs[born], tau))
                born += 1
            self._arrivals(tau)
            self._remove_overload(tau)
            self._complete(tau)
        for out in self.outcomes:
            if out.status in ("waiting", "scheduled"):
                out.status, out.removed_at = "cancelled", inst.horizon + 1
        extra = {} if self.bundles is None else {"max_fill": float(self.bundles.fill.max(initial=0.0))}
        return SowOutcome(jobs=self.outcomes, relaxed_usage=self.usage[:inst.horizon + 1].copy(),
                          load=self.load[:inst.horizon + 1].copy(), eviction=self.mech.eviction,
                          relaxed_welfare=self.relaxed_welfare, extra=extra,
                          overloaded=self.overloaded[:inst.horizon + 1].copy())

    # -- step 1: a birth ------------------------------------------------------------------------
    def _plan(self, job: SowJob, tau: int) -> JobOutcome:
        sow, inst = job.reported, self.inst
        arrivals = [p.arrival for p in sow.support]
        durations = [p.duration for p in sow.support]
        signals = [p.signal for p in sow.support]
        probs = [p.prob for p in sow.support]
        value = sow.value_table(job.birth, self.rounds)
        value[inst.horizon + 1:] = 0.0     # a job still running after T is cancelled (A14)
        price = self._price_table(sow.width)
        fail = self._estimates(tau, sow.width)
        last = inst.last_start(job)
        plan, estimated = launch_plan(arrivals, durations, signals, probs, last, value, price, fail)
        x = relaxed_usage(plan, arrivals, durations, signals, probs, sow.width, self.rounds)
        self.usage += x
        if self.bundles is not None:
            self.bundles.charge([(s, s + l - 1, w * sow.width) for a, l, sig, w in zip(arrivals, durations, signals, probs)
                                 if (s := plan.get((a, sig))) is not None])
        self.relaxed_welfare += sum(w * value[s + l - 1] for a, l, sig, w in zip(arrivals, durations, signals, probs)
                                    if (s := plan.get((a, sig))) is not None)
        return JobOutcome(plan=plan, prices=price, estimated_utility=estimated,
                          relaxed_utility=relaxed_utility(plan, arrivals, durations, signals, probs, value, price),
                          switched=is_switched(plan, arrivals, durations, signals, probs, last, value, price),
                          max_estimate=float(fail.max(initial=0.0)))

    def _price_table(self, width: int) -> npt.NDArray[np.float64]:
        """p_tau(s, width, l) as [s, l - 1]: Alg. 3's exponential prices, the bundle menu or the fixed menu."""
        if self.mech.menu == "fixed":
            return interval_prices(np.full(self.rounds, self.mech.unit_price), width, self.inst.max_duration)
        if self.bundles is None:
            return interval_prices(self.exp.unit(self.usage), width, self.inst.max_duration)
        table = np.full((self.rounds, self.inst.max_duration), np.inf)
        for s in range(1, self.rounds):
            for l in range(1, self.inst.max_duration + 1):
                table[s, l - 1] = self.bundles.price(s, width, l)
        return table

    def _estimates(self, tau: int, width: int) -> npt.NDArray[np.float64]:
        """qt_tau(s, width, l) as [s, l - 1] over absolute rounds (0 outside the job's window)."""
        inst = self.inst
        table = np.zeros((self.rounds, inst.max_duration))
        active = [i for i, o in enumerate(self.outcomes) if o.status in ("waiting", "scheduled")]
        if self.mech.oracle == "none" or not active:
            return table
        futures = [self._residual(i, tau) for i in active]
        loading = [k for k, f in enumerate(futures) if any(start is not None for _, start, _ in f)]
        if not loading:     # no earlier job can still load a round: every estimate is 0
            return table
        active, futures = [active[k] for k in loading], [futures[k] for k in loading]   # the others add 0 load
        if self.mech.oracle == "exact" or all(len(f) == 1 for f in futures):   # one future: M equal samples
            if np.prod([len(f) for f in futures], dtype=float) > MAX_EXACT_FUTURES:
                raise UsageError(f"the exact oracle would enumerate more than {MAX_EXACT_FUTURES} futures; "
                                 "use oracle='sampled'")
            starts, durs, weights = enumerate_futures(futures)
            total = 1.0
        else:
            rng = np.random.default_rng([self.mech.seed, self.sample, len(self.outcomes)])
            starts, durs, weights = sample_futures(futures, self.red.samples, rng)
            total = float(self.red.samples)
        widths = [inst.jobs[i].reported.width for i in active]
        span = inst.window + inst.max_duration
        loads = load_paths(widths, starts, durs, tau, tau + span, inst.capacity)
        tables = np.stack([failure_table(loads, weights, d, inst.capacity, inst.max_duration, total)
                           for d in range(1, width + 1)])
        closed = threshold_closure(tables, self.red.threshold)[width - 1]
        rows = min(span, self.rounds - tau)
        table[tau:tau + rows] = closed[:rows]
        return table

    def _residual(self, i: int, tau: int) -> list[Outcome]:
        """Job i's residual outcomes given the history before tau, under its report and plan."""
        out, sow = self.outcomes[i], self.inst.jobs[i].reported
        if out.status == "scheduled":
            s = out.start
            assert s is not None
            a, sig = self.real.arrival[i], self.real.signal[i]
            need = max(1, tau - s + 1)
            points = [(p.prob, p.duration) for p in sow.support
                      if (p.arrival, p.signal) == (a, sig) and p.duration >= need]
            if not points:   # it outlived every reported duration: it runs on while its price is finite
                priced = need - 1 + int(np.cumprod(np.isfinite(out.prices[s, need - 1:])).sum())
                return [(1.0, s, priced)] if priced >= need else [(1.0, None, 1)]
            total = sum(w for w, _ in points)
            return [(w / total, s, l) for w, l in points]
        points = [p for p in sow.support if p.arrival >= tau]
        if not points:       # it can only arrive outside its reported support: it will not launch
            return [(1.0, None, 1)]
        total = sum(p.prob for p in points)
        return [(p.prob / total, out.plan.get((p.arrival, p.signal)), p.duration) for p in points]

    # -- steps 2-4 ------------------------------------------------------------------------------
    def _arrivals(self, tau: int) -> None:
        """Starts of the jobs arriving at tau, and stops of running jobs whose completion at tau or
        later would meet an infinite price (they outlived every duration their report priced)."""
        for i, out in enumerate(self.outcomes):
            if out.status == "scheduled" and out.start is not None and out.start < tau:
                if np.isinf(out.prices[out.start, tau - out.start]):
                    out.status, out.removed_at = "outside_support", tau
                continue
            if out.status == "waiting" and self.real.arrival[i] == tau:
                key = (tau, self.real.signal[i])
                if key not in out.plan:
                    out.status, out.removed_at = "outside_support", tau
                elif out.plan[key] is None:
                    out.status, out.removed_at = "not_launched", tau
                else:
                    out.status, out.start = "scheduled", out.plan[key]

    def _contributes(self, i: int, tau: int) -> bool:
        out = self.outcomes[i]
        return (out.status == "scheduled" and out.start is not None
                and out.start <= tau <= out.start + self.real.duration[i] - 1)

    def _remove_overload(self, tau: int) -> None:
        active = [i for i, o in enumerate(self.outcomes) if o.status in ("waiting", "scheduled")]
        widths = np.array([self.inst.jobs[i].reported.width for i in active])
        on = np.array([self._contributes(i, tau) for i in active], dtype=bool)
        if self.mech.eviction == "lifo":
            removed = lifo_removals_prefix(widths, on, self.inst.capacity)
        elif self.mech.eviction == "fifo":
            removed = lifo_removals_sequential(widths[::-1], on[::-1], self.inst.capacity)[::-1]
        else:   # evict everything and reset
            removed = np.full(len(active), int(widths[on].sum()) > self.inst.capacity)
        for i, gone in zip(active, removed):
            if gone:
                out = self.outcomes[i]
                started = out.start is not None and out.start < tau
                out.status, out.removed_at = ("evicted" if started else "cancelled"), tau
        self.load[tau] = int(widths[on & ~removed].sum()) if active else 0
        self.overloaded[tau] = bool(removed.any()) if active else False

    def _complete(self, tau: int) -> None:
        for i, out in enumerate(self.outcomes):
            if out.status == "scheduled" and out.start is not None \
                    and out.start + self.real.duration[i] - 1 == tau:
                job = self.inst.jobs[i]
                out.status, out.completion = "completed", tau
                out.value = job.sow.value(job.birth, tau) if job.reported.width >= job.width else 0.0
                out.payment = float(out.prices[out.start, self.real.duration[i] - 1])
