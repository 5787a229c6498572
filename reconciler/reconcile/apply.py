"""The plan's writes: the only code that changes the objects a plan names (Queues, kai-config, shards, node
labels), and only as plans/writable.py lists (the Lease, Events and PolicyReports have writers of their own,
through the same guard).

Every request goes through the run's cluster session (sources/cluster/session.py), whose transport passes
every non-GET request to the write guard, `allowed_writes.check_write`, first: it refuses any other method,
path or body, so no caller (or hand-edited plan) can make this module delete, or touch a Secret, a Pod or a
Helm release.

Why merge patches and not server-side apply: each change sets a few named fields to planned values,
with the freshly read resourceVersion as precondition, so a patch lands only on the object whose fields
were just checked against the plan. Server-side apply would make kai-gitops the owner of the whole
applied configuration: a later apply without a field would delete it, and on the default queues (created
by Helm, whose manager owns spec.resources) a non-forced apply conflicts on every field we mean to fix,
while a forced one silently takes them over. With a merge patch the takeover is explicit: the fields'
previous managers are read before the write and named in the audit line and the Event. The chart
renders the default queues only on `helm install` and keeps them, so Helm never fights back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from reconciler.core.names import dns_subdomain
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CONFIG, EVENT, LEASE, NODE, QUEUE, SCHEDULING_SHARD
from reconciler.model.live import SCHEDULE_LABEL
from reconciler.model.sensitive import SensitiveAllow
from reconciler.plans.applied import ChangeResult, WriteResult
from reconciler.plans.plan import Change, Operation
from reconciler.plans.writable import LABEL_PATH, PLANNED
from reconciler.reconcile.allowed_writes import MERGE_PATCH, WriteForbidden, check_sensitive
from reconciler.reconcile.staleness import change_state
from reconciler.sources.cluster.client import USER_AGENT as USER_AGENT  # the one user agent, shown here too
from reconciler.sources.cluster.client import ApiError
from reconciler.sources.cluster.session import ClusterSession

FIELD_MANAGER = "kai-gitops"
ApiFailure = ApiError  # the API server refused (status >= 300) or the connection failed (status 0)


@dataclass(frozen=True)
class WriteSettings:
    workers: int = 16  # concurrent node-label writes; queues are written one by one, in order


class ClusterWriter:
    """The writes a plan makes, as raw JSON over the session's transport, which holds them to the write guard;
    safe to share between threads. `allowed_sensitive`: the cluster's allowSensitiveWrites (KAI-S-001), checked
    here, before the session's guard, since only the plan's cluster says what it allows."""

    def __init__(
        self,
        session: ClusterSession,
        *,
        settings: WriteSettings | None = None,
        allowed_sensitive: tuple[SensitiveAllow, ...] = (),
    ) -> None:
        self.allowed_sensitive = allowed_sensitive
        self.settings = settings or WriteSettings()
        self.session = session
        self.label = session.label
        self._transport = session.transport

    # -- reads --------------------------------------------------------------------------------------

    def get(self, ref: ObjectRef) -> dict[str, Any] | None:
        """The object as stored now, or None when it does not exist."""
        try:
            return self._request("GET", object_path(ref))
        except ApiFailure as exc:
            if exc.status == 404:
                return None
            raise

    def list_nodes(self, page_limit: int = 500) -> dict[str, dict[str, Any]]:
        """Every Node by name, paged: one list instead of a GET per node when a plan labels many."""
        return {
            str(n["metadata"]["name"]): n
            for n in self._transport.items(NODE.collection_path(), {"limit": str(page_limit)})
        }

    def get_lease(self, namespace: str, name: str) -> dict[str, Any] | None:
        try:
            return self._request("GET", LEASE.object_path(name, namespace))
        except ApiFailure as exc:
            if exc.status == 404:
                return None
            raise

    # -- the writes ---------------------------------------------------------------------------------

    def create_queue(self, manifest: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        return self._request("POST", QUEUE.collection_path(), manifest, query=_write_query(dry_run))

    def patch_queue(self, name: str, body: dict[str, Any], *, dry_run: bool = False) -> dict[str, Any]:
        return self._request("PATCH", QUEUE.object_path(name), body, MERGE_PATCH, _write_query(dry_run))

    def patch_node_label(
        self, name: str, value: str | None, resource_version: str | None, *, dry_run: bool = False
    ) -> dict[str, Any]:
        meta: dict[str, Any] = {"labels": {SCHEDULE_LABEL: value}}
        if resource_version:
            meta["resourceVersion"] = resource_version
        return self._request("PATCH", NODE.object_path(name), {"metadata": meta}, MERGE_PATCH, _write_query(dry_run))

    def create_lease(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", LEASE.collection_path(namespace), body, query=_write_query(False))

    def update_lease(self, namespace: str, name: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("PUT", LEASE.object_path(name, namespace), body, query=_write_query(False))

    def create_event(self, namespace: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", EVENT.collection_path(namespace), body, query=_write_query(False))

    def write_change(self, change: Change, resource_version: str | None, *, dry_run: bool) -> dict[str, Any]:
        """One planned change as its single request: create, or merge patch with the RV precondition."""
        if change.operation is Operation.CREATE:
            assert change.manifest is not None
            return self.create_queue(change.manifest, dry_run=dry_run)
        if change.ref.kind == QUEUE.kind:
            return self.patch_queue(change.ref.name, change.merge_patch(resource_version), dry_run=dry_run)
        if change.ref.kind in (CONFIG.kind, SCHEDULING_SHARD.kind):
            return self._request(
                "PATCH",
                object_path(change.ref),
                change.merge_patch(resource_version),
                MERGE_PATCH,
                _write_query(dry_run),
            )
        (label,) = change.fields
        assert label.path == LABEL_PATH
        return self.patch_node_label(change.ref.name, label.after, resource_version, dry_run=dry_run)

    # -- one request: the transport guards, retries and sorts failures by status -------------------------

    def _request(
        self,
        method: str,
        path: str,
        body: Any = None,
        content_type: str | None = None,
        query: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        if method != "GET":
            check_sensitive(method, path, body, self.allowed_sensitive)
        return self._transport.json(method, path, body, content_type=content_type, query=query)


def object_path(ref: ObjectRef) -> str:
    if dns_subdomain(ref.name) is not None:  # not even a GET: a `..` in a name is normalised into another object's URL
        raise WriteForbidden(f"{ref.name!r} is not a Kubernetes object name")
    resource = next((r for r in PLANNED if r.describes(ref)), None)
    if resource is None:
        raise WriteForbidden(f"{ref} is not an object kai-gitops changes")
    return resource.object_path(ref.name, ref.namespace)


def _write_query(dry_run: bool) -> dict[str, str]:
    query = {"fieldManager": FIELD_MANAGER}
    if dry_run:
        query["dryRun"] = "All"
    return query


# --- applying a change set ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pending:
    """A change checked against the object as just read: write it with this resourceVersion."""

    change: Change
    resource_version: str | None
    previous_managers: tuple[str, ...] = ()


OnResult = Callable[[ChangeResult], None]


def apply_changes(
    writer: ClusterWriter,
    pending: list[Pending],
    on_result: OnResult,
    *,
    workers: int | None = None,
    lost: Callable[[], str | None] = lambda: None,
) -> list[ChangeResult]:
    """Queue changes one by one in plan order (parents first), then node labels concurrently.

    The first failure stops the run: nothing new is started, writes in flight finish, and everything
    not attempted is reported as such. `on_result` (the audit) runs with a `started` result just before
    each write, and once per change with its outcome as soon as it is known; only outcomes are returned.
    An interrupt (Ctrl-C; SIGTERM during apply, see reconcile.py) stops it the same way before it propagates.
    """
    run = _Run(writer, on_result, lost)
    ordered = list(enumerate(pending))
    try:
        for index, item in ordered:
            if item.change.ref.kind == QUEUE.kind:
                run.one(index, item)
        with ThreadPoolExecutor(max_workers=max(1, workers or writer.settings.workers)) as pool:
            list(pool.map(lambda pair: run.one(*pair), [(i, p) for i, p in ordered if p.change.ref.kind != QUEUE.kind]))
    except BaseException:
        run.stop.set()
        for index, item in ordered:  # cancelled before they started: still one audit line each
            if index not in run.results:
                run.record(index, ChangeResult(item.change, WriteResult.NOT_ATTEMPTED, error="the run was interrupted"))
        raise
    return [run.results[i] for i in range(len(pending))]


class _Run:
    def __init__(self, writer: ClusterWriter, on_result: OnResult, lost: Callable[[], str | None]) -> None:
        self.writer, self.on_result, self.lost = writer, on_result, lost
        self.stop = threading.Event()
        self.results: dict[int, ChangeResult] = {}
        self._lock = threading.Lock()

    def one(self, index: int, item: Pending) -> None:
        why_lost = self.lost()
        if why_lost:
            self.stop.set()
        if self.stop.is_set():
            self.record(index, ChangeResult(item.change, WriteResult.NOT_ATTEMPTED, error=why_lost))
            return
        # The intent, audited before the request leaves: a crash (SIGKILL, OOM) between the write and its
        # outcome line still leaves a trace of a write that may have landed; the re-run settles it.
        self.on_result(
            ChangeResult(
                item.change,
                WriteResult.STARTED,
                resource_version=item.resource_version,
                previous_managers=item.previous_managers,
            )
        )
        try:
            answer = self._write(item)
        except ApiFailure as exc:
            self.stop.set()
            self.record(
                index,
                ChangeResult(
                    item.change, WriteResult.FAILED, error=exc.line(), previous_managers=item.previous_managers
                ),
            )
            return
        except BaseException as exc:  # interrupted mid-request: it may or may not have landed
            self.stop.set()
            self.record(
                index,
                ChangeResult(
                    item.change,
                    WriteResult.FAILED,
                    previous_managers=item.previous_managers,
                    error=f"{type(exc).__name__}: the write may or may not have been applied",
                ),
            )
            raise
        meta = answer.get("metadata") or {}
        self.record(
            index,
            ChangeResult(
                item.change,
                WriteResult.APPLIED,
                resource_version=meta.get("resourceVersion"),
                previous_managers=item.previous_managers,
                uid=meta.get("uid"),
            ),
        )

    def _write(self, item: Pending) -> dict[str, Any]:
        """The write; after a 409 Conflict, once more with a fresh resourceVersion if the planned fields
        still hold their *before* values. On a busy cluster the kubelet and node labellers update Nodes
        for unrelated reasons between our read and our write, so without this nearly every large plan
        would stop; a planned field that changed still stops the run (the same rule as preflight)."""
        try:
            return self.writer.write_change(item.change, item.resource_version, dry_run=False)
        except ApiFailure as exc:
            if exc.status != 409 or item.change.operation is Operation.CREATE:
                raise
            obj = self.writer.get(item.change.ref)
            stale: list[str] = []
            if change_state(item.change, obj, stale) != "pending":
                why = "; ".join(stale) or "its planned fields already hold the planned values"
                raise ApiFailure(409, f"{exc.message}; read again: {why}", exc.reason) from None
            fresh = ((obj or {}).get("metadata") or {}).get("resourceVersion")
            return self.writer.write_change(item.change, fresh, dry_run=False)

    def record(self, index: int, result: ChangeResult) -> None:
        with self._lock:
            if index in self.results:
                return
            self.results[index] = result
        self.on_result(result)


def concurrently(items: Iterable[Any], func: Callable[[Any], Any], workers: int) -> list[Any]:
    """`func` over `items` on a bounded pool, results in input order; the first exception propagates."""
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(func, items))
