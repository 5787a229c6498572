"""Raw JSON and YAML data, typed where it enters the program, and the narrowing that reads it.

Whatever comes from a file, the cluster, a Git host or the policy engine is `JSONValue` until code has
checked its shape: a parsed YAML document (the readers give Helm's view: string keys, scalars, lists and
mappings), a page of a cluster list, a report read back. Code reading a field narrows it with `isinstance`
or with the helpers below, which keep the `x.get(key) or {}` idiom's meaning: absent, null or empty is
empty, and anything else that is not of the expected shape is a `TypeError` (callers that read hand-edited
input catch it and name the object).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

JSONScalar: TypeAlias = str | int | float | bool | None
JSONValue: TypeAlias = "JSONScalar | list[JSONValue] | dict[str, JSONValue]"
JSONObject: TypeAlias = dict[str, JSONValue]
JSONArray: TypeAlias = list[JSONValue]
# JSON we write (a report, the facts document, a SARIF log): read-only, so any mapping of strings to it and
# any list or tuple of it will do -- a `dict[str, bool]` is one, where it is not a JSONObject (dicts are
# invariant). (bytes would pass as a Sequence of ints; no JSON encoder takes them.)
JSONLike: TypeAlias = "JSONScalar | Sequence[JSONLike] | Mapping[str, JSONLike]"


def mapping_at(parent: Mapping[str, JSONValue], key: str) -> JSONObject:
    """`parent[key]` as a mapping: absent, null or empty is `{}`; a value of another shape is a TypeError."""
    value = parent.get(key)
    if isinstance(value, dict):
        return value
    if not value:
        return {}
    raise TypeError(f"{key} is a {type(value).__name__}, not a mapping")


def list_at(parent: Mapping[str, JSONValue], key: str) -> JSONArray:
    """`parent[key]` as a list: absent, null or empty is `[]`; a value of another shape is a TypeError."""
    value = parent.get(key)
    if isinstance(value, list):
        return value
    if not value:
        return []
    raise TypeError(f"{key} is a {type(value).__name__}, not a list")


def objects_at(parent: Mapping[str, JSONValue], key: str) -> list[JSONObject]:
    """`parent[key]` as a list of mappings (the items of a list, the conditions of a pod), as `list_at` reads it."""
    return [expect_object(item, f"an item of {key}") for item in list_at(parent, key)]


def as_object(value: JSONValue) -> JSONObject:
    """`value` when it is a mapping, else `{}`: for optional structure that may be missing or malformed."""
    return value if isinstance(value, dict) else {}


def expect_object(value: JSONValue, what: str) -> JSONObject:
    """`value`, which must be a mapping (a file we ship, an answer whose shape was checked before)."""
    if not isinstance(value, dict):
        raise TypeError(f"{what} is a {type(value).__name__}, not a mapping")
    return value
