"""The layers stay apart, read from the source's imports (every module, transitively, the package
``__init__`` files an import runs included):

- the checkers in ``mlsched/sim`` never reach an algorithm, a baseline or a formulation: they judge
  a schedule or run record from the instance alone;
- the simulators never reach an algorithm or a baseline (a family's physics lives with the family);
- no formulation reaches an online algorithm;
- ``mlsched.instance`` reaches no solver and nothing of formulations, online, baselines or sim;
- nothing in the library imports the command line;
- the imports inside ``mlsched/sim`` form no circle.
"""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mlsched"
SOLVERS = ("pyomo", "highspy", "cvxpy", "pyscipopt")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def packages_of(name: str) -> list[str]:
    """The package __init__ modules importing ``name`` runs (mlsched, mlsched.sim, ...)."""
    parts = name.split(".")
    return [".".join(parts[:k]) for k in range(1, len(parts)) if ".".join(parts[:k]) in MODULES]


@cache
def direct_imports(name: str) -> frozenset[str]:
    """Everything ``name`` imports anywhere in its source (module level or inside functions)."""
    tree = ast.parse(MODULES[name].read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names
                         if f"{node.module}.{alias.name}" in MODULES)
    return frozenset(found)


@cache
def reach(name: str, *, with_packages: bool = True) -> frozenset[str]:
    """Every module ``name`` imports, transitively (external modules by their full name); ``name``
    itself only if an import circle leads back to it."""
    seen: set[str] = set()
    todo = [name]
    while todo:
        current = todo.pop()
        for target in direct_imports(current) if current in MODULES else ():
            for step in (*(packages_of(target) if with_packages else ()), target):
                if step not in seen:
                    seen.add(step)
                    todo.append(step)
    return frozenset(seen)


def offending(name: str, prefixes: tuple[str, ...]) -> list[str]:
    return sorted(m for m in reach(name) if m.startswith(prefixes))


CHECKERS = sorted(n for n in MODULES if n.startswith("mlsched.sim.") and "check" in n.rsplit(".", 1)[-1])
ENGINES = sorted(n for n in MODULES if n.startswith("mlsched.sim.") and "engine" in n.rsplit(".", 1)[-1])


def test_the_walk_sees_the_layers():
    assert "mlsched.sim.check" in CHECKERS and "mlsched.sim.event_check" in CHECKERS
    assert "mlsched.sim.engine" in ENGINES and "mlsched.sim.event_engine" in ENGINES
    assert "mlsched.online.themis.rho" in reach("mlsched.online.themis.policy")   # the walk follows imports
    assert "mlsched.instance" in reach("mlsched.sim.event_check")                 # and runs package __init__s


@pytest.mark.parametrize("checker", CHECKERS)
def test_checkers_reach_no_algorithm_baseline_or_formulation(checker):
    assert offending(checker, ("mlsched.online", "mlsched.baselines", "mlsched.formulations")) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_simulators_reach_no_algorithm_or_baseline(engine):
    assert offending(engine, ("mlsched.online", "mlsched.baselines")) == []


@pytest.mark.parametrize("formulation", sorted(n for n in MODULES if n.startswith("mlsched.formulations")))
def test_formulations_reach_no_online_algorithm(formulation):
    assert offending(formulation, ("mlsched.online",)) == []


@pytest.mark.parametrize("module", sorted(n for n in MODULES if n.startswith("mlsched.instance")
                                          and not n.startswith("mlsched.instance.generators")))
def test_instance_family_reaches_no_solver_and_no_upper_layer(module):
    assert offending(module, SOLVERS + ("mlsched.formulations", "mlsched.online", "mlsched.baselines",
                                        "mlsched.sim", "mlsched.solve")) == []


# The console script's launcher (and ``python -m mlsched``): it installs the SIGINT handler, then
# hands over to the command line.
COMMAND_LINE = ("mlsched.cli", "mlsched.entry", "mlsched.__main__")


def test_nothing_imports_the_command_line():
    assert [n for n in MODULES if n not in COMMAND_LINE and "mlsched.cli" in reach(n)] == []


def test_no_import_circle_in_sim():
    """Module to module (a package's __init__ importing its own modules is no circle)."""
    sim = [n for n in MODULES if n.startswith("mlsched.sim.")]
    for module in sim:
        around = reach(module, with_packages=False)
        assert module not in around, f"{module} imports itself through {sorted(around & set(sim))}"
