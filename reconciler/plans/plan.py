"""The change set `reconcile` proposes and applies: typed and hashable, a change per object, field by field.

A plan holds only the allowed writes of docs/reconcile.md (create a Queue; set a Queue's spec.resources /
spec.parentQueue; add or remove the shared-cluster node label; writable.py) and, for everything else, the
operator's command. Each change records the *before* value of every field it touches: staleness is judged
per field when the plan is applied (KAI and the kubelet rewrite status all the time, so a whole-object
resourceVersion check would refuse almost every saved plan).

Beside the model: value semantics (values.py), what may be written (writable.py), validation
(validate.py), the saved form (saved.py); shown as text by outputs/plan_text.py, like Terraform's views.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import orjson

from reconciler.core.redact import url_without_userinfo
from reconciler.core.refs import ObjectRef
from reconciler.report.report import GitInfo

PLAN_KIND = "kai-gitops/plan"
PLAN_VERSION = 1

FieldPath = tuple[str, ...]


class Operation(StrEnum):
    CREATE = "create"
    UPDATE = "update"


@dataclass(frozen=True)
class FieldChange:
    path: FieldPath
    before: Any  # None: absent
    after: Any  # None: removed

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
    rules: tuple[str, ...]  # the findings this change settles
    reason: str
    manifest: dict[str, Any] | None = None  # the object to create (create only)

    def to_dict(self) -> dict[str, Any]:
        return {
            "object": self.ref.to_dict(),
            "operation": self.operation.value,
            "rules": list(self.rules),
            "reason": self.reason,
            "fields": [f.to_dict() for f in self.fields],
            "manifest": self.manifest,
        }

    def merge_patch(self, resource_version: str | None) -> dict[str, Any]:
        """RFC 7386 body that sets every planned field to its `after` (None deletes), RV as precondition."""
        body: dict[str, Any] = {"metadata": {"resourceVersion": resource_version}} if resource_version else {}
        for change in self.fields:
            node = body
            for key in change.path[:-1]:
                node = node.setdefault(key, {})
            node[change.path[-1]] = replacing(change.before, change.after)
        return body


def replacing(before: Any, after: Any) -> Any:
    """What a merge patch must send so that a mapping field becomes `after` exactly (a merge patch merges
    mappings: keys only `before` has are sent as null); any other value is sent as it is."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return after
    patch: dict[str, Any] = {key: None for key in before if key not in after}
    for key, value in after.items():
        patch[key] = replacing(before.get(key), value)
    return patch


@dataclass(frozen=True)
class OperatorAction:
    rule: str
    subject: ObjectRef | None
    description: str
    command: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "subject": self.subject.to_dict() if self.subject else None,
            "description": self.description,
            "command": self.command,
        }


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
        return {
            "kind": PLAN_KIND,
            "version": PLAN_VERSION,
            "cluster": self.cluster,
            "git": self.git.to_dict() if self.git else None,
            "clusterIdentity": self.identity.to_dict() if self.identity else None,
            "changes": [c.to_dict() for c in self.changes],
            "operator": [o.to_dict() for o in self.operator],
            "notes": list(self.notes),
        }

    def to_dict(self) -> dict[str, Any]:
        content = self._content()
        return {
            "kind": PLAN_KIND,
            "version": PLAN_VERSION,
            "id": self.id,
            **{k: v for k, v in content.items() if k not in ("kind", "version")},
            "summary": self.counts(),
        }
