"""Where a run's report goes besides stdout: `--report-to TARGET` (repeatable) dispatches through `TARGETS`.

A target is a function taking one `PublishRequest` (`request.py`); it raises `UserError` for anything an
operator must fix. A new target is an entry in `TARGETS` naming its function as a string, imported when the
target is asked for: the CLI imports no host client or cluster writer before then.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError
from reconciler.core.lazy import LazyRef

if TYPE_CHECKING:  # the CLI reads TARGETS for its help at start-up: the report model would slow every run
    from reconciler.publish.request import PublishRequest, Target


@dataclass(frozen=True)
class ReportTarget:
    name: str
    summary: str  # one line: where the report goes
    publish: LazyRef[Target]


_TABLE = (
    ReportTarget(
        "github",
        "one drift issue per cluster in the GitHub repository, updated and closed as drift goes",
        LazyRef("reconciler.publish.report_to_host:publish_to_github"),
    ),
    ReportTarget(
        "gitlab",
        "one drift issue per cluster in the GitLab project, updated and closed as drift goes",
        LazyRef("reconciler.publish.report_to_host:publish_to_gitlab"),
    ),
    ReportTarget(
        "policyreport",
        "PolicyReports (wgpolicyk8s.io or OpenReports) in the cluster that was read",
        LazyRef("reconciler.publish.policyreport:publish_policy_reports"),
    ),
)
TARGETS: Mapping[str, ReportTarget] = {entry.name: entry for entry in _TABLE}

if TYPE_CHECKING:  # mypy checks every function the table names against `Target` (tests/project/test_registries.py)
    from reconciler.publish import policyreport, report_to_host

    _PUBLISHERS: tuple[Target, ...] = (
        report_to_host.publish_to_github,
        report_to_host.publish_to_gitlab,
        policyreport.publish_policy_reports,
    )


def publish(names: tuple[str, ...] | list[str], request: PublishRequest) -> None:
    """Every named target, in order; an unknown name fails before anything is sent. One target failing
    (GitHub down) does not stop the others (the PolicyReport still lands); the failures end the run as
    one error line afterwards."""
    check_targets(names)
    targets = [(name, TARGETS[name].publish.load()) for name in dict.fromkeys(names)]
    failed: list[tuple[str, UserError]] = []
    for name, target in targets:
        try:
            target(request)
        except UserError as exc:
            failed.append((name, exc))
    if len(failed) == 1:
        raise failed[0][1]
    if failed:
        raise UserError("; ".join(f"--report-to {name}: {exc.line()}" for name, exc in failed))


def check_targets(names: tuple[str, ...] | list[str]) -> None:
    """Refuse an unknown name without importing any target: the CLI calls it before the run starts."""
    for name in names:
        if name not in TARGETS:
            raise UserError(f"unknown --report-to target '{name}'", hint="known: " + ", ".join(sorted(TARGETS)))
