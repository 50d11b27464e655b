"""Reading a Pyomo model's current values as a point: which rows, bounds or integralities it breaks."""

from __future__ import annotations

import pyomo.environ as pyo


def violated_rows(model: pyo.ConcreteModel, tol: float = 1e-6) -> list[str]:
    """Every row, variable bound or integrality the model's current values break (a variable
    without a value counts as broken)."""
    bad = []
    for con in model.component_data_objects(pyo.Constraint, active=True):
        body = pyo.value(con.body)
        if (con.has_lb() and body < pyo.value(con.lower) - tol) or (con.has_ub() and body > pyo.value(con.upper) + tol):
            bad.append(con.name)
    for var in model.component_data_objects(pyo.Var, active=True):
        if var.value is None or (var.lb is not None and var.value < var.lb - tol) \
                or (var.ub is not None and var.value > var.ub + tol) \
                or (var.is_integer() and abs(var.value - round(var.value)) > tol):
            bad.append(var.name)
    return bad
