"""Ctrl-C at random moments in the first seconds of an ``mlsched`` command: count the tracebacks.

    python tools/interrupt_tries.py [--tries 50] [--within 3] [--seed 0] [COMMAND ARGS ...]

The default command is ``mlsched validate oasis/fig5-small-seed0``. Each try starts the command,
sends SIGINT after a delay drawn uniformly from [0, within) seconds, and sorts the outcome: the
command finished before the signal (its own exit code), interrupted quietly (exit 130, the one
line ``interrupted`` or the command's own lines, no traceback), ended by the signal itself with
no output (before the interpreter installs any handler; a shell shows status 130), or a contract
violation (a traceback, or any other exit code). Prints the counts and every violation's stderr.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import numpy as np

EXIT_INTERRUPTED = 130


def command_line(args: list[str]) -> list[str]:
    mlsched = shutil.which("mlsched")
    launcher = [mlsched] if mlsched else [sys.executable, "-m", "mlsched.entry"]
    return launcher + (args or ["validate", "oasis/fig5-small-seed0"])


def one_try(command: list[str], delay: float) -> tuple[str, str, float]:
    """The outcome, the stderr, and when the signal went (seconds after the start)."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(max(0.0, delay - (time.perf_counter() - started)))
    sent = time.perf_counter() - started
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=600)
    if "Traceback" in err or "Traceback" in out:
        return "traceback", err, sent
    if process.returncode == EXIT_INTERRUPTED:
        return "interrupted quietly", err, sent
    if process.returncode == -signal.SIGINT and not err:
        return "ended by the signal, silent", err, sent
    if process.returncode in (0, 1):
        return "finished first", err, sent
    return f"exit {process.returncode}", err, sent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=50)
    parser.add_argument("--within", type=float, default=3.0, help="latest signal, seconds after the start")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("command", nargs=argparse.REMAINDER, help="mlsched's arguments")
    args = parser.parse_args()
    command = command_line(args.command)
    delays = np.random.default_rng(args.seed).uniform(0.0, args.within, args.tries)
    outcomes: Counter = Counter()
    violations = []
    for delay in delays:
        outcome, err, sent = one_try(command, float(delay))
        outcomes[outcome] += 1
        if outcome not in ("interrupted quietly", "finished first", "ended by the signal, silent"):
            violations.append((sent, outcome, err))
    print(f"{args.tries} SIGINTs within {args.within:g} s of `{' '.join(command)}`: "
          + ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items())) + f"; violations {len(violations)}")
    for sent, outcome, err in violations:
        print(f"  at {sent:.3f} s: {outcome}\n" + "\n".join(f"    {line}" for line in err.splitlines()[-6:]))


if __name__ == "__main__":
    main()
