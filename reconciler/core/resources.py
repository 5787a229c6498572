"""The Kubernetes resources kai-gitops reads or writes, each one typed value (like kopf's `Resource`).

A resource's group, version, plural, kind and scope are written once, here; its apiVersion, its API paths
and the references to its objects are derived from them, so the reader, the writer and its guard, and the
report publisher all spell a resource the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from reconciler.core.refs import ObjectRef


@dataclass(frozen=True)
class Resource:
    group: str  # "" for the core API group (Pods, Nodes, …)
    version: str
    plural: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def type_key(self) -> tuple[str, str]:
        """(apiVersion, kind): what an object's own fields say it is, e.g. an item of a list or a snapshot."""
        return self.api_version, self.kind

    @property
    def api_path(self) -> str:
        """The group version's path: where discovery lists its resources, and the prefix of this one's paths."""
        return f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"

    @property
    def crd_name(self) -> str:
        return f"{self.plural}.{self.group}"

    def collection_path(self, namespace: str | None = None) -> str:
        """Where objects are listed and created: in `namespace`, or (None) in all of them."""
        if namespace is not None and not self.namespaced:
            raise ValueError(f"{self.kind} is cluster-scoped: it has no namespace {namespace!r}")
        scope = f"/namespaces/{_segment(namespace)}" if namespace is not None else ""
        return f"{self.api_path}{scope}/{self.plural}"

    def object_path(self, name: str, namespace: str | None = None, subresource: str | None = None) -> str:
        """One object's path, and a subresource of it (e.g. a Service's `proxy/healthz`)."""
        if self.namespaced and namespace is None:
            raise ValueError(f"{self.kind} {name!r} is namespaced: its path needs the namespace")
        path = f"{self.collection_path(namespace)}/{_segment(name)}"
        return f"{path}/{subresource}" if subresource else path

    def ref(self, name: str, namespace: str | None = None) -> ObjectRef:
        return ObjectRef(self.api_version, self.kind, name, namespace)

    def describes(self, ref: ObjectRef) -> bool:
        """`ref` is an object of this resource, namespaced exactly when the resource is."""
        return (ref.api_version, ref.kind, ref.namespace is not None) == (self.api_version, self.kind, self.namespaced)


def _segment(text: str) -> str:
    """A name as one path segment: a `/` cannot reach another path. `:` stays (a Service proxy's `name:port`)."""
    return quote(text, safe=":")


# KAI Scheduler's and NVCA's custom resources (their CRDs are what `doctor` looks for first).
QUEUE = Resource("scheduling.run.ai", "v2", "queues", "Queue", namespaced=False)
POD_GROUP = Resource("scheduling.run.ai", "v2alpha2", "podgroups", "PodGroup", namespaced=True)
SCHEDULING_SHARD = Resource("kai.scheduler", "v1", "schedulingshards", "SchedulingShard", namespaced=False)
CONFIG = Resource("kai.scheduler", "v1", "configs", "Config", namespaced=False)
TOPOLOGY = Resource("kai.scheduler", "v1alpha1", "topologies", "Topology", namespaced=False)
NVCF_BACKEND = Resource("nvcf.nvidia.io", "v1", "nvcfbackends", "NVCFBackend", namespaced=True)
KAI_AND_NVCA = (QUEUE, POD_GROUP, SCHEDULING_SHARD, CONFIG, TOPOLOGY, NVCF_BACKEND)
# Grove's binding of its topology domains to node labels and to KAI's Topology (the NVCF stack installs one).
CLUSTER_TOPOLOGY_BINDING = Resource(
    "grove.io", "v1alpha1", "clustertopologybindings", "ClusterTopologyBinding", namespaced=False
)
# KAI Resource Management's (kai-scheduler/kai-resource-management-api kai/v1alpha1): all cluster-scoped.
PROJECT = Resource("kai.resources", "v1alpha1", "projects", "Project", namespaced=False)
DEPARTMENT = Resource("kai.resources", "v1alpha1", "departments", "Department", namespaced=False)
NODE_POOL = Resource("kai.resources", "v1alpha1", "nodepools", "NodePool", namespaced=False)
KRM_CONFIG = Resource("kai.resources", "v1alpha1", "krmconfigs", "KRMConfig", namespaced=False)
KRM_KINDS = (PROJECT, DEPARTMENT, NODE_POOL, KRM_CONFIG)

# Kubernetes' own.
NODE = Resource("", "v1", "nodes", "Node", namespaced=False)
NAMESPACE = Resource("", "v1", "namespaces", "Namespace", namespaced=False)
POD = Resource("", "v1", "pods", "Pod", namespaced=True)
CONFIG_MAP = Resource("", "v1", "configmaps", "ConfigMap", namespaced=True)
SECRET = Resource("", "v1", "secrets", "Secret", namespaced=True)
SERVICE = Resource("", "v1", "services", "Service", namespaced=True)
CORE_EVENT = Resource("", "v1", "events", "Event", namespaced=True)  # read: why a pod is Pending
EVENT = Resource("events.k8s.io", "v1", "events", "Event", namespaced=True)  # written on a changed object
LEASE = Resource("coordination.k8s.io", "v1", "leases", "Lease", namespaced=True)
# read in kai-scheduler: what the KAI operator deployed from kai-config, and the chart's deployer Job
DEPLOYMENT = Resource("apps", "v1", "deployments", "Deployment", namespaced=True)
SERVICE_ACCOUNT = Resource("", "v1", "serviceaccounts", "ServiceAccount", namespaced=True)
JOB = Resource("batch", "v1", "jobs", "Job", namespaced=True)
CUSTOM_RESOURCE_DEFINITION = Resource(
    "apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", namespaced=False
)

# Policy report kinds (publish/policyreport): the PolicyReport API and its successor, OpenReports.
POLICY_REPORT = Resource("wgpolicyk8s.io", "v1alpha2", "policyreports", "PolicyReport", namespaced=True)
CLUSTER_POLICY_REPORT = Resource(
    "wgpolicyk8s.io", "v1alpha2", "clusterpolicyreports", "ClusterPolicyReport", namespaced=False
)
OPEN_REPORT = Resource("openreports.io", "v1alpha1", "reports", "Report", namespaced=True)
OPEN_CLUSTER_REPORT = Resource("openreports.io", "v1alpha1", "clusterreports", "ClusterReport", namespaced=False)


def queue_ref(name: str) -> ObjectRef:
    return QUEUE.ref(name)
