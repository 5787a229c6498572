"""`--report-to policyreport`: the run's findings as PolicyReport / OpenReports objects in the cluster it read.

    result = write_policy_reports(session, report, max_results=100)   # the run's cluster session

`build.py` turns findings into bounded report objects (no I/O), `cluster.py` finds the served kinds and
creates, updates in place, or deletes our own earlier reports.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from reconciler.core.errors import UserError
from reconciler.publish.policyreport.build import DEFAULT_MAX_RESULTS, REPORT_KINDS, ReportSettings
from reconciler.publish.policyreport.cluster import SyncResult, sync_reports
from reconciler.publish.policyreport.cluster import recorded_first_seen as recorded_in
from reconciler.publish.request import PublishRequest
from reconciler.report.repo_config import report_repo_config
from reconciler.report.report import Report
from reconciler.sources.cluster.session import ClusterSession
from reconciler.telemetry.logs import phase

__all__ = [
    "DEFAULT_MAX_RESULTS",
    "REPORT_KINDS",
    "SyncResult",
    "publish_policy_reports",
    "recorded_first_seen",
    "write_policy_reports",
]

log = logging.getLogger("kai_gitops.policyreport")


def write_policy_reports(
    session: ClusterSession, report: Report, *, max_results: int = DEFAULT_MAX_RESULTS, now: datetime | None = None
) -> list[SyncResult]:
    """One sync per cluster of the report; findings about the run itself (waivers, policy edits) go with
    the first cluster, whose report is the only one a reconcile makes."""
    if max_results < 1:
        raise UserError(f"--report-max-results must be at least 1, got {max_results}")
    stamp = now or datetime.now(UTC)
    results = []
    for index, cluster in enumerate(report.clusters):
        findings = [*cluster.findings, *(report.repository if index == 0 else [])]
        settings = ReportSettings(cluster.cluster, cluster.git.commit if cluster.git else None, max_results)
        result = sync_reports(session, findings, settings, stamp)
        if result.kinds:
            log.info(result.describe())
        results.append(result)
    return results


def publish_policy_reports(request: PublishRequest) -> None:
    """The `policyreport` publish target: writes into the cluster the run read, through the run's session."""
    settings = request.settings
    if settings.live.snapshot or settings.cluster is None:
        raise UserError(
            "--report-to policyreport writes into a live cluster and cannot be used with --snapshot",
            hint="drop --snapshot, or use another --report-to target",
        )
    session = settings.cluster.open(None if settings.cluster.context else _repo_kube_context(request))
    with phase("publish-policyreport"):
        write_policy_reports(session, request.report, max_results=settings.max_results or DEFAULT_MAX_RESULTS)


def recorded_first_seen(session: ClusterSession, cluster: str) -> dict[str, datetime]:
    """Read only: when our reports in the session's cluster first listed each of `cluster`'s fingerprints
    (their results' `timestamp`); empty when no report kind is served."""
    with phase("read-policyreports"):
        recorded = recorded_in(session, cluster)
    seen: dict[str, datetime] = {}
    for fingerprint, stamp in recorded.items():
        try:
            seen[fingerprint] = datetime.fromtimestamp(stamp["seconds"] + stamp["nanos"] / 1e9, UTC)
        except (ValueError, OverflowError, OSError):  # an edited timestamp no clock reaches: not a sighting
            continue
    return seen


def _repo_kube_context(request: PublishRequest) -> str | None:
    """The reported cluster's kubeContext from kai-gitops.yaml, so reports go to the cluster that was read."""
    config = report_repo_config(request.report, request.settings.repo)
    if config is None:
        return None
    names = {c.cluster for c in request.report.clusters}
    return next((c.kube_context for c in config.clusters if c.name in names), None)
