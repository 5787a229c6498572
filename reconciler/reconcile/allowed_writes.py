"""The guard in front of the cluster writer: every request but a GET is checked against plans/writable.py, the
one list of what kai-gitops may write, and anything else is refused before it leaves: another method, path
or kind, a field it may not write or a value the field may not hold, a patch that is not a merge patch.

Kept apart from the writer so the check can be reviewed on one screen.
"""

from __future__ import annotations

import re
from typing import Any

from reconciler.core.names import SUBDOMAIN_PATTERN
from reconciler.core.resources import CONFIG, SCHEDULING_SHARD
from reconciler.model.sensitive import SensitiveAllow, category
from reconciler.plans.writable import WRITES, Writable

MERGE_PATCH = "application/merge-patch+json"
_NAME = SUBDOMAIN_PATTERN


def _path_pattern(write: Writable) -> re.Pattern[str]:
    """The paths `write` may be sent to: its resource's collection (POST) or one object in it, in any namespace."""
    resource = write.resource
    scope = f"/namespaces/{_NAME}" if resource.namespaced else ""
    name = "|".join(re.escape(n) for n in sorted(write.names)) if write.names else _NAME
    one = f"/(?:{name})" if write.method != "POST" else ""
    return re.compile(rf"^{re.escape(resource.api_path)}{scope}/{re.escape(resource.plural)}{one}$")


SPEC_RESOURCES = (CONFIG, SCHEDULING_SHARD)   # where a write may set a security-sensitive field
_ALLOWED_WRITES = tuple((write, _path_pattern(write)) for write in WRITES)


class WriteForbidden(Exception):
    """A write kai-gitops never makes was asked for: a bug or a tampered plan, never sent."""


def check_write(method: str, path: str, body: Any, content_type: str | None,
                allowed: tuple[SensitiveAllow, ...] = ()) -> None:
    """Refuse, before anything is sent, every write but those plans/writable.py lists, and a security-sensitive
    field (KAI-S-001) no entry of `allowed` (the cluster's allowSensitiveWrites) names."""
    write = next((w for w, pattern in _ALLOWED_WRITES if w.method == method and pattern.match(path)), None)
    if write is None:
        raise WriteForbidden(f"{method} {path} is not a write kai-gitops makes")
    if method == "PATCH" and (content_type != MERGE_PATCH or not isinstance(body, dict)):
        raise WriteForbidden(f"PATCH {path}: only merge patches are sent")
    if write.fields is None:
        return   # the tool's own Lease and Events: objects it builds whole itself
    content = _created_content(write, body) if method == "POST" else _patched_content(body)
    fields = write.fields_set(content) if content is not None else None
    if not fields:
        kind = write.resource.kind
        limits = (f"a {kind} is created with its name and {write.shown} only" if method == "POST"
                  else f"a {kind} patch may set only {write.shown}")
        raise WriteForbidden(f"{method} {path}: {limits}")
    if write.resource in SPEC_RESOURCES:
        name = path.rsplit("/", 1)[-1]
        for field in fields:
            if category(field[1:]) is not None and not any(a.allows(write.resource.kind, name, field) for a in allowed):
                raise WriteForbidden(f"{method} {path}: {'.'.join(field)} is security-sensitive (KAI-S-001) and the "
                                     "cluster's allowSensitiveWrites does not name it")


def _created_content(write: Writable, body: Any) -> dict[str, Any] | None:
    """A new object past its identity (apiVersion, kind and a name, nothing else in metadata), or None."""
    if not isinstance(body, dict) or (body.get("apiVersion"), body.get("kind")) != (write.resource.api_version,
                                                                                    write.resource.kind):
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
