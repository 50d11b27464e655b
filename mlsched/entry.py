"""The ``mlsched`` command's entry point: Ctrl-C is quiet from the first instant.

Importing the command (numpy, pandas, Pyomo, the solvers) takes seconds, and an interrupt then
would print Python's KeyboardInterrupt traceback. This module imports only the standard library;
its SIGINT handler is installed before anything heavy is imported and answers by phase:

- starting (imports, argument parsing): print one line and exit 130 at once;
- running (the command): raise KeyboardInterrupt, which the command turns into its finished
  rows and exit 130 (see :mod:`mlsched.cli`);
- done (the command returned): ignored (SIG_IGN, which Python keeps while it shuts down), the
  command's exit code stands.

What remains before this module runs is the interpreter's own start and the launcher's first
import; a signal there ends the process by the signal itself (status 130 in a shell), or, once
Python's default handler is in place, with its traceback (tools/interrupt_tries.py counts both).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import FrameType

EXIT_INTERRUPTED = 130
_running = False


def _on_interrupt(signum: int, frame: FrameType | None) -> None:
    if _running:
        raise KeyboardInterrupt
    os.write(2, b"interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def main(argv: Sequence[str] | None = None) -> int:
    global _running
    _running = False
    signal.signal(signal.SIGINT, _on_interrupt)
    from mlsched.cli import main as command   # the slow imports

    try:
        _running = True
        code = command(argv)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except KeyboardInterrupt:   # arrived before the command's own handling began, or as it returned
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("interrupted", file=sys.stderr)
        code = EXIT_INTERRUPTED
    return code


if __name__ == "__main__":
    sys.exit(main())
