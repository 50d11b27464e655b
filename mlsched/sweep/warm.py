"""Loading every module a cell may need, once, in a process that starts cells (the forkserver of
:mod:`mlsched.sweep.guard`): each cell's process is then forked with them already in memory."""

from __future__ import annotations

import mlsched.study  # noqa: F401 -- imported for its modules
import mlsched.sweep.cells  # noqa: F401
from mlsched.sweep.parameters import generator
from mlsched.sweep.spec import SYSTEMS
from mlsched.systems import get_system

for _system in SYSTEMS:
    get_system(_system)
    generator(_system)
