"""A stuck gang and the topology prerequisites on the real kube-apiserver (no scheduler or kubelet runs, so pods
stay Pending by themselves).

The gang is made as KAI makes one: the PodGroup (KAI's v0.17.0 CRD, tests/fixtures/kai) created, its
`UnschedulableOnNodePool` scheduling condition written through the status subresource as the scheduler writes
it, pods carrying the pod-group-name annotation the pod-grouper writes, and the scheduler's `Unschedulable`
Events. The topology objects are the NVCF stack's golden renders (tests/fixtures/nvcf/golden), Grove's
ClusterTopologyBinding CRD (tests/fixtures/grove) and the GPU DRA driver's ComputeDomain CRD (tests/fixtures/dra)
as their projects ship them.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.envtest import EnvTest
from tests.support.envtest._server import load_crds
from tests.support.helpers import FIXTURES, addon_config, make_repo
from tests.support.kai_cluster import CONTEXT, KaiCluster

NS = "nvcf-fn-7c1e"
GANG = "pg-trainer-0a1b"
PODGROUPS = ("scheduling.run.ai", "v2alpha2", "podgroups")
GANG_SECTION = "Gangs (PodGroups, Pending members, topology prerequisites):\n"
OVER_LIMIT = {
    "type": "UnschedulableOnNodePool",
    "nodePool": "default",
    "status": "True",
    "reason": "Unschedulable",
    "message": "podgroup would exceed queue 'default-queue' limit",
    "transitionID": "1",
    "lastTransitionTime": "2026-12-01T10:00:00Z",
    "reasons": [{"reason": "OverLimit", "message": "podgroup would exceed queue 'default-queue' limit of 8 GPUs"}],
}
TAS_ENV = (
    "addons:\n  kaiScheduler:\n    enabled: true\n  topologyAwareScheduling:\n    enabled: true\n"
    "  groveOperator:\n    enabled: true\n"
)


def section(out: str) -> list[str]:
    return out.split(GANG_SECTION, 1)[1].split("\n\n", 1)[0].splitlines()


def marks(lines: list[str]) -> dict[str, str]:
    """Each check's rule id -> ✓ or ✗ (its evidence lines are indented further)."""
    return {line.rsplit(" ", 1)[1]: line[2] for line in lines if not line.startswith("      ")}


def make_stuck_gang(cluster: KaiCluster, envtest: EnvTest, members: int) -> None:
    envtest.create_namespace(NS, labels={"nvca.nvcf.nvidia.io/workload-instance-type": "function"})
    cluster.custom.create_namespaced_custom_object(
        *PODGROUPS[:2],
        NS,
        PODGROUPS[2],
        {
            "apiVersion": "scheduling.run.ai/v2alpha2",
            "kind": "PodGroup",
            "metadata": {"name": GANG},
            "spec": {"minMember": members, "queue": "default-queue"},
        },
    )
    cluster.custom.patch_namespaced_custom_object_status(
        *PODGROUPS[:2], NS, PODGROUPS[2], GANG, {"status": {"schedulingConditions": [OVER_LIMIT]}}
    )
    for i in range(members):
        name = f"trainer-{i}"
        cluster.core.create_namespaced_pod(
            NS,
            {
                "metadata": {"name": name, "annotations": {"pod-group-name": GANG}},
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "containers": [
                        {
                            "name": "main",
                            "image": "nvcr.io/nvidia/pytorch:25.01-py3",
                            "resources": {
                                "requests": {"cpu": "8", "nvidia.com/gpu": "4"},
                                "limits": {"nvidia.com/gpu": "4"},
                            },
                        }
                    ],
                },
            },
        )
        cluster.core.create_namespaced_event(
            NS,
            {
                "metadata": {"name": f"{name}.unschedulable"},
                "reason": "Unschedulable",
                "type": "Warning",
                "message": "Unable to schedule pod: 0/1 nodes are available: 1 node(s) didn't have free GPUs.",
                "involvedObject": {"kind": "Pod", "name": name, "namespace": NS, "apiVersion": "v1"},
                "source": {"component": "kai-scheduler"},
                "count": 1,
                "firstTimestamp": "2026-12-01T10:00:00Z",
                "lastTimestamp": "2026-12-01T10:00:00Z",
            },
        )


def test_doctor_explains_a_stuck_gang(envtest: EnvTest, cluster: KaiCluster) -> None:
    make_stuck_gang(cluster, envtest, members=3)
    assert {p.status.phase for p in cluster.core.list_namespaced_pod(NS).items} == {"Pending"}
    done = cluster.run("doctor")
    assert done.code == 2, done
    lines = section(done.out)
    assert lines[0] == "  ✗ PodGroups with Pending members placed by the scheduler KAI-T-001", done
    assert lines[1] == (
        f"      PodGroup {NS}/{GANG} (queue default-queue, minMember 3) cannot be placed on node pool(s) default: "
        "node pool default: OverLimit: podgroup would exceed queue 'default-queue' limit of 8 GPUs. Pending: 3 of 3 "
        "members (trainer-0, trainer-1, trainer-2), asking 3 x {cpu=8, nvidia.com/gpu=4}. Fix: raise the queue's "
        "limit, or wait for its other workloads to finish"
    )
    assert lines[3] == "  ✗ Gang members not Pending with scheduling failures KAI-T-002"
    assert lines[4] == (
        f"      gang {NS}/{GANG}: 3 of 3 members Pending (trainer-0, trainer-1, trainer-2); the "
        "scheduler says: 3 pod(s): Unable to schedule pod: 0/1 nodes are available: 1 node(s) "
        "didn't have free GPUs."
    )
    assert "  ✓ Gang members name an existing PodGroup KAI-T-003" in lines
    # once the pods are bound, the condition left behind is stale (KAI before v0.17.0 did not clear it)
    for i in range(3):
        cluster.core.patch_namespaced_pod_status(f"trainer-{i}", NS, {"status": {"phase": "Running"}})
    assert "  ✓ PodGroups with Pending members placed by the scheduler KAI-T-001" in section(cluster.run("doctor").out)


def test_topology_prerequisites_missing_then_present(envtest: EnvTest, cluster: KaiCluster, tmp_path: Path) -> None:
    repo, _ = make_repo(
        tmp_path / "tas", {"kai-gitops.yaml": addon_config(extra=f"    kubeContext: {CONTEXT}\n"), "env.yaml": TAS_ENV}
    )
    cluster.add_node("gb200-1", {"kubernetes.io/hostname": "gb200-1"})
    missing = section(cluster.run("doctor", "--repo", repo, "--cluster", "prod").out)
    assert marks(missing) == {
        "KAI-T-001": "✓",
        "KAI-T-002": "✓",
        "KAI-T-003": "✓",
        "KAI-T-004": "✗",
        "KAI-T-005": "✗",
        "KAI-T-006": "✗",
        "KAI-T-007": "✗",
    }, missing
    evidence = "\n".join(missing)
    assert (
        '      Topology nvcf-mnnvl-topology does not exist: workloads that name it stay Pending ("Requested '
        'topology nvcf-mnnvl-topology does not exist" when it is missing)'
    ) in missing
    assert (
        "ClusterTopologyBinding nvcf-mnnvl-topology-binding cannot exist: CRD clustertopologybindings.grove.io "
        "is not installed (is the Grove operator installed?)"
    ) in evidence
    assert "no node of the 1 read is labelled nvidia.com/gpu.clique" in evidence
    assert "kubernetes.io/hostname" not in evidence.split("KAI-T-006", 1)[1].split("KAI-T-007", 1)[0]
    assert "CRD computedomains.resource.nvidia.com is not installed" in evidence

    envtest._install_crds(
        load_crds(
            [
                FIXTURES / "grove" / "grove.io_clustertopologybindings.yaml",
                FIXTURES / "dra" / "resource.nvidia.com_computedomains.yaml",
            ]
        )
    )
    for golden in ("kai-topology.yaml", "grove-cluster-topology-binding.yaml"):
        cluster.kubectl("apply", "-f", str(FIXTURES / "nvcf" / "golden" / golden))
    cluster.kubectl("label", "node", "gb200-1", "nvidia.com/gpu.clique=c0a1e7.1")
    present = section(cluster.run("doctor", "--repo", repo, "--cluster", "prod").out)
    assert present == [
        "  ✓ PodGroups with Pending members placed by the scheduler KAI-T-001",
        "  ✓ Gang members not Pending with scheduling failures KAI-T-002",
        "  ✓ Gang members name an existing PodGroup KAI-T-003",
        "  ✓ KAI Topology present as the stack renders it KAI-T-004",
        "  ✓ Grove ClusterTopologyBinding present, as rendered and in sync KAI-T-005",
        "  ✓ Nodes carry every topology level's label KAI-T-006",
        "  ✓ GPU DRA driver's CRDs present for topology-aware scheduling KAI-T-007",
    ]
