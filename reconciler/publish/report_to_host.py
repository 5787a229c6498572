"""The `--report-to github|gitlab` targets: settings from flags, `gitHost:` and the remote; one issue per cluster."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text
from reconciler.githost import HostSettings, open_host, resolve_host_settings
from reconciler.githost.remote import remote_url
from reconciler.outputs.plan_text import render_plan
from reconciler.plans.plan import Plan
from reconciler.publish.drift_issue import DriftContext, DriftOutcome, report_drift
from reconciler.publish.request import PublishRequest
from reconciler.report.repo_config import report_repo_config
from reconciler.report.report import ClusterReport
from reconciler.telemetry import logs


def settings_for(kind: str, request: PublishRequest) -> HostSettings:
    flags = request.settings.host_flags
    if flags.host and flags.host != kind:
        raise UserError(f"--report-to {kind} contradicts --git-host {flags.host}", hint="give one host kind")
    config = report_repo_config(request.report, request.settings.repo)
    return resolve_host_settings(
        remote_url(request.settings.repo), config.git_host if config else None, replace(flags, host=kind), os.environ
    )


def publish_drift(
    kind: str, request: PublishRequest, *, echo: Callable[[str], None] | None = None
) -> list[DriftOutcome]:
    settings = settings_for(kind, request)
    host = open_host(settings)
    say = echo or logs.say
    outcomes = []
    for cluster in request.report.clusters:
        outcome = report_drift(host, cluster, _context(settings, cluster, request))
        say(outcome.line())
        outcomes.append(outcome)
    return outcomes


def _context(settings: HostSettings, cluster: ClusterReport, request: PublishRequest) -> DriftContext:
    commit = cluster.git.commit if cluster.git else None

    def link(path: str, line: int | None) -> str:
        return settings.blob_url(commit or "", path, line)

    plan = _plan_for(request.plan, cluster.cluster)
    return DriftContext(
        settings.labels,
        settings.assignees,
        link if commit else None,
        render_plan(plan) if plan else None,
        _fix_command(cluster, request),
        request.report.command,
        plan_counts=plan.counts() if plan else None,
    )


def _fix_command(cluster: ClusterReport, request: PublishRequest) -> str:
    repo = request.settings.repo
    where = f" --repo {redact_text(repo)}" if repo and "://" in repo else ""
    return f"kai-gitops reconcile{where} --cluster {cluster.cluster} --apply"


def _plan_for(plan: Plan | list[Plan] | None, cluster: str) -> Plan | None:
    """The reconcile plan made for this cluster, if any (else the body shows the findings' excerpt)."""
    plans = plan if isinstance(plan, list) else [plan] if plan is not None else []
    return next((one for one in plans if one.cluster == cluster), None)


def publish_to_github(request: PublishRequest) -> None:
    publish_drift("github", request)


def publish_to_gitlab(request: PublishRequest) -> None:
    publish_drift("gitlab", request)
