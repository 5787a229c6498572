"""One cluster session per run, shown by the real API server's audit log (the session's server writes one:
conftest.py): every request of a `reconcile --apply --report-to policyreport` run -- the PolicyReports read
for first-seen times, the live read, the cluster's identity, the Lease, the dry-run, the writes, the Events,
the read after the writes and the reports written -- comes from one user with one user agent, and every
write the server saw is one the write guard passed (the run is in-process, so the guard can be watched)."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from reconciler.reconcile import allowed_writes
from reconciler.sources.cluster.client import USER_AGENT
from tests.support.helpers import run_cli
from tests.support.kai_cluster import CONTEXT, LEASE_NAMESPACE, KaiCluster

RUNNER = "runner"
USER = f"system:serviceaccount:{LEASE_NAMESPACE}:{RUNNER}"
VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
SERVER_ITSELF = "system:apiserver"  # the API server's own loops (its identity Lease in kube-system)


def runner_kubeconfig(cluster: KaiCluster, tmp_path: Path) -> Path:
    """A ServiceAccount of its own (bound to cluster-admin), so its requests are told from the test's."""
    envtest = cluster.envtest
    assert envtest.rest is not None
    token = envtest.service_account_token(LEASE_NAMESPACE, RUNNER)
    envtest.rest.call(
        "POST",
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": "kai-gitops-runner"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "namespace": LEASE_NAMESPACE, "name": RUNNER}],
        },
        ok=(201, 409),
    )
    return envtest.write_kubeconfig(tmp_path / "runner.kubeconfig", token=token, context=CONTEXT)


def test_every_request_of_an_apply_with_policy_reports_is_one_sessions_and_every_write_passed_the_guard(
    cluster: KaiCluster, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cluster.install_trapped()  # the default queues at quota 0: two Queue patches to make
    kubeconfig = runner_kubeconfig(cluster, tmp_path)
    guarded: list[tuple[str, str]] = []
    lock = threading.Lock()
    check_write = allowed_writes.check_write

    def watched(method: str, path: str, body: Any, content_type: str | None) -> None:
        with lock:
            guarded.append((VERBS[method], path))
        check_write(method, path, body, content_type)

    monkeypatch.setattr(allowed_writes, "check_write", watched)
    audit = tmp_path / "audit.jsonl"
    mark = cluster.envtest.audit_offset()
    code, out, err = run_cli(
        [
            "reconcile",
            "--repo",
            cluster.repo,
            "--cluster",
            "lab",
            "--kubeconfig",
            kubeconfig,
            "--apply",
            "--report-to",
            "policyreport",
            "--audit-log",
            audit,
        ]
    )
    assert "Apply complete: 2 applied" in out and "policy reports (" in err, (code, out, err)

    events = [e for e in cluster.envtest.audit_events(mark) if e["user"]["username"] != SERVER_ITSELF]
    assert {e["user"]["username"] for e in events} == {USER}
    assert {e["userAgent"] for e in events} == {USER_AGENT}
    writes = [(e["verb"], urlsplit(e["requestURI"]).path) for e in events if e["verb"] in VERBS.values()]
    assert sorted(writes) == sorted(guarded)
    written = {e["objectRef"]["resource"] for e in events if e["verb"] in VERBS.values()}
    assert {"queues", "leases", "events", "clusterpolicyreports"} <= written, written
    read = {e.get("objectRef", {}).get("resource") for e in events if e["verb"] in ("get", "list")}
    assert {"namespaces", "queues", "nodes", "clusterpolicyreports"} <= read, read  # identity, live, first seen
    print(
        f"one session: {len(events)} requests, {len(writes)} writes ({sorted(written)}), user {USER}, "
        f"user agent {USER_AGENT}, every write guarded: {len(guarded)}"
    )  # the figures, with -s
    # and the one server, as kai-gitops' own audit lines name it
    assert {json.loads(line)["server"] for line in audit.read_text().splitlines()} == {cluster.envtest.url}
