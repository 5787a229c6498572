"""Live cluster state, reduced to what the checks read, built one object at a time.

Snapshot and cluster sources both feed `LiveStateBuilder.add`, so a 50,000-pod cluster never becomes
50,000 dicts in memory: every object is reduced to a small summary as it arrives.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

from reconciler.core import resources as k8s
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, as_object, list_at, mapping_at
from reconciler.core.redact import redact_free_text, redact_free_values, redact_text
from reconciler.model.gangs import (
    POD_GROUP_KEY,
    GangState,
    binding_summary,
    pod_group_summary,
    topology_summary,
)
from reconciler.model.gates import split_gate_string
from reconciler.model.helm import (
    KAI_CHART,
    RELEASE_SECRET_TYPE,
    Deploy,
    HelmRelease,
    ReleaseDecodeError,
    decode_release_secret,
    latest_per_release,
    release_from_summary,
    release_history,
)
from reconciler.model.krm import KrmObjects
from reconciler.model.managed_fields import ObjectManagers, object_managers
from reconciler.model.queues import Allocation, QueueSpec, allocation_from_status, queue_spec_from_values

SCHEDULE_LABEL = "nvca.nvcf.nvidia.io/schedule"
QUEUE_LABEL = "kai.scheduler/queue"
NVCF_POD_LABEL = "icms-request-id"
NVCF_NAMESPACE_LABEL = "nvca.nvcf.nvidia.io/workload-instance-type"
KAI_NAMESPACE = "kai-scheduler"
DTO_CONFIGMAP = ("nvca-operator", "nvcfbackend-self-managed")
QUEUE_CRD = k8s.QUEUE.crd_name


@dataclass(frozen=True)
class PodSummary:
    namespace: str
    name: str
    scheduler: str
    queue_label: str | None
    phase: str
    ready: bool
    age_s: float | None
    labels_nvcf: bool
    service_account: str = ""
    started: str = ""  # status.startTime: when its containers got their projected token
    # (container, restartCount, lastState.terminated.finishedAt) of each container that restarted; kept for KAI pods
    restarts: tuple[tuple[str, int, str], ...] = ()
    gang: str = ""  # the PodGroup it belongs to (its pod-group-name)
    # (resource, quantity) a Pending gang member asks for, summed over its containers as the scheduler sees them
    requests: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Backend:
    name: str
    namespace: str
    spec_gates: list[str] | None
    override_gates: list[str] | None
    status_gates: list[str] | None
    agent_status: str | None


@dataclass(frozen=True)
class Healthz:
    reachable: bool
    http_status: int | None
    status: str | None
    components: JSONObject
    detail: str = ""

    def queue_component(self) -> tuple[str | None, list[str]]:
        """The queue component's status and errors, as text: NVCA's answer is read, not trusted to be typed."""
        comp = as_object(self.components.get("kai-scheduler-queues"))
        status, errors = comp.get("Status"), comp.get("Errors") or []
        listed = errors if isinstance(errors, list) else [errors]
        return (None if status is None else str(status)), [str(e) for e in listed]


@dataclass(frozen=True)
class KaiObject:
    """A live KAI Config or SchedulingShard: its spec, and what says whether the operator acted on it."""

    name: str
    spec: JSONObject
    uid: str = ""
    generation: int | None = None
    created: str = ""
    annotations: dict[str, str] = field(default_factory=dict)
    conditions: list[JSONObject] = field(default_factory=list)
    labels: dict[str, str] = field(default_factory=dict)


def kai_object(obj: Mapping[str, JSONValue]) -> KaiObject:
    meta = mapping_at(obj, "metadata")
    generation = meta.get("generation")
    return KaiObject(
        str(meta.get("name", "")),
        dict(mapping_at(obj, "spec")),
        str(meta.get("uid") or ""),
        generation if isinstance(generation, int) and not isinstance(generation, bool) else None,
        str(meta.get("creationTimestamp") or ""),
        {str(k): str(v) for k, v in mapping_at(meta, "annotations").items()},
        [dict(c) for c in list_at(mapping_at(obj, "status"), "conditions") if isinstance(c, dict)],
        {str(k): str(v) for k, v in mapping_at(meta, "labels").items()},
    )


@dataclass(frozen=True)
class Operand:
    """A Deployment in kai-scheduler: whether it is up, and which object (by UID) created it."""

    name: str
    owners: tuple[tuple[str, str, str], ...]  # (kind, name, uid) of its ownerReferences
    replicas: int
    updated: int
    available: int


@dataclass
class LiveState:
    source: str
    from_snapshot: bool = False
    captured_at: datetime | None = None  # when a snapshot's read began, when it says; else None
    queue_kind_served: bool = False
    crds: set[str] = field(default_factory=set)
    queues: dict[str, QueueSpec] = field(default_factory=dict)
    allocations: dict[str, Allocation] = field(default_factory=dict)  # queues whose status KAI has written
    shard: JSONObject | None = None  # the spec of SchedulingShard default
    shards: dict[str, KaiObject] = field(default_factory=dict)  # every SchedulingShard, by name
    kai_config: KaiObject | None = None
    kai_config_read: bool = False  # the Config kind is served and kai-config was looked for
    operands: list[Operand] = field(default_factory=list)  # Deployments in kai-scheduler
    service_accounts: dict[str, str] = field(default_factory=dict)  # kai-scheduler SA -> creationTimestamp
    deployer_job_failed: str | None = None  # Job kai-config-deployer's Failed reason, when it failed
    # The scheduler's leader Lease kai-scheduler/kai-scheduler: seconds since its last renewal (at read time)
    # and its duration; None when there is none
    scheduler_lease: tuple[float, int] | None = None
    releases: list[HelmRelease] = field(default_factory=list)  # latest revision of every KAI release
    # every revision read of every release, by (namespace, name): which one set a Helm-owned field
    release_history: dict[tuple[str, str], tuple[Deploy, ...]] = field(default_factory=dict)
    # managedFields of what the differ compares, by (kind, name): Queue, SchedulingShard, Config, Node (labels)
    managers: dict[tuple[str, str], ObjectManagers] = field(default_factory=dict)
    queue_labels: dict[str, dict[str, str]] = field(default_factory=dict)  # Queue name -> its labels
    release_errors: list[str] = field(default_factory=list)
    # None: release Secrets of every namespace were read. Else only these were (RBAC denied the rest),
    # and `release_search_reason` says why.
    release_namespaces: list[str] | None = None
    release_search_reason: str = ""
    backends: list[Backend] = field(default_factory=list)
    dto_capabilities: list[str] | None = None
    nodes_total: int = 0
    schedule_labels: dict[str, str] = field(default_factory=dict)  # node -> raw label value
    # node -> its labels as interned "key=value" strings: GPU nodes share most labels, so 5,000 nodes cost
    # little, and a shared-cluster intent given as a node selector can be resolved without another read
    node_labels: dict[str, frozenset[str]] = field(default_factory=dict)
    nvcf_pods: list[PodSummary] = field(default_factory=list)
    kai_pods: list[PodSummary] = field(default_factory=list)
    unschedulable: dict[tuple[str, str], str] = field(default_factory=dict)
    healthz: Healthz | None = None
    gangs: GangState = field(default_factory=GangState)
    # KAI Resource Management's Projects, Departments, NodePools and krm-config, when its CRDs are served
    krm: KrmObjects = field(default_factory=KrmObjects)


class LiveStateBuilder:
    def __init__(self, source: str, *, now: datetime | None = None) -> None:
        self.state = LiveState(source)
        self.now = now or datetime.now(UTC)
        self._releases: list[HelmRelease] = []
        self._pods: list[PodSummary] = []
        self._nvcf_namespaces: set[str] = set()

    def add(self, obj: JSONObject) -> None:
        handler = _HANDLERS.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))))
        if handler is None:
            return
        try:
            handler(self, obj)
        except (TypeError, AttributeError, ValueError, KeyError) as exc:
            # A hand-edited snapshot can hold anything; say which object, not where in our code.
            raise UserError(
                f"{_describe(obj)} does not have the shape of a Kubernetes object of its kind "
                f"({type(exc).__name__}: {exc})",
                hint="regenerate it with `kai-gitops snapshot`",
            ) from None

    def mark_queue_kind_served(self, served: bool) -> None:
        self.state.queue_kind_served = served

    def finish(self) -> LiveState:
        state = self.state
        state.releases = latest_per_release([r for r in self._releases if r.chart_name == KAI_CHART])
        state.release_history = release_history(self._releases)
        for pod in self._pods:
            if pod.namespace == KAI_NAMESPACE and not pod.labels_nvcf:
                state.kai_pods.append(pod)
            elif pod.labels_nvcf or pod.namespace in self._nvcf_namespaces:
                state.nvcf_pods.append(pod)
        state.queue_kind_served = state.queue_kind_served or QUEUE_CRD in state.crds or bool(state.queues)
        return state

    # -- reducers, one per kind ---------------------------------------------------------------

    def _queue(self, obj: JSONObject) -> None:
        spec = queue_spec_from_values(obj)
        self.state.queues[spec.name] = spec
        self.state.queue_labels[spec.name] = {
            str(k): str(v) for k, v in mapping_at(mapping_at(obj, "metadata"), "labels").items()
        }
        allocation = allocation_from_status(obj)
        if allocation is not None:
            self.state.allocations[spec.name] = allocation
        self._keep_managers(k8s.QUEUE.kind, obj)

    def _keep_managers(self, kind: str, obj: JSONObject) -> None:
        managers = object_managers(obj)
        if managers.entries:  # none: read without them (an older snapshot), so nothing to say
            self.state.managers[(kind, _meta(obj, "name"))] = managers

    def _crd(self, obj: JSONObject) -> None:
        self.state.crds.add(_meta(obj, "name"))

    def _shard(self, obj: JSONObject) -> None:
        shard = kai_object(obj)
        self.state.shards[shard.name] = shard
        self._keep_managers(k8s.SCHEDULING_SHARD.kind, obj)
        if shard.name == "default":
            self.state.shard = mapping_at(obj, "spec")

    def _config(self, obj: JSONObject) -> None:
        if _meta(obj, "name") == "kai-config":  # the operator ignores any other name
            self.state.kai_config = kai_object(obj)
            self.state.kai_config_read = True
            self._keep_managers(k8s.CONFIG.kind, obj)

    def _krm(self, obj: JSONObject) -> None:
        self.state.krm.add(obj)

    def _config_read(self, obj: JSONObject) -> None:
        self.state.kai_config_read = True

    def _deployment(self, obj: JSONObject) -> None:
        meta, spec, status = mapping_at(obj, "metadata"), mapping_at(obj, "spec"), mapping_at(obj, "status")
        owners = tuple(
            (str(o.get("kind", "")), str(o.get("name", "")), str(o.get("uid", "")))
            for o in list_at(meta, "ownerReferences")
            if isinstance(o, dict)
        )
        self.state.operands.append(
            Operand(
                _meta(obj, "name"),
                owners,
                _count(spec.get("replicas"), 1),
                _count(status.get("updatedReplicas"), 0),
                _count(status.get("availableReplicas"), 0),
            )
        )

    def _service_account(self, obj: JSONObject) -> None:
        if _meta(obj, "namespace") == KAI_NAMESPACE:
            self.state.service_accounts[_meta(obj, "name")] = _meta(obj, "creationTimestamp")

    def _lease(self, obj: JSONObject) -> None:
        if (_meta(obj, "namespace"), _meta(obj, "name")) != (KAI_NAMESPACE, "kai-scheduler"):
            return
        spec = mapping_at(obj, "spec")
        age = _age(spec.get("renewTime"), self.now)
        if age is not None:
            self.state.scheduler_lease = (age, _count(spec.get("leaseDurationSeconds"), 15))

    def _job(self, obj: JSONObject) -> None:
        if (_meta(obj, "namespace"), _meta(obj, "name")) != (KAI_NAMESPACE, "kai-config-deployer"):
            return
        failed = [
            c
            for c in list_at(mapping_at(obj, "status"), "conditions")
            if isinstance(c, dict) and c.get("type") == "Failed" and c.get("status") == "True"
        ]
        if failed:
            self.state.deployer_job_failed = redact_free_text(str(failed[0].get("reason") or "Failed"))

    def _secret(self, obj: JSONObject) -> None:
        if obj.get("type") != RELEASE_SECRET_TYPE:
            return  # never keep other Secrets, not even in memory
        try:
            self._releases.append(decode_release_secret(obj))
        except ReleaseDecodeError as exc:
            self.state.release_errors.append(f"Secret/{_meta(obj, 'namespace')}/{_meta(obj, 'name')}: {exc}")

    def _release_summary(self, obj: JSONObject) -> None:
        self._releases.append(release_from_summary(obj))

    def _backend(self, obj: JSONObject) -> None:
        spec, status = mapping_at(obj, "spec"), mapping_at(obj, "status")
        agent_status = status.get("agentStatus")
        self.state.backends.append(
            Backend(
                _meta(obj, "name"),
                _meta(obj, "namespace"),
                _gates_at(spec, "featureGate"),
                _gates_at(mapping_at(spec, "overrides"), "featureGate"),
                _gates_at(status, "featureGate"),
                None if agent_status is None else redact_free_text(str(agent_status)),
            )
        )

    def _configmap(self, obj: JSONObject) -> None:
        if (_meta(obj, "namespace"), _meta(obj, "name")) == DTO_CONFIGMAP:
            self.state.dto_capabilities = _dto_capabilities(mapping_at(obj, "data").get("cluster-dto.yaml"))

    def _node(self, obj: JSONObject) -> None:
        self.state.nodes_total += 1
        labels = mapping_at(mapping_at(obj, "metadata"), "labels")
        name = _meta(obj, "name")
        if SCHEDULE_LABEL in labels:
            self.state.schedule_labels[name] = str(labels[SCHEDULE_LABEL])
        self.state.node_labels[name] = frozenset(sys.intern(f"{k}={v}") for k, v in labels.items())
        self._keep_managers(k8s.NODE.kind, obj)

    def _namespace(self, obj: JSONObject) -> None:
        if NVCF_NAMESPACE_LABEL in mapping_at(mapping_at(obj, "metadata"), "labels"):
            self._nvcf_namespaces.add(_meta(obj, "name"))

    def _pod(self, obj: JSONObject) -> None:
        self._pods.append(pod_summary(obj, self.now))

    def _pod_group(self, obj: JSONObject) -> None:
        group = pod_group_summary(obj)
        self.state.gangs.pod_groups[(group.namespace, group.name)] = group

    def _topology(self, obj: JSONObject) -> None:
        topology = topology_summary(obj)
        self.state.gangs.topologies[topology.name] = topology

    def _binding(self, obj: JSONObject) -> None:
        binding = binding_summary(obj)
        self.state.gangs.bindings[binding.name] = binding

    def _event(self, obj: JSONObject) -> None:
        # core/v1 Events say involvedObject/message; events.k8s.io/v1 says regarding/note.
        involved = mapping_at(obj, "involvedObject") or mapping_at(obj, "regarding")
        if obj.get("reason") in ("Unschedulable", "FailedScheduling"):
            key = (str(involved.get("namespace", "")), str(involved.get("name", "")))
            # redacted again: a snapshot file may come from elsewhere than `kai-gitops snapshot`
            self.state.unschedulable[key] = redact_free_text(str(obj.get("message") or obj.get("note") or ""))

    def _healthz(self, obj: JSONObject) -> None:
        if obj.get("reachable") is False:  # the API server answered instead of NVCA: no endpoints, 404, timeout
            self.state.healthz = Healthz(
                False,
                _http_status(obj.get("httpStatus")),
                None,
                {},
                detail=redact_free_text(str(obj.get("detail") or "")),
            )
            return
        self.state.healthz = healthz_from_response(
            _http_status(obj.get("httpStatus")), redact_free_values(obj.get("body"))
        )

    def _release_search(self, obj: JSONObject) -> None:
        self.state.release_namespaces = [str(n) for n in list_at(obj, "namespaces")]
        self.state.release_search_reason = str(obj.get("reason") or "")

    def _release_error(self, obj: JSONObject) -> None:
        """A release Secret the cluster reader could not decode: the reason is kept, never the data."""
        where = f"Secret/{_meta(obj, 'namespace')}/{_meta(obj, 'name')}"
        self.state.release_errors.append(f"{where}: {redact_free_text(str(obj.get('message', '')))}")


def pod_summary(obj: Mapping[str, JSONValue], now: datetime) -> PodSummary:
    meta, spec, status = mapping_at(obj, "metadata"), mapping_at(obj, "spec"), mapping_at(obj, "status")
    labels = mapping_at(meta, "labels")
    conditions = [_condition(c) for c in list_at(status, "conditions")]
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
    queue_label = labels.get(QUEUE_LABEL)
    return PodSummary(
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
        str(spec.get("schedulerName") or "default-scheduler"),
        None if queue_label is None else str(queue_label),
        str(status.get("phase", "")),
        ready,
        _age(meta.get("creationTimestamp"), now),
        NVCF_POD_LABEL in labels,
        str(spec.get("serviceAccountName") or ""),
        str(status.get("startTime") or meta.get("creationTimestamp") or ""),
        _restarts(status),
        _gang(meta),
        _requests(spec),
    )


def _gang(meta: Mapping[str, JSONValue]) -> str:
    name = mapping_at(meta, "annotations").get(POD_GROUP_KEY) or mapping_at(meta, "labels").get(POD_GROUP_KEY)
    return str(name or "")


def _requests(spec: Mapping[str, JSONValue]) -> tuple[tuple[str, str], ...]:
    """Each container's requests, joined per resource ("2 x 4" when containers ask separately): quantities
    stay as written, since the checks only quote them."""
    asked: dict[str, list[str]] = {}
    for container in list_at(spec, "containers"):
        if isinstance(container, dict):
            for resource, quantity in mapping_at(mapping_at(container, "resources"), "requests").items():
                asked.setdefault(str(resource), []).append(str(quantity))
    return tuple((resource, " + ".join(quantities)) for resource, quantities in sorted(asked.items()))


def _restarts(status: Mapping[str, JSONValue]) -> tuple[tuple[str, int, str], ...]:
    restarted = []
    for container in list_at(status, "containerStatuses"):
        if isinstance(container, dict) and _count(container.get("restartCount"), 0) > 0:
            finished = mapping_at(mapping_at(container, "lastState"), "terminated").get("finishedAt")
            restarted.append(
                (str(container.get("name", "")), _count(container.get("restartCount"), 0), str(finished or ""))
            )
    return tuple(restarted)


def healthz_from_response(http_status: int | None, body: JSONValue) -> Healthz:
    """NVCA answers 503 with the same JSON body when unhealthy (docs/policies.md#nvca-health-check)."""
    if not isinstance(body, dict):
        return Healthz(True, http_status, None, {}, detail="healthz answered without a JSON body")
    components = as_object(body.get("Components"))
    status = body.get("Status")
    return Healthz(True, http_status, str(status) if status is not None else None, components)


def _age(stamp: JSONValue, now: datetime) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        created = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    return max(0.0, (now - created).total_seconds())


def _describe(obj: Mapping[str, JSONValue]) -> str:
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    scope = f"{meta.get('namespace')}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')}/{scope}{meta.get('name', '?')}"


def _meta(obj: Mapping[str, JSONValue], key: str) -> str:
    return str(mapping_at(obj, "metadata").get(key, "") or "")


def _condition(value: JSONValue) -> JSONObject:
    if not isinstance(value, dict):
        raise TypeError(f"a pod condition is a {type(value).__name__}, not a mapping")
    return value


def _count(value: JSONValue, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _http_status(value: JSONValue) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise TypeError(f"httpStatus is a {type(value).__name__}, not a number")


def _gates_at(parent: Mapping[str, JSONValue], key: str) -> list[str] | None:
    gate = parent.get(key)
    if not isinstance(gate, dict) or "values" not in gate:
        return None
    values = gate.get("values")
    if isinstance(values, str):
        return [redact_text(v) for v in split_gate_string(values)]
    if values is not None and not isinstance(values, list):
        raise ValueError(f"featureGate.values must be a list or a comma-joined string, not {type(values).__name__}")
    # An operator may paste anything into a gate list; a credential there must not reach a message.
    return [redact_text(str(v)) for v in values or []]


def _dto_capabilities(text: JSONValue) -> list[str] | None:
    if not isinstance(text, str):
        return None
    from reconciler.yamlio.document import load_document

    try:
        data = load_document(text, "cluster-dto.yaml").data
    except Exception:  # a broken DTO is reported as missing capabilities, not as a crash of the run
        return None
    caps = data.get("capabilities") if isinstance(data, dict) else None
    return [str(c) for c in caps] if isinstance(caps, list) else None


_HANDLERS = {
    k8s.QUEUE.type_key: LiveStateBuilder._queue,
    k8s.CUSTOM_RESOURCE_DEFINITION.type_key: LiveStateBuilder._crd,
    k8s.SCHEDULING_SHARD.type_key: LiveStateBuilder._shard,
    k8s.CONFIG.type_key: LiveStateBuilder._config,
    k8s.DEPLOYMENT.type_key: LiveStateBuilder._deployment,
    k8s.SERVICE_ACCOUNT.type_key: LiveStateBuilder._service_account,
    k8s.JOB.type_key: LiveStateBuilder._job,
    k8s.LEASE.type_key: LiveStateBuilder._lease,
    ("kai-gitops/v1", "KaiConfigRead"): LiveStateBuilder._config_read,
    k8s.SECRET.type_key: LiveStateBuilder._secret,
    ("kai-gitops/v1", "HelmReleaseSummary"): LiveStateBuilder._release_summary,
    k8s.NVCF_BACKEND.type_key: LiveStateBuilder._backend,
    k8s.CONFIG_MAP.type_key: LiveStateBuilder._configmap,
    k8s.NODE.type_key: LiveStateBuilder._node,
    k8s.NAMESPACE.type_key: LiveStateBuilder._namespace,
    k8s.POD.type_key: LiveStateBuilder._pod,
    k8s.POD_GROUP.type_key: LiveStateBuilder._pod_group,
    k8s.TOPOLOGY.type_key: LiveStateBuilder._topology,
    k8s.CLUSTER_TOPOLOGY_BINDING.type_key: LiveStateBuilder._binding,
    k8s.CORE_EVENT.type_key: LiveStateBuilder._event,
    k8s.EVENT.type_key: LiveStateBuilder._event,
    ("kai-gitops/v1", "NVCAHealthz"): LiveStateBuilder._healthz,
    ("kai-gitops/v1", "HelmReleaseError"): LiveStateBuilder._release_error,
    ("kai-gitops/v1", "HelmReleaseSearch"): LiveStateBuilder._release_search,
    **{kind.type_key: LiveStateBuilder._krm for kind in k8s.KRM_KINDS},
}
