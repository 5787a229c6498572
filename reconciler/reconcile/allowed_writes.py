"""The writes kai-gitops can make, checked before each request is sent (SPEC §8 plus the guard rails' own):

    POST  /apis/scheduling.run.ai/v2/queues                       create a Queue (name, spec.resources/parentQueue)
    PATCH /apis/scheduling.run.ai/v2/queues/NAME                  spec.resources / spec.parentQueue only
    PATCH /api/v1/nodes/NAME                                      the nvca.nvcf.nvidia.io/schedule label only
    POST/PUT /apis/coordination.k8s.io/v1/namespaces/NS/leases[/NAME]   the run's Lease
    POST  /apis/events.k8s.io/v1/namespaces/NS/events             an Event on a changed object

Kept apart from the writer so the whole list can be reviewed on one screen.
"""

from __future__ import annotations

import re
from typing import Any

from reconciler.core.resources import EVENT, LEASE, NODE, QUEUE, Resource
from reconciler.model.live import SCHEDULE_LABEL
from reconciler.model.queues import FIELDS, RESOURCES
from reconciler.plans.plan import OBJECT_NAME

MERGE_PATCH = "application/merge-patch+json"
QUEUES_PATH = QUEUE.collection_path()
_NAME = OBJECT_NAME.pattern


def _path(resource: Resource, *, one_object: bool) -> str:
    """The regular expression of a resource's collection (or of one object in it), any namespace and name."""
    scope = f"/namespaces/{_NAME}" if resource.namespaced else ""
    return rf"^{re.escape(resource.api_path)}{scope}/{resource.plural}" + (f"/{_NAME}$" if one_object else "$")


_ALLOWED_WRITES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("POST", re.compile(_path(QUEUE, one_object=False))),
    ("PATCH", re.compile(_path(QUEUE, one_object=True))),
    ("PATCH", re.compile(_path(NODE, one_object=True))),
    ("POST", re.compile(_path(LEASE, one_object=False))),
    ("PUT", re.compile(_path(LEASE, one_object=True))),
    ("POST", re.compile(_path(EVENT, one_object=False))),
)


class WriteForbidden(Exception):
    """A write kai-gitops never makes was asked for: a bug or a tampered plan, never sent."""


def check_write(method: str, path: str, body: Any, content_type: str | None) -> None:
    """Refuse, before anything is sent, every write but those listed above."""
    if not any(method == m and pattern.match(path) for m, pattern in _ALLOWED_WRITES):
        raise WriteForbidden(f"{method} {path} is not a write kai-gitops makes")
    if method == "POST" and path == QUEUES_PATH:
        _check_queue_create(body)
    if method == "PATCH":
        if content_type != MERGE_PATCH or not isinstance(body, dict):
            raise WriteForbidden(f"PATCH {path}: only merge patches are sent")
        if path.startswith(QUEUES_PATH):
            _check_queue_patch(path, body)
        else:
            _check_label_patch(path, body)


def _check_queue_create(body: Any) -> None:
    meta = body.get("metadata") if isinstance(body, dict) else None
    if not isinstance(meta, dict) or set(body) - {"apiVersion", "kind", "metadata", "spec"} \
            or (body.get("apiVersion"), body.get("kind")) != (QUEUE.api_version, QUEUE.kind) or set(meta) != {"name"} \
            or not _queue_spec_ok(body.get("spec")):
        raise WriteForbidden(f"POST {QUEUES_PATH}: a Queue is created with its name, spec.resources and "
                             "spec.parentQueue only")


def _check_queue_patch(path: str, body: dict[str, Any]) -> None:
    if set(body) - {"metadata", "spec"} or set(body.get("metadata") or {}) - {"resourceVersion"} \
            or not _queue_spec_ok(body.get("spec")):
        raise WriteForbidden(f"PATCH {path}: a Queue patch may set only spec.resources and spec.parentQueue")


def _queue_spec_ok(spec: Any) -> bool:
    """Only spec.parentQueue (a name, or null) and spec.resources.{cpu,gpu,memory}.{quota,limit,overQuotaWeight}."""
    if not isinstance(spec, dict) or set(spec) - {"resources", "parentQueue"}:
        return False
    if spec.get("parentQueue") is not None and not isinstance(spec["parentQueue"], str):
        return False
    resources = spec.get("resources", {})
    if not isinstance(resources, dict) or set(resources) - set(RESOURCES):
        return False
    return all(isinstance(r, dict) and not set(r) - set(dict(FIELDS))
               and all(isinstance(v, int | float) and not isinstance(v, bool) for v in r.values())
               for r in resources.values())


def _check_label_patch(path: str, body: dict[str, Any]) -> None:
    meta = body.get("metadata")
    labels = meta.get("labels") if isinstance(meta, dict) else None
    if set(body) != {"metadata"} or not isinstance(meta, dict) or set(meta) - {"labels", "resourceVersion"} \
            or not isinstance(labels, dict) or set(labels) != {SCHEDULE_LABEL} \
            or labels[SCHEDULE_LABEL] not in ("true", None):
        raise WriteForbidden(f"PATCH {path}: a Node patch may only set or remove {SCHEDULE_LABEL}=true")
