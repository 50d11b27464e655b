"""Fuzz the instance loader and the CLI with mutated instance files and model files.

    python tools/fuzz_instances.py [--cases 10000] [--model-cases 1000] [--seed 0]

Each instance case mutates a valid document (tests/data, tests/regressions, instances/ and the
parseable hostile files of tests/data/hostile/instances) and checks the contract of mlsched.fuzz:
a valid instance, or one line per problem naming the file and field with exit code 2; never a
traceback, a hang or another exit code. The hostile instance files are also checked as they are.

Each model case mutates an ``.lp`` file (tests/data/hostile/models and tests/regressions) and runs
``mlsched solve`` on it (cross-certified, within a 5 s limit): exit 0 or 1 with one status line
that prints no solver infinity (1e+20) and no NaN, or exit 2 with one line naming the file. The
hostile model files are also solved as they are, with and without --verify.

Prints counts per outcome and per mutation, and every contract violation.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from mlsched.cli import main as cli_main
from mlsched.errors import InstanceError
from mlsched.fuzz import mutate, mutate_model
from mlsched.instance import load

ROOT = Path(__file__).resolve().parents[1]
HOSTILE = ROOT / "tests" / "data" / "hostile"
NOT_A_NUMBER = re.compile(r"\b(?:nan|inf|-?1e\+20)\b", re.IGNORECASE)


def cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(argv)
    return code, out.getvalue(), err.getvalue()


def check_instance(path: Path) -> tuple[str, list[str]]:
    """The loader's and `mlsched validate`'s outcome on ``path`` and the contract's violations."""
    violations = []
    try:
        load(path)
        outcome = "valid"
    except InstanceError as exc:
        outcome = "rejected"
        if not all(line.startswith(f"{path}: ") for line in str(exc).splitlines()):
            violations.append("message does not name the file")
    except Exception as exc:  # a contract violation, reported below
        outcome = "crash"
        violations.append(f"loader raised {type(exc).__name__}: {exc}")
    try:
        code, _, _ = cli(["validate", str(path)])
    except Exception as exc:  # a contract violation, reported below
        code = -1
        violations.append(f"CLI raised {type(exc).__name__}: {exc}")
    expected = 0 if outcome == "valid" else 2
    if code != expected:
        violations.append(f"CLI exit {code}, expected {expected}")
    return outcome, violations


def check_model(path: Path, *options: str) -> tuple[str, list[str]]:
    """`mlsched solve`'s outcome on a model file and the contract's violations."""
    try:
        code, out, err = cli(["solve", str(path), "--time-limit", "5", *options])
    except Exception as exc:  # a contract violation, reported below
        return "crash", [f"CLI raised {type(exc).__name__}: {exc}"]
    if code == 2:
        ok = out == "" and err.count("\n") == 1 and err.startswith(f"{path}: ")
        return "refused", [] if ok else [f"exit 2 without one line naming the file: {err!r}"]
    if code not in (0, 1):
        return f"exit {code}", [f"exit {code}: {err!r}"]
    status = out.split(",")[0].removeprefix("status ") if out.startswith("status ") else "disagree"
    problems = []
    if out.count("\n") != 1 or err:
        problems.append(f"not one status line: {out!r} {err!r}")
    shown = out.replace("infeasible", "")
    if NOT_A_NUMBER.search(shown):
        problems.append(f"prints a solver infinity or NaN: {out.strip()}")
    return status, problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--model-cases", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    hostile_instances = sorted((HOSTILE / "instances").glob("*.json"))
    hostile_models = sorted((HOSTILE / "models").iterdir())
    seeds = [ROOT / "tests" / "data" / "t1.json", *sorted((ROOT / "tests" / "regressions").glob("*.json")),
             *sorted((ROOT / "instances").rglob("*.json")), *hostile_instances]
    docs = []
    for p in seeds:
        with contextlib.suppress(ValueError, RecursionError):   # the hostile ones need not parse
            docs.append(json.loads(p.read_text()))
    model_seeds = [p.read_text(errors="replace") for p in [*hostile_models, *sorted((ROOT / "tests" / "regressions").glob("*.lp"))]
                   if p.suffix == ".lp" and p.stat().st_size > 0]
    outcomes: Counter = Counter()
    by_mutation: Counter = Counter()
    violations: list[tuple[str, str]] = []
    slowest = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.json"
        for case in range(args.cases):
            rng = np.random.default_rng([args.seed, case])
            names, data = mutate(docs[case % len(docs)], rng, int(rng.integers(1, 4)))
            by_mutation.update(names.split("+"))
            path.write_bytes(data)
            tick = time.perf_counter()
            outcome, problems = check_instance(path)
            slowest = max(slowest, time.perf_counter() - tick)
            outcomes[outcome] += 1
            violations += [(f"case {case} ({names})", p) for p in problems]
        print(f"{args.cases} instance cases from {len(docs)} seed documents: " +
              ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) +
              f"; slowest case {slowest * 1e3:.1f} ms")
        print("mutations applied: " + ", ".join(f"{k} {v}" for k, v in sorted(by_mutation.items())))
        as_is: Counter = Counter()
        for hostile in hostile_instances:
            outcome, problems = check_instance(hostile)
            as_is[outcome] += 1
            violations += [(hostile.name, p) for p in problems]
        print(f"{len(hostile_instances)} hostile instance files as they are: "
              + ", ".join(f"{k} {v}" for k, v in sorted(as_is.items())))
        models: Counter = Counter()
        for hostile in hostile_models:
            for options in (("--verify",), ("--no-verify",)):
                outcome, problems = check_model(hostile, *options)
                models[outcome] += 1
                violations += [(f"{hostile.name} {options[0]}", p) for p in problems]
        print(f"{len(hostile_models)} hostile model files as they are, with and without --verify: "
              + ", ".join(f"{k} {v}" for k, v in sorted(models.items())))
        mutated: Counter = Counter()
        model_path = Path(tmp) / "case.lp"
        slowest = 0.0
        for case in range(args.model_cases):
            rng = np.random.default_rng([args.seed, 1, case])
            model_path.write_bytes(mutate_model(model_seeds[case % len(model_seeds)], rng))
            tick = time.perf_counter()
            outcome, problems = check_model(model_path)
            slowest = max(slowest, time.perf_counter() - tick)
            mutated[outcome] += 1
            violations += [(f"model case {case}", p) for p in problems]
        print(f"{args.model_cases} mutated model files from {len(model_seeds)} seeds: "
              + ", ".join(f"{k} {v}" for k, v in sorted(mutated.items())) + f"; slowest case {slowest:.2f} s")
    print(f"contract violations {len(violations)}")
    for where, what in violations[:50]:
        print(f"  {where}: {what}")


if __name__ == "__main__":
    main()
