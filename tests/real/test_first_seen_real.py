"""First-seen times read from real PolicyReports (publish/policyreport.recorded_first_seen), as every live run
does, through a real API server with RBAC: an identity that may only get and list the report kinds reads
them (the read makes no write the server would refuse), and one that may not is one error naming HTTP 403,
which the run turns into a log line.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.publish.policyreport import recorded_first_seen, write_policy_reports
from reconciler.sources.cluster.session import ClusterSessions
from tests.support.cluster_session import envtest_session
from tests.support.envtest import EnvTest
from tests.support.report_policyreport import NOW, SAMPLE, report

READ_ONLY = {
    "apiVersion": "rbac.authorization.k8s.io/v1",
    "kind": "ClusterRole",
    "metadata": {"name": "kai-gitops-history"},
    "rules": [
        {
            "apiGroups": ["wgpolicyk8s.io"],
            "resources": ["policyreports", "clusterpolicyreports"],
            "verbs": ["get", "list"],
        },
        {"apiGroups": ["openreports.io"], "resources": ["reports", "clusterreports"], "verbs": ["get", "list"]},
    ],
}


def identity(envtest: EnvTest, tmp_path: Path, name: str, *, role: bool) -> str:
    assert envtest.rest is not None
    if role:
        envtest.rest.call("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", READ_ONLY, ok=(201, 409))
        envtest.rest.call(
            "POST",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": name},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "kai-gitops-history",
                },
                "subjects": [{"kind": "ServiceAccount", "namespace": "kai-gitops", "name": name}],
            },
            ok=(201, 409),
        )
    token = envtest.service_account_token("kai-gitops", name)
    return str(envtest.write_kubeconfig(tmp_path / f"{name}.kubeconfig", token=token))


def test_a_get_and_list_only_identity_reads_when_each_finding_was_first_reported(
    envtest: EnvTest, tmp_path: Path
) -> None:
    for namespace in ("kai-scheduler", "nvcf-backend"):
        envtest.create_namespace(namespace, exist_ok=True)
    written = NOW - timedelta(days=5)
    admin = envtest_session(envtest)
    write_policy_reports(admin, report(*SAMPLE), now=written)
    write_policy_reports(admin, report(*SAMPLE), now=NOW)  # unchanged: the first time is kept
    admin.close()
    with ClusterSessions(identity(envtest, tmp_path, "history", role=True), None) as sessions:
        seen = recorded_first_seen(sessions.open(None), "prod")
        assert seen == {f.fingerprint: written for f in SAMPLE}
        assert recorded_first_seen(sessions.open(None), "another-cluster") == {}


def test_an_identity_that_may_not_list_the_reports_gets_a_403_error(envtest: EnvTest, tmp_path: Path) -> None:
    with (
        ClusterSessions(identity(envtest, tmp_path, "nobody", role=False), None) as sessions,
        pytest.raises(UserError, match="HTTP 403"),
    ):
        recorded_first_seen(sessions.open(None), "prod")
