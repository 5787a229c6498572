"""A saved snapshot: a Kubernetes `List` (YAML or JSON) as `kubectl get … -o yaml` or `kai-gitops snapshot` writes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import NamedTuple

import orjson

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.core.resources import CUSTOM_RESOURCE_DEFINITION, QUEUE, SCHEDULING_SHARD
from reconciler.model.live import LiveState, LiveStateBuilder
from reconciler.model.queues import SnapshotQueues
from reconciler.yamlio.document import YamlDoc, decode_text, load_documents

# On the List: when `kai-gitops snapshot` began reading the cluster, RFC 3339 in UTC. Written by the tool only; a
# snapshot without it (kubectl get -o yaml, an older kai-gitops) was taken at an unknown time.
TAKEN_AT_ANNOTATION = "kai-gitops.io/taken-at"


def taken_at_stamp(when: datetime) -> str:
    """Microseconds: a write in the same second as the read began is on the right side of the cut."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def read_snapshot(path: str) -> LiveState:
    builder = LiveStateBuilder(f"snapshot {path}")
    items, taken_at = _load(path)
    for item in items:
        builder.add(item)
    state = builder.finish()
    state.from_snapshot, state.captured_at = True, taken_at
    return state


def read_snapshot_queues(path: str) -> SnapshotQueues:
    """Only the Queues of a snapshot (spec and status.allocated) and when it was taken: what the PR check judges
    Git's queues against. A snapshot with neither a Queue nor the Queue CRD is of no KAI cluster: refused."""
    builder = LiveStateBuilder(f"snapshot {path}")
    loaded = _load(path)
    for item in loaded.items:
        if (item.get("apiVersion"), item.get("kind")) in (QUEUE.type_key, CUSTOM_RESOURCE_DEFINITION.type_key):
            builder.add(item)
    state = builder.finish()
    if not state.queue_kind_served:
        raise UserError("snapshot holds no Queue and no Queue CRD: not a snapshot of a KAI cluster", where=path,
                        hint="pass a file written by `kai-gitops snapshot` on that cluster")
    return SnapshotQueues(f"snapshot {path}", loaded.taken_at, state.queues, state.allocations)


def read_snapshot_krm(path: str) -> LiveState:
    """What a snapshot says of KAI Resource Management for the PR check: the CRDs, Queues and SchedulingShards
    (their labels and managedFields), read as the live read reads them (checks/krm.py)."""
    builder = LiveStateBuilder(f"snapshot {path}")
    for item in _load(path).items:
        if (item.get("apiVersion"), item.get("kind")) in (QUEUE.type_key, CUSTOM_RESOURCE_DEFINITION.type_key,
                                                          SCHEDULING_SHARD.type_key):
            builder.add(item)
    return builder.finish()


def snapshot_items(path: str) -> list[JSONObject]:
    """The objects of a snapshot file, checked to be Kubernetes objects (kind, apiVersion)."""
    return _load(path).items


class _Loaded(NamedTuple):
    items: list[JSONObject]
    taken_at: datetime | None


def _load(path: str) -> _Loaded:
    file = Path(path)
    if not file.is_file():
        raise UserError("snapshot file not found", where=path, hint="pass a file written by `kai-gitops snapshot`"
                        " or `kubectl get … -o yaml`")
    raw = file.read_bytes()
    if not raw.strip():
        raise UserError("snapshot file is empty", where=f"{path}:1",
                        hint="an empty file is not an empty cluster; write one with `kai-gitops snapshot`")
    return _json_items(raw, path) if raw.lstrip()[:1] in (b"{", b"[") else _yaml_items(raw, path)


def _json_items(raw: bytes, path: str) -> _Loaded:
    try:
        data: JSONValue = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", where=f"{path}:{exc.lineno}:{exc.colno}") from None
    return _Loaded(_list_items(data, lambda i: f"{path}:1 (item {i})", path), _taken_at(data, f"{path}:1"))


# Snapshots of large clusters are big; the values-file limit would refuse a real `kubectl get pods -A -o yaml`.
SNAPSHOT_MAX_BYTES = 4 * 1024 * 1024 * 1024
# Measured: a `kai-gitops snapshot` of 50,000 pods and 5,000 nodes (55,000 objects, 41 MB) holds 3.4 million
# values; about three times that still loads, and a file built to exhaust memory stops there.
SNAPSHOT_MAX_NODES = 10_000_000


def _yaml_items(raw: bytes, path: str) -> _Loaded:
    items: list[JSONObject] = []
    taken_at: datetime | None = None
    for doc in load_documents(decode_text(raw, path, max_bytes=SNAPSHOT_MAX_BYTES), path,
                              max_nodes=SNAPSHOT_MAX_NODES):
        items.extend(_list_items(doc.data, partial(_item_location, doc), path))
        where = str(doc.locate(("metadata", "annotations", TAKEN_AT_ANNOTATION)))
        taken_at = taken_at or _taken_at(doc.data, where)
    return _Loaded(items, taken_at)


def _taken_at(data: JSONValue, where: str) -> datetime | None:
    meta = data.get("metadata") if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    stamp = annotations.get(TAKEN_AT_ANNOTATION) if isinstance(annotations, dict) else None
    if stamp is None:
        return None
    try:
        when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
        utc = when.astimezone(UTC) if when is not None and when.tzinfo is not None else None
    except (ValueError, OverflowError):   # OverflowError: a valid shape past the last UTC instant
        utc = None
    if utc is None:
        raise UserError(f"annotation {TAKEN_AT_ANNOTATION} is not an RFC 3339 time with a zone: {str(stamp)[:40]!r}",
                        where=where, hint="`kai-gitops snapshot` writes it, e.g. 2026-12-01T10:00:00.000000Z; "
                        "remove the annotation if the time is unknown")
    return utc


def _item_location(doc: YamlDoc, index: int) -> str:
    return str(doc.locate(("items", index)))


def _list_items(data: JSONValue, where: Callable[[int], str], path: str) -> list[JSONObject]:
    if not isinstance(data, dict):
        raise UserError("a snapshot must be a Kubernetes List object", where=f"{path}:1",
                        hint="write one with `kai-gitops snapshot -o FILE`")
    items: JSONValue
    if not str(data.get("kind", "")).endswith("List"):
        items = [data]  # a single object is a list of one
    else:
        items = data.get("items") or []
        if not isinstance(items, list):
            raise UserError("`items` must be a list", where=where(0))
    objects: list[JSONObject] = []
    for i, item in enumerate(items):
        if not isinstance(item, dict) or not item.get("kind") or not item.get("apiVersion"):
            raise UserError(f"item {i} has no kind/apiVersion", where=where(i),
                            hint="each item must be a full Kubernetes object")
        objects.append(item)
    return objects
