"""A saved snapshot: a Kubernetes `List` (YAML or JSON) as `kubectl get … -o yaml` or `kai-gitops snapshot` writes."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import NamedTuple

import orjson
import yaml

from reconciler.core.capped import MAX_JSON_DEPTH, TooDeep, line_at, load_json, read_input
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue
from reconciler.core.refs import YamlPath
from reconciler.core.resources import CUSTOM_RESOURCE_DEFINITION, KRM_KINDS, QUEUE, SCHEDULING_SHARD
from reconciler.model.live import LiveState, LiveStateBuilder
from reconciler.model.queues import SnapshotQueues
from reconciler.yamlio import stream
from reconciler.yamlio.document import (
    YamlDoc,
    decode_text,
    duplicate_key_error,
    load_documents,
    reader_engine,
    too_deep,
    too_many_nodes,
)
from reconciler.yamlio.libyaml import TooDeep as YamlTooDeep
from reconciler.yamlio.libyaml import TooManyNodes

# On the List: when `kai-gitops snapshot` began reading the cluster, RFC 3339 in UTC. Written by the tool only; a
# snapshot without it (kubectl get -o yaml, an older kai-gitops) was taken at an unknown time.
TAKEN_AT_ANNOTATION = "kai-gitops.io/taken-at"
# Beside it: which cluster, as the API server identifies itself, the UID of its kube-system namespace (what
# `reconcile` binds a plan to). Absent from a snapshot of `kubectl get` or of a kai-gitops before 0.2.
CLUSTER_UID_ANNOTATION = "kai-gitops.io/cluster-uid"
_UID = re.compile(r"[0-9A-Za-z][-0-9A-Za-z]{0,127}")


def taken_at_stamp(when: datetime) -> str:
    """Microseconds: a write in the same second as the read began is on the right side of the cut."""
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def read_snapshot(path: str) -> LiveState:
    builder = LiveStateBuilder(f"snapshot {path}")
    head = _each_item(path, builder.add)
    state = builder.finish()
    state.from_snapshot, state.captured_at = True, head.taken_at
    return state


def read_snapshot_queues(path: str) -> SnapshotQueues:
    """Only the Queues of a snapshot (spec and status.allocated) and when it was taken: what the PR check judges
    Git's queues against. A snapshot with neither a Queue nor the Queue CRD is of no KAI cluster: refused."""
    return read_live_snapshot(path)[0]


def read_live_snapshot(path: str) -> tuple[SnapshotQueues, LiveState]:
    """What the PR check reads of a cluster's snapshot, in one read: its Queues (as read_snapshot_queues), and what
    it says of KAI Resource Management, the CRDs, Queues and SchedulingShards with their labels and managedFields,
    and KRM's own objects (checks/krm.py), both from the bytes whose cluster and time the head names."""
    builder = LiveStateBuilder(f"snapshot {path}")
    kept = (
        QUEUE.type_key,
        CUSTOM_RESOURCE_DEFINITION.type_key,
        SCHEDULING_SHARD.type_key,
        *(kind.type_key for kind in KRM_KINDS),
    )

    def keep(item: JSONObject) -> None:
        if (item.get("apiVersion"), item.get("kind")) in kept:
            builder.add(item)

    head = _each_item(path, keep)
    state = builder.finish()
    if not state.queue_kind_served:
        raise UserError(
            "snapshot holds no Queue and no Queue CRD: not a snapshot of a KAI cluster",
            where=path,
            hint="pass a file written by `kai-gitops snapshot` on that cluster",
        )
    queues = SnapshotQueues(f"snapshot {path}", head.taken_at, state.queues, state.allocations, head.cluster_uid, path)
    return queues, state


def snapshot_items(path: str) -> list[JSONObject]:
    """The objects of a snapshot file, checked to be Kubernetes objects (kind, apiVersion)."""
    items: list[JSONObject] = []
    _each_item(path, items.append)
    return items


# Snapshots of large clusters are big; the values-file limit would refuse a real `kubectl get pods -A -o yaml`.
SNAPSHOT_MAX_BYTES = 4 * 1024 * 1024 * 1024
# Read an item at a time, a snapshot's memory no longer grows with its values, but its time does (~2.5 s a
# million). Measured: a `kai-gitops snapshot` of 50,000 pods and 5,000 nodes (55,000 objects, 41 MB) holds 3.4
# million values, one of 150,000 pods and 15,000 nodes (133 MB) over 10 million; four times that still loads,
# and a file built to keep the reader busy stops there.
SNAPSHOT_MAX_NODES = 40_000_000
# A YAML snapshot larger than this is read an item at a time (yamlio.stream): memory follows what the checks
# keep, not the file. Smaller ones are read whole, by the readers every other YAML file goes through (the same
# values, and ruamel's messages for what only it reads); whole, a file costs ~500 bytes of memory per byte.
STREAM_ABOVE_BYTES = 256 * 1024
_HINT = "write it with `kai-gitops snapshot`, or as JSON (`-o FILE.json`)"


class _Head(NamedTuple):
    """What the List says of itself: when the snapshot was taken and of which cluster."""

    taken_at: datetime | None
    cluster_uid: str | None


def _each_item(path: str, consume: Callable[[JSONObject], None]) -> _Head:
    """Hands each object of the snapshot to `consume`, in order; returns when, and of which cluster, it was taken."""
    if not Path(path).exists():
        raise UserError(
            "snapshot file not found",
            where=path,
            hint="pass a file written by `kai-gitops snapshot` or `kubectl get … -o yaml`",
        )
    raw = read_input(path, SNAPSHOT_MAX_BYTES, "snapshot")
    if not raw.strip():
        raise UserError(
            "snapshot file is empty",
            where=f"{path}:1",
            hint="an empty file is not an empty cluster; write one with `kai-gitops snapshot`",
        )
    if raw.lstrip()[:1] in (b"{", b"["):
        loaded = _json_items(raw, path)
        for item in loaded.items:
            consume(item)
        return loaded.head
    text = decode_text(raw, path, max_bytes=SNAPSHOT_MAX_BYTES)
    del raw
    if len(text) <= STREAM_ABOVE_BYTES or not stream.available() or reader_engine() == "ruamel":
        loaded = _yaml_items(text, path)
        for item in loaded.items:
            consume(item)
        return loaded.head
    return _streamed_items(text, path, consume)


class _Loaded(NamedTuple):
    items: list[JSONObject]
    head: _Head


def _json_items(raw: bytes, path: str) -> _Loaded:
    try:
        data = load_json(raw)
    except TooDeep as exc:
        where = f"{path}:{line_at(raw, exc.offset)}"
        raise UserError(
            f"snapshot nests deeper than {MAX_JSON_DEPTH} levels",
            where=where,
            hint="write it with `kai-gitops snapshot`",
        ) from None
    except orjson.JSONDecodeError as exc:
        raise UserError(f"invalid JSON: {exc.msg}", where=f"{path}:{exc.lineno}:{exc.colno}") from None
    return _Loaded(_list_items(data, lambda i: f"{path}:1 (item {i})", path), _head(data, lambda _: f"{path}:1"))


def _yaml_items(text: str, path: str) -> _Loaded:
    items: list[JSONObject] = []
    head = _Head(None, None)
    for doc in load_documents(text, path, max_nodes=SNAPSHOT_MAX_NODES):
        items.extend(_list_items(doc.data, partial(_item_location, doc), path))
        head = _first(head, _head(doc.data, partial(_annotation_location, doc)), path)
    return _Loaded(items, head)


def _streamed_items(text: str, path: str, consume: Callable[[JSONObject], None]) -> _Head:
    def each(item: JSONValue, index: int, line: int) -> None:
        consume(_checked_item(item, index, f"{path}:{line}"))

    try:
        documents = stream.stream_documents(text, each, SNAPSHOT_MAX_NODES)
    except stream.Unusual as exc:
        raise UserError(
            f"{exc.what} in a snapshot over {STREAM_ABOVE_BYTES // 1024} KB, which is read an item at "
            "a time without anchors, aliases, tags, merge keys or directives (kubectl and kai-gitops "
            "snapshot write none)",
            where=f"{path}:{exc.line}",
            hint=_HINT,
        ) from None
    except stream.DuplicateKey as exc:
        raise duplicate_key_error(path, exc.key, exc.first, exc.second) from None
    except TooManyNodes as exc:
        raise too_many_nodes(path, exc.line, SNAPSHOT_MAX_NODES) from None
    except YamlTooDeep as exc:
        raise too_deep(path, exc.line) from None
    except yaml.YAMLError as exc:
        raise _invalid(exc, path) from None
    head = _Head(None, None)
    for document in documents:
        doc = YamlDoc(path, document.data, document.positions)
        if document.items is None:
            for item in _list_items(doc.data, partial(_item_location, doc), path):
                consume(item)
        elif not (isinstance(doc.data, dict) and str(doc.data.get("kind", "")).endswith("List")):
            raise UserError(
                "a document with a top-level `items` list must be a Kubernetes List (kind: List)",
                where=f"{path}:1",
                hint="write one with `kai-gitops snapshot -o FILE`",
            )
        head = _first(head, _head(doc.data, partial(_annotation_location, doc)), path)
    return head


def _invalid(exc: yaml.YAMLError, path: str) -> UserError:
    mark = getattr(exc, "problem_mark", None)
    where = path if mark is None else f"{path}:{mark.line + 1}:{mark.column + 1}"
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    return UserError(f"invalid YAML: {problem}", where=where, hint=_HINT)


def _annotation_location(doc: YamlDoc, name: str) -> str:
    probe: YamlPath = ("metadata", "annotations", name)
    while probe and probe not in doc.positions:  # the nearest written parent, as YamlDoc.locate
        probe = probe[:-1]
    line, column = doc.positions.get(probe, (1, 1))
    return f"{doc.file}:{line}:{column}"


def _head(data: JSONValue, where: Callable[[str], str]) -> _Head:
    return _Head(_taken_at(data, where), _cluster_uid(data, where))


def _first(seen: _Head, more: _Head, path: str) -> _Head:
    """The first document that says each: a snapshot is one List, but a file may hold more documents. Two
    documents of two clusters are one file pasted together, not a snapshot: which cluster it shows is unknown."""
    if seen.cluster_uid and more.cluster_uid and seen.cluster_uid != more.cluster_uid:
        raise UserError(
            f"the snapshot's documents name two clusters ({CLUSTER_UID_ANNOTATION} {seen.cluster_uid} "
            f"and {more.cluster_uid})",
            where=path,
            hint="take one snapshot of one cluster with `kai-gitops snapshot`",
        )
    return _Head(seen.taken_at or more.taken_at, seen.cluster_uid or more.cluster_uid)


def _list_annotation(data: JSONValue, name: str) -> JSONValue:
    meta = data.get("metadata") if isinstance(data, dict) and str(data.get("kind", "")).endswith("List") else None
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    return annotations.get(name) if isinstance(annotations, dict) else None


def _cluster_uid(data: JSONValue, where: Callable[[str], str]) -> str | None:
    uid = _list_annotation(data, CLUSTER_UID_ANNOTATION)
    if uid is None:
        return None
    if not isinstance(uid, str) or not _UID.fullmatch(uid):
        raise UserError(
            f"annotation {CLUSTER_UID_ANNOTATION} is not a Kubernetes UID: {str(uid)[:40]!r}",
            where=where(CLUSTER_UID_ANNOTATION),
            hint="`kai-gitops snapshot` writes the kube-system "
            "namespace's UID; take the snapshot again rather than editing it",
        )
    return uid


def _taken_at(data: JSONValue, where: Callable[[str], str]) -> datetime | None:
    stamp = _list_annotation(data, TAKEN_AT_ANNOTATION)
    if stamp is None:
        return None
    try:
        when = datetime.fromisoformat(stamp) if isinstance(stamp, str) else None
        utc = when.astimezone(UTC) if when is not None and when.tzinfo is not None else None
    except (ValueError, OverflowError):  # OverflowError: a valid shape past the last UTC instant
        utc = None
    if utc is None:
        raise UserError(
            f"annotation {TAKEN_AT_ANNOTATION} is not an RFC 3339 time with a zone: {str(stamp)[:40]!r}",
            where=where(TAKEN_AT_ANNOTATION),
            hint="`kai-gitops snapshot` writes it, e.g. "
            "2026-12-01T10:00:00.000000Z; remove the annotation if the time is unknown",
        )
    return utc


def _item_location(doc: YamlDoc, index: int) -> str:
    return str(doc.locate(("items", index)))


def _list_items(data: JSONValue, where: Callable[[int], str], path: str) -> list[JSONObject]:
    if not isinstance(data, dict):
        raise UserError(
            "a snapshot must be a Kubernetes List object",
            where=f"{path}:1",
            hint="write one with `kai-gitops snapshot -o FILE`",
        )
    items: JSONValue
    if not str(data.get("kind", "")).endswith("List"):
        items = [data]  # a single object is a list of one
    else:
        items = data.get("items") or []
        if not isinstance(items, list):
            raise UserError("`items` must be a list", where=where(0))
    return [_checked_item(item, i, where(i) if _is_bad(item) else "") for i, item in enumerate(items)]


def _is_bad(item: JSONValue) -> bool:
    return not isinstance(item, dict) or not item.get("kind") or not item.get("apiVersion")


def _checked_item(item: JSONValue, index: int, where: str) -> JSONObject:
    if not isinstance(item, dict) or _is_bad(item):
        raise UserError(
            f"item {index} has no kind/apiVersion", where=where, hint="each item must be a full Kubernetes object"
        )
    return item
