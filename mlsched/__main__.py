"""``python -m mlsched``: the ``mlsched`` command, Ctrl-C handling included (:mod:`mlsched.entry`).

The handler is installed whatever the interpreter inherited, as the console script does: a
process started with SIGINT ignored (a job a non-interactive shell put in the background) would
otherwise run on through the user's interrupt."""

import sys

from mlsched.entry import main

if __name__ == "__main__":
    sys.exit(main())
