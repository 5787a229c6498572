"""The PolicyReport and OpenReports CRDs of tests/fixtures/reports/: served as kinds on the API test server,
and their openAPIV3Schema for validating what the report writer stored (the test server validates nothing)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import yaml

from reconciler.core.resources import (
    CLUSTER_POLICY_REPORT,
    OPEN_CLUSTER_REPORT,
    OPEN_REPORT,
    POLICY_REPORT,
    Resource,
)
from tests.support.kubeserver import KubeTestServer

CRDS = Path(__file__).parent.parent / "fixtures" / "reports"
CRD_FILES = {
    CLUSTER_POLICY_REPORT: "wgpolicyk8s.io_clusterpolicyreports.v1alpha2.yaml",
    POLICY_REPORT: "wgpolicyk8s.io_policyreports.v1alpha2.yaml",
    OPEN_CLUSTER_REPORT: "openreports.io_clusterreports.yaml",
    OPEN_REPORT: "openreports.io_reports.yaml",
}
WG = (CLUSTER_POLICY_REPORT, POLICY_REPORT)
OPEN = (OPEN_CLUSTER_REPORT, OPEN_REPORT)


@cache
def _crd(kind: Resource) -> dict[str, Any]:
    return yaml.safe_load((CRDS / CRD_FILES[kind]).read_text())


def crd_schema(kind: Resource) -> dict[str, Any]:
    version = next(v for v in _crd(kind)["spec"]["versions"] if v["name"] == kind.version)
    return version["schema"]["openAPIV3Schema"]


def register_reports(server: KubeTestServer, kinds: tuple[Resource, ...]) -> None:
    """Serve the kinds exactly as the CRD files name them (group, plural, scope)."""
    for kind in kinds:
        spec = _crd(kind)["spec"]
        assert kind.version in [v["name"] for v in spec["versions"] if v["served"]]
        server.register_kind(
            spec["group"],
            kind.version,
            spec["names"]["kind"],
            spec["names"]["plural"],
            namespaced=spec["scope"] == "Namespaced",
        )
