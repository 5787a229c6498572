"""A synthetic NVCF + KAI cluster for the live-read benchmark, served by tests/support/kubeserver.

Objects are shaped like real ones (pods of 3-5 KB: labels, annotations, several containers with env,
resources and volume mounts, status with conditions and containerStatuses; nodes with capacity, images
and nodeInfo), so page sizes and parse costs are realistic. Everything is deterministic (seeded).

    python bench/synthetic.py [--quick]     # prints the object counts and JSON sizes per kind
"""

from __future__ import annotations

import argparse
import base64
import random
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reconciler.model.helm import encode_release_secret  # noqa: E402

Obj = dict[str, Any]
CREATED = "2026-10-01T08:00:00Z"
NVCF_NS = "nvcf-backend"
SCHEDULE_LABEL = "nvca.nvcf.nvidia.io/schedule"
NS_LABEL = "nvca.nvcf.nvidia.io/workload-instance-type"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
BATCH = 5000  # add_many per batch: bounds the loader's transient copies
KAI_COMPONENTS = (
    "scheduler",
    "binder",
    "podgrouper",
    "queuecontroller",
    "admission",
    "operator",
    "podgroupcontroller",
    "nodescaleadjuster",
)  # one pod each in kai-scheduler


@dataclass(frozen=True)
class Scale:
    nodes: int = 5000
    pods: int = 50000
    nvcf_pods: int = 10000
    queues: int = 1000
    releases: int = 20
    helm_functions: int = 20  # NVCF namespaces besides nvcf-backend (helm-based functions)
    teams: int = 80  # namespaces of non-NVCF workloads
    other_secrets: int = 300
    events: int = 3000

    @classmethod
    def quick(cls) -> Scale:
        full = cls()
        return cls(
            full.nodes // 10,
            full.pods // 10,
            full.nvcf_pods // 10,
            full.queues // 10,
            full.releases,
            full.helm_functions // 2,
            full.teams // 10,
            full.other_secrets // 10,
            full.events // 10,
        )

    @classmethod
    def real(cls, nodes: int, nvcf_pods: int, other_pods: int = 0) -> Scale:
        """For a real API server: the pods the product reads (NVCF, plus KAI's own) and `other_pods` it does not
        (teams' batch pods; with none, our read, the official client and kubectl list the same objects); the
        rest scales with the node count."""
        full = cls()
        share = nodes / full.nodes
        return cls(
            nodes,
            nvcf_pods + len(KAI_COMPONENTS) + other_pods,
            nvcf_pods,
            max(2, round(full.queues * share)),
            full.releases,
            max(1, min(full.helm_functions, nvcf_pods // 50)),
            max(1, round(full.teams * share)),
            round(full.other_secrets * share),
            round(full.events * share),
        )


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _uid(rng: random.Random) -> str:
    return f"{_hex(rng, 8)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 4)}-{_hex(rng, 12)}"


# -- pods --------------------------------------------------------------------------------------------


def _container(rng: random.Random, name: str, image: str, *, gpu: bool) -> Obj:
    limits = {"cpu": f"{rng.choice([2, 4, 8])}", "memory": f"{rng.choice([8, 16, 32])}Gi"}
    if gpu:
        limits["nvidia.com/gpu"] = "1"
    env = [{"name": f"{name.upper()}_SETTING_{i}", "value": f"value-{_hex(rng, 10)}"} for i in range(4 if gpu else 1)]
    env += [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
        {"name": "NVCF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "nvcf-token", "key": "token"}}},
    ]
    probe = {
        "httpGet": {"path": "/health", "port": 8000, "scheme": "HTTP"},
        "initialDelaySeconds": 30,
        "periodSeconds": 10,
        "timeoutSeconds": 1,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    return {
        "name": name,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "env": env,
        "ports": [{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        **({"livenessProbe": probe} if gpu else {}),
        "resources": {"limits": limits, "requests": dict(limits)},
        "volumeMounts": [
            {"name": "model-cache", "mountPath": "/models"},
            {"name": "config", "mountPath": "/etc/config", "readOnly": True},
            {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": True},
        ],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


def _container_status(rng: random.Random, container: Obj, running: bool) -> Obj:
    state = {"running": {"startedAt": CREATED}} if running else {"waiting": {"reason": "ContainerCreating"}}
    return {
        "name": container["name"],
        "image": container["image"],
        "ready": running,
        "restartCount": 0,
        "started": running,
        "state": state,
        "lastState": {},
        "imageID": f"{container['image']}@sha256:{_hex(rng, 64)}",
        "containerID": f"containerd://{_hex(rng, 64)}" if running else "",
    }


def pod(rng: random.Random, name: str, namespace: str, *, nvcf: bool, scheduler: str, pending: bool, node: str) -> Obj:
    labels = {
        "app.kubernetes.io/name": name.rsplit("-", 2)[0],
        "app.kubernetes.io/instance": name[:40],
        "pod-template-hash": _hex(rng, 10),
        "team": namespace,
    }
    if nvcf:
        labels |= {"icms-request-id": _uid(rng), "function-id": _uid(rng), "function-version-id": _uid(rng)}
    if scheduler == "kai-scheduler":
        labels["kai.scheduler/queue"] = "default-queue" if nvcf else f"team-{rng.randrange(50)}"
    containers = [
        _container(rng, "main", f"nvcr.io/nvidia/nim/llm-{rng.randrange(20)}:1.{rng.randrange(9)}.0", gpu=True),
        _container(rng, "sidecar", "nvcr.io/nvidia/nvcf/utils-sidecar:2.4.1", gpu=False),
    ]
    conditions = [
        {"type": t, "status": "False" if pending else "True", "lastProbeTime": None, "lastTransitionTime": CREATED}
        for t in ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
    ]
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "False" if pending else "True",
            "lastTransitionTime": CREATED,
            **({"reason": "Unschedulable"} if pending else {}),
        }
    )
    spec: Obj = {
        "containers": containers,
        "schedulerName": scheduler,
        "restartPolicy": "Always",
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "volumes": [
            {"name": "model-cache", "emptyDir": {"sizeLimit": "100Gi"}},
            {"name": "config", "configMap": {"name": f"{name[:30]}-config", "defaultMode": 420}},
            {
                "name": "kube-api-access",
                "projected": {
                    "defaultMode": 420,
                    "sources": [{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}],
                },
            },
        ],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
    }
    if not pending:
        spec["nodeName"] = node
    status: Obj = {"phase": "Pending" if pending else "Running", "conditions": conditions, "qosClass": "Guaranteed"}
    if not pending:
        status |= {
            "hostIP": f"10.0.{rng.randrange(255)}.{rng.randrange(255)}",
            "startTime": CREATED,
            "podIP": f"10.244.{rng.randrange(255)}.{rng.randrange(255)}",
            "containerStatuses": [_container_status(rng, c, True) for c in containers],
        }
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": _uid(rng),
            "creationTimestamp": CREATED,
            "labels": labels,
            "generateName": name.rsplit("-", 1)[0] + "-",
            "annotations": {
                "kubectl.kubernetes.io/restartedAt": CREATED,
                "prometheus.io/scrape": "true",
                "prometheus.io/port": "9090",
            },
            "ownerReferences": [
                {
                    "apiVersion": "apps/v1",
                    "kind": "ReplicaSet",
                    "controller": True,
                    "blockOwnerDeletion": True,
                    "name": name.rsplit("-", 1)[0],
                    "uid": _uid(rng),
                }
            ],
        },
        "spec": spec,
        "status": status,
    }


def gang_name(name: str) -> str:
    """The PodGroup KAI's pod-grouper makes for a Deployment's pod: one per pod (pg-<pod>-<uid>)."""
    return f"pg-{name}-{_h(len(name))}"


def with_gangs(pods: Iterator[Obj]) -> Iterator[Obj]:
    """Each KAI-scheduled pod as the pod-grouper leaves it (annotation pod-group-name), followed by its PodGroup;
    a Pending one's group carries the scheduler's UnschedulableOnNodePool condition."""
    for item in pods:
        if item["spec"]["schedulerName"] != "kai-scheduler":
            yield item
            continue
        meta = item["metadata"]
        group = gang_name(meta["name"])
        meta["annotations"] = {**meta["annotations"], "pod-group-name": group}
        yield item
        yield pod_group(group, meta["namespace"], pending=item["status"]["phase"] == "Pending")


def pod_group(name: str, namespace: str, *, pending: bool) -> Obj:
    conditions = (
        [
            {
                "type": "UnschedulableOnNodePool",
                "nodePool": "default",
                "status": "True",
                "transitionID": "1",
                "reason": "Unschedulable",
                "message": "0/5000 nodes are available",
                "lastTransitionTime": CREATED,
                "reasons": [{"reason": "OverLimit", "message": "podgroup would exceed queue default-queue's limit"}],
            }
        ]
        if pending
        else []
    )
    return _obj(
        "scheduling.run.ai/v2alpha2",
        "PodGroup",
        name,
        namespace,
        metadata={
            "uid": f"{name[-5:]}-0000",
            "creationTimestamp": CREATED,
            "labels": {"kai.scheduler/queue": "default-queue"},
        },
        spec={
            "minMember": 1,
            "queue": "default-queue",
            "priorityClassName": "inference",
            "markUnschedulable": True,
            "schedulingBackoff": 1,
        },
        status={
            "schedulingConditions": conditions,
            "resourcesStatus": {"requested": {"cpu": "8", "memory": "64Gi", "nvidia.com/gpu": "1"}},
        },
    )


def _pod_plan(scale: Scale) -> Iterator[tuple[str, str, bool]]:
    """(name, namespace, labelled NVCF) for every pod: NVCF pods in nvcf-backend and helm-function namespaces
    (half of those unlabelled: they count by namespace only), the rest spread over team namespaces."""
    helm_share = scale.nvcf_pods // 5
    for i in range(scale.nvcf_pods - helm_share):
        yield f"fn-{i // 4:05d}-{_h(i)}", NVCF_NS, True
    for i in range(helm_share):
        yield f"helm-fn-{i:05d}-{_h(i)}", f"sr-{i % scale.helm_functions:03d}", i % 2 == 0
    for i in range(scale.pods - scale.nvcf_pods - 8):
        yield f"batch-{i:06d}-{_h(i)}", f"team-{i % scale.teams:03d}", False


def _h(i: int) -> str:
    return f"{(i * 2654435761) % 16**5:05x}"


def pods(scale: Scale, rng: random.Random) -> Iterator[Obj]:
    for i, (name, namespace, labelled) in enumerate(_pod_plan(scale)):
        nvcf = namespace == NVCF_NS or namespace.startswith("sr-")
        scheduler = "kai-scheduler" if (not nvcf or i % 20) else "default-scheduler"
        yield pod(
            rng,
            name,
            namespace,
            nvcf=labelled,
            scheduler=scheduler,
            pending=nvcf and i % 97 == 0,
            node=f"node-{i % scale.nodes:05d}",
        )
    for i, component in enumerate(KAI_COMPONENTS):
        yield pod(
            rng,
            f"{component}-{_h(i)}",
            "kai-scheduler",
            nvcf=False,
            scheduler="default-scheduler",
            pending=False,
            node=f"node-{i:05d}",
        )


def pending_events(scale: Scale) -> Iterator[Obj]:
    for i, (name, namespace, _labelled) in enumerate(_pod_plan(scale)):
        nvcf = namespace == NVCF_NS or namespace.startswith("sr-")
        if nvcf and i % 97 == 0:
            yield _event(
                f"{name}.unsched",
                namespace,
                name,
                "Unschedulable",
                f"0/{scale.nodes} nodes are available: {scale.nodes} Insufficient nvidia.com/gpu.",
            )


def _event(name: str, namespace: str, pod_name: str, reason: str, message: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pod_name, "apiVersion": "v1"},
        "reason": reason,
        "message": message,
        "type": "Warning" if reason == "Unschedulable" else "Normal",
        "source": {"component": "kai-scheduler"},
        "firstTimestamp": CREATED,
        "lastTimestamp": CREATED,
        "count": 1,
    }


def noise_events(scale: Scale) -> Iterator[Obj]:
    for i in range(scale.events):
        namespace = f"team-{i % scale.teams:03d}"
        reason = ("Scheduled", "Pulled", "Created", "Started")[i % 4]
        yield _event(f"noise-{i:06d}", namespace, f"batch-{i:06d}", reason, f"{reason} for pod batch-{i:06d}")


# -- nodes -------------------------------------------------------------------------------------------


def node(rng: random.Random, i: int, *, scheduled: bool) -> Obj:
    name = f"node-{i:05d}"
    labels = {
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "beta.kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "p5.48xlarge",
        "topology.kubernetes.io/region": "us-west-2",
        "topology.kubernetes.io/zone": f"us-west-2{'abc'[i % 3]}",
        "nvidia.com/gpu.present": "true",
        "nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.memory": "81559",
        "nvidia.com/cuda.driver.major": "550",
        "nvidia.com/cuda.driver.minor": "90",
        "nvidia.com/cuda.runtime.major": "12",
        "nvidia.com/mig.capable": "true",
        "nvidia.com/gfd.timestamp": "1727769600",
        "feature.node.kubernetes.io/pci-10de.present": "true",
        "feature.node.kubernetes.io/kernel-version.full": "5.15.0-1045-aws",
    }
    if scheduled:
        labels[SCHEDULE_LABEL] = "true"
    capacity = {
        "cpu": "192",
        "memory": "2097152000Ki",
        "nvidia.com/gpu": "8",
        "pods": "110",
        "ephemeral-storage": "524288000Ki",
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
    }
    images = [
        {
            "names": [f"nvcr.io/nvidia/nim/llm-{k}@sha256:{_hex(rng, 64)}", f"nvcr.io/nvidia/nim/llm-{k}:1.0.0"],
            "sizeBytes": 10_000_000_000 + k,
        }
        for k in range(8)
    ]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": _uid(rng),
            "creationTimestamp": CREATED,
            "labels": labels,
            "annotations": {
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                "nfd.node.kubernetes.io/feature-labels": "pci-10de.present,kernel-version",
                "csi.volume.kubernetes.io/nodeid": orjson.dumps({"ebs.csi.aws.com": f"i-{_hex(rng, 17)}"}).decode(),
            },
        },
        "spec": {
            "podCIDR": f"10.244.{i % 255}.0/24",
            "providerID": f"aws:///us-west-2a/i-{_hex(rng, 17)}",
            "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}],
        },
        "status": {
            "capacity": capacity,
            "allocatable": dict(capacity),
            "conditions": [
                {
                    "type": t,
                    "status": "False" if t != "Ready" else "True",
                    "lastHeartbeatTime": CREATED,
                    "lastTransitionTime": CREATED,
                    "reason": f"Kubelet{t}",
                    "message": f"kubelet reports {t}",
                }
                for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")
            ],
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{i // 255 % 255}.{i % 255}"},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": _hex(rng, 32),
                "systemUUID": _uid(rng),
                "bootID": _uid(rng),
                "kernelVersion": "5.15.0-1045-aws",
                "osImage": "Ubuntu 22.04.4 LTS",
                "containerRuntimeVersion": "containerd://1.7.12",
                "kubeletVersion": "v1.31.0",
                "kubeProxyVersion": "v1.31.0",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
            "images": images,
        },
    }


# -- KAI, NVCA, Helm ---------------------------------------------------------------------------------


def _obj(api: str, kind: str, name: str, namespace: str | None = None, **rest: Any) -> Obj:
    meta: Obj = {"name": name, "creationTimestamp": CREATED, **rest.pop("metadata", {})}
    if namespace:
        meta["namespace"] = namespace
    return {"apiVersion": api, "kind": kind, "metadata": meta, **rest}


def queues(scale: Scale) -> Iterator[Obj]:
    def queue(name: str, triple: Obj, parent: str | None) -> Obj:
        spec: Obj = {"resources": {r: dict(triple) for r in ("cpu", "gpu", "memory")}}
        if parent:
            spec["parentQueue"] = parent
        return _obj("scheduling.run.ai/v2", "Queue", name, spec=spec)

    yield queue("default-parent-queue", {"quota": 0, "limit": -1, "overQuotaWeight": 1}, None)  # the install-only trap
    yield queue("default-queue", {"quota": 0, "limit": -1, "overQuotaWeight": 1}, "default-parent-queue")
    for i in range(scale.queues - 2):
        yield queue(f"team-{i:04d}", {"quota": 8, "limit": 16, "overQuotaWeight": 1}, "default-parent-queue")


def _manifest(rng: random.Random, chart: str, objects: int) -> str:
    docs = []
    for k in range(objects):
        name = f"{chart}-{('controller', 'webhook', 'metrics', 'agent')[k % 4]}-{k}"
        docs.append(f"""---
# Source: {chart}/templates/deployment-{k}.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels: {{app.kubernetes.io/name: {chart}, app.kubernetes.io/component: c{k}, helm.sh/chart: {chart}-1.0.0}}
spec:
  replicas: {rng.randrange(1, 4)}
  selector: {{matchLabels: {{app.kubernetes.io/name: {chart}, app.kubernetes.io/component: c{k}}}}}
  template:
    metadata:
      annotations: {{checksum/config: {_hex(rng, 64)}}}
    spec:
      containers:
      - name: {name}
        image: nvcr.io/nvidia/{chart}:{rng.randrange(1, 9)}.{rng.randrange(20)}.{rng.randrange(10)}
        args: [--leader-elect, --metrics-bind-address=:8080, --zap-log-level={rng.choice(["info", "debug"])}]
        resources: {{limits: {{cpu: 500m, memory: 512Mi}}, requests: {{cpu: 100m, memory: 128Mi}}}}
""")
    return "".join(docs)


def _release(
    rng: random.Random, name: str, namespace: str, chart: str, version: str, revision: int, status: str, config: Obj
) -> Obj:
    release = {
        "name": name,
        "namespace": namespace,
        "version": revision,
        "info": {"status": status},
        "chart": {"metadata": {"name": chart, "version": version, "appVersion": version}},
        "config": config,
        "manifest": _manifest(rng, chart, 120),
    }
    return encode_release_secret(release)


def release_secrets(scale: Scale, rng: random.Random) -> Iterator[Obj]:
    canonical = {
        "scheduler": {"placementStrategy": "binpack"},
        "defaultQueue": {
            "createDefaultQueue": True,
            "parentName": "default-parent-queue",
            "childName": "default-queue",
            "parentResources": {r: dict(UNLIMITED) for r in ("cpu", "gpu", "memory")},
        },
    }
    kai_revisions = min(5, scale.releases)
    for rev in range(1, kai_revisions + 1):
        yield _release(
            rng,
            "kai-scheduler",
            "kai-scheduler",
            "kai-scheduler",
            "v0.16.7",
            rev,
            "deployed" if rev == kai_revisions else "superseded",
            canonical,
        )
    charts = ("gpu-operator", "nvca-operator", "cert-manager", "kube-prometheus-stack", "grove-operator")
    for i in range(scale.releases - kai_revisions):
        chart = charts[i % len(charts)]
        yield _release(
            rng,
            f"{chart}-{i}",
            chart,
            chart,
            "1.0.0",
            1,
            "deployed",
            {"global": {"imagePullSecrets": [{"name": "ngc"}], "password": "do-not-print"}},
        )


def other_secrets(scale: Scale, rng: random.Random) -> Iterator[Obj]:
    for i in range(scale.other_secrets):
        yield _obj(
            "v1",
            "Secret",
            f"app-secret-{i}",
            f"team-{i % scale.teams:03d}",
            type="Opaque",
            data={"token": base64.b64encode(_hex(rng, 64).encode()).decode()},
        )


def platform_objects(scale: Scale) -> Iterator[Obj]:
    yield _obj(
        "kai.scheduler/v1",
        "SchedulingShard",
        "default",
        spec={
            "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
            "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
            "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}},
        },
    )
    gates = ["SelfHosted", "LogPosting", "DynamicGPUDiscovery", "InfraResourceOverhead", "KAIScheduler"]
    caps = ",".join(f'"{g}"' for g in gates)
    yield _obj(
        "v1",
        "ConfigMap",
        "nvcfbackend-self-managed",
        "nvca-operator",
        data={"cluster-dto.yaml": f'clusterName: "bench"\ncapabilities: [{caps}]\n'},
    )
    spec_gates = [g for g in gates if g != "DynamicGPUDiscovery"]
    yield _obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "nvcf-backend",
        "nvca-operator",
        spec={"featureGate": {"values": spec_gates}},
        status={"featureGate": {"values": spec_gates}, "agentStatus": "healthy"},
    )
    names = [NVCF_NS, *[f"sr-{i:03d}" for i in range(scale.helm_functions)]]
    for name in names:
        yield _obj("v1", "Namespace", name, metadata={"labels": {NS_LABEL: "gpu"}})
    for name in ["kai-scheduler", "nvca-system", "nvca-operator", *[f"team-{i:03d}" for i in range(scale.teams)]]:
        yield _obj("v1", "Namespace", name)


def healthz_body() -> Obj:
    error = (
        "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
        "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
    )
    return {"Status": "unhealthy", "Components": {"kai-scheduler-queues": {"Status": "unhealthy", "Errors": [error]}}}


# -- loading -----------------------------------------------------------------------------------------


def _batched(objs: Iterator[Obj], size: int = BATCH) -> Iterator[list[Obj]]:
    batch: list[Obj] = []
    for obj in objs:
        batch.append(obj)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def objects(scale: Scale, *, seed: int = 7, gangs: bool = False) -> Iterator[Obj]:
    """The whole synthetic cluster, generated lazily; pods come before the events about them. With `gangs`, every
    KAI-scheduled pod has its PodGroup, as KAI's pod-grouper makes them."""
    rng = random.Random(seed)
    cluster_pods = with_gangs(pods(scale, rng)) if gangs else pods(scale, rng)
    sources = (
        platform_objects(scale),
        queues(scale),
        release_secrets(scale, rng),
        other_secrets(scale, rng),
        (node(rng, i, scheduled=i % 10 == 0) for i in range(scale.nodes)),
        cluster_pods,
        pending_events(scale),
        noise_events(scale),
    )
    for source in sources:
        yield from source


def load(server: Any, scale: Scale, *, seed: int = 7, gangs: bool = False) -> dict[str, int]:
    """Fill a KubeTestServer with the synthetic cluster; returns object counts per kind."""
    server.register_kai_and_nvca_kinds(with_crds=True)
    server.set_healthz(503, healthz_body())
    counts: dict[str, int] = {}
    for batch in _batched(objects(scale, seed=seed, gangs=gangs)):
        server.add_many(batch)
        for obj in batch:
            counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
    return counts


def nvcf_namespaces(scale: Scale) -> list[str]:
    return [NVCF_NS, *[f"sr-{i:03d}" for i in range(scale.helm_functions)]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="10x smaller cluster")
    scale = Scale.quick() if parser.parse_args().quick else Scale()
    rng = random.Random(7)
    sample = {"pod": next(pods(scale, rng)), "node": node(rng, 0, scheduled=False)}
    sizes = {kind: len(orjson.dumps(obj)) for kind, obj in sample.items()}
    secret = next(release_secrets(scale, rng))
    sizes["release_secret"] = len(orjson.dumps(secret))
    print(orjson.dumps({"scale": scale.__dict__, "bytes_per_object": sizes}).decode())


if __name__ == "__main__":
    main()
