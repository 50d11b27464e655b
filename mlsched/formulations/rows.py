"""Helpers shared by the Pyomo builders."""

from __future__ import annotations

import pyomo.environ as pyo


def row(relation: object) -> object:
    """A constraint rule's value; a relation between constants (e.g. a job no server can host,
    whose sums are empty) is skipped when true and kept as infeasible when false."""
    if relation is True:
        return pyo.Constraint.Skip
    if relation is False:
        return pyo.Constraint.Infeasible
    return relation
