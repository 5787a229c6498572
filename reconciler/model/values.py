"""Helm values semantics: chart defaults of a pinned version, deep merge, numbers as Go sees them."""

from __future__ import annotations

import copy
import functools
import re
from importlib import resources
from typing import overload

from reconciler.core.jsonvalue import JSONObject, JSONValue, expect_object

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)")


def parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.match(str(text).strip())
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@overload
def deep_merge(base: JSONObject, override: JSONObject) -> JSONObject: ...
@overload
def deep_merge(base: JSONValue, override: JSONValue) -> JSONValue: ...


def deep_merge(base: JSONValue, override: JSONValue) -> JSONValue:
    """Helm's coalesce: maps merge recursively, anything else (lists too) is replaced, null deletes.

    The result shares nothing with either input (both may be cached documents) and keeps base's key order,
    then override's new keys. Each value is copied once (a fleet merges the chart defaults 300 times).
    """
    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy_values(override)
    merged: JSONObject = {}
    for key, value in base.items():
        if key not in override:
            merged[key] = copy_values(value)
        elif override[key] is not None:
            new = override[key]
            merged[key] = (
                deep_merge(value, new) if isinstance(new, dict) and isinstance(value, dict) else copy_values(new)
            )
    for key, value in override.items():
        if key not in base and value is not None:
            merged[key] = copy_values(value)
    return merged


# Values shared, not copied: immutable, and told apart by their exact type (a subclass takes the long way).
_ATOMS = frozenset((str, int, float, bool, type(None)))


def copy_values(value: JSONValue) -> JSONValue:
    """A deep copy of YAML data (dicts, lists, scalars), several times faster than copy.deepcopy. A scalar inside
    a collection is kept without a call: a 5 MB values file's copy went from 0.18 s to 0.07 s."""
    if type(value) is dict:
        return {k: v if type(v) in _ATOMS else copy_values(v) for k, v in value.items()}
    if type(value) is list:
        return [v if type(v) in _ATOMS else copy_values(v) for v in value]
    if type(value) in _ATOMS:
        return value
    return _copy_subclass(value)


def _copy_subclass(value: JSONValue) -> JSONValue:
    """A mapping, list or scalar of a subclass (a ruamel CommentedMap), copied into the plain types."""
    if isinstance(value, dict):
        return {k: copy_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copy_values(v) for v in value]
    if isinstance(value, str | int | float):
        return value
    return copy.deepcopy(value)


@functools.cache
def shipped_chart_versions() -> tuple[str, ...]:
    folder = resources.files("reconciler").joinpath("data/chart-values")
    names = [p.name[:-5] for p in folder.iterdir() if p.name.endswith(".yaml")]
    return tuple(sorted(names, key=lambda v: parse_version(v) or (0, 0, 0)))


def defaults_version_for(pin: str) -> str:
    """The shipped chart-values file closest to `pin`: exact, else newest of the same minor, else newest older."""
    wanted = parse_version(pin)
    versions = shipped_chart_versions()
    if wanted is None:
        return versions[-1]
    parsed = {v: parse_version(v) for v in versions}
    for version, number in parsed.items():
        if number == wanted:
            return version
    same_minor = [v for v, n in parsed.items() if n and n[:2] == wanted[:2]]
    if same_minor:
        return same_minor[-1]
    older = [v for v, n in parsed.items() if n and n < wanted]
    return older[-1] if older else versions[0]


@functools.cache
def chart_defaults(version: str) -> JSONObject:
    """Parsed once per process (every cluster of a run, and the shard's era check, read it). Read-only:
    callers merge over it with `deep_merge`, which copies."""
    from reconciler.yamlio.document import load_document

    text = resources.files("reconciler").joinpath(f"data/chart-values/{version}.yaml").read_text()
    return expect_object(load_document(text, f"chart-values/{version}.yaml").data, f"chart-values/{version}.yaml")


def as_number(value: object) -> float:
    """Queue numbers decode as Go float64: absent or null is 0; anything non-numeric is NaN (flagged)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return float("nan")
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return float("nan")
