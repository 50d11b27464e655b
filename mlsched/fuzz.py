"""Mutations of valid instance documents and model files, for fuzzing the loader and the CLI.

Each instance mutation takes a parsed document and a random generator and returns the bytes of a
mutated file: keys dropped or duplicated, values replaced by wrong types, negative, zero, NaN,
huge or non-finite numbers, lists emptied, family and format changed, the text truncated or
made non-UTF-8. The contract checked on every result: the loader returns a valid instance or
raises InstanceError whose every line names the file and a field; the CLI exits 0 or 2 and
never prints a traceback.

:func:`mutate_model` does the like to the text of an ``.lp`` file: a number replaced by NaN, an
infinity, a huge or tiny one; a line dropped or repeated; a section keyword swapped; the text
truncated or bytes corrupted. The contract of ``mlsched solve`` on the result: exit 0 or 1 with one
status line that prints no solver infinity and no NaN, or exit 2 with one line naming the file.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

import numpy as np

Path_ = list[Any]

REPLACEMENTS: list[Any] = [
    None, True, False, 0, -1, -1e9, 1e308, 10**30, 0.5, "", "x", "1", [], [1], {}, {"a": 1},
    float("nan"), float("inf"), float("-inf"), 2**63, -(2**63),
]


def _paths(doc: Any, prefix: Path_ | None = None) -> list[Path_]:
    prefix = prefix or []
    out = [prefix] if prefix else []
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _paths(value, prefix + [key])
    elif isinstance(doc, list):
        for index, value in enumerate(doc):
            out += _paths(value, prefix + [index])
    return out


def _get_parent(doc: Any, path: Path_) -> tuple[Any, Any]:
    target = doc
    for key in path[:-1]:
        target = target[key]
    return target, path[-1]


def _dump(doc: Any) -> bytes:
    return json.dumps(doc, allow_nan=True).encode("utf-8")


def drop_key(doc: Any, rng: np.random.Generator) -> bytes:
    paths = [p for p in _paths(doc) if isinstance(_get_parent(doc, p)[0], dict)]
    if not paths:
        return replace_value(doc, rng)
    parent, key = _get_parent(doc, paths[rng.integers(len(paths))])
    del parent[key]
    return _dump(doc)


def duplicate_key(doc: Any, rng: np.random.Generator) -> bytes:
    text = _dump(doc).decode()
    keys = [p[-1] for p in _paths(doc) if isinstance(p[-1], str)]
    if not keys:
        return replace_value(doc, rng)
    key = keys[rng.integers(len(keys))]
    value = json.dumps(REPLACEMENTS[rng.integers(len(REPLACEMENTS))], allow_nan=True)
    marker = f'"{key}": '
    return text.replace(marker, f'"{key}": {value}, {marker}', 1).encode()


def replace_value(doc: Any, rng: np.random.Generator) -> bytes:
    paths = _paths(doc)
    if not paths:   # an empty or scalar document: replace it whole
        return _dump(REPLACEMENTS[rng.integers(len(REPLACEMENTS))])
    parent, key = _get_parent(doc, paths[rng.integers(len(paths))])
    parent[key] = copy.deepcopy(REPLACEMENTS[rng.integers(len(REPLACEMENTS))])
    return _dump(doc)


def scale_number(doc: Any, rng: np.random.Generator) -> bytes:
    paths = [p for p in _paths(doc) if isinstance(_get_parent(doc, p)[0][p[-1]], (int, float))
             and not isinstance(_get_parent(doc, p)[0][p[-1]], bool)]
    if not paths:
        return replace_value(doc, rng)
    parent, key = _get_parent(doc, paths[rng.integers(len(paths))])
    factor = [-1, 0, 1e-300, 1e300, 1e6, 1.5][rng.integers(6)]
    parent[key] = parent[key] * factor
    return _dump(doc)


def empty_list(doc: Any, rng: np.random.Generator) -> bytes:
    paths = [p for p in _paths(doc) if isinstance(_get_parent(doc, p)[0][p[-1]], list)]
    if not paths:      # an earlier mutation left no list
        return replace_value(doc, rng)
    parent, key = _get_parent(doc, paths[rng.integers(len(paths))])
    parent[key] = []
    return _dump(doc)


def change_header(doc: Any, rng: np.random.Generator) -> bytes:
    if not isinstance(doc, dict):
        return replace_value(doc, rng)
    key = ["family", "format"][rng.integers(2)]
    doc[key] = ["unknown", "mlsched/v2", "", 7, None][rng.integers(5)]
    return _dump(doc)


def truncate(doc: Any, rng: np.random.Generator) -> bytes:
    data = _dump(doc)
    return data[: int(rng.integers(0, len(data)))]


def corrupt_bytes(doc: Any, rng: np.random.Generator) -> bytes:
    data = bytearray(_dump(doc))
    for _ in range(int(rng.integers(1, 4))):
        data[int(rng.integers(len(data)))] = int(rng.choice([0x80, 0xFF, 0xC3, 0x00, 0x7B]))
    return bytes(data)


MUTATIONS: dict[str, Callable[[Any, np.random.Generator], bytes]] = {
    "drop_key": drop_key, "duplicate_key": duplicate_key, "replace_value": replace_value,
    "scale_number": scale_number, "empty_list": empty_list, "change_header": change_header,
    "truncate": truncate, "corrupt_bytes": corrupt_bytes,
}


def mutate(doc: Any, rng: np.random.Generator, rounds: int = 1) -> tuple[str, bytes]:
    """Apply ``rounds`` random mutations (text-level ones end the chain); returns (names, bytes)."""
    current = copy.deepcopy(doc)
    names = []
    data = _dump(current)
    for _ in range(rounds):
        name = list(MUTATIONS)[rng.integers(len(MUTATIONS))]
        names.append(name)
        data = MUTATIONS[name](current, rng)
        try:
            current = json.loads(data)
        except (ValueError, UnicodeDecodeError):
            break
    return "+".join(names), data


MODEL_NUMBERS = ["nan", "inf", "-inf", "1e30", "-1e30", "1e400", "1e-300", "0", "-1", "1e19", "1e20"]
MODEL_KEYWORDS = ["maximize", "minimize", "subject to", "bounds", "general", "binary", "semi-continuous", "end", ""]
_NUMBER = re.compile(r"(?<![A-Za-z_])\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")


def mutate_model(text: str, rng: np.random.Generator) -> bytes:
    """One random mutation of the text of an ``.lp`` file."""
    lines = text.splitlines()
    kind = int(rng.integers(6))
    if kind == 0:
        numbers = list(_NUMBER.finditer(text))
        if numbers:
            found = numbers[int(rng.integers(len(numbers)))]
            text = text[:found.start()] + MODEL_NUMBERS[int(rng.integers(len(MODEL_NUMBERS)))] + text[found.end():]
            return text.encode()
    if kind == 1 and len(lines) > 1:
        del lines[int(rng.integers(len(lines)))]
    elif kind == 2:
        at = int(rng.integers(len(lines)))
        lines.insert(at, lines[at])
    elif kind == 3:
        lines[int(rng.integers(len(lines)))] = MODEL_KEYWORDS[int(rng.integers(len(MODEL_KEYWORDS)))]
    elif kind == 4:
        return text.encode()[: int(rng.integers(0, len(text) + 1))]
    elif kind == 5:
        data = bytearray(text.encode())
        data[int(rng.integers(len(data)))] = int(rng.choice([0x80, 0xFF, 0x00, 0x5B, 0x5C]))
        return bytes(data)
    return ("\n".join(lines) + "\n").encode()
