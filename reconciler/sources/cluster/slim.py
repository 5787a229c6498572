"""What the cluster reader keeps of each object, and who it hands them to.

One reduction serves both consumers (the LiveStateBuilder and the snapshot writer), so a snapshot read
back gives exactly the LiveState the live read gave. Pods and nodes shrink to the fields the checks
read; Secrets never leave this module: they become redacted Helm release summaries. Free text the cluster
holds (annotations, Event messages, NVCFBackend specs, NVCA's /healthz errors) is redacted here, as it is
read, so every format, the snapshot and the logs see it masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Protocol

import orjson
import yaml

from reconciler.core.jsonvalue import JSONArray, JSONObject, JSONValue, mapping_at, objects_at
from reconciler.core.redact import redact, redact_free_text, redact_free_values
from reconciler.core.resources import CONFIG_MAP, DEPLOYMENT, NAMESPACE, NODE, POD, SERVICE_ACCOUNT, Resource
from reconciler.model.gangs import POD_GROUP_KEY
from reconciler.model.helm import KAI_CHART, RELEASE_SECRET_TYPE, ReleaseDecodeError, decode_release_secret
from reconciler.model.managed_fields import dns_label, known_operation, rfc3339

Obj = JSONObject
HEALTHZ_KIND = ("kai-gitops/v1", "NVCAHealthz")
RELEASE_ERROR_KIND = ("kai-gitops/v1", "HelmReleaseError")
RELEASE_SEARCH_KIND = ("kai-gitops/v1", "HelmReleaseSearch")
CONFIG_READ_KIND = ("kai-gitops/v1", "KaiConfigRead")
_YAML_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
# kubectl's copy of the object as last applied: the whole spec again, secrets included, as one JSON string
# whose values no key-name net sees.
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class ObjectSink(Protocol):
    """Anything that takes live objects one at a time: LiveStateBuilder, SnapshotWriter, Tee."""

    def add(self, obj: Obj) -> None: ...


class Tee:
    """Feed several sinks in the same order (e.g. build the state and write a snapshot in one read)."""

    def __init__(self, sinks: Iterable[ObjectSink]) -> None:
        self.sinks = list(sinks)

    def add(self, obj: Obj) -> None:
        for sink in self.sinks:
            sink.add(obj)


def typed(item: Obj, resource: Resource) -> Obj:
    """List items carry no apiVersion/kind on the wire; the builder dispatches on them (first, as kubectl shows)."""
    return {"apiVersion": resource.api_version, "kind": resource.kind, **item}


def _meta(obj: Mapping[str, JSONValue], *keys: str) -> Obj:
    meta = mapping_at(obj, "metadata")
    return {k: meta[k] for k in keys if meta.get(k) is not None}


def slim_pod(obj: Obj) -> Obj:
    spec, status = mapping_at(obj, "spec"), mapping_at(obj, "status")
    conditions: JSONArray = [
        {k: c[k] for k in ("type", "status", "reason") if k in c} for c in objects_at(status, "conditions")
    ]
    pod_status: Obj = {"phase": status.get("phase", "")}
    if conditions:
        pod_status["conditions"] = conditions
    if status.get("startTime"):
        pod_status["startTime"] = status["startTime"]
    meta = _meta(obj, "name", "namespace", "labels", "creationTimestamp")
    kept_spec: Obj = {k: spec[k] for k in ("schedulerName", "nodeName", "serviceAccountName") if spec.get(k)}
    gang = mapping_at(mapping_at(obj, "metadata"), "annotations").get(POD_GROUP_KEY)
    if gang is not None:
        meta["annotations"] = {POD_GROUP_KEY: gang}
        if status.get("phase") == "Pending":  # what a stuck gang member asks for (KAI-T-001 quotes it)
            kept_spec["containers"] = _requests_only(spec)
    return typed({"metadata": meta, "spec": kept_spec, "status": pod_status}, POD)


def _requests_only(spec: Obj) -> JSONArray:
    return [
        {"resources": {"requests": dict(mapping_at(mapping_at(c, "resources"), "requests"))}}
        for c in objects_at(spec, "containers")
    ]


def slim_pod_group(obj: Obj) -> Obj:
    """A PodGroup: its queue, size and topology, and the scheduler's UnschedulableOnNodePool conditions (their
    messages redacted: the scheduler quotes the queue and what the gang asked for)."""
    spec = mapping_at(obj, "spec")
    kept_spec: Obj = {k: spec[k] for k in ("queue", "minMember", "topologyConstraint") if spec.get(k) is not None}
    conditions: JSONArray = []
    for condition in objects_at(mapping_at(obj, "status"), "schedulingConditions"):
        kept: Obj = {
            k: condition[k] for k in ("type", "nodePool", "status", "reason", "lastTransitionTime") if k in condition
        }
        if isinstance(condition.get("message"), str):
            kept["message"] = redact_free_text(str(condition["message"]))
        kept["reasons"] = [
            {"reason": r.get("reason", ""), "message": redact_free_text(str(r.get("message", "")))}
            for r in objects_at(condition, "reasons")
        ]
        conditions.append(kept)
    status: Obj = {"schedulingConditions": conditions} if conditions else {}
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": _meta(obj, "name", "namespace", "creationTimestamp"),
        "spec": kept_spec,
        "status": status,
    }


def slim_binding(obj: Obj) -> Obj:
    """A Grove ClusterTopologyBinding: its spec and whether Grove says KAI's Topology drifted from it (the
    SchedulerTopologyDrift condition, each scheduler topology's inSync), messages redacted."""
    kept = as_is(obj)
    status = mapping_at(kept, "status")
    conditions: JSONArray = [
        {k: c[k] for k in ("type", "status", "reason") if k in c}
        | {"message": redact_free_text(str(c.get("message", "")))}
        for c in objects_at(status, "conditions")
    ]
    statuses: JSONArray = [
        {k: st[k] for k in ("schedulerName", "topologyReference", "inSync") if k in st}
        | {"message": redact_free_text(str(st.get("message", "")))}
        for st in objects_at(status, "schedulerTopologyStatuses")
    ]
    kept["status"] = {k: v for k, v in (("conditions", conditions), ("schedulerTopologyStatuses", statuses)) if v}
    return kept


def slim_kai_pod(obj: Obj) -> Obj:
    """A pod of kai-scheduler, with when each restarted container last ended: from v0.17.0 the scheduler exits
    on 401 Unauthorized and the kubelet restarts it (only this namespace's pods carry it, not the cluster's)."""
    slim = slim_pod(obj)
    restarted: JSONArray = [
        {
            "name": c.get("name", ""),
            "restartCount": c["restartCount"],
            "lastState": {
                "terminated": {
                    k: v for k, v in mapping_at(mapping_at(c, "lastState"), "terminated").items() if k == "finishedAt"
                }
            },
        }
        for c in objects_at(mapping_at(obj, "status"), "containerStatuses")
        if _positive(c.get("restartCount"))
    ]
    if restarted:
        slim["status"] = {**mapping_at(slim, "status"), "containerStatuses": restarted}
    return slim


def _positive(count: JSONValue) -> bool:
    return isinstance(count, int) and not isinstance(count, bool) and count > 0


def slim_deployment(obj: Obj) -> Obj:
    """What says whether an operand is up, and which kai-config (by UID) created it."""
    spec, status = mapping_at(obj, "spec"), mapping_at(obj, "status")
    owners: JSONArray = [
        {k: o[k] for k in ("kind", "name", "uid") if k in o}
        for o in objects_at(mapping_at(obj, "metadata"), "ownerReferences")
    ]
    kept_status: Obj = {k: status[k] for k in ("updatedReplicas", "availableReplicas") if k in status}
    meta = _meta(obj, "name", "namespace", "labels")
    if owners:
        meta["ownerReferences"] = owners
    return typed({"metadata": meta, "spec": {"replicas": spec.get("replicas", 1)}, "status": kept_status}, DEPLOYMENT)


def slim_service_account(obj: Obj) -> Obj:
    """When it was created (a re-created one invalidates the tokens of pods started before it)."""
    return typed({"metadata": _meta(obj, "name", "namespace", "uid", "creationTimestamp")}, SERVICE_ACCOUNT)


def slim_lease(obj: Obj) -> Obj:
    """When the leader last renewed it, and for how long a renewal holds."""
    spec = mapping_at(obj, "spec")
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": _meta(obj, "name", "namespace"),
        "spec": {k: spec[k] for k in ("renewTime", "leaseDurationSeconds") if k in spec},
    }


def slim_job(obj: Obj) -> Obj:
    conditions: JSONArray = [
        {k: c[k] for k in ("type", "status", "reason") if k in c}
        for c in objects_at(mapping_at(obj, "status"), "conditions")
    ]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": _meta(obj, "name", "namespace"),
        "status": {"conditions": conditions},
    }


def slim_node(obj: Obj) -> Obj:
    """Name and labels, and who set which label: the managedFields entries that own labels, cut down to them
    (the kubelet's status entries are most of a node's and say nothing about its labels)."""
    meta = _meta(obj, "name", "labels", "creationTimestamp")
    managed = [_label_entry(e) for e in objects_at(mapping_at(obj, "metadata"), "managedFields")]
    kept: JSONArray = [e for e in managed if e is not None]
    if kept:
        meta["managedFields"] = kept
    return typed({"metadata": meta}, NODE)


def _label_entry(entry: Obj) -> Obj | None:
    labels = mapping_at(mapping_at(mapping_at(entry, "fieldsV1"), "f:metadata"), "f:labels")
    if not labels:
        return None
    return _managed_entry({**entry, "fieldsV1": {"f:metadata": {"f:labels": labels}}})


def checked_object(obj: Obj) -> Obj:
    """An object the differ compares with Git (a Queue, kai-config, a SchedulingShard): as `as_is`, but its
    managedFields kept, so a drifted field names the manager that last set it (a snapshot as the live read)."""
    meta = obj.get("metadata")
    managed = meta.get("managedFields") if isinstance(meta, dict) else None
    kept = as_is(obj)
    if isinstance(meta, dict) and isinstance(managed, list):
        meta["managedFields"] = [_managed_entry(e) for e in managed if isinstance(e, dict)]
    return kept


# The entry's fields with a fixed shape keep only that shape: free text (a credential) cannot ride in them.
_MANAGED_SHAPES = {"operation": known_operation, "subresource": dns_label, "time": rfc3339}


def _managed_entry(entry: Obj) -> Obj:
    """The entry's own keys; the manager's name (free text) and the values fieldsV1 spells in its keys (a set
    member `v:"--token=…"`, a list key `k:{…}`) redacted, as everything else the cluster wrote."""
    kept: Obj = {}
    for key in ("manager", "operation", "subresource", "apiVersion", "time", "fieldsType"):
        value = entry.get(key)
        shaped = _MANAGED_SHAPES.get(key)
        if isinstance(value, str) and (shaped is None or shaped(value) is not None):
            kept[key] = value
    if "manager" in kept:
        kept["manager"] = redact_free_text(str(kept["manager"]))
    kept["fieldsV1"] = _redacted_field_set(mapping_at(entry, "fieldsV1"))
    return kept


def _redacted_field_set(fields: Obj) -> Obj:
    return {
        (redact_free_text(k) if k.startswith(("v:", "k:")) else k): _redacted_field_set(v)
        if isinstance(v, dict)
        else {}
        for k, v in fields.items()
    }


def slim_namespace(obj: Obj) -> Obj:
    return typed({"metadata": _meta(obj, "name", "labels", "creationTimestamp")}, NAMESPACE)


def slim_crd(obj: Obj) -> Obj:
    """Presence is what counts; the OpenAPI schema (tens of KB per CRD) is dropped."""
    spec = mapping_at(obj, "spec")
    kept: Obj = {k: spec[k] for k in ("group", "scope") if k in spec}
    kind = mapping_at(spec, "names").get("kind")
    if kind:
        kept["names"] = {"kind": kind}
    if spec.get("versions"):
        kept["versions"] = [
            {k: v[k] for k in ("name", "served", "storage") if k in v} for v in objects_at(spec, "versions")
        ]
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": _meta(obj, "name", "creationTimestamp"),
        "spec": kept,
    }


def as_is(obj: Obj) -> Obj:
    """Kept whole, minus metadata.managedFields (bookkeeping; `kubectl get -o yaml` hides it too) and the
    last-applied copy; annotations (free text anyone may write) redacted. The spec stays as it is: the
    differ compares it with Git."""
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            annotations.pop(LAST_APPLIED, None)
            meta["annotations"] = redact(annotations)
    return obj


def kai_object(obj: Obj) -> Obj:
    """A KAI Config or SchedulingShard: kept whole (the differ compares its spec with Git), its condition
    messages redacted (the operator quotes the errors of what it deployed)."""
    kept = checked_object(obj)
    for condition in objects_at(mapping_at(kept, "status"), "conditions"):
        message = condition.get("message")
        if isinstance(message, str):
            condition["message"] = redact_free_text(message)
    return kept


def slim_krm(obj: Obj) -> Obj:
    """A KAI Resource Management Project, Department, NodePool or KRMConfig: its spec (what generates Queues and
    shards), without its status (per-node-pool usage, node lists: large, and read by no check)."""
    obj.pop("status", None)
    return as_is(obj)


def config_read_item() -> Obj:
    """Says the Config kind is served and kai-config was looked for, so a snapshot without a kai-config
    says "missing", not "not read"."""
    return {"apiVersion": CONFIG_READ_KIND[0], "kind": CONFIG_READ_KIND[1], "metadata": {"name": "kai-config"}}


def redacted(obj: Obj) -> Obj:
    """Kept whole and redacted throughout (an NVCFBackend's spec holds NGC credentials; the checks read only
    its feature gates and agent status), its name and namespace as they are."""
    kept = as_is(obj)
    masked = redact(kept)
    meta = masked.get("metadata")
    if isinstance(meta, dict):
        meta.update(_meta(kept, "name", "namespace"))  # in place: the keys keep their order
    return masked


def redacted_event(obj: Obj) -> Obj:
    """An Event with its message (core/v1) or note (events.k8s.io/v1) redacted: the scheduler quotes what
    the pod asked for, and any controller may write an Event."""
    kept = as_is(obj)
    for key in ("message", "note"):
        text = kept.get(key)
        if isinstance(text, str):
            kept[key] = redact_free_text(text)
    return kept


def release_summary(obj: Obj) -> Obj | None:
    """A release Secret as a redacted summary (no manifest, no raw values); other charts' releases without their
    values, which the reader keeps only when they own a checked object (a Helm-owned field names its release)."""
    if obj.get("type") != RELEASE_SECRET_TYPE:
        return None  # never keep other Secrets, not even in memory
    try:
        release = decode_release_secret(obj)
    except ReleaseDecodeError as exc:
        return {
            "apiVersion": RELEASE_ERROR_KIND[0],
            "kind": RELEASE_ERROR_KIND[1],
            "metadata": _meta(obj, "name", "namespace"),
            "message": redact_free_text(str(exc)),
        }
    if release.chart_name != KAI_CHART:
        return replace(release, values={}).to_summary()
    return release.to_summary()


def slim_dto(obj: Obj) -> Obj | None:
    """The cluster DTO ConfigMap with only the feature gates: the rest of the rendered DTO (URLs, IDs, client
    settings) is not ours to keep or to write into a snapshot someone will attach to a bug report."""
    text = mapping_at(obj, "data").get("cluster-dto.yaml")
    try:
        dto: JSONValue = yaml.load(text, Loader=_YAML_LOADER) if isinstance(text, str) else None
    except yaml.YAMLError:
        dto = None
    kept = {"capabilities": dto.get("capabilities")} if isinstance(dto, dict) else {}
    # JSON is YAML: the reader parses it
    return typed(
        {"metadata": _meta(obj, "name", "namespace"), "data": {"cluster-dto.yaml": orjson.dumps(kept).decode()}},
        CONFIG_MAP,
    )


def healthz_item(http_status: int | None, body: JSONValue, *, reachable: bool, detail: str = "") -> Obj:
    """NVCA's answer, its component errors (free text NVCA copies from what failed) redacted."""
    item: Obj = {
        "apiVersion": HEALTHZ_KIND[0],
        "kind": HEALTHZ_KIND[1],
        "metadata": {"name": "nvca"},
        "httpStatus": http_status,
        "body": redact_free_values(body),
    }
    if not reachable:
        item["reachable"] = False
        item["detail"] = redact_free_text(detail)
    return item


def release_search_item(namespaces: list[str], reason: str) -> Obj:
    """Where release Secrets were searched when not every namespace could be: kept in snapshots too, so a
    snapshot taken with least-privilege RBAC reports the same "not checked" as the live run."""
    return {
        "apiVersion": RELEASE_SEARCH_KIND[0],
        "kind": RELEASE_SEARCH_KIND[1],
        "metadata": {"name": "helm-releases"},
        "namespaces": [*namespaces],
        "reason": reason,
    }
