"""Fuzz the instance loader and the CLI with mutated instance files.

    python tools/fuzz_instances.py [--cases 10000] [--seed 0]

Each case mutates a valid document (tests/data, tests/regressions and instances/) and checks the
contract of mlsched.fuzz: a valid instance, or one line per problem naming the file and field
with exit code 2; never a traceback, a hang or another exit code. Prints counts per outcome and
per mutation, and every contract violation.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from mlsched.cli import main as cli_main
from mlsched.errors import InstanceError
from mlsched.fuzz import mutate
from mlsched.instance import load

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    seeds = [ROOT / "tests" / "data" / "t1.json", *sorted((ROOT / "tests" / "regressions").glob("*.json")),
             *sorted((ROOT / "instances").rglob("*.json"))]
    docs = [json.loads(p.read_text()) for p in seeds]
    outcomes: Counter = Counter()
    by_mutation: Counter = Counter()
    violations = []
    slowest = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.json"
        for case in range(args.cases):
            rng = np.random.default_rng([args.seed, case])
            names, data = mutate(docs[case % len(docs)], rng, int(rng.integers(1, 4)))
            by_mutation.update(names.split("+"))
            path.write_bytes(data)
            tick = time.perf_counter()
            try:
                load(path)
                outcome = "valid"
            except InstanceError as exc:
                lines = str(exc).splitlines()
                outcome = "rejected"
                if not all(line.startswith(f"{path}: ") for line in lines):
                    violations.append((case, names, "message does not name the file"))
            except Exception as exc:  # a contract violation, reported below
                outcome = "crash"
                violations.append((case, names, f"loader raised {type(exc).__name__}: {exc}"))
            err = io.StringIO()
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
                try:
                    code = cli_main(["validate", str(path)])
                except Exception as exc:  # a contract violation, reported below
                    code = -1
                    violations.append((case, names, f"CLI raised {type(exc).__name__}: {exc}"))
            slowest = max(slowest, time.perf_counter() - tick)
            expected = 0 if outcome == "valid" else 2
            if code != expected:
                violations.append((case, names, f"CLI exit {code}, expected {expected}"))
            outcomes[outcome] += 1
    print(f"{args.cases} cases from {len(docs)} seed documents: " +
          ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) +
          f"; contract violations {len(violations)}; slowest case {slowest * 1e3:.1f} ms")
    print("mutations applied: " + ", ".join(f"{k} {v}" for k, v in sorted(by_mutation.items())))
    for case, names, what in violations[:50]:
        print(f"  case {case} ({names}): {what}")


if __name__ == "__main__":
    main()
