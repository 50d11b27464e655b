"""A small validating reader for JSON-like dicts that records every problem with its field path.

Each accessor returns a usable placeholder after recording a problem, so one pass over a file
reports all of its problems (one line each) instead of stopping at the first.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

_MISSING = object()


class Problems:
    """Collects ``"path: message"`` strings for one instance source."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, path: str, message: str) -> None:
        self.items.append(f"{path}: {message}" if path else message)


class Fields:
    """A view on one JSON object at ``path`` that validates the values it hands out."""

    def __init__(self, data: Any, path: str, problems: Problems) -> None:
        self.path = path
        self.problems = problems
        if not isinstance(data, dict):
            problems.add(path or "(top level)", f"must be an object, got {kind_of(data)}")
            data = {}
        self.data: dict[str, Any] = data

    def _child(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str, default: Any = _MISSING) -> Any:
        if key not in self.data:
            if default is _MISSING:
                self.problems.add(self._child(key), "is required")
                return None
            return default
        return self.data[key]

    def number(
        self,
        key: str,
        *,
        default: Any = _MISSING,
        minimum: float | None = None,
        greater_than: float | None = None,
        maximum: float | None = None,
        integer: bool = False,
    ) -> Any:
        """A finite number (an int when ``integer``), checked against the given bounds."""
        placeholder = 0 if integer else 0.0
        if key not in self.data:
            return placeholder if default is _MISSING and self.raw(key) is None else default
        value = self.data[key]
        path = self._child(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problems.add(path, f"must be {'an integer' if integer else 'a number'}, got {kind_of(value)}")
            return placeholder
        if (integer or isinstance(value, int)) and abs(value) > 2**53:
            self.problems.add(path, f"is too large (|value| > 2^53), got {value:.3e}")
            return placeholder
        if not math.isfinite(value):
            self.problems.add(path, f"must be finite, got {value}")
            return placeholder
        if integer:
            if float(value) != int(value):
                self.problems.add(path, f"must be an integer, got {value}")
                return placeholder
            value = int(value)
        if minimum is not None and value < minimum:
            self.problems.add(path, f"must be >= {minimum:g}, got {value:g}")
        if greater_than is not None and value <= greater_than:
            self.problems.add(path, f"must be > {greater_than:g}, got {value:g}")
        if maximum is not None and value > maximum:
            self.problems.add(path, f"must be <= {maximum:g}, got {value:g}")
        return value

    def string(self, key: str, *, default: Any = _MISSING, choices: tuple[str, ...] | None = None) -> Any:
        if key not in self.data:
            return "" if default is _MISSING and self.raw(key) is None else default
        value = self.data[key]
        path = self._child(key)
        if not isinstance(value, str) or not value:
            self.problems.add(path, f"must be a non-empty string, got {kind_of(value)}")
            return ""
        if choices is not None and value not in choices:
            self.problems.add(path, f"must be one of {', '.join(choices)}; got {value!r}")
        return value

    def obj(self, key: str, *, default: Any = _MISSING) -> Fields:
        value = self.raw(key, {} if default is not _MISSING else _MISSING)
        return Fields(value if value is not None else {}, self._child(key), self.problems)

    def objects(self, key: str, *, min_items: int = 0) -> Iterator[Fields]:
        """Each element of the list at ``key`` as a Fields view (``key[i]`` paths)."""
        value = self.raw(key)
        path = self._child(key)
        if value is None:
            return
        if not isinstance(value, list):
            self.problems.add(path, f"must be a list, got {kind_of(value)}")
            return
        if len(value) < min_items:
            self.problems.add(path, f"must have at least {min_items} item(s), got {len(value)}")
        for index, item in enumerate(value):
            yield Fields(item, f"{path}[{index}]", self.problems)

    def string_list(self, key: str, *, min_items: int = 1) -> list[str]:
        value = self.raw(key)
        path = self._child(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.problems.add(path, "must be a list of non-empty strings")
            return []
        if len(value) < min_items:
            self.problems.add(path, f"must have at least {min_items} item(s)")
        if len(set(value)) != len(value):
            self.problems.add(path, "must not repeat names")
        return list(value)

    def free_objects(self, *keys: str) -> list[dict[str, Any]]:
        """Optional objects read as they are (e.g. ``expected``, ``meta``); ``{}`` when absent."""
        out = []
        for key in keys:
            value = self.raw(key, {})
            if not isinstance(value, dict):
                self.problems.add(self._child(key), "must be an object")
                value = {}
            out.append(value)
        return out

    def unknown_keys(self, allowed: set[str]) -> None:
        for key in self.data:
            if key not in allowed:
                self.problems.add(self._child(key), f"unknown field (expected one of: {', '.join(sorted(allowed))})")


def with_optional(doc: dict[str, Any], **fields: Any) -> dict[str, Any]:
    """``doc`` with each given field added unless it is None or empty (a document's optional tail)."""
    doc.update({key: value for key, value in fields.items() if value is not None and value != {}})
    return doc


def repeated_names(problems: Problems, key: str, names: list[str]) -> None:
    """One problem per entry of the list ``key`` whose name an earlier entry already took."""
    first: dict[str, int] = {}
    for i, name in enumerate(names):
        if name in first:
            problems.add(f"{key}[{i}].name", f"repeats the name of {key}[{first[name]}] ({name!r})")
        first.setdefault(name, i)


def kind_of(value: Any) -> str:
    """How a value reads in a problem message ('the number 3', 'a list', ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    if isinstance(value, str):
        return f"the string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
