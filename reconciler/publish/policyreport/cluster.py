"""Report objects in the cluster: which kinds are served, what we wrote before, create / update / delete.

Every request goes through the run's cluster session, and every write passes the one write guard
(reconcile/allowed_writes.py, with plans/writable.py: a report carries our label, a delete names the uid it
read) before it leaves. The objects we own are found by label
(`app.kubernetes.io/managed-by=kai-gitops` and the cluster label) and have the one name the tool gives them
(`kai-gitops-<cluster>`, the name the shipped roles grant update and delete on), an update carries the `resourceVersion`
it read (a concurrent writer gets a 409, which is re-read once), an unchanged report is not written at all
(no etcd churn, no Policy Reporter events), and each write is one audit log line. Deletes are the only
ones the tool ever makes: `_Store.delete` accepts nothing but a listed object of one of `REPORT_KINDS` that
carries both labels and that name.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from reconciler.core.errors import UserError
from reconciler.core.resources import NAMESPACE, Resource
from reconciler.findings.finding import Finding
from reconciler.plans.writable import MANAGED_BY_LABEL
from reconciler.publish.policyreport.build import (
    CLUSTER_LABEL,
    OMITTED_ANNOTATION,
    REPORT_KINDS,
    SOURCE,
    TRUNCATED_POLICY,
    ReportSettings,
    Scope,
    build_report,
    cluster_label_value,
    report_name,
    scopes,
)
from reconciler.sources.cluster.client import ApiError, Conflict, NotFound
from reconciler.sources.cluster.session import ClusterSession

log = logging.getLogger("kai_gitops.policyreport")
_COMPARED = ("results", "summary", "configuration", "source")
OWN_PREFIX = "kai-gitops/"


@dataclass
class SyncResult:
    kinds: list[str] = field(default_factory=list)  # the report kinds served and written
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    omitted_by_group: dict[str, int] = field(default_factory=dict)

    @property
    def omitted_results(self) -> int:
        """Findings not listed for lack of room; each API group holds the same findings, so counted once."""
        return max(self.omitted_by_group.values(), default=0)

    def describe(self) -> str:
        if not self.kinds:
            return "policy reports: not written (no report CRDs served)"
        return (
            f"policy reports ({', '.join(self.kinds)}): {len(self.created)} created, {len(self.updated)} "
            f"updated, {len(self.unchanged)} unchanged, {len(self.deleted)} deleted"
            + (f", {self.omitted_results} results beyond the bounds" if self.omitted_results else "")
        )


def served_kinds(session: ClusterSession) -> list[Resource]:
    """The report kinds this API server serves (discovery of each group version; 404 = not installed)."""
    served: list[Resource] = []
    for group_version in dict.fromkeys((k.group, k.version) for k in REPORT_KINDS):
        path = f"/apis/{'/'.join(group_version)}"
        try:
            resources = session.transport.json("GET", path)
        except NotFound:
            continue
        except ApiError as exc:
            raise _api_error(exc, f"discovery of {'/'.join(group_version)}") from None
        plurals = {r.get("name") for r in resources.get("resources") or [] if isinstance(r, dict)}
        served += [k for k in REPORT_KINDS if (k.group, k.version) == group_version and k.plural in plurals]
    return served


def sync_reports(
    session: ClusterSession, findings: list[Finding], settings: ReportSettings, now: datetime
) -> SyncResult:
    """Make the cluster's kai-gitops reports for `settings.cluster` say exactly `findings`."""
    kinds = served_kinds(session)
    result = SyncResult()
    if not kinds:
        log.warning(
            "policy reports: this cluster serves neither wgpolicyk8s.io/v1alpha2 nor "
            "openreports.io/v1alpha1 report kinds; no reports written (install the PolicyReport or "
            "OpenReports CRDs to get them)"
        )
        return result
    store = _Store(session)
    namespaces = {f.subject.namespace for f in findings if f.subject and f.subject.namespace}
    missing = frozenset(namespaces - store.namespaces()) if namespaces else frozenset()
    planned = scopes(findings, cluster_namespaces=missing)
    for kind in kinds:
        # A namespaced kind without a cluster-scoped partner (or the reverse) still gets every finding.
        partner = any(k.group == kind.group and k.namespaced != kind.namespaced for k in kinds)
        wanted = [s for s in planned if (s.namespace is not None) == kind.namespaced]
        if not partner:
            wanted = _all_in_one(planned, kind)
        result.kinds.append(kind.kind)
        _sync_kind(store, kind, wanted, settings, now, result)
    return result


def recorded_first_seen(session: ClusterSession, cluster: str) -> dict[str, dict[str, int]]:
    """Read only: each fingerprint's earliest timestamp in our reports for `cluster`, of every kind served."""
    store = _Store(session)
    seen: dict[str, dict[str, int]] = {}
    for kind in served_kinds(session):
        for old in store.list_managed(kind, cluster):
            for fingerprint, stamp in _first_seen(old).items():
                if fingerprint not in seen or _instant(stamp) < _instant(seen[fingerprint]):
                    seen[fingerprint] = stamp
    seen.pop(TRUNCATED_POLICY, None)
    return seen


def _instant(stamp: dict[str, int]) -> tuple[int, int]:
    return stamp["seconds"], stamp["nanos"]


def _all_in_one(planned: list[Scope], kind: Resource) -> list[Scope]:
    if kind.namespaced:
        if planned[0].findings:
            log.warning(
                "policy reports: %s is served without its cluster-scoped kind; %d cluster-scoped "
                "findings are not written as %s",
                kind.kind,
                len(planned[0].findings),
                kind.kind,
            )
        return [s for s in planned if s.namespace is not None]
    return [Scope(None, [f for s in planned for f in s.findings])]


def _sync_kind(
    store: _Store, kind: Resource, wanted: list[Scope], settings: ReportSettings, now: datetime, result: SyncResult
) -> None:
    existing = {_key(o): o for o in store.list_managed(kind, settings.cluster)}
    omitted = 0
    for scope in wanted:
        key = (scope.namespace if kind.namespaced else None, report_name(settings.cluster))
        old = existing.pop(key, None)
        body = build_report(kind, scope, settings, now, _first_seen(old))
        omitted += int(body["metadata"]["annotations"].get(OMITTED_ANNOTATION, 0))
        label = _describe(kind, key)
        if old is None:
            store.create(kind, body)
            result.created.append(label)
            log.info("policy reports: created %s", label, extra={"audit": "create", "object": label})
        elif _same(old, body):
            result.unchanged.append(label)
        else:
            store.replace(kind, body, old)
            result.updated.append(label)
            log.info("policy reports: updated %s", label, extra={"audit": "update", "object": label})
    result.omitted_by_group[kind.group] = result.omitted_by_group.get(kind.group, 0) + omitted
    for key, stale in existing.items():
        label = _describe(kind, key)
        store.delete(kind, stale, settings.cluster)
        result.deleted.append(label)
        log.info("policy reports: deleted %s (no longer needed)", label, extra={"audit": "delete", "object": label})


def _key(obj: dict[str, Any]) -> tuple[str | None, str]:
    meta = obj.get("metadata") or {}
    return meta.get("namespace"), str(meta.get("name"))


def _describe(kind: Resource, key: tuple[str | None, str]) -> str:
    namespace, name = key
    return f"{kind.kind}/{namespace + '/' if namespace else ''}{name}"


def _first_seen(old: dict[str, Any] | None) -> dict[str, dict[str, int]]:
    """Fingerprint -> timestamp of the earlier report: a finding keeps the time it was first reported."""
    seen: dict[str, dict[str, int]] = {}
    for item in (old or {}).get("results") or []:
        fingerprint = (item.get("properties") or {}).get("fingerprint")
        if item.get("policy") == TRUNCATED_POLICY:
            fingerprint = TRUNCATED_POLICY
        stamp = item.get("timestamp")
        if fingerprint and isinstance(stamp, dict) and {"seconds", "nanos"} <= stamp.keys():
            try:
                seen[fingerprint] = {"seconds": int(stamp["seconds"]), "nanos": int(stamp["nanos"])}
            except (TypeError, ValueError):  # a hand-edited result: its finding is seen anew
                continue
    return seen


def _same(old: dict[str, Any], new: dict[str, Any]) -> bool:
    old_meta, new_meta = old.get("metadata") or {}, new["metadata"]
    if any(_ours(old_meta.get(k)) != _ours(new_meta[k]) for k in ("labels", "annotations")):
        return False
    return all(old.get(k) == new.get(k) for k in _COMPARED)


def _ours(entries: dict[str, str] | None) -> dict[str, str]:
    """Our labels and annotations; others' (added by a user or a tool) are kept as they are."""
    return {k: v for k, v in (entries or {}).items() if k.startswith(OWN_PREFIX) or k == MANAGED_BY_LABEL}


def _merged(old: dict[str, str] | None, new: dict[str, str]) -> dict[str, str]:
    others = {k: v for k, v in (old or {}).items() if k not in _ours(old)}
    return {**others, **new}


class _Store:
    """The report objects' requests over the session's transport (whose guard every write passes), with errors
    turned into one line naming the object and what to grant."""

    def __init__(self, session: ClusterSession) -> None:
        self.transport = session.transport

    def _call(
        self, what: str, method: str, path: str, body: Any = None, query: dict[str, str] | None = None
    ) -> dict[str, Any]:
        try:
            return self.transport.json(method, path, body, query=query)
        except ApiError as exc:
            raise _api_error(exc, what) from None

    def namespaces(self) -> set[str]:
        """Every namespace's name, paged; `list` is what the reader role already grants."""
        return {
            str((i.get("metadata") or {}).get("name"))
            for i in self._list("namespaces", NAMESPACE.collection_path(), {"limit": "500"})
        }

    def _list(self, what: str, path: str, query: dict[str, str]) -> list[dict[str, Any]]:
        try:
            return self.transport.items(path, query)
        except ApiError as exc:
            raise _api_error(exc, what) from None

    def list_managed(self, kind: Resource, cluster: str) -> list[dict[str, Any]]:
        selector = f"{MANAGED_BY_LABEL}={SOURCE},{CLUSTER_LABEL}={cluster_label_value(cluster)}"
        return [
            i
            for i in self._list(kind.plural, kind.collection_path(), {"labelSelector": selector, "limit": "100"})
            if _owned(i, cluster)
        ]

    def create(self, kind: Resource, body: dict[str, Any]) -> None:
        namespace = body["metadata"].get("namespace") if kind.namespaced else None
        self._call(kind.plural, "POST", kind.collection_path(namespace), body, {"fieldManager": SOURCE})

    def replace(self, kind: Resource, body: dict[str, Any], old: dict[str, Any]) -> None:
        """Update in place with the read resourceVersion as precondition; on a 409, re-read once and retry."""
        for attempt in (1, 2):
            meta = body["metadata"]
            old_meta = old.get("metadata") or {}
            meta["resourceVersion"] = old_meta.get("resourceVersion")
            meta["labels"] = _merged(old_meta.get("labels"), meta["labels"])
            meta["annotations"] = _merged(old_meta.get("annotations"), meta["annotations"])
            try:
                self.transport.request("PUT", _object_path(kind, meta), body, query={"fieldManager": SOURCE})
                return
            except ApiError as exc:
                if not isinstance(exc, Conflict) or attempt == 2:
                    raise _api_error(exc, f"update of {kind.plural}/{meta['name']}") from None
                old = self._call(kind.plural, "GET", _object_path(kind, meta))

    def delete(self, kind: Resource, obj: dict[str, Any], cluster: str) -> None:
        """Only a listed report of ours: one of REPORT_KINDS, both labels, uid as precondition."""
        if kind not in REPORT_KINDS or not _owned(obj, cluster):
            raise AssertionError(f"refusing to delete {obj.get('kind')} {_key(obj)}: not a kai-gitops report")
        meta = obj["metadata"]
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": meta.get("uid")}}
        try:
            self.transport.request("DELETE", _object_path(kind, meta), options)
        except NotFound:
            return  # already gone is what we wanted
        except ApiError as exc:
            raise _api_error(exc, f"delete of {kind.plural}/{meta['name']}") from None


def _object_path(kind: Resource, meta: dict[str, Any]) -> str:
    return kind.object_path(meta["name"], meta.get("namespace") if kind.namespaced else None)


def _owned(obj: dict[str, Any], cluster: str) -> bool:
    """Both labels and the one name the tool gives its reports of `cluster`: anyone may put our labels on an
    object of theirs, and the shipped roles may update or delete only that name (deploy/, resourceNames)."""
    meta = obj.get("metadata") or {}
    labels = meta.get("labels") or {}
    return (
        labels.get(MANAGED_BY_LABEL) == SOURCE
        and labels.get(CLUSTER_LABEL) == cluster_label_value(cluster)
        and meta.get("name") == report_name(cluster)
    )


def _api_error(exc: ApiError, what: str) -> UserError:
    hint = None
    if exc.status == 403:
        hint = (
            "grant this identity list and create on wgpolicyk8s.io policyreports and clusterpolicyreports "
            "(and openreports.io reports, clusterreports), get, update and delete on those named "
            "kai-gitops-<cluster>, and list on namespaces"
        )
    return UserError(f"policy reports: {what}: {exc.line()}", hint=hint)
