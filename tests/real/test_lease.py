"""The run's coordination.k8s.io/v1 Lease on the real API server, which validates what the stand-in takes on
trust: MicroTime timestamps, a positive leaseDurationSeconds, resourceVersion preconditions on update."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import kubernetes
import pytest

from reconciler.reconcile.allowed_writes import check_write
from reconciler.reconcile.apply import ClusterWriter
from reconciler.reconcile.lease import LEASE_NAME, Lease
from reconciler.sources.cluster.session import ClusterSession
from tests.support.kai_cluster import LEASE_NAMESPACE, KaiCluster


@pytest.fixture
def writer(cluster: KaiCluster) -> Iterator[ClusterWriter]:
    cluster.envtest.create_namespace(LEASE_NAMESPACE)
    session = ClusterSession.open(str(cluster.kubeconfig), None, guard=check_write)  # as cli/live.py opens it
    try:
        yield ClusterWriter(session)
    finally:
        session.close()


def coordination(cluster: KaiCluster) -> kubernetes.client.CoordinationV1Api:
    return kubernetes.client.CoordinationV1Api(cluster.client)


def wait_for(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(condition())


def test_a_lease_is_created_renewed_and_released(cluster: KaiCluster, writer: ClusterWriter) -> None:
    with Lease(writer, LEASE_NAMESPACE, wait_s=0, holder="run-a", duration_s=1) as lease:
        created = cluster.lease()
        assert created["spec"]["holderIdentity"] == "run-a"
        assert created["spec"]["leaseDurationSeconds"] == 1 and created["spec"]["leaseTransitions"] == 0
        # Renewed every third of the duration, each a PUT with the resourceVersion precondition.
        assert wait_for(lambda: cluster.lease()["spec"]["renewTime"] != created["spec"]["renewTime"], 2)
        renewed = cluster.lease()
        assert int(renewed["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
        assert renewed["spec"]["acquireTime"] == created["spec"]["acquireTime"]
        assert lease.lost is None
    released = cluster.lease()["spec"]
    assert "holderIdentity" not in released and released["leaseDurationSeconds"] == 1
    # The server parsed and stored every time as MicroTime: six fractional digits, UTC.
    for key in ("acquireTime", "renewTime"):
        assert datetime.strptime(released[key], "%Y-%m-%dT%H:%M:%S.%fZ")


def _held_by_other(cluster: KaiCluster, *, renewed: datetime, duration_s: int) -> None:
    cluster.envtest.create_namespace(LEASE_NAMESPACE, exist_ok=True)
    coordination(cluster).create_namespaced_lease(
        LEASE_NAMESPACE,
        {
            "metadata": {"name": LEASE_NAME},
            "spec": {
                "holderIdentity": "other-host_1a2b3c4d",
                "leaseDurationSeconds": duration_s,
                "acquireTime": renewed,
                "renewTime": renewed,
                "leaseTransitions": 3,
            },
        },
    )


def test_an_expired_lease_of_another_identity_is_taken_over_by_an_apply(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    _held_by_other(cluster, renewed=datetime.now(UTC) - timedelta(minutes=10), duration_s=15)  # its run crashed
    audit = cluster.tmp / "audit.jsonl"
    result = cluster.run("reconcile", "--apply", "--audit-log", audit, "--lease-wait", "0")
    assert "Apply complete: 2 applied" in result.out, result
    spec = cluster.lease()["spec"]
    assert spec["leaseTransitions"] == 4  # taken over from other-host, then released by this run
    assert "holderIdentity" not in spec
    assert datetime.strptime(spec["acquireTime"], "%Y-%m-%dT%H:%M:%S.%fZ") > datetime.now() - timedelta(minutes=1)
    holders = {json.loads(line)["holder"] for line in audit.read_text().splitlines()}
    assert len(holders) == 1 and "other-host_1a2b3c4d" not in holders


def test_a_live_lease_of_another_identity_makes_the_apply_wait_then_fail_naming_it(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    _held_by_other(cluster, renewed=datetime.now(UTC), duration_s=300)
    result = cluster.run("reconcile", "--apply", "--lease-wait", "0.5")
    assert result.code == 1, result
    assert "another reconciler holds Lease kai-gitops/kai-gitops-reconcile: other-host_1a2b3c4d" in result.err
    assert "nothing was written" in result.err
    assert cluster.triples("default-queue")["cpu"]["quota"] == 0
    assert cluster.lease()["spec"]["holderIdentity"] == "other-host_1a2b3c4d"  # left to its holder
