"""Sweep files: a study declared as data, validated like instance files and expanded into cells.

A sweep file is YAML (or JSON, a subset of it)::

    name: oasis-fig5                 # optional; default: the file's stem
    system: oasis                    # oasis | ogasched | themis | astraea | sow
    fixed: {jobs: 10, horizon: 10, profile: small}       # parameters shared by every cell
    grid:                            # each parameter's values; cells take every combination
      gamma1_range: [[50, 100], [10, 100], [1, 100]]
    cases:                           # optional: settings of several parameters at once
      - {workers: 2, ps_servers: 2}
      - {workers: 4, ps_servers: 4}
    seeds: [0, 1, 2, 3, 4]           # or {start: 0, count: 100}
    instances: [instances/oasis/*.json]    # instead of the generator: files, globs, shipped names
    algorithms: [oasis, fifo]        # default: the system's comparison set
    exact: {enabled: true, variant: paper, time_limit: 60, verify: auto}
    execution: {executor: processes, workers: 2, cell_time_limit: 600, retries: 1}

Parameters (the keys of ``fixed``, ``grid`` and ``cases``) are described in
:mod:`mlsched.sweep.parameters`. A **cell** is one instance -- a setting and a seed, or a file
and a seed -- with every algorithm and the exact solve, run together on one worker (the runs are
the exact solve's MIP starts). Cells are ordered case by case, then by the grid in the order its
keys are written (the last key varying fastest), then by seed.

Every problem is reported at once, one line each, ``file: field.path: what is wrong``
(:class:`mlsched.errors.SweepFileError`).
"""

from __future__ import annotations

import glob
import hashlib
import itertools
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mlsched.errors import MlschedError, SweepFileError
from mlsched.instance.fields import Fields, Problems, kind_of
from mlsched.resources import data_file, shipped_instance
from mlsched.sweep import parameters as params
from mlsched.systems import System, get_system

SYSTEMS = ("oasis", "ogasched", "themis", "astraea", "sow")
EXECUTORS = ("serial", "processes", "dask")
TOP_LEVEL = {"name", "description", "system", "fixed", "grid", "cases", "seeds", "instances", "algorithms", "exact",
             "execution"}
EXACT_KEYS = {"enabled", "variant", "time_limit", "verify"}
EXECUTION_KEYS = {"executor", "workers", "cell_time_limit", "retries", "scheduler", "scheduler_file"}
DEFAULT_TIME_LIMIT = 60.0
DEFAULT_RETRIES = 1


@dataclass(frozen=True)
class ExactOptions:
    enabled: bool = True
    variant: str | None = None
    time_limit: float | None = DEFAULT_TIME_LIMIT
    verify: bool | str = "auto"


@dataclass(frozen=True)
class Execution:
    """How to run the cells; none of it changes a cell's result (so not a cell's identity)."""

    executor: str = "processes"
    workers: int | None = None           # None: every core the process may use
    cell_time_limit: float | None = None  # seconds of wall time per attempt; None: no limit
    retries: int = DEFAULT_RETRIES       # further attempts of a failed cell within one run
    scheduler: str | None = None         # a Dask scheduler address (tcp://HOST:8786)
    scheduler_file: str | None = None    # or a Dask scheduler file


@dataclass(frozen=True)
class Cell:
    """One instance with every algorithm and the exact solve: the unit a worker runs."""

    key: str                           # content hash of what determines the result
    system: str
    seed: int
    setting: dict[str, Any]            # every parameter's value (JSON values), for the result columns
    generator: dict[str, Any] | None   # the generator's keyword arguments (without seed), or None
    instance_file: str | None          # the file (or shipped name) the instance is read from
    run_options: dict[str, Any]
    policy_options: dict[str, Any]
    algorithms: tuple[str, ...]
    exact: ExactOptions


@dataclass(frozen=True)
class SweepSpec:
    name: str
    system: str
    source: str
    cells: tuple[Cell, ...]
    algorithms: tuple[str, ...]
    exact: ExactOptions
    execution: Execution
    parameters: tuple[str, ...]        # the parameter names, in the order the file gives them
    identity: str                      # hash of everything that determines the results
    document: dict[str, Any] = field(repr=False, default_factory=dict)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and validate a sweep file (YAML or JSON), or a shipped one by name (``oasis-fig5``,
    see :func:`shipped_sweeps`) when no file of that name exists."""
    p = Path(path)
    shipped = data_file("sweeps", f"{p.name}.yaml") if not p.exists() and p.name == str(path) else None
    if shipped is not None and shipped.is_file():
        return spec_from_dict(_parse(shipped.read_text(encoding="utf-8"), str(path)), source=str(path),
                              default_name=str(path))
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SweepFileError(str(p), ["file not found"]) from None
    except IsADirectoryError:
        raise SweepFileError(str(p), ["is a directory, not a sweep file"]) from None
    except UnicodeDecodeError as exc:
        raise SweepFileError(str(p), [f"byte {exc.start}: not UTF-8 text"]) from None
    except OSError as exc:
        raise SweepFileError(str(p), [f"cannot be read ({exc.strerror})"]) from None
    return spec_from_dict(_parse(text, str(p)), source=str(p), base=p.parent, default_name=p.stem)


def shipped_sweeps() -> list[str]:
    """Names of the sweep files shipped in ``mlsched/data/sweeps`` (the papers' figures)."""
    return sorted(entry.name.removesuffix(".yaml") for entry in data_file("sweeps").iterdir()
                  if entry.name.endswith(".yaml"))


def _parse(text: str, source: str) -> Any:
    import yaml

    class UniqueKeyLoader(yaml.SafeLoader):
        pass

    def mapping(loader: yaml.SafeLoader, node: yaml.MappingNode) -> dict[Any, Any]:
        seen: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                mark = key_node.start_mark
                raise SweepFileError(source, [f"line {mark.line + 1} column {mark.column + 1}: "
                                              f"repeats the key {key!r}"])
            seen[key] = loader.construct_object(value_node, deep=True)
        return seen

    UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    try:
        return yaml.load(text, Loader=UniqueKeyLoader)  # noqa: S506 -- a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise SweepFileError(source, [f"{where}invalid YAML ({problem})"]) from None


def spec_from_dict(data: Any, *, source: str = "<dict>", base: str | Path = ".",
                   default_name: str = "sweep") -> SweepSpec:
    """Validate a parsed sweep document; file patterns are read relative to ``base``."""
    problems = Problems()
    top = Fields(data, "", problems)
    if problems.items:   # not a mapping: nothing more to say
        raise SweepFileError(source, problems.items)
    top.unknown_keys(TOP_LEVEL)
    name = top.string("name", default=default_name)
    top.string("description", default=None)
    system_name = top.string("system", choices=SYSTEMS)
    if problems.items or system_name not in SYSTEMS:
        raise SweepFileError(source, problems.items)
    sysm = get_system(system_name)
    algorithms = _algorithms(top, sysm)
    exact = _exact(top.obj("exact", default={}), sysm)
    execution = _execution(top.obj("execution", default={}))
    files = _instance_files(top, Path(base)) if top.has("instances") else None
    seeds = _seeds(top)
    catalogue = params.catalogue(sysm, algorithms, generated=files is None)
    settings, order = _settings(top, catalogue, generated=files is None, system=sysm.name)
    if problems.items:
        raise SweepFileError(source, problems.items)
    cells = tuple(_cell(sysm.name, setting, catalogue, seed, file, algorithms, exact)
                  for setting in settings for file in (files or [None]) for seed in seeds)
    document = {"system": sysm.name, "settings": settings, "seeds": seeds, "algorithms": list(algorithms),
                "exact": exact.__dict__, "instances": [h for _, h in files] if files else None}
    return SweepSpec(name=name, system=sysm.name, source=source, cells=cells, algorithms=algorithms, exact=exact,
                     execution=execution, parameters=tuple(order), identity=_digest(document), document=document)


def _algorithms(top: Fields, sysm: System) -> tuple[str, ...]:
    if not top.has("algorithms"):
        return tuple(sysm.default_algorithms)
    names = top.string_list("algorithms")
    for i, name in enumerate(names):
        if name not in sysm.algorithms:
            top.problems.add(f"algorithms[{i}]", f"unknown algorithm {name!r} for {sysm.name}; "
                                                 f"choose from {', '.join(sysm.algorithms)}")
    return tuple(name for name in names if name in sysm.algorithms)


def _exact(f: Fields, sysm: System) -> ExactOptions:
    f.unknown_keys(EXACT_KEYS)
    enabled = _boolean(f, "enabled", True)
    variant = f.string("variant", default=None)
    if variant is not None and variant not in sysm.variants:
        f.problems.add("exact.variant", f"unknown variant {variant!r} of {sysm.name}; "
                                        f"choose from {', '.join(sysm.variants)}")
    limit = f.raw("time_limit", DEFAULT_TIME_LIMIT)
    if limit is not None:   # null: no time limit
        limit = f.number("time_limit", default=DEFAULT_TIME_LIMIT, greater_than=0)
    verify = f.raw("verify", "auto")
    if verify != "auto" and not isinstance(verify, bool):
        f.problems.add("exact.verify", f"must be auto, true or false, got {kind_of(verify)}")
    return ExactOptions(enabled=enabled, variant=variant, time_limit=limit, verify=verify)


def _execution(f: Fields) -> Execution:
    f.unknown_keys(EXECUTION_KEYS)
    executor = f.string("executor", default="processes", choices=EXECUTORS)
    workers = f.number("workers", default=None, minimum=1, integer=True)
    limit = f.number("cell_time_limit", default=None, greater_than=0)
    retries = f.number("retries", default=DEFAULT_RETRIES, minimum=0, integer=True)
    scheduler = f.string("scheduler", default=None)
    scheduler_file = f.string("scheduler_file", default=None)
    if scheduler is not None and scheduler_file is not None:
        f.problems.add("execution.scheduler_file", "give a scheduler address or a scheduler file, not both")
    return Execution(executor=executor, workers=workers, cell_time_limit=limit, retries=retries,
                     scheduler=scheduler, scheduler_file=scheduler_file)


def _boolean(f: Fields, key: str, default: bool) -> bool:
    value = f.raw(key, default)
    if not isinstance(value, bool):
        f.problems.add(f"{f.path}.{key}" if f.path else key, f"must be true or false, got {kind_of(value)}")
        return default
    return value


def _seeds(top: Fields) -> list[int]:
    value = top.raw("seeds", [0])
    if isinstance(value, dict):
        f = top.obj("seeds")
        f.unknown_keys({"start", "count"})
        start = f.number("start", default=0, minimum=0, integer=True)
        count = f.number("count", minimum=1, integer=True)
        return list(range(start, start + count))
    if not isinstance(value, list) or not value:
        top.problems.add("seeds", f"must be a non-empty list of integers or {{start, count}}, got {kind_of(value)}")
        return [0]
    seeds = []
    for i, seed in enumerate(value):
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            top.problems.add(f"seeds[{i}]", f"must be an integer >= 0, got {kind_of(seed)}")
        else:
            seeds.append(seed)
    if len(set(seeds)) != len(seeds):
        top.problems.add("seeds", "must not repeat a seed")
    return seeds


def _instance_files(top: Fields, base: Path) -> list[tuple[str, str]]:
    """(path or shipped name, content hash) of every instance the patterns name, in order."""
    patterns = top.string_list("instances")
    found: list[tuple[str, str]] = []
    for i, pattern in enumerate(patterns):
        full = pattern if os.path.isabs(pattern) else str(base / pattern)
        matches = sorted(glob.glob(full, recursive=True))
        if matches:
            found += [(m, _file_digest(Path(m).read_bytes())) for m in matches if Path(m).is_file()]
            continue
        shipped = shipped_instance(pattern)
        if shipped is None:
            top.problems.add(f"instances[{i}]", f"{pattern!r} matches no file (nor a shipped instance)")
        else:
            found.append((pattern, _file_digest(shipped.read_bytes())))
    return found


def _settings(top: Fields, catalogue: dict[str, params.Parameter], *, generated: bool,
              system: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Every combination of ``fixed``, ``cases`` and ``grid`` (canonical values), and the
    parameter names in the order the file gives them."""
    fixed = _parameter_values(top, "fixed", catalogue, generated, system)
    grid: dict[str, list[Any]] = {}
    g = top.obj("grid", default={})
    for key, values in g.data.items():
        if not isinstance(values, list) or not values:
            top.problems.add(f"grid.{key}", f"must be a non-empty list of values, got {kind_of(values)}")
            continue
        checked = [_parameter_value(top.problems, f"grid.{key}[{i}]", key, v, catalogue, generated, system)
                   for i, v in enumerate(values)]
        grid[key] = checked
        if key in fixed:
            top.problems.add(f"grid.{key}", "is also set in fixed")
    cases: list[dict[str, Any]] = []
    if top.has("cases"):
        for i, case in enumerate(top.objects("cases", min_items=1)):
            values = _parameter_values(case, None, catalogue, generated, system, path=f"cases[{i}]")
            for key in values:
                if key in fixed or key in grid:
                    top.problems.add(f"cases[{i}].{key}", f"is also set in {'fixed' if key in fixed else 'grid'}")
            cases.append(values)
    order = list(dict.fromkeys([*fixed, *(k for c in cases for k in c), *grid]))
    combos = [dict(zip(grid, values)) for values in itertools.product(*grid.values())]
    settings = [{**fixed, **case, **combo} for case in (cases or [{}]) for combo in combos]
    for name, parameter in catalogue.items():
        if parameter.required and not all(name in s for s in settings):
            top.problems.add(name, f"the {system} generator needs it: set it in fixed, grid or every case")
    return settings, order


def _parameter_values(f: Fields, key: str | None, catalogue: dict[str, params.Parameter], generated: bool,
                      system: str, path: str | None = None) -> dict[str, Any]:
    section = f.obj(key, default={}) if key is not None else f
    where = path or key or ""
    return {name: _parameter_value(f.problems, f"{where}.{name}", name, value, catalogue, generated, system)
            for name, value in section.data.items()}


def _parameter_value(problems: Problems, path: str, name: str, value: Any, catalogue: dict[str, params.Parameter],
                     generated: bool, system: str) -> Any:
    parameter = catalogue.get(name)
    if parameter is None:
        source = f"the {system} generator, its runs or the chosen algorithms" if generated else \
            f"{system} runs or the chosen algorithms (instances come from files)"
        problems.add(path, f"unknown parameter of {source}; expected one of: {', '.join(sorted(catalogue))}")
        return value
    if parameter.refused_by:
        problems.add(path, f"a run option that {', '.join(parameter.refused_by)} "
                           f"refuse{'s' if len(parameter.refused_by) == 1 else ''}: leave it out or choose "
                           "algorithms that take it")
        return value
    problem = params.check_value(parameter, value)
    if problem:
        problems.add(path, problem)
        return value
    coerced = params.coerce(parameter, value)
    return list(coerced) if isinstance(coerced, tuple) else coerced


def _cell(system: str, setting: dict[str, Any], catalogue: dict[str, params.Parameter], seed: int,
          file: tuple[str, str] | None, algorithms: tuple[str, ...], exact: ExactOptions) -> Cell:
    by_kind: dict[str, dict[str, Any]] = {params.GENERATOR: {}, params.RUN: {}, params.POLICY: {}}
    for name, value in setting.items():
        parameter = catalogue[name]
        by_kind[parameter.kind][name] = params.coerce(parameter, value)
    identity = {"system": system, "setting": setting, "seed": seed, "file": file[1] if file else None,
                "algorithms": list(algorithms), "exact": exact.__dict__}
    return Cell(key=_digest(identity)[:20], system=system, seed=seed, setting=dict(setting),
                generator=None if file else by_kind[params.GENERATOR], instance_file=file[0] if file else None,
                run_options=by_kind[params.RUN], policy_options=by_kind[params.POLICY], algorithms=algorithms,
                exact=exact)


def _digest(document: Any) -> str:
    return _file_digest(json.dumps(document, sort_keys=True, separators=(",", ":")).encode())


def _file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def as_spec(spec: SweepSpec | str | Path | dict[str, Any]) -> SweepSpec:
    """A spec from a spec, a sweep file or a parsed document."""
    if isinstance(spec, SweepSpec):
        return spec
    if isinstance(spec, (str, Path)):
        return load_spec(spec)
    if isinstance(spec, dict):
        return spec_from_dict(spec)
    raise MlschedError(f"a sweep is a sweep file, a dict or a SweepSpec, not {type(spec).__name__}")
