"""Label and field selectors with the real server's syntax and matching rules.

Label selectors follow apimachinery/pkg/labels: ``k=v``, ``k==v``, ``k!=v``, ``k``, ``!k``,
``k in (a,b)``, ``k notin (a,b)``, ``k>1``, ``k<1``; commas AND requirements. ``!=`` and ``notin``
also match objects that lack the label, exactly like the real server.

Field selectors follow apimachinery/pkg/fields: ``f=v``, ``f==v``, ``f!=v`` with ``\\`` escapes, but
each kind only supports the fields its registry strategy exposes; anything else is a 400.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from ._errors import ApiError, bad_request

Obj = dict[str, Any]


# How objects are stored (see _store.py for why only bytes): the object's JSON, its labels as a JSON
# object, and its field-selector values as a JSON list in ``field_names()`` order.
Indexed = tuple[bytes, bytes, bytes]
Predicate = Callable[[Indexed], bool]

_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_SET_RE = re.compile(rf"^({_KEY})\s+(in|notin)\s*\((.*)\)$")
_CMP_RE = re.compile(rf"^({_KEY})\s*(!=|==|=|>|<)\s*([-A-Za-z0-9_.]*)$")
_EXISTS_RE = re.compile(rf"^(!?)\s*({_KEY})$")


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    op: str  # one of: in, notin, exists, !, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        if self.op == "in":
            return present and labels[self.key] in self.values
        if self.op == "notin":
            return not present or labels[self.key] not in self.values
        if self.op == "exists":
            return present
        if self.op == "!":
            return not present
        return present and _compare_int(labels[self.key], self.op, int(self.values[0]))


def _compare_int(value: str, op: str, bound: int) -> bool:
    # Non-integer label values never match gt/lt, as in labels.Requirement.Matches.
    try:
        number = int(value)
    except ValueError:
        return False
    return number > bound if op == "gt" else number < bound


def _split_top_level(text: str) -> list[str]:
    """Split on commas that are not inside ``( )`` so ``k in (a,b),x`` stays two requirements."""
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current.append(char)
    parts.append("".join(current))
    return parts


def parse_label_selector(text: str) -> list[LabelRequirement]:
    if not text.strip():
        return []
    return [_parse_label_requirement(part.strip(), text) for part in _split_top_level(text)]


def _parse_label_requirement(part: str, whole: str) -> LabelRequirement:
    if match := _SET_RE.match(part):
        values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
        if not values:
            raise _label_error(whole, "for 'in', 'notin' operators, values set can't be empty")
        return LabelRequirement(match.group(1), match.group(2), values)
    if match := _CMP_RE.match(part):
        key, op, value = match.groups()
        if op in (">", "<"):
            if not re.fullmatch(r"-?\d+", value):
                raise _label_error(whole, f"for 'Gt', 'Lt' operators, the value must be an integer: {value!r}")
            return LabelRequirement(key, "gt" if op == ">" else "lt", (value,))
        return LabelRequirement(key, "notin" if op == "!=" else "in", (value,))
    if match := _EXISTS_RE.match(part):
        return LabelRequirement(match.group(2), "!" if match.group(1) else "exists")
    raise _label_error(whole, f"found '{part}', expected: identifier, '!', 'in', 'notin', '=', '==', '!='")


def _label_error(whole: str, why: str) -> ApiError:
    return bad_request(f'unable to parse requirement: {why} (labelSelector "{whole}")')


def label_predicate(text: str) -> Predicate | None:
    """``None`` for an empty selector so callers can skip filtering and keep remainingItemCount."""
    requirements = parse_label_selector(text)
    if not requirements:
        return None

    def matches(obj: Indexed) -> bool:
        labels = orjson.loads(obj[1])
        return all(req.matches(labels) for req in requirements)

    return matches


# --- field selectors -------------------------------------------------------------------------------


def _path(*keys: str) -> Callable[[Obj], str]:
    """Read a nested field as the string the server's field set would hold ('' when unset)."""

    def read(obj: Obj) -> str:
        value: Any = obj
        try:  # try/except is free on the hot path (3.11) and this runs ~10x per stored pod
            for key in keys:
                value = value[key]
        except (KeyError, TypeError, IndexError):
            return ""
        if value is True or value is False:
            return "true" if value else "false"
        return "" if value is None else value if isinstance(value, str) else str(value)

    return read


_META_FIELDS: dict[str, Callable[[Obj], str]] = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}

# Per (group, plural): the fields each built-in registry strategy adds (pkg/registry/core/*/strategy.go).
_KIND_FIELDS: dict[tuple[str, str], dict[str, Callable[[Obj], str]]] = {
    ("", "pods"): {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "spec.hostNetwork": lambda obj: _path("spec", "hostNetwork")(obj) or "false",
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    ("", "nodes"): {"spec.unschedulable": lambda obj: _path("spec", "unschedulable")(obj) or "false"},
    ("", "secrets"): {"type": _path("type")},
    ("", "namespaces"): {"status.phase": _path("status", "phase")},
    ("", "events"): {
        "involvedObject.kind": _path("involvedObject", "kind"),
        "involvedObject.namespace": _path("involvedObject", "namespace"),
        "involvedObject.name": _path("involvedObject", "name"),
        "involvedObject.uid": _path("involvedObject", "uid"),
        "involvedObject.apiVersion": _path("involvedObject", "apiVersion"),
        "involvedObject.resourceVersion": _path("involvedObject", "resourceVersion"),
        "involvedObject.fieldPath": _path("involvedObject", "fieldPath"),
        "reason": _path("reason"),
        "reportingComponent": _path("reportingComponent"),
        "source": _path("source", "component"),
        "type": _path("type"),
    },
}


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _parse_field_term(term: str) -> tuple[str, str, str]:
    """Find the first unescaped operator; ``!=`` and ``==`` win over ``=`` at the same position."""
    index = 0
    while index < len(term):
        if term[index] == "\\":
            index += 2
            continue
        for op in ("!=", "==", "="):
            if term.startswith(op, index):
                return term[:index], "!=" if op == "!=" else "=", _unescape(term[index + len(op) :])
        index += 1
    raise bad_request(f"invalid selector: '{term}'; can't understand '{term}'")


def field_predicate(text: str, group: str, plural: str, builtin: bool) -> Predicate | None:
    terms = [t for t in _split_unescaped(text, ",") if t.strip()]
    if not terms:
        return None
    names = field_names(group, plural)
    checks: list[tuple[int, str, str]] = []
    for term in terms:
        field, op, value = _parse_field_term(term.strip())
        if field not in names:
            raise _unsupported_field(field, builtin)
        checks.append((names.index(field), op, value))

    def matches(obj: Indexed) -> bool:
        values = orjson.loads(obj[2])
        return all((values[index] == value) == (op == "=") for index, op, value in checks)

    return matches


def _supported(group: str, plural: str) -> dict[str, Callable[[Obj], str]]:
    return {**_META_FIELDS, **_KIND_FIELDS.get((group, plural), {})}


def field_names(group: str, plural: str) -> list[str]:
    return list(_supported(group, plural))


def selectable_fields(group: str, plural: str, obj: Obj) -> list[str]:
    """The field set the kind's strategy would expose for ``obj`` (computed once per write)."""
    return [read(obj) for read in _supported(group, plural).values()]


def _unsupported_field(field: str, builtin: bool) -> ApiError:
    # Built-in kinds fail in the field label conversion func; CRDs fail in the CR field-selector validation.
    if builtin:
        return bad_request(f"field label not supported: {field}")
    return bad_request(f'"{field}" is not a known field selector: only "metadata.name", "metadata.namespace"')
