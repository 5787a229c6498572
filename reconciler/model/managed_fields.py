"""An object's `metadata.managedFields` (who owns which fields, server-side apply's bookkeeping), typed.

Kept for the objects the differ compares (Queues, SchedulingShards, kai-config, and nodes' labels), so a
drifted field can name the manager that last set it (checks/attribution.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from reconciler.core.jsonvalue import JSONObject, JSONValue, mapping_at, objects_at

RELEASE_NAME_ANNOTATION = "meta.helm.sh/release-name"
RELEASE_NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
OPERATIONS = frozenset({"Apply", "Update"})  # all the API server writes; anything else came from a file
_DNS_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})")


@dataclass(frozen=True)
class ManagedEntry:
    manager: str | None
    operation: str | None
    subresource: str | None
    time: str | None
    fields: JSONObject  # fieldsV1: "f:spec" → {"f:resources": …}, "k:{…}", "v:…", "." for the field itself


@dataclass(frozen=True)
class ObjectManagers:
    entries: tuple[ManagedEntry, ...] = ()
    release: tuple[str, str] | None = None  # (namespace, name) of the Helm release whose annotations it carries


def object_managers(obj: Mapping[str, JSONValue]) -> ObjectManagers:
    meta = mapping_at(obj, "metadata")
    entries = tuple(
        ManagedEntry(
            _text(e.get("manager")),
            known_operation(e.get("operation")),
            dns_label(e.get("subresource")),
            rfc3339(e.get("time")),
            dict(mapping_at(e, "fieldsV1")),
        )
        for e in objects_at(meta, "managedFields")
    )
    annotations = mapping_at(meta, "annotations")
    name, namespace = annotations.get(RELEASE_NAME_ANNOTATION), annotations.get(RELEASE_NAMESPACE_ANNOTATION)
    release = (str(namespace), str(name)) if name and namespace else None
    return ObjectManagers(entries, release)


def _text(value: JSONValue) -> str | None:
    return None if value is None else str(value)


# A snapshot is a file anyone may have written: the fields with a fixed shape keep only that shape, so free text
# (a credential, a sentence) cannot ride in them; the manager's name is free text and redacted as such.
def known_operation(value: JSONValue) -> str | None:
    return value if isinstance(value, str) and value in OPERATIONS else None


def dns_label(value: JSONValue) -> str | None:
    """A subresource ("status", "scale"): a DNS label, as every subresource's name is."""
    return value if isinstance(value, str) and _DNS_LABEL.fullmatch(value) else None


def rfc3339(value: JSONValue) -> str | None:
    """A timestamp as the API server (seconds) and Helm (nanoseconds, a zone) write it; a real date and time."""
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        return None
    try:
        datetime.strptime(value[:19], "%Y-%m-%dT%H:%M:%S")
    except ValueError:  # 2026-13-45T99:…
        return None
    return value
