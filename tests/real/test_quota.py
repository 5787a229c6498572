"""The queue rules on the real API server: a Queue's status.allocated written through its status subresource
(as KAI's queue controller writes it), read by `reconcile`, `diff` and a snapshot in KAI's units, and a
quota cut below it refused by `reconcile --apply` until --allow-over-quota (KAI-Q-020)."""

from __future__ import annotations

import json
import subprocess

import kubernetes
import pytest

from tests.support.helpers import commit_files
from tests.support.kai_cluster import (
    CLI_TIMEOUT_S,
    LEASE_NAMESPACE,
    PARENT,
    QUEUES,
    KaiCluster,
    kai_gitops_command,
    repo_config,
)

TEAM = "team-a"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}
CUT = (
    "Queue team-a: Git sets gpu quota 2 GPU (live 8), below the 6.5 GPU its running work holds now "
    "(status.allocated): 4.5 GPU of running work becomes over-quota (reclaimed first); "
    "2.5 GPU of it is non-preemptible"
)


def team_queue(gpu_quota: float) -> dict[str, object]:
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": TEAM},
        "spec": {
            "parentQueue": PARENT,
            "resources": {
                "cpu": UNLIMITED,
                "gpu": {"quota": gpu_quota, "limit": -1, "overQuotaWeight": 1},
                "memory": UNLIMITED,
            },
        },
    }


@pytest.fixture
def cluster(cluster: KaiCluster) -> KaiCluster:
    """The trap, plus team-a: 8 GPUs of quota live, 6.5 held by its running work (2.5 non-preemptible),
    and a Git commit cutting its quota to 2."""
    cluster.install_trapped()
    cluster.custom.create_cluster_custom_object(*QUEUES, team_queue(8))
    cluster.custom.patch_cluster_custom_object_status(
        *QUEUES,
        TEAM,
        {
            "status": {
                "allocated": {"cpu": "3500m", "memory": "16Gi", "nvidia.com/gpu": "6500m"},
                "allocatedNonPreemptible": {"nvidia.com/gpu": "2500m"},
            }
        },
    )
    manifest = json.dumps(team_queue(2), indent=2)
    commit_files(
        cluster.repo,
        {
            "kai-gitops.yaml": repo_config() + "    queueFiles:\n      - clusters/lab/queues.yaml\n",
            "clusters/lab/queues.yaml": manifest,
        },
    )
    return cluster


def test_the_cut_is_reported_from_the_live_status_and_from_a_snapshot(cluster: KaiCluster) -> None:
    result = cluster.run("diff", "-o", "json")
    assert result.code == 2, result
    [finding] = [f for f in json.loads(result.out)["findings"] if f["rule"] == "KAI-Q-020"]
    assert finding["message"] == CUT
    assert finding["location"]["file"] == "clusters/lab/queues.yaml"
    snapshot = cluster.tmp / "snapshot.yaml"
    made = subprocess.run(
        [*kai_gitops_command(), "snapshot", "-o", str(snapshot), "--kubeconfig", str(cluster.kubeconfig)],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )
    assert made.returncode == 0, made.stderr
    offline = subprocess.run(
        [
            *kai_gitops_command(),
            "diff",
            "--repo",
            str(cluster.repo),
            "--cluster",
            "lab",
            "--snapshot",
            str(snapshot),
            "-o",
            "json",
        ],
        capture_output=True,
        text=True,
        timeout=CLI_TIMEOUT_S,
    )
    assert offline.returncode == 2, offline.stderr
    assert [f["message"] for f in json.loads(offline.stdout)["findings"] if f["rule"] == "KAI-Q-020"] == [CUT]


def test_apply_refuses_the_cut_until_allowed_and_keeps_the_status(cluster: KaiCluster) -> None:
    plan = cluster.run("reconcile")
    assert f"  ERROR   KAI-Q-020 {CUT}" in plan.out, plan
    refused = cluster.run("reconcile", "--apply")
    assert refused.code == 1, refused
    assert "the plan cuts a queue below what its running work holds (KAI-Q-020), nothing was written" in refused.err
    assert cluster.queue(TEAM)["spec"]["resources"]["gpu"]["quota"] == 8
    assert cluster.queue(PARENT)["spec"]["resources"]["cpu"]["quota"] == 0  # the whole plan, not just team-a
    leases = kubernetes.client.CoordinationV1Api(cluster.client).list_namespaced_lease(LEASE_NAMESPACE)
    assert leases.items == []  # refused before the Lease was taken
    allowed = cluster.run("reconcile", "--apply", "--allow-over-quota")
    assert allowed.code in (0, 2), allowed
    after = cluster.queue(TEAM)
    assert after["spec"]["resources"]["gpu"]["quota"] == 2
    assert after["status"]["allocated"]["nvidia.com/gpu"] == "6500m"  # the spec patch leaves KAI's status
