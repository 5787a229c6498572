"""Every KAI object kept in Git, field by field against the CRD schema of the pinned KAI version (KAI-V-020..022).

The objects are the cluster's queue files (Queue), its KAI manifest files (Config, SchedulingShard) and the KAI
objects its function charts render (PodGroup, Queue, Topology, …). Each is validated with KAI's own
`openAPIV3Schema` of the pinned release (model/crd_schemas.py), and each problem is told at the field's line:

- a field the schema does not name is pruned by the API server without a word (KAI-V-020), with "did you mean";
- a wrong type, a value outside the enum or range, a missing required field is refused (KAI-V-021), and so is
  a number YAML reads as infinite or not-a-number (`.inf`, `.nan`), which JSON cannot carry to the API server;
- either one, when another modelled release serves the field or value, names that release (KAI-V-022 when a
  later one does: the manifest is ahead of its pin).

A Queue field that KAI prunes is one the queue checks do not see either: they read the queue as KAI will, so the
finding says which of their results it leaves incomplete (a misspelt parentQueue makes the queue top-level).
"""

from __future__ import annotations

import difflib
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast

from jsonschema.exceptions import ValidationError

from reconciler.core.jsonvalue import JSONObject, JSONValue, as_object
from reconciler.core.redact import redact_at
from reconciler.core.refs import ObjectRef, YamlPath, format_path
from reconciler.core.resources import QUEUE
from reconciler.findings.finding import Action, EditOp, Finding, Fix, GitEdit, Kind
from reconciler.findings.schema_rules import (
    MANIFEST_AHEAD_OF_VERSION,
    MANIFEST_FIELD_UNKNOWN,
    MANIFEST_VALUE_INVALID,
)
from reconciler.model.crd_schemas import (
    ServedKind,
    crd_version_for,
    is_kai_kind,
    property_names,
    schema_versions,
    served_api_versions,
    validator,
)
from reconciler.model.desired import DesiredCluster
from reconciler.model.values import parse_version
from reconciler.yamlio.document import YamlDoc

# The desired docs that are Kubernetes manifests read from Git (model/desired.py, checks/workload_facts.py).
MANIFEST_DOCS = ("queues:", "kai_manifests:", "workload:")
# Those kept in Git as they are applied (`<kind>:<file>:<document>`): a respelling is an edit of that file. A
# workload's objects are rendered from templates, whose text is not the object's.
EDITABLE_DOCS = ("queues:", "kai_manifests:")
MAX_SUGGESTIONS = 3
SHOWN_VALUE = 60
_TYPE_NAMES = {
    "integer": "an integer",
    "number": "a number",
    "string": "a string",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
}
# Queue fields the queue checks read (model/queues.py): pruned, they change what the checks see
_QUEUE_TREE = "parentQueue"


@dataclass(frozen=True)
class _Problem:
    path: YamlPath  # the field (an unknown or missing one included)
    what: str  # "unknown", "required", "apiVersion", or the JSON Schema keyword that failed
    value: JSONValue
    expected: JSONValue  # the keyword's value in the schema (types, enum, bound)

    @property
    def key(self) -> tuple[YamlPath, str]:
        return self.path, self.what


@dataclass(frozen=True)
class _Manifest:
    doc_id: str
    doc: YamlDoc
    data: JSONObject
    api_version: str
    kind: str

    @property
    def subject(self) -> ObjectRef:
        meta = as_object(self.data.get("metadata"))
        namespace = meta.get("namespace")
        return ObjectRef(
            self.api_version, self.kind, str(meta.get("name") or ""), namespace if isinstance(namespace, str) else None
        )


def manifest_schema_findings(desired: DesiredCluster) -> list[Finding]:
    """Unknown fields, invalid values and fields ahead of the pin in the cluster's KAI manifests from Git."""
    pin = _pinned_version(desired)
    version = crd_version_for(pin)
    findings: list[Finding] = []
    for manifest in _kai_manifests(desired):
        problems = _problems(version, manifest)
        others: dict[str, dict[tuple[YamlPath, str], _Problem]] = {}
        if problems:
            others = {v: _problems(v, manifest) for v in schema_versions() if v != version}
        for problem in problems.values():
            accepting = [v for v, found in others.items() if _accepts(found, problem)]
            findings.append(_finding(desired, manifest, problem, pin, version, accepting))
    return findings


def _pinned_version(desired: DesiredCluster) -> str:
    """The KAI release the cluster runs: the stack's pinned one in add-on mode, else kaiChartVersion."""
    config = desired.config
    return (
        config.stack_kai_version
        if desired.kai_values_doc is None and "env" in desired.docs
        else config.kai_chart_version
    )


def _kai_manifests(desired: DesiredCluster) -> Iterable[_Manifest]:
    for doc_id, doc in desired.docs.items():
        if not doc_id.startswith(MANIFEST_DOCS) or not isinstance(doc.data, dict):
            continue
        api_version, kind = doc.data.get("apiVersion"), doc.data.get("kind")
        if isinstance(api_version, str) and isinstance(kind, str) and is_kai_kind(api_version, kind):
            yield _Manifest(doc_id, doc, doc.data, api_version, kind)


def _problems(version: str, manifest: _Manifest) -> dict[tuple[YamlPath, str], _Problem]:
    """What the CRDs of `version` say against the manifest, by (path, what): one entry per field."""
    found = validator(ServedKind(version, manifest.kind, manifest.api_version))
    if found is None:
        served = served_api_versions(version, manifest.kind)
        problem = _Problem(("apiVersion",), "apiVersion", manifest.api_version, list(served))
        return {problem.key: problem}
    problems: dict[tuple[YamlPath, str], _Problem] = {}
    for error in found.iter_errors(manifest.data):
        for problem in _from_error(error):
            problems.setdefault(problem.key, problem)
    for problem in _non_finite(manifest.data):
        problems.setdefault(problem.key, problem)
    return problems


def _non_finite(data: JSONValue, path: YamlPath = ()) -> Iterable[_Problem]:
    """Each `.inf` / `.nan`: a float to the schema (its type check passes), but JSON has no such number, so
    kubectl cannot send the object and a quota of infinity is not KAI's unlimited (-1)."""
    if isinstance(data, float) and not math.isfinite(data):
        yield _Problem(path, "finite", data, None)
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _non_finite(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _non_finite(value, (*path, index))


def _accepts(found: dict[tuple[YamlPath, str], _Problem], problem: _Problem) -> bool:
    """Whether a release with problems `found` takes what `problem` is about: it serves the kind at that
    apiVersion and has no problem above the field (an unknown parent, another type); an unknown field is
    served when that release knows it (whatever it says of its value), a value when it has no problem there."""
    if problem.what != "apiVersion" and any(p.what == "apiVersion" for p in found.values()):
        return False
    if any(len(p.path) < len(problem.path) and problem.path[: len(p.path)] == p.path for p in found.values()):
        return False
    return not any(
        p.path == problem.path and (problem.what != "unknown" or p.what == "unknown") for p in found.values()
    )


def _from_error(error: ValidationError) -> Iterable[_Problem]:
    path: YamlPath = tuple(error.absolute_path)
    instance, expected = error.instance, error.validator_value
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        schema = error.schema if isinstance(error.schema, dict) else {}
        known = schema.get("properties", {})
        for key in instance:
            if key not in known:
                yield _Problem((*path, key), "unknown", instance[key], None)
    elif error.validator == "required" and isinstance(instance, dict) and isinstance(expected, list):
        for key in expected:
            if key not in instance:
                yield _Problem((*path, key), "required", None, None)
    else:
        yield _Problem(path, str(error.validator), cast("JSONValue", instance), cast("JSONValue", expected))


def _finding(
    desired: DesiredCluster, manifest: _Manifest, problem: _Problem, pin: str, version: str, accepting: list[str]
) -> Finding:
    pinned = parse_version(version) or (0, 0, 0)
    later = [v for v in accepting if (parse_version(v) or (0, 0, 0)) > pinned]
    release = f"KAI {pin}" if pin.lstrip("v") == version.lstrip("v") else f"KAI {pin} (modelled as {version})"
    # a field a later release serves is no typo: no respelling is offered for it
    close = _close_fields(version, manifest, problem) if problem.what == "unknown" and not later else []
    message = f"{manifest.subject}: {_what_is_wrong(problem, release, manifest)}"
    message += "; did you mean " + " or ".join(close) + "?" if close else ""
    message += _who_serves(problem, later, [v for v in accepting if v not in later])
    consequence = _queue_consequence(manifest, problem, close)
    message += ("" if message.endswith("?") else ".") + " " + consequence if consequence else ""
    if later:
        rule = MANIFEST_AHEAD_OF_VERSION
        remedy = f"pin a KAI version that serves it ({', '.join(later)}), or leave it out until then"
    else:
        rule = MANIFEST_FIELD_UNKNOWN if problem.what == "unknown" else MANIFEST_VALUE_INVALID
        remedy = f"rename {problem.path[-1]} to {close[0]}" if len(close) == 1 else rule.remediation
    return rule.finding(
        Kind.VIOLATION,
        message,
        desired.name,
        subject=manifest.subject,
        location=manifest.doc.locate(problem.path),
        fix=Fix(Action.NONE, remedy, git_edits=_respelling(manifest, problem, close)),
        extra={"source": rule.source, "scope": rule.scope.value, "rationale": rule.rationale},
    )


def _who_serves(problem: _Problem, later: list[str], earlier: list[str]) -> str:
    """The other modelled releases that serve the field (or accept the value): later ones make it KAI-V-022."""
    field = problem.what == "unknown"
    if later:
        verb = ("serves" if field else "accepts") if len(later) == 1 else ("serve" if field else "accept")
        return f"; {_versions(later)} {verb} it"
    return f" ({_versions(earlier)} {'served' if field else 'accepted'} it)" if earlier else ""


def _what_is_wrong(problem: _Problem, release: str, manifest: _Manifest) -> str:
    # shown as the redaction shows it where it stands: a connectionString in the message is <redacted>
    keys = [part for part in problem.path if isinstance(part, str)]
    field, value = format_path(problem.path), _shown(redact_at(keys, problem.value))
    crd = f"the {manifest.kind} CRD of {release}"
    expected = problem.expected
    match problem.what:
        case "unknown":
            return f"{field} is not a field of {crd}, so the API server drops it silently"
        case "required":
            return f"{field} is required by {crd}: the API server refuses the object without it"
        case "apiVersion":
            served = ", ".join(map(str, expected)) if isinstance(expected, list) and expected else "none"
            return f"{release} does not serve {manifest.kind} as {manifest.api_version} (it serves: {served})"
        case "type":
            wanted = [t for t in (expected if isinstance(expected, list) else [expected]) if t != "null"]
            names = " or ".join(_TYPE_NAMES.get(str(t), str(t)) for t in wanted)
            return f"{field} is {value}; {crd} wants {names}, so the API server refuses the object"
        case "enum":
            allowed = ", ".join(str(v) for v in (expected if isinstance(expected, list) else []) if v is not None)
            return f"{field} is {value}; {crd} allows only {allowed}"
        case "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum":
            return f"{field} is {value}; {crd} allows {_bound(problem)}"
        case "pattern":
            return f"{field} is {value}, which does not match the pattern {expected} of {crd}"
        case "finite":
            return (
                f"{field} is {value}; {crd} wants a finite number and JSON has none for it, so the object "
                "cannot be sent to the API server (unlimited is -1)"
            )
        case _:
            return f"{field} is {value}, which {crd} refuses ({problem.what} {_shown(expected)})"


def _bound(problem: _Problem) -> str:
    """The range as the schema states it (OpenAPI 3.0: exclusiveMinimum is a flag beside minimum)."""
    if problem.what in ("minimum", "exclusiveMinimum"):
        return f"at least {problem.expected}" if problem.what == "minimum" else "more than the minimum"
    return f"at most {problem.expected}" if problem.what == "maximum" else "less than the maximum"


def _close_fields(version: str, manifest: _Manifest, problem: _Problem) -> list[str]:
    """The fields the schema names beside an unknown one that are close to it in spelling (not yet written)."""
    parent, key = problem.path[:-1], str(problem.path[-1])
    written = manifest.doc.get(parent)
    taken = set(written) if isinstance(written, dict) else set()
    candidates = [n for n in property_names(version, manifest.kind, manifest.api_version, parent) if n not in taken]
    by_lower = {c.lower(): c for c in candidates}
    if key.lower() in by_lower:  # only the case is wrong: that is the field, whatever else is close
        return [by_lower[key.lower()]]
    close = difflib.get_close_matches(key.lower(), list(by_lower), n=MAX_SUGGESTIONS, cutoff=0.75)
    return [by_lower[c] for c in close]


def _respelling(manifest: _Manifest, problem: _Problem, close: list[str]) -> tuple[GitEdit, ...]:
    """The rename `--fix-git` applies when exactly one field is close, in a file applied as it is."""
    if problem.what != "unknown" or len(close) != 1 or not manifest.doc_id.startswith(EDITABLE_DOCS):
        return ()
    index = int(manifest.doc_id.rsplit(":", 1)[1])
    return (GitEdit(manifest.doc.file, problem.path, close[0], EditOp.RENAME, doc=index),)


def _queue_consequence(manifest: _Manifest, problem: _Problem, close: list[str]) -> str:
    """What a pruned Queue field does to the queue checks: they read the queue as KAI will, without it."""
    if manifest.kind != QUEUE.kind or problem.what != "unknown" or problem.path[:1] != ("spec",):
        return ""
    name = manifest.subject.name
    if len(problem.path) == 2 and _QUEUE_TREE in close:
        return (
            f"Without it {name} is a top-level queue, to KAI and to kai-gitops's queue checks alike: the "
            f"queue-tree results for {name} (its parent, quota sums, a child above its parent) are incomplete "
            "until this is fixed"
        )
    return (
        f"kai-gitops's queue checks read {name} as KAI will, without this field: their results for {name} "
        "are incomplete until this is fixed"
    )


def _versions(versions: list[str]) -> str:
    shown = ", ".join(versions[:3]) + (f" and {len(versions) - 3} more" if len(versions) > 3 else "")
    return f"KAI {shown}"


def _shown(value: JSONValue) -> str:
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")  # as YAML writes it
    text = json.dumps(value, separators=(", ", ": "))
    return text if len(text) <= SHOWN_VALUE else text[: SHOWN_VALUE - 1] + "…"
