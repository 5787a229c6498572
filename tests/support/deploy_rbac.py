"""Shared helpers of tests/deploy/test_deploy_rbac.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from tests.support.kubeserver import KubeTestServer

CLUSTER_WIDE_SECRETS = r"^/api/v1/secrets$"


def plant_reports(server: KubeTestServer) -> None:
    """The report CRDs served, with two reports of an earlier run: one to update, one stale to delete."""
    from reconciler.publish.policyreport.build import CLUSTER_LABEL, MANAGED_BY_LABEL, SOURCE
    from tests.support.report_crds import OPEN, WG, register_reports

    register_reports(server, WG + OPEN)
    labels = {MANAGED_BY_LABEL: SOURCE, CLUSTER_LABEL: "prod-addon"}
    server.add(
        {
            "apiVersion": "wgpolicyk8s.io/v1alpha2",
            "kind": "ClusterPolicyReport",
            "metadata": {"name": "kai-gitops-prod-addon", "labels": labels},
            "results": [],
            "summary": {},
        }
    )
    server.add(
        {
            "apiVersion": "wgpolicyk8s.io/v1alpha2",
            "kind": "PolicyReport",
            "metadata": {"name": "kai-gitops-prod-addon", "namespace": "retired", "labels": labels},
            "results": [],
            "summary": {},
        }
    )
