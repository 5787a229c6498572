"""Shared helpers of tests/report/test_policyreport.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from datetime import UTC, datetime

from reconciler.core.refs import Location, ObjectRef, release_ref
from reconciler.core.resources import queue_ref
from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
from reconciler.report.report import ClusterReport, GitInfo, Report

NOW = datetime(2026, 12, 1, 9, 0, 0, 250_000, tzinfo=UTC)

COMMIT = "05a796e0c1d2e3f4a5b6c7d8e9f00112233445566"


def finding(
    rule: str,
    subject: ObjectRef | None,
    severity: Severity = Severity.ERROR,
    *,
    n: int = 0,
    message: str = "queue quota is 0",
    waived: str | None = None,
) -> Finding:
    return Finding(
        rule,
        Kind.DRIFT if "-D-" in rule else Kind.VIOLATION,
        severity,
        message,
        "prod",
        subject,
        Location("environments/prod.yaml", 26 + n, 5, ("kai", "queues", n)),
        title=f"title of {rule}",
        waived_by=waived,
        fix=Fix(Action.UPDATE, "patch it", command="kubectl patch queue default"),
    )


def report(*findings: Finding) -> Report:
    return Report(
        "reconcile", [ClusterReport("prod", GitInfo("repo", "HEAD", COMMIT), None, None, None, list(findings))]
    )


def backend_ref(name: str = "nvcf-backend", namespace: str = "nvcf-backend") -> ObjectRef:
    return ObjectRef("nvcf.nvidia.io/v1", "NVCFBackend", name, namespace)


SAMPLE = (
    finding("KAI-D-002", queue_ref("default-parent-queue")),
    finding("NVCA-G-004", backend_ref(), Severity.WARNING, message="gate Foo unknown"),
    finding("KAI-R-001", release_ref("kai-scheduler", "kai-scheduler"), Severity.INFO),
    finding("KAI-G-001", None, Severity.WARNING, waived="accepted until the upgrade"),
)
