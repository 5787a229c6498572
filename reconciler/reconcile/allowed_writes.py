"""The write guard: every request but a GET, from the plan's writer or the PolicyReport store alike, is checked
against plans/writable.py, the one list of what kai-gitops may write, and anything else is refused before it
leaves: another method, path or kind, a field it may not write or a value the field may not hold, a patch
that is not a merge patch, a report without the tool's label, a delete without a uid precondition. The
cluster session's transport (sources/cluster/session.py) is opened with it and calls it for every write.

Kept apart from the writer so the check can be reviewed on one screen.
"""

from __future__ import annotations

import re
from typing import Any

from reconciler.core.names import SUBDOMAIN_PATTERN
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.model.sensitive import SensitiveAllow, category
from reconciler.plans.writable import MANAGED_BY, MANAGED_BY_LABEL, WRITES, Writable

MERGE_PATCH = "application/merge-patch+json"
_NAME = SUBDOMAIN_PATTERN


def _path_pattern(write: Writable) -> re.Pattern[str]:
    """The paths `write` may be sent to: its resource's collection (POST) or one object in it, in any namespace."""
    resource = write.resource
    scope = f"/namespaces/{_NAME}" if resource.namespaced else ""
    name = "|".join(re.escape(n) for n in sorted(write.names)) if write.names else _NAME
    one = f"/(?:{name})" if write.method != "POST" else ""
    return re.compile(rf"^{re.escape(resource.api_path)}{scope}/{re.escape(resource.plural)}{one}$")


SPEC_RESOURCES = (CONFIG, SCHEDULING_SHARD)  # where a write may set a security-sensitive field
_ALLOWED_WRITES = tuple((write, _path_pattern(write)) for write in WRITES)


class WriteForbidden(Exception):
    """A write kai-gitops never makes was asked for: a bug or a tampered plan, never sent."""


def check_write(method: str, path: str, body: Any, content_type: str | None) -> None:
    """Refuse, before anything is sent, every write but those plans/writable.py lists: the guard every cluster
    session is opened with, so that no request of the run leaves without it."""
    write = _write_of(method, path)
    if method == "PATCH" and (content_type != MERGE_PATCH or not isinstance(body, dict)):
        raise WriteForbidden(f"PATCH {path}: only merge patches are sent")
    if write.labelled:
        _check_labelled(method, path, body)
        return
    if write.fields is None:
        return  # the tool's own Lease and Events: objects it builds whole itself
    if not _fields_set(write, method, body):
        kind = write.resource.kind
        limits = (
            f"a {kind} is created with its name and {write.shown} only"
            if method == "POST"
            else f"a {kind} patch may set only {write.shown}"
        )
        raise WriteForbidden(f"{method} {path}: {limits}")


def check_sensitive(method: str, path: str, body: Any, allowed: tuple[SensitiveAllow, ...]) -> None:
    """Refuse a security-sensitive field (KAI-S-001) of a kai-config or shard write that no entry of `allowed` (the
    cluster's allowSensitiveWrites, which only the plan's cluster knows) names. The writer of plans checks it
    before the session's guard (check_write) sees the request."""
    write = _write_of(method, path)
    if write.resource not in SPEC_RESOURCES or write.fields is None:
        return
    name = path.rsplit("/", 1)[-1]
    for field in _fields_set(write, method, body):
        if category(field[1:]) is not None and not any(a.allows(write.resource.kind, name, field) for a in allowed):
            raise WriteForbidden(
                f"{method} {path}: {'.'.join(field)} is security-sensitive (KAI-S-001) and the "
                "cluster's allowSensitiveWrites does not name it"
            )


def _write_of(method: str, path: str) -> Writable:
    write = next((w for w, pattern in _ALLOWED_WRITES if w.method == method and pattern.match(path)), None)
    if write is None:
        raise WriteForbidden(f"{method} {path} is not a write kai-gitops makes")
    return write


def _fields_set(write: Writable, method: str, body: Any) -> list[tuple[str, ...]]:
    content = _created_content(write, body) if method == "POST" else _patched_content(body)
    return list(write.fields_set(content) or ()) if content is not None else []


def _check_labelled(method: str, path: str, body: Any) -> None:
    """A report object of the tool's own: written with its label, deleted only by uid (the one it listed)."""
    if method == "DELETE":
        preconditions = body.get("preconditions") if isinstance(body, dict) else None
        if not isinstance(preconditions, dict) or not preconditions.get("uid"):
            raise WriteForbidden(f"DELETE {path}: only with the uid of the object read as a precondition")
        return
    meta = body.get("metadata") if isinstance(body, dict) else None
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if not isinstance(labels, dict) or labels.get(MANAGED_BY_LABEL) != MANAGED_BY:
        raise WriteForbidden(f"{method} {path}: a report kai-gitops writes carries {MANAGED_BY_LABEL}={MANAGED_BY}")


def _created_content(write: Writable, body: Any) -> dict[str, Any] | None:
    """A new object past its identity (apiVersion, kind and a name, nothing else in metadata), or None."""
    if not isinstance(body, dict) or (body.get("apiVersion"), body.get("kind")) != (
        write.resource.api_version,
        write.resource.kind,
    ):
        return None
    meta = body.get("metadata")
    if not isinstance(meta, dict) or set(meta) != {"name"}:
        return None
    return {k: v for k, v in body.items() if k not in ("apiVersion", "kind", "metadata")}


def _patched_content(body: dict[str, Any]) -> dict[str, Any] | None:
    """A merge patch past its resourceVersion precondition, or None."""
    meta = body.get("metadata", {})
    if not isinstance(meta, dict):
        return None
    content = {k: v for k, v in body.items() if k != "metadata"}
    kept = {k: v for k, v in meta.items() if k != "resourceVersion"}
    return {**content, "metadata": kept} if kept else content
