"""A run's earlier sightings of its findings: the cluster's PolicyReports and `--previous-report`.

    history = RunHistory(settings.history)          # when the run starts: reads the previous report
    report = history.stamp(report, repo_context)    # every finding with its firstSeen (report/history.py)

The previous report is read before anything else, so a bad file stops the run before the cluster is read or
anything is written. The PolicyReports are only read, through the run's cluster session (publish/policyreport:
the read the report sync makes): a run that cannot read them says so in one log line and takes its times
from the other sources.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.app.settings import HistorySettings
from reconciler.core.errors import UserError
from reconciler.report.history import FirstSeen, first_seen_in, with_ages
from reconciler.report.reader import load_report
from reconciler.report.report import Report

if TYPE_CHECKING:
    from reconciler.sources.cluster.session import ClusterSessions

log = logging.getLogger("kai_gitops.history")


class RunHistory:
    def __init__(self, settings: HistorySettings) -> None:
        self.settings = settings
        self.previous: FirstSeen = _previous(settings.previous_report) if settings.previous_report else {}

    def stamp(self, report: Report, repo_context: str | None = None) -> Report:
        """`report` with every finding's age: PolicyReports first, then the previous report, then this run."""
        live = self.settings.cluster
        in_cluster = _in_cluster(report, live, repo_context) if live is not None else {}
        # No PolicyReport listing any finding is no history: every finding would be "new" in every manual run.
        earlier = [in_cluster] if in_cluster else []
        if self.settings.previous_report:
            earlier.append(self.previous)
        return with_ages(report, earlier, self.settings.started)


def _in_cluster(report: Report, live: ClusterSessions, repo_context: str | None) -> FirstSeen:
    from reconciler.publish.policyreport import recorded_first_seen

    seen: dict[str, datetime] = {}
    for cluster in report.clusters:
        try:
            seen |= recorded_first_seen(live.open(repo_context), cluster.cluster)
        except UserError as exc:
            log.info(
                "first-seen times: the PolicyReports of cluster %s were not read (%s); they come from "
                "--previous-report or this run (grant list on them to use them)",
                cluster.cluster,
                exc.message,
            )
    return seen


def _previous(file: str) -> FirstSeen:
    try:
        previous = load_report(file)
    except UserError as exc:
        raise UserError(
            f"previous report: {exc.message}",
            where=exc.where or file,
            hint="pass a report an earlier run wrote with -o json, or drop --previous-report",
        ) from None
    return first_seen_in(previous, _written(file))


def _written(file: str) -> datetime | None:
    if file == "-":
        return None
    try:
        return datetime.fromtimestamp(Path(file).stat().st_mtime, UTC)
    except OSError:
        return None
