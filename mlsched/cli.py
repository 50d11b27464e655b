"""The ``mlsched`` command: validate, solve, run, compare, study, sweep, plot and generate instances.

Bad input (an invalid file, an unknown algorithm, an existing output file without --force, an
instance too large for the machine's memory) prints one line per problem on stderr and exits 2.
Ctrl-C prints what finished (compare, study) and exits 130; the command starts in
:mod:`mlsched.entry`, which keeps Ctrl-C quiet while the modules load.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from mlsched.errors import MlschedError, UsageError
from mlsched.metrics import Ratio

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except MlschedError as exc:
        print(str(exc), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError as exc:   # a size no documented limit caught: still one line, not a traceback
        print(f"{getattr(args, 'file', None) or 'mlsched'}: out of memory in `mlsched {args.command}`"
              f"{f' ({exc})' if str(exc) else ''}; the instance is too large for this machine", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return 0


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="mlsched", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    v = sub.add_parser("validate", help="check an instance file and summarise it")
    v.add_argument("file")
    v.set_defaults(handler=_validate)

    s = sub.add_parser("solve", help="solve the exact program (or its LP relaxation); also .lp/.mps files")
    s.add_argument("file")
    s.add_argument("--system", help="system whose program to solve (default: by instance family)")
    s.add_argument("--variant", help="program variant (OASiS: paper | chunk; Astraea: admission | all-jobs | ub-pool; "
                                     "SoW: hindsight | lp-r | lp-rp | lp-e; default the first)")
    s.add_argument("--relax", action="store_true", help="solve the LP relaxation (an upper bound)")
    s.add_argument("--time-limit", type=_positive_float, metavar="S", help="seconds; returns incumbent, bound and gap")
    s.add_argument("--verify", action=argparse.BooleanOptionalAction, default=None,
                   help="re-solve with an independent solver (SCIP) and compare (default: models up to "
                        "5000 integer variables)")
    s.add_argument("--samples", type=_positive_int, metavar="N",
                   help="sow family: paired draws E[H] averages when the realizations are too many to enumerate (2000)")
    s.add_argument("--exact-limit", type=_nonnegative_int, metavar="K",
                   help="sow family: enumerate every realization when there are at most K (20000), else draw --samples")
    s.add_argument("--write", metavar="MODEL", help="also write the built model (.lp or .mps)")
    s.add_argument("--force", action="store_true", help="overwrite MODEL if it exists")
    s.add_argument("--json", action="store_true", help="print one JSON document")
    s.add_argument("--quiet", "-q", action="store_true", help="no progress line on long solves")
    s.set_defaults(handler=_solve)

    r = sub.add_parser("run", help="run one online algorithm or baseline")
    r.add_argument("file")
    r.add_argument("--algorithm", "-a", required=True)
    r.add_argument("--system")
    r.add_argument("--seed", type=int, default=0)
    _run_options(r)
    r.add_argument("--time-limit", type=_positive_float, metavar="S",
                   help="seconds for all the programs a policy solves during its run (dorm; default: none, "
                        "so that a run is the same on any machine)")
    r.add_argument("--json", action="store_true")
    r.add_argument("--quiet", "-q", action="store_true", help="no progress line on long runs")
    r.set_defaults(handler=_run)

    c = sub.add_parser("compare", help="run algorithms and the exact optimum; print OPT/ALG per algorithm")
    c.add_argument("file")
    _study_options(c)
    fmt = c.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true")
    fmt.add_argument("--csv", action="store_true")
    c.set_defaults(handler=_compare)

    st = sub.add_parser("study", help="compare over many instance files; table or CSV")
    st.add_argument("files", nargs="+")
    _study_options(st)
    st.add_argument("--output", "-o", metavar="CSV", help="write the table as CSV")
    st.add_argument("--force", action="store_true")
    st.set_defaults(handler=_study)

    i = sub.add_parser("instances", help="list the shipped instances (usable by name in place of a file)")
    i.set_defaults(handler=_instances)

    g = sub.add_parser("generate", help="generate an instance file")
    gsub = g.add_subparsers(dest="generator", required=True, metavar="SYSTEM")
    go = gsub.add_parser("oasis", help="OASiS simulation settings (spec §5.1)")
    go.add_argument("--jobs", type=int, required=True)
    go.add_argument("--horizon", type=int, required=True)
    go.add_argument("--seed", type=int, default=0)
    go.add_argument("--profile", default="feasible", help="paper | feasible | small (default feasible)")
    go.add_argument("--arrivals", default="uniform", help="uniform | poisson")
    go.add_argument("--workers", type=int, help="worker servers (default by profile)")
    go.add_argument("--ps-servers", type=int, help="PS servers (default by profile)")
    go.add_argument("--expected", action="store_true", help="solve and store OPT_paper, OPT_chunk and the LP bound")
    go.add_argument("--time-limit", type=_positive_float, default=60.0, metavar="S")
    go.add_argument("-o", "--output", required=True)
    go.add_argument("--force", action="store_true")
    go.set_defaults(handler=_generate_oasis)
    gg = gsub.add_parser("ogasched", help="OgaSched settings (spec §6.2): presets for the paper's figures")
    gg.add_argument("--horizon", type=int, help="slots (default by preset)")
    gg.add_argument("--seed", type=int, default=0)
    gg.add_argument("--preset", default="default",
                    help="default | fig2 | large | fig3-nodes-N | fig3-ports-N | fig3-contention-X | "
                         "fig7-{linear,log,reciprocal,poly} | tab3-T-N | tab3-rho-X | tab3-dense-X")
    gg.add_argument("--expected", action="store_true", help="solve and store the hindsight and per-slot optima")
    gg.add_argument("-o", "--output", required=True)
    gg.add_argument("--force", action="store_true")
    gg.set_defaults(handler=_generate_ogasched)
    gt = gsub.add_parser("themis", help="Themis workloads W1/W2 from the Philly trace (spec §5.3)")
    gt.add_argument("--workload", default="W1", choices=("W1", "W2"))
    gt.add_argument("--gpus", type=int, help="GPUs of a testbed-like cluster (default 64, or the --cluster's count)")
    gt.add_argument("--cluster", choices=("testbed64", "sim_hetero", "sim_256", "truth64", "gavel108"))
    gt.add_argument("--seed", type=int, default=0)
    gt.add_argument("--load", type=float, default=1.0, help="keep probability min(1, load * gpus / 156)")
    gt.add_argument("--p-net", type=float, default=0.5, help="share of network-intensive apps")
    gt.add_argument("--trace", metavar="PATH", help="Philly job CSV or Gavel trace (default: the shipped copy)")
    gt.add_argument("--trace-format", default="philly", choices=("philly", "gavel"),
                    help="philly: W1/W2 from the Philly CSV; gavel: one app per job of a Gavel trace on a "
                         "Gavel-like cluster (default gavel108; --workload, --load, --p-net, --seed do not apply)")
    gt.add_argument("--apps", type=_positive_int, metavar="N",
                    help="keep only the first N apps by arrival (default all: a full W1 has about 1,400)")
    gt.add_argument("--start", type=_nonnegative_float, default=0.0, metavar="S",
                    help="first app: the first arriving S seconds or later after the workload's start (0)")
    gt.add_argument("-o", "--output", required=True)
    gt.add_argument("--force", action="store_true")
    gt.set_defaults(handler=_generate_themis, expected=False)
    ga = gsub.add_parser("astraea", help="Astraea multi-tenant instances from the Philly trace (spec §5.1, §5.5)")
    ga.add_argument("--jobs", type=_positive_int, default=100)
    ga.add_argument("--servers", type=_positive_int, default=100)
    ga.add_argument("--users", type=_positive_int, help="the U virtual clusters with the most jobs (default all)")
    ga.add_argument("--utility", default="linear", choices=("linear", "convex"))
    ga.add_argument("--profile", default="paper", choices=("paper", "small"),
                    help="paper: §5.1's job sizes; small: sizes whose exact optimum is proven in a minute")
    ga.add_argument("--seed", type=int, default=0)
    ga.add_argument("--trace", metavar="PATH", help="Philly job CSV (default: the shipped 2017-10-01..15 window)")
    ga.add_argument("--expected", action="store_true", help="solve and store P-OFF's optima, its LP bound, UB-POOL")
    ga.add_argument("--time-limit", type=_positive_float, default=60.0, metavar="S")
    ga.add_argument("-o", "--output", required=True)
    ga.add_argument("--force", action="store_true")
    ga.set_defaults(handler=_generate_astraea)

    gs = gsub.add_parser("sow", help="SoW instances, adversarial or stochastic (truthful SoW spec §1.2, §1.4, §8)")
    gs.add_argument("--variant", default="adversarial", choices=("adversarial", "stochastic"))
    gs.add_argument("--sows", type=_positive_int, default=3, help="stochastic: SoWs in each job's distribution G_j")
    gs.add_argument("--jobs", type=_positive_int, default=20)
    gs.add_argument("--capacity", type=_positive_int, default=8, help="C nodes")
    gs.add_argument("--dmax", type=_positive_int, default=2, help="largest width d_max")
    gs.add_argument("--max-duration", type=_positive_int, default=3, help="D")
    gs.add_argument("--delta", type=_positive_int, default=6, help="Delta: rounds after birth with value")
    gs.add_argument("--max-value", type=_positive_float, default=8.0, help="V")
    gs.add_argument("--signal", default="l", choices=("l", "const"), help="sigma = l, or nothing revealed")
    gs.add_argument("--support", type=_positive_int, default=3, help="most (a, l) points per SoW")
    gs.add_argument("--load", type=_positive_float, default=1.0, help="expected demand over supply")
    gs.add_argument("--seed", type=int, default=0)
    gs.add_argument("-o", "--output", required=True)
    gs.add_argument("--force", action="store_true")
    gs.set_defaults(handler=_generate_sow, expected=False)

    from mlsched.sweep.commands import add_commands
    add_commands(sub, whole_number=_whole_number, positive_float=_positive_float)
    return p


def _study_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--algorithms", help="comma-separated (default: the system's paper comparison set)")
    p.add_argument("--system")
    p.add_argument("--variant")
    p.add_argument("--time-limit", type=_positive_float, default=60.0, metavar="S")
    p.add_argument("--no-verify", action="store_true", help="skip cross-certifying the exact solve")
    p.add_argument("--no-exact", action="store_true", help="skip the exact solve (no ratios)")
    p.add_argument("--seed", type=int, default=0)
    _run_options(p)
    p.add_argument("--quiet", "-q", action="store_true", help="no progress output")


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--lease", type=_positive_float, metavar="S", help="Themis family: GPU lease in seconds (600)")
    p.add_argument("--restart-overhead", type=_nonnegative_float, metavar="S",
                   help="Themis family: seconds a job pays when its GPU set changes (0)")


    p.add_argument("--lambda-mode", choices=("fixed", "theory"),
                   help="Astraea: rounds per batch, fixed (2) or Lemma 1's value (A1)")
    p.add_argument("--theta-scale", type=_positive_float, metavar="X", help="Astraea: theta times X (Fig. 11)")
    p.add_argument("--time-origin", choices=("arrival", "absolute"),
                   help="multi-tenant family: realized utility of t+ - r_j or of t+ (A2; default: the file's)")
    p.add_argument("--migration-cost", type=_slot_fraction, metavar="C",
                   help="gandiva_fair, hived: fraction of a slot a job loses when its allocation changes (0)")
    p.add_argument("--no-opportunistic", dest="opportunistic", action="store_const", const=False,
                   help="hived: jobs beyond the quota wait instead of running on idle servers")
    p.add_argument("--samples", type=_positive_int, metavar="N",
                   help="sow family: paired draws of realizations when they are too many to enumerate (2000)")
    p.add_argument("--exact-limit", type=_nonnegative_int, metavar="K",
                   help="sow family: enumerate every realization when there are at most K (20000), else draw --samples")
    p.add_argument("--eps", type=_unit_interval, metavar="E", help="sow family: the reduction's eps (0.2)")


def _run_option_values(args: argparse.Namespace) -> dict[str, Any]:
    return {"lease": args.lease, "restart_overhead": args.restart_overhead, "lambda_mode": args.lambda_mode,
            "theta_scale": args.theta_scale, "time_origin": args.time_origin, "samples": args.samples,
            "exact_limit": args.exact_limit, "eps": args.eps, "migration_cost": args.migration_cost,
            "opportunistic": args.opportunistic}


def _seconds(text: str, *, allow_zero: bool) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        kind = "non-negative" if allow_zero else "positive"
        raise argparse.ArgumentTypeError(f"must be a {kind} number of seconds, got {text!r}")
    return value


def _whole_number(minimum: int) -> Callable[[str], int]:
    """An argparse type: a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {text!r}")
        return value

    return parse


_positive_int = _whole_number(1)


def _slot_fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"must be in [0, 1), got {text!r}")
    return value


_nonnegative_int = _whole_number(0)


def _unit_interval(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text!r}")
    return value


def _positive_float(text: str) -> float:
    return _seconds(text, allow_zero=False)


def _nonnegative_float(text: str) -> float:
    return _seconds(text, allow_zero=True)


def _load(path: str) -> Any:
    from mlsched.instance import load
    return load(path)


def _validate(args: argparse.Namespace) -> int:
    inst = _load(args.file)
    print(f"{args.file}: valid {inst.family} instance {inst.name!r}: {inst.describe()}")
    return 0


def _instances(args: argparse.Namespace) -> int:
    from mlsched.instance import load
    from mlsched.resources import shipped_instances

    for name in shipped_instances():
        inst = load(name)
        print(f"{name}  {inst.family}: {inst.describe()}")
    return 0


def _solve(args: argparse.Namespace) -> int:
    from mlsched.model_files import solve_model_file
    from mlsched.solve import Status, write_model
    from mlsched.study import solve_exact, solve_progress
    from mlsched.systems import get_system

    if Path(args.file).suffix.lower() in (".lp", ".mps"):
        with solve_progress(args.file, enabled=not args.quiet):
            report = solve_model_file(args.file, time_limit=args.time_limit, verify=args.verify is not False)
        print(json.dumps(report.to_dict(), indent=1) if args.json else _report_line(report))
        return 0 if report.status in (Status.OPTIMAL, Status.FEASIBLE) else 1
    inst = _load(args.file)
    if args.write:
        target = Path(args.write)
        if target.suffix.lower() not in (".lp", ".mps"):
            raise UsageError(f"{target}: --write takes a file ending in .lp or .mps")
        _refuse_overwrite(args.write, args.force)
        sysm = get_system(args.system, family=inst.family)
        if sysm.build is None:
            raise UsageError(f"{sysm.name}'s exact program is not a Pyomo model; --write does not apply")
        write_model(sysm.build(inst, variant=args.variant or sysm.variants[0], relax=args.relax), target, force=True)
    with solve_progress(inst.name, enabled=not args.quiet):
        report = solve_exact(inst, system=args.system, variant=args.variant, relax=args.relax,
                             time_limit=args.time_limit, verify="auto" if args.verify is None else args.verify,
                             samples=args.samples, exact_limit=args.exact_limit)
    if args.json:
        print(json.dumps(report.to_dict(), indent=1))
    else:
        print(_report_line(report))
    return 0 if report.status in (Status.OPTIMAL, Status.FEASIBLE) else 1


def _report_line(report: Any) -> str:
    def num(x: float | None) -> str:
        return "-" if x is None else f"{x:.10g}"
    parts = [f"status {report.status.value}", f"objective {num(report.objective)}", f"bound {num(report.bound)}",
             f"gap {'-' if report.gap is None else f'{report.gap:.3g}'}",
             f"build {report.build_seconds:.2f}s", f"solve {report.solve_seconds:.2f}s", f"solver {report.solver}"]
    if report.verified is not None:
        parts.append(f"verified by {report.verifier}: {'yes' if report.verified else 'NO'}")
    line = ", ".join(parts)
    if report.status.value == "disagree":
        return f"WARNING {report.message}; reporting the best checked solution and the safer bound: {line}"
    return f"{line} ({report.message})" if report.message else line


def _run(args: argparse.Namespace) -> int:
    from mlsched.study import run_progress
    from mlsched.systems import get_system

    inst = _load(args.file)
    sysm = get_system(args.system, family=inst.family)
    budget = {} if args.time_limit is None else {"run_budget": args.time_limit}
    sysm.require(args.algorithm)
    if budget and "run_budget" not in sysm.policy_parameters(args.algorithm):
        takers = [name for name in sysm.algorithms if "run_budget" in sysm.policy_parameters(name)]
        raise UsageError(f"{args.algorithm} takes no --time-limit (a budget for the programs solved during a run; "
                         f"{sysm.name} algorithms that take one: {', '.join(takers) or 'none'})")
    policy = sysm.policy(args.algorithm, seed=args.seed, options=budget)
    with run_progress(f"{inst.name}: {args.algorithm}", enabled=not args.quiet) as progress:
        result = sysm.execute(inst, policy, progress=progress, **_run_option_values(args))
    doc = {"instance": inst.name, "algorithm": args.algorithm, **sysm.evaluate(inst, result)}
    if args.json:
        print(json.dumps(doc, indent=1))
    else:
        print(f"{args.algorithm} on {inst.name}: " + ", ".join(
            f"{k.replace('_', ' ')} {v:.6g}" if isinstance(v, float) else f"{k.replace('_', ' ')} {v}"
            for k, v in doc.items() if k not in ("instance", "algorithm")))
    return 0


def _run_study(args: argparse.Namespace, files: list[str]) -> pd.DataFrame:
    from mlsched.study import study

    instances = [_load(f) for f in files]
    algorithms = None
    if args.algorithms is not None:   # given empty (an unset variable in a script) is not the default set
        algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
        if not algorithms:
            raise UsageError(f"--algorithms {args.algorithms!r} names no algorithm; leave it out for the "
                             "system's comparison set")
    return study(instances, algorithms, system=args.system, variant=args.variant, time_limit=args.time_limit,
                 verify=not args.no_verify and "auto", exact=not args.no_exact, seed=args.seed,
                 progress=not args.quiet, run_options=_run_option_values(args))


# The SoW report's further figures (truthful SoW spec §8), where a study has them.
SOW_COLUMNS = ["ratio_ci_low", "ratio_ci_high", "ratio_bound", "lp_r", "lp_rp", "lp_e", "welfare_se", "utilities",
               "relaxed_welfare", "eviction_cost", "completed_rate", "cancelled_rate", "not_launched_rate",
               "removed_switched", "removed_not_switched", "max_overload_frequency", "delta", "relaxed_capacity",
               "oracle_samples", "eps0", "gamma", "zeta", "eta", "b_switch", "b_evict",
               "truthful_bound", "alpha_3", "alpha_e", "price_condition", "reduction_condition", "kappa", "bundles",
               "fua_value", "fua_loss", "lp_e_half", "lp_e_full", "halving_ratio", "max_fill", "realizations",
               "exact_expectation"]
_TABLE_COLUMNS = ["instance", "algorithm", "total_utility", "reward", "average_reward", "regret", "hindsight_opt",
                  "max_rho", "median_rho", "jain", "gpu_hours", "placement_score", "max_rho_slotted",
                  "welfare", "revenue", "alpha_mean", "var_alpha", "si_mean", "si_below_one", "utilization", "makespan",
                  "evicted_rate", "switched_rate", "pr", "pr_low", "pr_high", "opt",
                  "opt_bound", "ratio", "ratio_low",
                  "ratio_high", "admitted", "completed", "jobs", "check_problems", "wall_seconds", *SOW_COLUMNS]


def _print_table(frame: pd.DataFrame) -> None:
    if frame.empty:
        print("no results")
        return
    table = frame.copy()
    if "ratio_low" in table:
        table["ratio"] = ["-" if np.isnan(lo) else str(Ratio(lo, hi)) for lo, hi in zip(table["ratio_low"], table["ratio_high"])]
        sources = table["opt_bound_source"] if "opt_bound_source" in table else [None] * len(table)
        table["opt"] = [_opt_text(o, b, s, src) for o, b, s, src in
                        zip(table["opt"], table["opt_bound"], table["opt_status"], sources)]
    if "pr_low" in table:        # PR = ALG / OPT, an interval when OPT is not proven
        table["pr"] = ["-" if np.isnan(lo) else f"{pr:.4f}" if not np.isnan(pr) else f"[{lo:.4f}, {hi:.4f}]"
                       for pr, lo, hi in zip(table["pr"], table["pr_low"], table["pr_high"])]
    shown = [c for c in ["instance", "algorithm", "total_utility", "reward", "average_reward", "regret", "max_rho",
                         "jain", "gpu_hours", "placement_score", "max_rho_slotted", "welfare", "revenue", "alpha_mean",
                         "var_alpha", "si_mean", "utilization", "makespan", "evicted_rate", "switched_rate", "opt", "ratio", "pr", "admitted",
                         "completed", "wall_seconds", "two_alpha"] if c in table]
    if table["instance"].nunique() == 1:
        shown.remove("instance")
    print(table[shown].to_string(index=False, float_format=lambda x: f"{x:.4f}", na_rep="-"))


def _opt_text(opt: float | None, bound: float | None, status: str, source: str | None = None) -> str:
    if status == "optimal":
        return f"{opt:.4f}"
    lo = "-" if opt is None or (isinstance(opt, float) and np.isnan(opt)) else f"{opt:.4f}"
    hi = "-" if bound is None or (isinstance(bound, float) and np.isnan(bound)) else f"{bound:.4f}"
    known = isinstance(source, str) and source
    return f"[{lo}, {hi}] ({status}{f'; bound: {source}' if known else ''})"


def _json_rows(frame: pd.DataFrame) -> list[dict[str, Any]]:
    cols = [c for c in _TABLE_COLUMNS + ["opt_status", "opt_bound_source", "opt_verified", "opt_verifier",
                                         "opt_seconds", "two_alpha"]
            if c in frame]
    rows = frame[cols].to_dict(orient="records")
    return [{k: (None if isinstance(v, float) and not math.isfinite(v) else _plain(v)) for k, v in row.items()}
            for row in rows]


def _plain(v: Any) -> Any:
    return v.item() if isinstance(v, np.generic) else v


def _finish(frame: pd.DataFrame) -> int:
    for skip in frame.attrs.get("skipped", []):
        print(f"skipped {skip['algorithm']}: {skip['reason']}", file=sys.stderr)
    if frame.attrs.get("interrupted"):
        print(f"interrupted: {len(frame)} row(s) finished", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


def _compare(args: argparse.Namespace) -> int:
    frame = _run_study(args, [args.file])
    if args.json:
        print(json.dumps(_json_rows(frame), indent=1))
    elif args.csv:
        print(frame.to_csv(index=False), end="")
    else:
        _print_table(frame)
        _print_opt_note(frame)
    return _finish(frame)


def _print_opt_note(frame: pd.DataFrame) -> None:
    if "opt_status" in frame and not frame.empty:
        first = frame.iloc[0]
        verified = first["opt_verified"]
        if verified is None or (isinstance(verified, float) and math.isnan(verified)):
            note = "not cross-certified"
        elif bool(verified):
            note = f"cross-certified by {first['opt_verifier']}"
        else:
            note = f"NOT confirmed by {first['opt_verifier']}"
        print(f"OPT: exact optimum of the offline program, status {first['opt_status']}, {note}"
              + ("; regret against the best fixed allocation in hindsight" if "regret" in frame else "")
              + ("; ratio = ALG's slot-rounded max rho with FIFO's T_id / O1 (a slotted yardstick, not a bound "
                 "on continuous-time runs)" if "max_rho_slotted" in frame else ""))


def _study(args: argparse.Namespace) -> int:
    from mlsched.fileio import write_text_atomic

    if args.output:
        _refuse_overwrite(args.output, args.force)
    frame = _run_study(args, args.files)
    if args.output and frame.empty:
        print(f"no row finished; {args.output} not written", file=sys.stderr)
    elif args.output:
        write_text_atomic(args.output, frame.to_csv(index=False), force=True)
        print(f"wrote {len(frame)} rows to {args.output}")
    else:
        _print_table(frame)
    return _finish(frame)


def _generate_oasis(args: argparse.Namespace) -> int:
    from mlsched.instance.generators import generate_oasis

    _refuse_overwrite(args.output, args.force)
    inst = generate_oasis(jobs=args.jobs, horizon=args.horizon, seed=args.seed, profile=args.profile,
                          arrivals=args.arrivals, workers=args.workers, ps_servers=args.ps_servers)
    return _save_generated(inst, args, time_limit=args.time_limit)


def _generate_ogasched(args: argparse.Namespace) -> int:
    from mlsched.instance.generators.ogasched import generate_ogasched

    _refuse_overwrite(args.output, args.force)
    inst = generate_ogasched(args.seed, preset_name=args.preset, horizon=args.horizon)
    return _save_generated(inst, args)


def _generate_themis(args: argparse.Namespace) -> int:
    from mlsched.instance.generators.themis import generate_themis

    _refuse_overwrite(args.output, args.force)
    if args.trace_format == "gavel":
        from mlsched.instance.generators.gavel import generate_gavel

        inst = generate_gavel(trace=args.trace, cluster=args.cluster, gpus=args.gpus, apps=args.apps, start=args.start)
        return _save_generated(inst, args)
    inst = generate_themis(workload=args.workload, gpus=args.gpus, seed=args.seed, load=args.load, p_net=args.p_net,
                           trace=args.trace, cluster=args.cluster, apps=args.apps, start=args.start)
    return _save_generated(inst, args)


def _generate_astraea(args: argparse.Namespace) -> int:
    from mlsched.instance.generators.astraea import generate_astraea

    _refuse_overwrite(args.output, args.force)
    inst = generate_astraea(jobs=args.jobs, servers=args.servers, users=args.users, utility=args.utility,
                            profile=args.profile, seed=args.seed, trace=args.trace)
    return _save_generated(inst, args, time_limit=args.time_limit)


def _generate_sow(args: argparse.Namespace) -> int:
    from mlsched.instance.generators.sow import generate_sow

    _refuse_overwrite(args.output, args.force)
    inst = generate_sow(jobs=args.jobs, capacity=args.capacity, d_max=args.dmax, max_duration=args.max_duration,
                        window=args.delta, max_value=args.max_value, signal=args.signal, support=args.support,
                        load=args.load, variant=args.variant, sows=args.sows, seed=args.seed)
    return _save_generated(inst, args)


def _refuse_overwrite(path: str, force: bool) -> None:
    if Path(path).exists() and not force:
        raise UsageError(f"{path}: exists; pass --force to overwrite it")


def _save_generated(inst: Any, args: argparse.Namespace, **solve_options: Any) -> int:
    from mlsched.instance import save

    if args.expected:
        from mlsched.expected import with_expected
        inst = with_expected(inst, **solve_options)
    save(inst, args.output, force=True)
    detail = f"horizon {inst.horizon}" if hasattr(inst, "horizon") else inst.describe()
    print(f"wrote {args.output}: {inst.family} instance {inst.name!r}, {detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
