"""Errors a user can act on: each prints as one line naming the file and the field."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def option_flags(options: Mapping[str, Any], names: Sequence[str]) -> str:
    """The command-line spelling of ``names`` as given in ``options``, for messages: ``lambda_mode``
    is ``--lambda-mode``, a switch given as False (``opportunistic``) is ``--no-opportunistic``."""
    return ", ".join(("--no-" if options.get(name) is False else "--") + name.replace("_", "-") for name in names)


class MlschedError(Exception):
    """Base class of every error mlsched raises on purpose (the CLI maps it to exit code 2)."""


class FileProblems(MlschedError):
    """An input file (or dict) is invalid.

    ``problems`` holds one ``"field.path: what is wrong"`` entry per problem found; ``str()`` gives
    one line per problem, each prefixed with the source (file name or ``<dict>``).
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = list(problems)
        super().__init__("\n".join(f"{source}: {p}" for p in self.problems))


class InstanceError(FileProblems):
    """An instance file (or dict) is invalid."""


class SweepFileError(FileProblems):
    """A sweep file (or dict) is invalid."""


class UsageError(MlschedError):
    """A call was made with arguments that cannot work (unknown algorithm, bad option value)."""


class NotRunnable(UsageError):
    """An algorithm cannot run on this instance or configuration (e.g. the stochastic SoW mechanism
    when no fractional unit allocation fits the supply). A study leaves it out of its default set,
    with the reason; named, it is an error like any other."""
