"""The parameters a sweep can set for a system, and the instance generator behind them.

Every key of a sweep's ``fixed``, ``grid`` and ``cases`` names exactly one parameter, looked up in
this order:

- a **generator** parameter: a keyword of the system's instance generator (``jobs``, ``p_net``,
  ...; not ``seed``, which comes from the sweep's seeds, nor ``name``);
- a **run** option: what the system's simulation takes (:attr:`mlsched.systems.System.run_options`,
  e.g. Themis's ``lease`` and ``restart_overhead``), refused when a chosen algorithm's runs refuse it
  (SoW's ``eps`` with the baselines);
- a **policy** option: a keyword of at least one chosen algorithm's factory (e.g. Themis's
  ``fairness_knob``), handed to the algorithms that take it.

Values are checked against the parameter's type hint where it has one; a value the hint accepts
but the generator refuses (an unknown profile name) fails its cells with the generator's message.
"""

from __future__ import annotations

import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from mlsched.instance.fields import kind_of
from mlsched.systems import System

SEED_AND_NAME = frozenset({"seed", "name"})   # set by the sweep, never by a parameter
GENERATOR = "generator"
RUN = "run"
POLICY = "policy"


@dataclass(frozen=True)
class Parameter:
    name: str
    kind: str                  # GENERATOR, RUN or POLICY
    hint: Any = None           # the type hint values must satisfy (None: any plain value)
    required: bool = False     # a generator parameter without a default
    refused_by: tuple[str, ...] = ()   # a run option: the chosen algorithms whose runs refuse it


def generator(system: str) -> Callable[..., Any]:
    """The instance generator of ``system`` (each paper's settings; see its module)."""
    if system == "oasis":
        from mlsched.instance.generators.oasis import generate_oasis
        return generate_oasis
    if system == "ogasched":
        from mlsched.instance.generators.ogasched import generate_ogasched
        return generate_ogasched
    if system == "themis":
        from mlsched.instance.generators.themis import generate_themis
        return generate_themis
    if system == "astraea":
        from mlsched.instance.generators.astraea import generate_astraea
        return generate_astraea
    from mlsched.instance.generators.sow import generate_sow
    return generate_sow


def catalogue(sysm: System, algorithms: Sequence[str], *, generated: bool) -> dict[str, Parameter]:
    """Every parameter a sweep of ``sysm`` over ``algorithms`` may set; generator parameters only
    when its instances are ``generated`` (not read from files)."""
    found: dict[str, Parameter] = {}
    if generated:
        for parameter in _generator_parameters(sysm.name):
            found[parameter.name] = parameter
    run_hints = _hints(sysm.run)
    for name in sysm.run_options:
        refused_by = tuple(a for a in algorithms if not sysm.takes_run_option(a, name))
        found.setdefault(name, Parameter(name, RUN, run_hints.get(name), refused_by=refused_by))
    for algorithm in algorithms:
        for name in sorted(sysm.policy_parameters(algorithm) - SEED_AND_NAME):
            found.setdefault(name, Parameter(name, POLICY))
    return found


def _generator_parameters(system: str) -> list[Parameter]:
    make = generator(system)
    hints = _hints(make)
    out = []
    for name, p in inspect.signature(make).parameters.items():
        if name in SEED_AND_NAME or p.kind is p.VAR_KEYWORD:
            continue
        out.append(Parameter(name, GENERATOR, hints.get(name), required=p.default is p.empty))
    if system == "ogasched":   # its **overrides: any field of the preset's Setting
        from mlsched.instance.generators.ogasched import Setting

        setting_hints = _hints(Setting)
        taken = {p.name for p in out}
        out += [Parameter(f.name, GENERATOR, setting_hints.get(f.name)) for f in fields(Setting) if f.name not in taken]
    return out


def _hints(obj: Any) -> dict[str, Any]:
    try:
        return typing.get_type_hints(obj)
    except Exception:   # an unresolvable annotation: values are then checked by the callee only
        return {}


def check_value(parameter: Parameter, value: Any) -> str | None:
    """What is wrong with ``value`` for ``parameter`` (None when nothing is)."""
    if parameter.hint is None or parameter.hint is Any:
        return None if _plain(value) else f"must be a number, string, boolean or list of them, got {kind_of(value)}"
    if _accepts(parameter.hint, value):
        return None
    return f"must be {_describe(parameter.hint)}, got {kind_of(value)}"


def coerce(parameter: Parameter, value: Any) -> Any:
    """``value`` in the form the callee expects: a tuple for tuple hints, a float for float hints."""
    hint = parameter.hint
    options = typing.get_args(hint) if _is_union(hint) else (hint,)
    if isinstance(value, list) and any(typing.get_origin(h) is tuple for h in options):
        return tuple(value)
    if isinstance(value, int) and not isinstance(value, bool) and float in options and int not in options:
        return float(value)
    return value


def _is_union(hint: Any) -> bool:
    return typing.get_origin(hint) in (typing.Union, types.UnionType)


def _accepts(hint: Any, value: Any) -> bool:
    if _is_union(hint):
        return any(_accepts(h, value) for h in typing.get_args(hint))
    if hint is type(None):
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint in (str, Path):
        return isinstance(value, str) and bool(value)
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if not isinstance(value, list):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_accepts(args[0], v) for v in value)
        return len(value) == len(args) and all(_accepts(a, v) for a, v in zip(args, value))
    return _plain(value)


def _describe(hint: Any) -> str:
    if _is_union(hint):
        return " or ".join(_describe(h) for h in typing.get_args(hint))
    names = {type(None): "null", bool: "true or false", int: "an integer", float: "a number", str: "a string",
             Path: "a path"}
    if hint in names:
        return names[hint]
    if typing.get_origin(hint) is tuple:
        args = typing.get_args(hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s"
        return f"a list of {len(args)} values ({', '.join(_describe(a) for a in args)})"
    return "a plain value"


def _plain(value: Any) -> bool:
    if isinstance(value, list):
        return all(_plain(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, str))
