"""An events.k8s.io/v1 Event on every object an apply changed, so `kubectl describe` shows who and why."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from reconciler.core.resources import CONFIG, EVENT, QUEUE, SCHEDULING_SHARD
from reconciler.core.show import show_value
from reconciler.plans.applied import ChangeResult
from reconciler.plans.plan import Operation
from reconciler.reconcile.apply import FIELD_MANAGER

# Queues and Nodes are cluster-scoped; their events live in `default`, as kubectl and the kubelet do.
EVENT_NAMESPACE = "default"
NOTE_LIMIT = 1024  # bytes, not characters: the API server refuses longer notes (Go's len)


def event_for(result: ChangeResult, *, plan_id: str, holder: str) -> dict[str, Any]:
    change = result.change
    created = change.operation is Operation.CREATE
    reason = {
        (QUEUE.kind, True): "QueueCreated",
        (QUEUE.kind, False): "QueueUpdated",
        (CONFIG.kind, False): "ConfigUpdated",
        (SCHEDULING_SHARD.kind, False): "SchedulingShardUpdated",
    }.get((change.ref.kind, created), "NodeLabelChanged")
    fields = ", ".join(
        f"{f.dotted()} {show_value(f.before, quote_strings=True)} → {show_value(f.after, quote_strings=True)}"
        for f in change.fields
    )
    takeover = f"; fields taken over from {', '.join(result.previous_managers)}" if result.previous_managers else ""
    note = f"kai-gitops plan {plan_id}: {fields}{takeover}"
    if len(note.encode()) > NOTE_LIMIT:
        ellipsis = "…"
        room = NOTE_LIMIT - len(ellipsis.encode())
        note = note.encode()[:room].decode(errors="ignore") + ellipsis
    regarding = {"apiVersion": change.ref.api_version, "kind": change.ref.kind, "name": change.ref.name}
    if result.uid:  # kubectl describe selects an object's events by involvedObject.uid too
        regarding["uid"] = result.uid
    if result.resource_version:
        regarding["resourceVersion"] = result.resource_version
    return {
        "apiVersion": EVENT.api_version,
        "kind": EVENT.kind,
        "metadata": {"generateName": event_name_prefix(change.ref.name), "namespace": EVENT_NAMESPACE},
        "eventTime": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "reportingController": FIELD_MANAGER,
        "reportingInstance": holder[:128],
        "action": "Create" if created else "Update",
        "reason": reason,
        "type": "Normal",
        "regarding": regarding,
        "note": note,
    }


def event_name_prefix(name: str) -> str:
    """`<object>.kai-gitops-`: the API server refuses a generateName that does not end in an alphanumeric or
    `-` (a trailing `.` is a 422), and keeps only its first 58 characters, so the object's name is cut to keep
    the marker."""
    return f"{name[:46].rstrip('.-')}.kai-gitops-"
