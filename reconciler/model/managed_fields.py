"""An object's `metadata.managedFields` (who owns which fields, server-side apply's bookkeeping), typed.

Kept for the objects the differ compares (Queues, SchedulingShards, kai-config, and nodes' labels), so a
drifted field can name the manager that last set it (checks/attribution.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from reconciler.core.jsonvalue import JSONObject, JSONValue, mapping_at, objects_at

RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"


@dataclass(frozen=True)
class ManagedEntry:
    manager: str | None
    operation: str | None
    subresource: str | None
    time: str | None
    fields: JSONObject          # fieldsV1: "f:spec" → {"f:resources": …}, "k:{…}", "v:…", "." for the field itself


@dataclass(frozen=True)
class ObjectManagers:
    entries: tuple[ManagedEntry, ...] = ()
    release: tuple[str, str] | None = None   # (namespace, name) of the Helm release whose annotations it carries


def object_managers(obj: Mapping[str, JSONValue]) -> ObjectManagers:
    meta = mapping_at(obj, "metadata")
    entries = tuple(ManagedEntry(_text(e.get("manager")), _text(e.get("operation")), _text(e.get("subresource")),
                                 _text(e.get("time")), dict(mapping_at(e, "fieldsV1")))
                    for e in objects_at(meta, "managedFields"))
    annotations = mapping_at(meta, "annotations")
    name, namespace = annotations.get(RELEASE_NAME_ANNOTATION), annotations.get(RELEASE_NAMESPACE_ANNOTATION)
    release = (str(namespace), str(name)) if name and namespace else None
    return ObjectManagers(entries, release)


def _text(value: JSONValue) -> str | None:
    return None if value is None else str(value)
