"""KAI's CRD schemas per modelled version, as JSON Schema validators that judge a manifest as the API server does.

The schemas are upstream's own `openAPIV3Schema`s (reconciler/data/crds/, written by tools/kai_crds.py). The API
server's structural-schema rules differ from plain JSON Schema in ways that decide what a manifest in Git loses,
so each schema is converted once per (version, kind, apiVersion) and its validator kept:

- an object with `properties` and no `additionalProperties` or `x-kubernetes-preserve-unknown-fields` *prunes*
  any other field silently: it gets `additionalProperties: false`, so the field is reported instead;
- `x-kubernetes-int-or-string` is an integer or a string (its `pattern` applies to the string form);
- `null` is accepted everywhere: the API server prunes a null field that is not `nullable` (it counts as absent);
- `format` is not checked: the API server's format set (`int32`, `quantity`, …) is not JSON Schema's, and for
  the formats both know it accepts what a YAML reader already produced;
- `metadata` is the API server's own ObjectMeta validation, not the CRD's (`type: object` there), and `status`
  is not written from Git: both are left open;
- OpenAPI 3.0's boolean `exclusiveMinimum` is draft 4's, and a whole float (`2.0`) is an integer, as Go's JSON
  decoding of a YAML number has it.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from typing import cast

from jsonschema import Draft4Validator
from jsonschema.protocols import Validator
from jsonschema.validators import extend

from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.model.values import parse_version

CRD_DATA = "data/crds"
KAI_GROUPS = ("scheduling.run.ai", "kai.scheduler")
_OPEN: JSONObject = {}
_KEPT = (
    "type",
    "properties",
    "items",
    "additionalProperties",
    "enum",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "pattern",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "required",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "anyOf",
    "allOf",
    "oneOf",
    "not",
)
_OPEN_UNDER_ROOT = ("metadata", "status")


def _is_integer(_checker: object, instance: object) -> bool:
    return (isinstance(instance, int) and not isinstance(instance, bool)) or (
        isinstance(instance, float) and instance.is_integer()
    )


_TYPES = Draft4Validator.TYPE_CHECKER.redefine("integer", _is_integer)
# the stubs leave `extend` unannotated; it returns a validator class
_extend = cast("Callable[..., type[Validator]]", extend)
_KubeValidator = _extend(Draft4Validator, type_checker=_TYPES)


@dataclass(frozen=True)
class ServedKind:
    version: str  # the KAI release, e.g. v0.17.1
    kind: str
    api_version: str  # group/version


@functools.cache
def _index() -> dict[str, JSONObject]:
    text = resources.files("reconciler").joinpath(f"{CRD_DATA}/index.json").read_text()
    return cast("dict[str, JSONObject]", json.loads(text))


@functools.cache
def schema_versions() -> tuple[str, ...]:
    """The KAI releases whose CRD schemas are modelled, oldest first."""
    return tuple(sorted(_index(), key=lambda v: parse_version(v) or (0, 0, 0)))


def crd_version_for(pin: str) -> str:
    """The modelled release whose CRDs stand for `pin`: the pin itself; else of its minor line the newest not
    after it, or the oldest after it (patch releases rarely change a CRD, and never take a field back); else
    the newest older release (the oldest when the pin is older than every model)."""
    versions = schema_versions()
    wanted = parse_version(pin)
    if wanted is None:
        return versions[-1]
    parsed = [(v, parse_version(v) or (0, 0, 0)) for v in versions]
    same_minor = [(v, n) for v, n in parsed if n[:2] == wanted[:2]]
    not_after = [v for v, n in same_minor if n <= wanted]  # the pin itself when it is modelled
    if not_after:
        return not_after[-1]
    if same_minor:
        return same_minor[0][0]
    older = [v for v, n in parsed if n < wanted]
    return older[-1] if older else versions[0]


def served_api_versions(version: str, kind: str) -> tuple[str, ...]:
    kinds = _index()[version]["kinds"]
    served = kinds.get(kind) if isinstance(kinds, dict) else None
    return tuple(served) if isinstance(served, dict) else ()


def is_kai_kind(api_version: str, kind: str) -> bool:
    """Whether `kind` of `api_version`'s group is a CRD of KAI's in any modelled release."""
    group = api_version.split("/", 1)[0]
    return group in KAI_GROUPS and any(served_api_versions(v, kind) for v in schema_versions())


def validator(served: ServedKind) -> Validator | None:
    """The validator of `served`, or None when that release does not serve the kind at that apiVersion."""
    file = _schema_file(served)
    return _validator(file) if file is not None else None


def _schema_file(served: ServedKind) -> str | None:
    kinds = _index()[served.version]["kinds"]
    files = kinds.get(served.kind) if isinstance(kinds, dict) else None
    file = files.get(served.api_version) if isinstance(files, dict) else None
    return file if isinstance(file, str) else None


def _upstream_schema(file: str) -> JSONValue:
    return cast("JSONValue", json.loads(resources.files("reconciler").joinpath(f"{CRD_DATA}/{file}").read_text()))


@functools.cache
def _validator(file: str) -> Validator:
    schema = to_json_schema(_upstream_schema(file))
    properties = schema.get("properties")
    if isinstance(properties, dict):
        schema["properties"] = {**properties, **{key: _OPEN for key in _OPEN_UNDER_ROOT if key in properties}}
    return _KubeValidator(schema)


def to_json_schema(node: JSONValue) -> JSONObject:
    """One OpenAPI v3 structural schema node as the JSON Schema (draft 4) that judges as the API server does."""
    if not isinstance(node, dict):
        return {}
    out: JSONObject = {key: node[key] for key in _KEPT if key in node}
    for key in ("properties",):
        if isinstance(node.get(key), dict):
            out[key] = {name: to_json_schema(sub) for name, sub in cast("JSONObject", node[key]).items()}
    for key in ("items", "additionalProperties", "not"):
        if isinstance(node.get(key), dict):
            out[key] = to_json_schema(node[key])
    for key in ("anyOf", "allOf", "oneOf"):
        if isinstance(node.get(key), list):
            out[key] = [to_json_schema(sub) for sub in cast("list[JSONValue]", node[key])]
    if node.get("x-kubernetes-int-or-string") is True:
        out.pop("anyOf", None)
        out["type"] = ["integer", "string"]
    open_fields = (
        node.get("x-kubernetes-preserve-unknown-fields") is True or node.get("x-kubernetes-embedded-resource") is True
    )
    if "properties" in out and "additionalProperties" not in out and not open_fields:
        out["additionalProperties"] = False
    if isinstance(out.get("type"), str):
        out["type"] = [out["type"], "null"]
    elif isinstance(out.get("type"), list):
        out["type"] = [*cast("list[JSONValue]", out["type"]), "null"]
    if isinstance(out.get("enum"), list):
        out["enum"] = [*cast("list[JSONValue]", out["enum"]), None]
    return out


def property_names(version: str, kind: str, api_version: str, path: tuple[str | int, ...]) -> Iterator[str]:
    """The field names the schema of `kind` allows in the mapping at `path` (list indexes step into items)."""
    found = validator(ServedKind(version, kind, api_version))
    node = cast("JSONValue", found.schema) if found is not None else {}
    for part in path:
        if not isinstance(node, dict):
            return
        if isinstance(part, int):
            node = node.get("items")
            continue
        properties = node.get("properties")
        if isinstance(properties, dict) and part in properties:
            node = properties[part]
        else:
            node = node.get("additionalProperties")
    if isinstance(node, dict) and isinstance(node.get("properties"), dict):
        yield from cast("JSONObject", node["properties"])


def field_paths(version: str, kind: str, api_version: str) -> frozenset[str]:
    """Every field path the schema names (`spec.resources.gpu.quota`; `[]` steps into a list's items, `*` into a
    map's values), for comparing what two releases serve (upgrade notes)."""
    file = _schema_file(ServedKind(version, kind, api_version))
    paths: set[str] = set()
    if file is not None:
        _walk_fields(_upstream_schema(file), "", paths)
    return frozenset(paths)


def _walk_fields(node: JSONValue, prefix: str, paths: set[str]) -> None:
    if not isinstance(node, dict):
        return
    properties = node.get("properties")
    if isinstance(properties, dict):
        for name, sub in properties.items():
            path = f"{prefix}.{name}" if prefix else name
            paths.add(path)
            _walk_fields(sub, path, paths)
    if isinstance(node.get("items"), dict):
        _walk_fields(node["items"], f"{prefix}[]", paths)
    if isinstance(node.get("additionalProperties"), dict):
        _walk_fields(node["additionalProperties"], f"{prefix}.*", paths)
