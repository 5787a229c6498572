"""The change set `reconcile` proposes and applies: typed, hashable, saved as versioned JSON, shown like Terraform.

A plan holds only what SPEC §8 lets the tool change (create a Queue; set a Queue's spec.resources /
spec.parentQueue; add or remove the shared-cluster node label) and, for everything else, the operator's
command. Each change records the *before* value of every field it touches: staleness is judged per field
when the plan is applied (KAI and the kubelet rewrite status all the time, so a whole-object
resourceVersion check would refuse almost every saved plan).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

from reconciler.checks.gofloat import format_go_float
from reconciler.core.errors import UserError
from reconciler.core.redact import url_without_userinfo
from reconciler.core.refs import QUEUE_API, ObjectRef
from reconciler.model.live import SCHEDULE_LABEL
from reconciler.model.queues import FIELDS, RESOURCES, QueueSpec, queue_spec_from_values, same_number
from reconciler.report.report import GitInfo

PLAN_KIND = "kai-gitops/plan"
PLAN_VERSION = 1
NODE_API = "v1"

FieldPath = tuple[str, ...]
LABEL_PATH: FieldPath = ("metadata", "labels", SCHEDULE_LABEL)


class Operation(StrEnum):
    CREATE = "create"
    UPDATE = "update"


@dataclass(frozen=True)
class FieldChange:
    path: FieldPath
    before: Any    # None: absent
    after: Any     # None: removed

    def dotted(self) -> str:
        text = ""
        for part in self.path:
            text += f'["{part}"]' if ("." in part or "/" in part) else (f".{part}" if text else part)
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"path": list(self.path), "before": self.before, "after": self.after}


@dataclass(frozen=True)
class Change:
    ref: ObjectRef
    operation: Operation
    fields: tuple[FieldChange, ...]
    rules: tuple[str, ...]          # the findings this change settles
    reason: str
    manifest: dict[str, Any] | None = None   # the object to create (create only)

    def to_dict(self) -> dict[str, Any]:
        return {"object": self.ref.to_dict(), "operation": self.operation.value, "rules": list(self.rules),
                "reason": self.reason, "fields": [f.to_dict() for f in self.fields], "manifest": self.manifest}

    def merge_patch(self, resource_version: str | None) -> dict[str, Any]:
        """RFC 7386 body that sets every planned field to its `after` (None deletes), RV as precondition."""
        body: dict[str, Any] = {"metadata": {"resourceVersion": resource_version}} if resource_version else {}
        for change in self.fields:
            node = body
            for key in change.path[:-1]:
                node = node.setdefault(key, {})
            node[change.path[-1]] = change.after
        return body


@dataclass(frozen=True)
class OperatorAction:
    rule: str
    subject: ObjectRef | None
    description: str
    command: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "subject": self.subject.to_dict() if self.subject else None,
                "description": self.description, "command": self.command}


@dataclass(frozen=True)
class ClusterIdentity:
    """API server URL plus the kube-system namespace UID: a URL alone can point at a rebuilt cluster."""

    server: str
    kube_system_uid: str

    def to_dict(self) -> dict[str, str]:
        return {"server": self.server, "kubeSystemUID": self.kube_system_uid}

    @property
    def shown(self) -> str:
        """The server for messages: a plan saved by an older kai-gitops may hold a password in it."""
        return url_without_userinfo(self.server)

    def __str__(self) -> str:
        return f"{self.shown} (kube-system {self.kube_system_uid})"


@dataclass(frozen=True)
class Plan:
    cluster: str
    git: GitInfo | None
    identity: ClusterIdentity | None
    changes: tuple[Change, ...]
    operator: tuple[OperatorAction, ...] = ()
    notes: tuple[str, ...] = field(default=())

    @property
    def id(self) -> str:
        """Hash of the content: the same changes against the same cluster and commit give the same id."""
        content = orjson.dumps(self._content(), option=orjson.OPT_SORT_KEYS)
        return hashlib.sha256(content).hexdigest()[:20]

    def counts(self) -> dict[str, int]:
        creates = sum(1 for c in self.changes if c.operation is Operation.CREATE)
        return {"create": creates, "update": len(self.changes) - creates, "operator": len(self.operator)}

    def _content(self) -> dict[str, Any]:
        return {"kind": PLAN_KIND, "version": PLAN_VERSION, "cluster": self.cluster,
                "git": self.git.to_dict() if self.git else None,
                "clusterIdentity": self.identity.to_dict() if self.identity else None,
                "changes": [c.to_dict() for c in self.changes],
                "operator": [o.to_dict() for o in self.operator], "notes": list(self.notes)}

    def to_dict(self) -> dict[str, Any]:
        content = self._content()
        return {"kind": PLAN_KIND, "version": PLAN_VERSION, "id": self.id,
                **{k: v for k, v in content.items() if k not in ("kind", "version")}, "summary": self.counts()}

    @classmethod
    def from_dict(cls, raw: Any, where: str) -> Plan:
        return _PlanReader(where).plan(raw)


# --- field values, the same way at plan time and at apply time ------------------------------------


def queue_field(spec: QueueSpec, path: FieldPath) -> Any:
    """A planned Queue field as NVCA reads it: numbers as float64 with absent = 0, parentQueue or None."""
    if path == ("spec", "parentQueue"):
        return spec.parent
    if len(path) == 4 and path[:2] == ("spec", "resources") and path[2] in RESOURCES:
        if spec.resources is None:
            return None
        attr = dict(FIELDS).get(path[3])
        return None if attr is None else _number(getattr(spec.triple(path[2]), attr))
    raise ValueError(f"not a planned Queue field: {path}")


def current_value(ref: ObjectRef, obj: dict[str, Any], path: FieldPath) -> Any:
    """The value of a planned field in a freshly read object."""
    if ref.kind == "Queue":
        return queue_field(queue_spec_from_values(obj), path)
    if path == LABEL_PATH:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        value = labels.get(SCHEDULE_LABEL)
        return None if value is None else str(value)
    raise ValueError(f"not a planned field: {ref} {path}")


def same_value(a: Any, b: Any) -> bool:
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool) \
            and not isinstance(b, bool):
        return same_number(float(a), float(b))
    return bool(a == b)


def _number(value: float) -> int | float:
    return int(value) if value == value and float(value).is_integer() else value


def queue_update_fields(want: dict[str, Any], live: QueueSpec) -> tuple[FieldChange, ...]:
    """Every field of a Queue spec patch (spec.resources leaves, spec.parentQueue) whose live value differs."""
    changes: list[FieldChange] = []
    for path, after in leaves(want.get("spec") or {}, ("spec",)):
        before = queue_field(live, path)
        if not same_value(before, after):
            changes.append(FieldChange(path, before, after))
    return tuple(changes)


def leaves(value: Any, prefix: FieldPath) -> Iterator[tuple[FieldPath, Any]]:
    if isinstance(value, dict):
        for key in sorted(value):
            yield from leaves(value[key], (*prefix, str(key)))
    else:
        yield prefix, value


# --- what a plan may contain (a saved plan is input: it is checked, never trusted) ----------------


def allowed_field(ref: ObjectRef, operation: Operation, path: FieldPath) -> bool:
    if (ref.api_version, ref.kind, ref.namespace) == (QUEUE_API, "Queue", None):
        if path == ("spec", "parentQueue"):
            return True
        return (len(path) == 4 and path[:2] == ("spec", "resources") and path[2] in RESOURCES
                and path[3] in dict(FIELDS))
    if (ref.api_version, ref.kind, ref.namespace, operation) == (NODE_API, "Node", None, Operation.UPDATE):
        return path == LABEL_PATH
    return False


# metadata.name of Nodes and Queues: a DNS-1123 subdomain. Anything else in a plan (a `/`, a `..`) would
# address another object once the URL is built and normalised, e.g. a Secret.
OBJECT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
MAX_NAME = 253


def valid_name(name: str) -> bool:
    return len(name) <= MAX_NAME and OBJECT_NAME.fullmatch(name) is not None


def check_changes(changes: Iterable[Change], where: str) -> None:
    """Each change allowed (check_change), and one change per object: two would race on one resourceVersion."""
    seen: set[ObjectRef] = set()
    for change in changes:
        check_change(change, where)
        if change.ref in seen:
            raise UserError(f"plan changes {change.ref} more than once", where=where)
        seen.add(change.ref)


def check_change(change: Change, where: str) -> None:
    """Refuse anything SPEC §8 does not allow, before any request: name, kind, operation, field, value."""
    if not valid_name(change.ref.name):
        raise UserError(f"plan change names {change.ref.kind} {change.ref.name!r}, which is not a Kubernetes "
                        "object name (lower-case DNS subdomain)", where=where)
    if not change.fields:
        raise UserError(f"plan change {change.ref} changes no field", where=where)
    if len({f.path for f in change.fields}) != len(change.fields):
        raise UserError(f"plan change {change.ref} sets a field more than once", where=where)
    for f in change.fields:
        _check_field(change, f, where)
    if change.operation is Operation.CREATE:
        _check_manifest(change, where)


def _check_field(change: Change, f: FieldChange, where: str) -> None:
    if not allowed_field(change.ref, change.operation, f.path):
        raise UserError(f"plan change {change.operation.value} {change.ref} field {f.dotted()} is not one "
                        "kai-gitops may write (Queue spec.resources/spec.parentQueue, the node schedule label)",
                        where=where)
    if f.path == LABEL_PATH and f.after not in (None, "true"):
        raise UserError(f"plan sets {change.ref} {f.dotted()} to {f.after!r}; only \"true\" or removal "
                        "is allowed", where=where)
    numeric = f.path[:2] == ("spec", "resources")
    for side, value in (("before", f.before), ("after", f.after)):
        if numeric and not (_is_number(value) or (side == "before" and value is None)):
            raise UserError(f"plan change {change.ref} {f.dotted()} {side} must be a number, not {value!r}",
                            where=where)
        if not numeric and value is not None and not isinstance(value, str):
            raise UserError(f"plan change {change.ref} {f.dotted()} {side} must be a string or null, "
                            f"not {value!r}", where=where)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_manifest(change: Change, where: str) -> None:
    """The created object is exactly the Queue the plan shows: its name, and a spec of the shown fields."""
    manifest = change.manifest or {}
    if (manifest.get("apiVersion"), manifest.get("kind"), (manifest.get("metadata") or {}).get("name")) != \
            (change.ref.api_version, change.ref.kind, change.ref.name) or set(manifest) - {
                "apiVersion", "kind", "metadata", "spec"} or set(manifest.get("metadata") or {}) - {"name"}:
        raise UserError(f"plan create {change.ref} has a manifest that is not that Queue's name and spec",
                        where=where)
    spec = dict(leaves(manifest.get("spec"), ("spec",)))
    if any(not allowed_field(change.ref, change.operation, p) for p in spec):
        raise UserError(f"plan create {change.ref} sets fields other than spec.resources/spec.parentQueue",
                        where=where)
    shown = {f.path: f.after for f in change.fields}
    differs = sorted(p for p in spec.keys() | shown.keys() if p not in spec or p not in shown
                     or not same_value(spec[p], shown[p]))
    if differs or any(f.before is not None for f in change.fields):
        path = FieldChange(differs[0], None, None).dotted() if differs else "before"
        raise UserError(f"plan create {change.ref}: its manifest and its fields disagree ({path})", where=where)


class _PlanReader:
    """from_dict with one-line errors naming the file and the entry: a hand-edited plan is bad input."""

    def __init__(self, where: str) -> None:
        self.where = where

    def fail(self, what: str) -> UserError:
        return UserError(f"not a kai-gitops plan: {what}", where=self.where,
                         hint="write one with `kai-gitops reconcile --plan-out FILE`")

    def plan(self, raw: Any) -> Plan:
        if not isinstance(raw, dict) or raw.get("kind") != PLAN_KIND:
            raise self.fail(f"`kind` must be {PLAN_KIND}")
        if raw.get("version") != PLAN_VERSION:
            raise UserError(f"plan version {raw.get('version')!r} is not supported (this kai-gitops reads "
                            f"version {PLAN_VERSION})", where=self.where, hint="re-create the plan with this version")
        plan = Plan(self.text(raw, "cluster"), self.git(raw.get("git")), self.identity(raw.get("clusterIdentity")),
                    tuple(self.change(c, i) for i, c in enumerate(self.items(raw, "changes"))),
                    tuple(self.operator(o) for o in self.items(raw, "operator")),
                    tuple(str(n) for n in self.items(raw, "notes", optional=True)))
        if raw.get("id") != plan.id:
            raise UserError(f"plan id {raw.get('id')!r} does not match its content ({plan.id}): the file was "
                            "edited after it was written", where=self.where, hint="re-create the plan")
        check_changes(plan.changes, self.where)
        return plan

    def items(self, raw: dict[str, Any], key: str, *, optional: bool = False) -> list[Any]:
        value = raw.get(key)
        if value is None and optional:
            return []
        if not isinstance(value, list):
            raise self.fail(f"`{key}` must be a list")
        return value

    def text(self, raw: Any, key: str, *, optional: bool = False) -> Any:
        value = raw.get(key) if isinstance(raw, dict) else None
        if value is None and optional:
            return None
        if not isinstance(value, str) or not value:
            raise self.fail(f"`{key}` must be a non-empty string")
        return value

    def git(self, raw: Any) -> GitInfo | None:
        if raw is None:
            return None
        if not isinstance(raw, dict):
            raise self.fail("`git` must be an object")
        return GitInfo(str(raw.get("repo", "")), str(raw.get("ref", "")), raw.get("commit"), bool(raw.get("worktree")))

    def identity(self, raw: Any) -> ClusterIdentity | None:
        if raw is None:
            return None
        return ClusterIdentity(self.text(raw, "server"), self.text(raw, "kubeSystemUID"))

    def ref(self, raw: Any) -> ObjectRef:
        if not isinstance(raw, dict):
            raise self.fail("`object` must be an object")
        return ObjectRef(self.text(raw, "apiVersion"), self.text(raw, "kind"), self.text(raw, "name"),
                         self.text(raw, "namespace", optional=True))

    def change(self, raw: Any, index: int) -> Change:
        if not isinstance(raw, dict):
            raise self.fail(f"changes[{index}] must be an object")
        try:
            operation = Operation(str(raw.get("operation")))
        except ValueError:
            raise self.fail(f"changes[{index}].operation must be create or update") from None
        fields = []
        for f in self.items(raw, "fields"):
            path = f.get("path") if isinstance(f, dict) else None
            if not isinstance(path, list) or not path or not all(isinstance(p, str) for p in path):
                raise self.fail(f"changes[{index}].fields[].path must be a list of keys")
            fields.append(FieldChange(tuple(path), f.get("before"), f.get("after")))
        manifest = raw.get("manifest")
        if manifest is not None and not isinstance(manifest, dict):
            raise self.fail(f"changes[{index}].manifest must be an object or null")
        rules = self.items(raw, "rules", optional=True)
        return Change(self.ref(raw.get("object")), operation, tuple(fields), tuple(str(r) for r in rules),
                      str(raw.get("reason") or ""), manifest)

    def operator(self, raw: Any) -> OperatorAction:
        if not isinstance(raw, dict):
            raise self.fail("`operator` entries must be objects")
        subject = self.ref(raw["subject"]) if raw.get("subject") else None
        return OperatorAction(str(raw.get("rule", "")), subject, str(raw.get("description") or ""),
                              raw.get("command"))


# --- Terraform-style text ------------------------------------------------------------------------


def render_plan(plan: Plan) -> list[str]:
    """`+ create`, `~ update` with field-level before → after, `! operator`, and the Plan: line."""
    lines: list[str] = []
    for change in plan.changes:
        sign = "+" if change.operation is Operation.CREATE else "~"
        rules = f"  ({', '.join(change.rules)})" if change.rules else ""
        lines.append(f"  {sign} {change.operation.value} {change.ref}{rules}")
        width = max(len(f.dotted()) for f in change.fields)
        for f in change.fields:
            lines.append(f"      {f.dotted():<{width}}  {show(f.before)} → {show(f.after)}")
    for action in plan.operator:
        subject = f" {action.subject}" if action.subject else ""
        lines.append(f"  ! operator {action.rule}{subject}")
        lines.append(f"      run: {action.command}" if action.command else f"      {action.description}")
    lines += [f"  note: {note}" for note in plan.notes]
    counts = plan.counts()
    if not plan.changes and not plan.operator:
        lines.append("  No changes: the cluster matches Git for everything kai-gitops may change.")
    lines.append(f"Plan: {counts['create']} to create, {counts['update']} to change, {counts['operator']} for "
                 "the operator.")
    return lines


def show(value: Any) -> str:
    if value is None:
        return "<none>"
    if isinstance(value, float):
        return format_go_float(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    return str(value)


# --- saved plans -----------------------------------------------------------------------------------


def write_plan(plan: Plan, path: str) -> None:
    """Atomically, so a reader never sees half a plan."""
    import os
    import tempfile
    from pathlib import Path

    target = Path(path)
    data = orjson.dumps(plan.to_dict(), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    except OSError as exc:
        raise UserError(f"cannot write the plan: {exc.strerror}", where=path) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)   # no half-written `.plan.json.*` left beside the target
        raise UserError(f"cannot write the plan: {exc.strerror}", where=path) from None


def read_plan(path: str) -> Plan:
    from pathlib import Path

    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the plan: {exc.strerror}", where=path) from None
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UserError(f"plan is not JSON: {exc.msg}", where=f"{path}:{exc.lineno}:{exc.colno}") from None
    return Plan.from_dict(data, path)
