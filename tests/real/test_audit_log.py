"""`--k8s-audit-log` on the real API server's own audit log (the session's server writes one: conftest.py):
Helm's install is the Helm release's and the queues' last write, then a person's `kubectl patch` is named.
Helm runs here with the admin's certificate, no ServiceAccount: its writes are the admin's, a person's."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.support.kai_cluster import CHILD, PARENT, KaiCluster

ADMIN = "kai-gitops-envtest-admin"  # the admin client certificate's CN (tests/support/envtest/_pki.py)


@pytest.fixture
def cluster(cluster: KaiCluster) -> KaiCluster:
    """The conftest's cluster, installed with the trap (the default queues at quota 0, created by Helm)."""
    cluster.install_trapped()
    return cluster


def last_writes(cluster: KaiCluster) -> dict[str, Any]:
    cluster.envtest.audit_events(cluster.envtest.audit_offset())  # every answered request is in the log now
    result = cluster.run("diff", "-o", "json", "--k8s-audit-log", cluster.envtest.audit_log)
    assert result.code == 2, result
    return {
        f["subject"]["name"]: f.get("lastWrite") for f in json.loads(result.out)["findings"] if f["rule"] == "KAI-D-002"
    }


def test_the_real_servers_audit_log_names_helm_then_the_person_who_patched_a_queue(cluster: KaiCluster) -> None:
    written = last_writes(cluster)
    assert {name: (w["verb"], w["identity"], w["userAgent"].split("/")[0]) for name, w in written.items()} == {
        PARENT: ("create", "person", "Helm"),
        CHILD: ("create", "person", "Helm"),
    }

    cluster.kubectl(
        "patch",
        "queues.scheduling.run.ai",
        CHILD,
        "--type",
        "merge",
        "-p",
        '{"spec":{"resources":{"cpu":{"limit":8}}}}',
    )
    written = last_writes(cluster)
    person = written[CHILD]
    assert (person["user"], person["identity"], person["verb"]) == (ADMIN, "person", "patch")
    assert person["userAgent"].startswith("kubectl/") and person["sourceIP"] == "127.0.0.1"
    assert "system:masters" in person["groups"] and person["auditID"]
    assert written[PARENT]["userAgent"].startswith("Helm/")  # untouched: still Helm's
    text = cluster.run("diff", "--k8s-audit-log", cluster.envtest.audit_log).out
    assert f"⚠ last written by {ADMIN} (person) via kubectl/" in text
