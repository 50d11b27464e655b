"""The registry of systems: for each, its instance family, exact program, online algorithms and
baselines, how a run is simulated and how it is scored. The CLI and studies look everything up here."""

from __future__ import annotations

import inspect
import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from mlsched.errors import UsageError, option_flags
from mlsched.solve import Built, SolveReport


@dataclass(frozen=True)
class System:
    name: str
    family: str
    variants: tuple[str, ...]
    algorithms: dict[str, Callable[..., Any]]
    default_algorithms: tuple[str, ...]
    score_name: str
    exact: Callable[..., SolveReport]
    run: Callable[[Any, Any], Any]
    evaluate: Callable[[Any, Any], dict[str, Any]]
    build: Callable[..., Built] | None = None
    relaxable: bool = False
    ratio_variant: str | None = None
    regret_variant: str | None = None
    minimize: bool = False          # the score is a cost (ratio = ALG / OPT) rather than a value (OPT / ALG)
    ratio_score: str | None = None  # the row column compared with OPT, when not ``score_name``
    run_options: tuple[str, ...] = ()   # keyword options ``run`` accepts (e.g. the lease of event simulations)
    configured_options: tuple[str, ...] = ()   # the run options ``run`` hands to the policy's ``configure``
    start_of: Callable[[Any], Any] | None = None   # a run's feasible solution for ``exact(starts=...)``
    performance_ratio: bool = False   # also report PR = ALG / OPT (the paper's measure) beside OPT / ALG
    paired_options: tuple[str, ...] = ()   # run options the exact solve takes too (the same realizations)
    instance_options: tuple[str, ...] = ()   # run options that set a field of the instance: the runs and OPT both see it
    applies: Callable[[Any, str], bool] | None = None   # whether a variant applies to an instance (default: all)
    benchmark_columns: Callable[[Any], dict[str, Any]] | None = None   # studies: more benchmarks per instance
    paired_columns: Callable[[SolveReport, Any], dict[str, Any]] | None = None   # studies: from OPT and one run
    progress_option: str | None = None   # the keyword with which ``run`` reports (steps done, steps in all)
    exact_refusal: Callable[[Any], str | None] | None = None   # why the exact program cannot take an instance (None: it can)
    instance_defaults: Callable[[Any], tuple[str, ...]] | None = None   # more default algorithms for some instances

    def variants_for(self, instance: Any) -> tuple[str, ...]:
        return tuple(v for v in self.variants if self.applies is None or self.applies(instance, v))

    def defaults_for(self, instance: Any) -> tuple[str, ...]:
        """The default algorithms for ``instance``: those an instance of its kind calls for (SoW's
        stochastic mechanism on stochastic instances), then the system's own."""
        extra = self.instance_defaults(instance) if self.instance_defaults is not None else ()
        return (*extra, *self.default_algorithms)

    def execute(self, instance: Any, policy: Any, *, progress: Callable[[int, int], None] | None = None,
                **options: Any) -> Any:
        """``run(instance, policy)`` with the given run options (None means the default);
        ``progress`` hears (steps done, steps in all) from runs that report it."""
        given = self.check_run_options(options)
        if progress is not None and self.progress_option is not None:
            given[self.progress_option] = progress
        return self.run(instance, policy, **given)

    def check_run_options(self, options: Mapping[str, Any]) -> dict[str, Any]:
        """The options given (not None), after a UsageError naming those this system's runs take
        none of (``lease`` outside the Themis family)."""
        given = {k: v for k, v in options.items() if v is not None}
        unknown = sorted(set(given) - set(self.run_options))
        if unknown:
            raise UsageError(f"{self.name} runs take no {option_flags(given, unknown)} option")
        return given

    def takes_run_option(self, algorithm: str, option: str) -> bool:
        """Whether runs of ``algorithm`` accept the run option ``option``: the options handed to a
        policy's ``configure`` only when its ``configure`` names them (SoW's ``eps`` is the
        mechanisms', not the baselines')."""
        if option not in self.configured_options:
            return option in self.run_options
        configure = getattr(self.policy(algorithm), "configure", None)
        return configure is not None and option in inspect.signature(configure).parameters

    def unavailable(self, algorithm: str, instance: Any) -> str | None:
        """Why ``algorithm`` cannot run on ``instance`` (its factory's ``cannot_run``), or None."""
        factory = self.algorithms[algorithm]
        check = getattr(factory.func if isinstance(factory, partial) else factory, "cannot_run", None)
        return None if check is None else check(instance)

    def policy(self, algorithm: str, *, seed: int = 0, options: Mapping[str, Any] | None = None) -> Any:
        """A fresh policy object; ``seed`` is passed to policies that draw random numbers, and each
        of ``options`` (e.g. Themis's ``fairness_knob``) to the policies that take it."""
        self.require(algorithm)
        factory = self.algorithms[algorithm]
        accepted = self.policy_parameters(algorithm)
        given = {key: value for key, value in (options or {}).items() if key in accepted}
        if "seed" in accepted:
            given["seed"] = seed
        return factory(**given)

    def require(self, algorithm: str) -> None:
        """Raises a UsageError naming the choices unless ``algorithm`` is one of this system's."""
        if algorithm not in self.algorithms:
            raise UsageError(f"unknown algorithm {algorithm!r} for {self.name}; "
                             f"choose from {', '.join(self.algorithms)}")

    def policy_parameters(self, algorithm: str) -> frozenset[str]:
        """The keyword arguments ``algorithm``'s factory takes, less those its registration fixes
        (``themis-running`` stays ``current_rho="running"``)."""
        factory = self.algorithms[algorithm]
        fixed = factory.keywords if isinstance(factory, partial) else {}
        return frozenset(inspect.signature(factory).parameters) - set(fixed)


def _oasis() -> System:
    from mlsched import sim
    from mlsched.baselines import BASELINES
    from mlsched.exact import exact_oasis
    from mlsched.formulations import oasis
    from mlsched.metrics import total_utility, utilization
    from mlsched.online.oasis import OASiS

    def evaluate(instance: Any, result: Any) -> dict[str, Any]:
        used = utilization(instance, result.schedule)
        return {"total_utility": total_utility(instance, result.schedule),
                "admitted": int(result.schedule.admitted.sum()),
                "completed": int(result.schedule.completed(instance).sum()),
                "jobs": instance.num_jobs, "wall_seconds": result.wall_seconds,
                **{f"utilization_{r}": u for r, u in used.items()}}

    algorithms: dict[str, Callable[..., Any]] = {"oasis": OASiS, "oasis-ws": partial(OASiS, granularity="worker_slot")}
    algorithms.update(BASELINES)
    return System(name="oasis", family="cluster-jobs", variants=oasis.VARIANTS, algorithms=algorithms,
                  default_algorithms=("oasis", "fifo", "drf", "rrh", "dorm"), score_name="total_utility",
                  exact=exact_oasis, run=sim.run, evaluate=evaluate, build=oasis.build, relaxable=True,
                  start_of=lambda result: result.schedule, progress_option="on_slot")


def _ogasched() -> System:
    from mlsched.baselines.multi_server import MULTI_SERVER_BASELINES
    from mlsched.exact import OGASCHED_VARIANTS, exact_ogasched
    from mlsched.online.ogasched import OgaSched
    from mlsched.sim.multi_engine import run_slots

    def evaluate(instance: Any, result: Any) -> dict[str, Any]:
        return {"reward": result.total, "average_reward": float(result.rewards.mean()),
                "gain": float(result.gains.sum()), "overhead": float(result.overheads.sum()),
                "slots": len(result.rewards), "wall_seconds": result.wall_seconds}

    algorithms: dict[str, Callable[..., Any]] = {
        "ogasched": OgaSched, "ogasched-lookahead": partial(OgaSched, protocol="lookahead_mask"),
        "ogasched-paper": partial(OgaSched, projection="paper", repair=True),
    }
    algorithms.update(MULTI_SERVER_BASELINES)
    return System(name="ogasched", family="multi-server", variants=OGASCHED_VARIANTS, algorithms=algorithms,
                  default_algorithms=("ogasched", "drf", "fairness", "binpacking", "spreading"),
                  score_name="reward", exact=exact_ogasched, run=run_slots, evaluate=evaluate,
                  ratio_variant="per_slot", regret_variant="hindsight", progress_option="on_slot")


def _themis() -> System:
    from mlsched.baselines.gavel_ftf import GavelFTF
    from mlsched.baselines.greedy_rounds import THEMIS_BASELINES
    from mlsched.exact import THEMIS_SLOT, THEMIS_VARIANTS, exact_themis
    from mlsched.formulations import themis_offline
    from mlsched.metrics import themis_summary
    from mlsched.online.themis.policy import Themis
    from mlsched.sim.event_engine import SimOptions, simulate

    def evaluate(instance: Any, result: Any) -> dict[str, Any]:
        row: dict[str, Any] = themis_summary(result)
        if all(app.num_jobs == 1 for app in instance.apps):   # O1's domain: its score on O1's terms (A27)
            t_id = themis_offline.fifo_t_id(instance, slot=THEMIS_SLOT)
            arrival = [a.arrival for a in instance.apps]
            row["max_rho_slotted"] = float(max(themis_offline.slot_rounded_rho(result.finish, arrival, t_id,
                                                                               THEMIS_SLOT)))
        return row

    def run(instance: Any, policy: Any, *, lease: float | None = None,
            restart_overhead: float = SimOptions.restart_overhead,
            on_progress: Callable[[int, int], None] | None = None) -> Any:
        if lease is None:   # a round-based policy's own round length (gavel-ftf: 360 s), else the lease
            lease = getattr(policy, "default_lease", SimOptions.lease)
        return simulate(instance, policy, SimOptions(lease=lease, restart_overhead=restart_overhead),
                        on_progress=on_progress)

    def build(instance: Any, *, variant: str = "o1", relax: bool = False) -> Built:
        return themis_offline.build_offline(instance, t_id=themis_offline.fifo_t_id(instance, slot=THEMIS_SLOT),
                                            slot=THEMIS_SLOT, relax=relax)

    algorithms: dict[str, Callable[..., Any]] = {
        "themis": Themis, "themis-floor": partial(Themis, realization="floor"),
        "themis-uncapped": partial(Themis, cap_participants=False),
        "themis-running": partial(Themis, current_rho="running")}
    algorithms.update(THEMIS_BASELINES)
    algorithms["gavel-ftf"] = GavelFTF
    return System(name="themis", family="themis", variants=THEMIS_VARIANTS, algorithms=algorithms,
                  default_algorithms=("themis", *THEMIS_BASELINES), score_name="max_rho", exact=exact_themis,
                  run=run, evaluate=evaluate, build=build, relaxable=True, minimize=True,
                  ratio_score="max_rho_slotted", run_options=("lease", "restart_overhead"),
                  exact_refusal=themis_offline.o1_refusal, progress_option="on_progress")


def _astraea() -> System:
    from mlsched.baselines.batchsche import BatchSche, exclusive_gains
    from mlsched.baselines.gandiva_fair import GandivaFair
    from mlsched.baselines.hived import HiveD
    from mlsched.exact import ASTRAEA_VARIANTS, exact_astraea
    from mlsched.formulations import astraea
    from mlsched.online.astraea import Astraea
    from mlsched.sim.tenant_run import run_tenant
    from mlsched.sim.tenant_slots import SlotRun
    from mlsched.tenant_metrics import sharing_incentive

    last: dict[str, Any] = {}      # g_u^excl of the instance (held, so compared by identity) last evaluated

    def evaluate(instance: Any, result: Any) -> dict[str, Any]:
        """§5.3's metrics and SI_u = g_u / g_u^excl (its mean, minimum and counts)."""
        if last.get("instance") is not instance or last.get("origin") != result.time_origin:
            last.update(instance=instance, origin=result.time_origin, gains=exclusive_gains(
                dataclasses.replace(instance, time_origin=result.time_origin)))
        si = sharing_incentive(instance, result.gains(instance), last["gains"])
        return {**result.summary(instance), **{k: v for k, v in si.items() if k != "si"}}

    algorithms: dict[str, Callable[..., Any]] = {
        "astraea": Astraea, "astraea-theory": partial(Astraea, lambda_mode="theory", name="astraea-theory"),
        "batchsche": BatchSche, "gandiva_fair": GandivaFair, "hived": HiveD}
    return System(name="astraea", family="multi-tenant", variants=ASTRAEA_VARIANTS, algorithms=algorithms,
                  default_algorithms=("astraea", "batchsche", "gandiva_fair", "hived"), score_name="revenue", exact=exact_astraea, run=run_tenant,
                  evaluate=evaluate, build=astraea.build, relaxable=True,
                  ratio_variant="admission", performance_ratio=True,
                  run_options=("lambda_mode", "theta_scale", "time_origin", "migration_cost", "opportunistic"),
                  instance_options=("time_origin",),   # OPT on the same instance and time origin (§5.3)
                  configured_options=("lambda_mode", "theta_scale", "migration_cost", "opportunistic"),
                  # a preemptive run is read by its unbroken jobs inside exact_astraea (it needs the instance)
                  start_of=lambda result: result if isinstance(result, SlotRun) else result.schedule,
                  progress_option="on_progress")


def _sow() -> System:
    from mlsched.baselines.sow import GreedyStart, UpFrontReservation
    from mlsched.exact import exact_sow
    from mlsched.formulations import sow
    from mlsched.online.sow.mechanism import SowMechanism
    from mlsched.sim.sow_run import DEFAULT_SAMPLES, EXACT_LIMIT, run_sow
    from mlsched.sow_metrics import benchmark_columns, paired_columns, ratio_bound

    def run(instance: Any, policy: Any, *, samples: int = DEFAULT_SAMPLES, exact_limit: int = EXACT_LIMIT,
            eps: float | None = None, on_progress: Callable[[int, int], None] | None = None) -> Any:
        if eps is not None:
            if not hasattr(policy, "configure"):
                raise UsageError(f"eps (--eps) applies to the SoW mechanisms, not {policy.name}")
            policy.configure(eps=eps)
        return run_sow(instance, policy, samples=samples, exact_limit=exact_limit, on_progress=on_progress)

    def evaluate(instance: Any, result: Any) -> dict[str, Any]:
        return {**result.summary(instance), "ratio_bound": ratio_bound(result.constants)}

    algorithms: dict[str, Callable[..., Any]] = {
        "sow-adversarial": SowMechanism, "sow-fifo": partial(SowMechanism, eviction="fifo", name="sow-fifo"),
        "sow-stochastic": partial(SowMechanism, menu="bundles", name="sow-stochastic"),
        "sow-evict-all": partial(SowMechanism, eviction="all", name="sow-evict-all"),
        "greedy": GreedyStart, "reservation": UpFrontReservation}
    return System(name="sow", family="sow", variants=sow.SOW_VARIANTS, algorithms=algorithms,
                  default_algorithms=("sow-adversarial", "sow-fifo", "sow-evict-all", "greedy", "reservation"), score_name="welfare", exact=exact_sow,
                  run=run, evaluate=evaluate, build=sow.build,
                  relaxable=True, ratio_variant="hindsight", run_options=("samples", "exact_limit", "eps"), configured_options=("eps",),
                  paired_options=("samples", "exact_limit"), benchmark_columns=benchmark_columns,
                  paired_columns=paired_columns,
                  applies=lambda instance, variant: not (instance.stochastic and variant in ("lp-r", "lp-rp")),
                  instance_defaults=lambda instance: ("sow-stochastic",) if instance.stochastic else (),
                  progress_option="on_progress")


_FACTORIES: dict[str, Callable[[], System]] = {"oasis": _oasis, "ogasched": _ogasched, "themis": _themis,
                                               "astraea": _astraea, "sow": _sow}
_DEFAULT_FOR_FAMILY = {"cluster-jobs": "oasis", "multi-server": "ogasched", "themis": "themis",
                       "multi-tenant": "astraea", "sow": "sow"}


def get_system(name: str | None = None, *, family: str | None = None) -> System:
    """A system by name, or the default system of an instance family."""
    if name is None:
        if family not in _DEFAULT_FOR_FAMILY:
            raise UsageError(f"no system handles the instance family {family!r}")
        name = _DEFAULT_FOR_FAMILY[family]
    if name not in _FACTORIES:
        raise UsageError(f"unknown system {name!r}; choose from {', '.join(_FACTORIES)}")
    system = _FACTORIES[name]()
    if family is not None and system.family != family:
        raise UsageError(f"system {name} works on {system.family} instances, not {family}")
    return system
