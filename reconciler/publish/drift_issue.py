"""Drift reports in the Git host: one issue per cluster that stays current, for `--report-to github|gitlab`.

The issue is found again by a hidden marker in its body (`<!-- kai-gitops:drift cluster=NAME -->`) plus
the first configured label, never by title (people retitle issues). A second hidden line records the
fingerprints the body shows, so a later run knows what appeared and what was resolved:

- no issue and findings: open one;
- open, same fingerprint set: leave it alone (no request beyond the lookup);
- open, set changed: rewrite the body, comment with what appeared and what was resolved;
- open, cluster clean: comment with what was resolved, close;
- closed and drift again: reopen the same issue (not a new one) and comment. One issue per cluster keeps
  each cluster's whole drift history, its subscribers and every link to it in one place; a pile of closed
  duplicates is what naive CronJob alerting produces.

The title is set when the issue is opened and never rewritten, so a renamed title stays renamed.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconciler.findings.finding import Finding
from reconciler.githost.base import GitHost, HostIssue
from reconciler.githost.redaction import scrub_body
from reconciler.outputs.markdown_format import (
    code_block,
    escape_markdown,
    finding_details,
    findings_table,
    inline_code,
    plan_excerpt,
)
from reconciler.report.report import ClusterReport, finding_order

BODY_LIMIT = 60_000  # GitHub refuses issue bodies over 65,536 characters; GitLab allows more
PLAN_LIMIT = 15_000  # of a body that does not fit whole: the plan's share
STATE_LIMIT = 24_000  # the hidden fingerprint record's share
LISTED_IN_COMMENT = 50  # appeared / resolved entries a change comment names
_STATE = re.compile(r"<!-- kai-gitops:state (?P<json>\{.*?\}) -->")
Link = Callable[[str, int | None], str]


def drift_marker(cluster: str) -> str:
    return f"<!-- kai-gitops:drift cluster={cluster} -->"


class DriftAction(StrEnum):
    """What a run did about one cluster's drift issue."""

    OPENED = "opened"
    UPDATED = "updated"
    UNCHANGED = "unchanged"
    CLOSED = "closed"  # the cluster is clean again
    REOPENED = "reopened"  # drift is back
    CLEAN = "clean"  # clean, and no open issue to close


@dataclass(frozen=True)
class DriftOutcome:
    cluster: str
    action: DriftAction
    issue: HostIssue | None
    appeared: tuple[str, ...] = ()
    resolved: tuple[str, ...] = ()

    def line(self) -> str:
        if self.issue is None:
            return f"drift issue for {self.cluster}: none needed (clean)"
        counts = (
            ""
            if self.action == DriftAction.UNCHANGED
            else f" ({len(self.appeared)} appeared, {len(self.resolved)} resolved)"
        )
        return f"drift issue #{self.issue.number} for {self.cluster}: {self.action}{counts}: {self.issue.url}"


@dataclass(frozen=True)
class DriftContext:
    """Everything the body shows beyond the cluster's findings."""

    labels: tuple[str, ...]
    assignees: tuple[str, ...] = ()
    link: Link | None = None  # file:line at the commit that was read
    plan_lines: list[str] | None = None  # the reconcile plan for this cluster, Terraform-style
    fix_command: str | None = None
    command: str = "reconcile"
    plan_counts: dict[str, int] | None = None  # the plan's create/update/operator counts, when there is one


def report_drift(host: GitHost, cluster: ClusterReport, context: DriftContext) -> DriftOutcome:
    # redacted before anything is escaped or shortened: a table cell cut at 160 characters could otherwise
    # show the first half of a token no pattern recognises any more
    findings = [f.redacted() for f in sorted(cluster.active(), key=finding_order)]
    marker = drift_marker(cluster.cluster)
    existing = host.find_issue(marker, context.labels[0])
    shown = _summaries(findings)
    before = _recorded(existing.body) if existing else {}
    appeared = tuple(shown[fp] for fp in shown if fp not in before)
    resolved = tuple(before[fp] for fp in before if fp not in shown)
    if not findings:
        if existing is None or existing.state != "open":
            return DriftOutcome(cluster.cluster, DriftAction.CLEAN, None)
        host.comment_issue(existing.number, _clean_comment(cluster, resolved))
        # The body says "clean" and records no findings, so drift that comes back later all counts as new.
        host.update_issue(existing.number, body=render_clean_body(cluster, resolved, context))
        return DriftOutcome(cluster.cluster, DriftAction.CLOSED, host.close_issue(existing.number), (), resolved)
    body = render_drift_body(cluster, findings, context)
    if existing is None:
        issue = host.create_issue(_title(cluster, findings), body, context.labels, context.assignees)
        return DriftOutcome(cluster.cluster, DriftAction.OPENED, issue, appeared)
    if existing.state != "open":
        host.update_issue(existing.number, body=body)
        issue = host.reopen_issue(existing.number)
        host.comment_issue(existing.number, _change_comment("Drift is back", cluster, appeared, resolved))
        return DriftOutcome(cluster.cluster, DriftAction.REOPENED, issue, appeared, resolved)
    digest = _recorded_digest(existing.body)
    if (digest == _digest(shown)) if digest else set(before) == set(shown):
        return DriftOutcome(cluster.cluster, DriftAction.UNCHANGED, existing)
    issue = host.update_issue(existing.number, body=body)
    host.comment_issue(existing.number, _change_comment("Findings changed", cluster, appeared, resolved))
    return DriftOutcome(cluster.cluster, DriftAction.UPDATED, issue, appeared, resolved)


def render_drift_body(cluster: ClusterReport, findings: list[Finding], context: DriftContext) -> str:
    listed = len(findings)
    while True:  # a large cluster: list fewer rows and cut the plan until the body fits the host's limit
        head, tail = _body_frame(cluster, findings, context, listed)
        budget = BODY_LIMIT - len("\n".join(head + tail)) - 200
        if budget > 0 or listed == 0:
            break
        listed //= 2
    details: list[str] = []
    for index, finding in enumerate(findings):
        piece = finding_details(finding, context.link)
        if len(piece) + 2 > budget:
            details.append(
                f"_{len(findings) - index} more finding(s) not shown in full; the table above lists "
                "them all, and `--output json` has every detail._"
            )
            break
        details += [piece, ""]
        budget -= len(piece) + 2
    return "\n".join([*head, "", *details, *tail]) + "\n"


def _body_frame(
    cluster: ClusterReport, findings: list[Finding], context: DriftContext, listed: int
) -> tuple[list[str], list[str]]:
    """The body without the per-finding details: table of the first `listed` findings, plan, fix, state."""
    table = findings_table(findings[:listed], context.link)
    if listed < len(findings):
        table += (
            f"\n\n_{len(findings) - listed} more finding(s) not listed here (the host limits an issue's "
            "size); `kai-gitops diff --output json` has them all._"
        )
    plan = _plan_block(findings, context)
    if listed < len(findings) and len(plan) > PLAN_LIMIT:
        plan = _cut_plan(findings[:listed], context)
    head = [
        drift_marker(cluster.cluster),
        f"## kai-gitops: drift in cluster {inline_code(cluster.cluster)}",
        "",
        _provenance(cluster, context),
        "",
        _summary_table(cluster, context),
        "",
        "### Findings",
        "",
        table,
    ]
    tail = [
        *(["### Plan", "", plan, ""] if plan else []),
        *_fix_section(cluster, context),
        "",
        "_This issue is kept current by kai-gitops: it is rewritten when the findings change and closed "
        "when the cluster is clean. Do not remove the label or the hidden marker._",
        "",
        _state_line(findings),
    ]
    return head, tail


def _cut_plan(findings: list[Finding], context: DriftContext) -> str:
    """The plan's first lines within PLAN_LIMIT, still one closed code block."""
    lines, size = [], 0
    for line in context.plan_lines or plan_excerpt(findings).splitlines()[1:-1]:
        size += len(line) + 1
        if size > PLAN_LIMIT:
            lines.append("… (plan cut here to fit the issue; `kai-gitops reconcile` prints it whole)")
            break
        lines.append(line)
    return code_block("\n".join(line.removeprefix("  ") for line in lines), "diff")


def render_clean_body(cluster: ClusterReport, resolved: tuple[str, ...], context: DriftContext) -> str:
    lines = [
        drift_marker(cluster.cluster),
        f"## kai-gitops: cluster {inline_code(cluster.cluster)} is clean",
        "",
        _provenance(cluster, context),
        "",
    ]
    lines += _listed("Resolved since the last report:", resolved)
    lines += ["_kai-gitops reopens this issue when drift comes back._", "", _state_line([])]
    return "\n".join(lines) + "\n"


def _provenance(cluster: ClusterReport, context: DriftContext) -> str:
    parts = [f"Found by `kai-gitops {context.command}`"]
    if cluster.git:
        commit = (cluster.git.commit or "")[:12] or "working tree"
        parts.append(f"desired state from {inline_code(cluster.git.ref)} at {inline_code(commit)}")
    if cluster.live_source:
        parts.append(f"live state from {escape_markdown(scrub_body(cluster.live_source))}")
    return ", ".join(parts) + "."


def _summary_table(cluster: ClusterReport, context: DriftContext) -> str:
    s = cluster.summary()
    # The plan also settles some violations (a node label), so its counts are the ones to act on.
    plan = context.plan_counts or {
        "create": s["to_create"],
        "update": s["to_update"],
        "operator": s["operator_actions"],
    }
    rows = [
        ("drift", s["drift"]),
        ("to create", plan["create"]),
        ("to update", plan["update"]),
        ("operator actions", plan["operator"]),
        ("errors", s["errors"]),
        ("warnings", s["warnings"]),
        ("info", s["info"]),
        ("waived", s["waived"]),
    ]
    nvca = (
        f"\n\nNVCA `kai-scheduler-queues` predicted: **{escape_markdown(cluster.nvca.status)}**" if cluster.nvca else ""
    )
    return "\n".join(["| | count |", "|---|---|", *(f"| {name} | {count} |" for name, count in rows)]) + nvca


def _plan_block(findings: list[Finding], context: DriftContext) -> str:
    if context.plan_lines:  # outdented so `+`/`~` open the line, where diff highlighting looks for them
        return code_block("\n".join(line.removeprefix("  ") for line in context.plan_lines), "diff")
    return plan_excerpt(findings)


def _fix_section(cluster: ClusterReport, context: DriftContext) -> list[str]:
    command = context.fix_command or f"kai-gitops reconcile --cluster {cluster.cluster} --apply"
    return [
        "### Fix",
        "",
        "Review the plan, then apply what kai-gitops may fix (each finding above names the "
        "operator's command for the rest):",
        "",
        code_block(command, "sh"),
    ]


def _title(cluster: ClusterReport, findings: list[Finding]) -> str:
    return f"kai-gitops: drift in cluster {cluster.cluster} ({len(findings)} finding{'s' * (len(findings) != 1)})"


def _summaries(findings: list[Finding]) -> dict[str, str]:
    return {f.fingerprint: " ".join(f"{f.rule_id} {f.subject or f.location or ''}".split()) for f in findings}


def _state_line(findings: list[Finding]) -> str:
    """The fingerprints the body shows, within STATE_LIMIT: with their summaries; for a large cluster
    without them; beyond that the first ones plus a digest of them all, which is what a later run compares."""
    summaries = _summaries(findings)
    state: dict[str, Any] = {"v": 1, "findings": summaries}
    if len(json.dumps(state)) > STATE_LIMIT:
        state["findings"] = {fp: "" for fp in summaries}
    if len(json.dumps(state)) > STATE_LIMIT:
        keep = (STATE_LIMIT - 200) // 22  # '"<16 hex>": "", ' per fingerprint
        state = {
            "v": 1,
            "digest": _digest(summaries),
            "total": len(summaries),
            "findings": {fp: "" for fp in list(summaries)[:keep]},
        }
    text = json.dumps(state, sort_keys=True, ensure_ascii=True)
    # No '<', '>' or '&' inside the comment: a subject name cannot end it or forge a marker.
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return f"<!-- kai-gitops:state {text} -->"


def _digest(fingerprints: Iterable[str]) -> str:
    return hashlib.sha256("\n".join(sorted(fingerprints)).encode()).hexdigest()[:32]


def _recorded_digest(body: str) -> str | None:
    match = _STATE.search(body)
    try:
        digest = json.loads(match["json"]).get("digest") if match else None
    except (ValueError, AttributeError):
        return None
    return digest if isinstance(digest, str) else None


def _recorded(body: str) -> dict[str, str]:
    match = _STATE.search(body)
    if not match:
        return {}
    try:
        found = json.loads(match["json"]).get("findings", {})
    except (ValueError, AttributeError):
        return {}  # a hand-edited state line: treat as unknown; the body is rewritten with a fresh one
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _change_comment(title: str, cluster: ClusterReport, appeared: tuple[str, ...], resolved: tuple[str, ...]) -> str:
    lines = [f"**{title}** in cluster {inline_code(cluster.cluster)}{_at(cluster)}.", ""]
    lines += _listed(f"Appeared ({len(appeared)}):", appeared) + _listed(f"Resolved ({len(resolved)}):", resolved)
    lines.append("The issue body shows the current findings.")
    return "\n".join(lines)


def _listed(heading: str, entries: tuple[str, ...]) -> list[str]:
    """A bounded Markdown list (a large cluster's first run must not write a comment the host refuses)."""
    if not entries:
        return []
    more = len(entries) - LISTED_IN_COMMENT
    return [
        heading,
        *(f"- {escape_markdown(e or 'a finding')}" for e in entries[:LISTED_IN_COMMENT]),
        *([f"- … and {more} more"] if more > 0 else []),
        "",
    ]


def _clean_comment(cluster: ClusterReport, resolved: tuple[str, ...]) -> str:
    lines = [f"**Cluster {inline_code(cluster.cluster)} is clean**{_at(cluster)}: no drift and no live violations.", ""]
    lines += _listed(f"Resolved ({len(resolved)}):", resolved)
    lines.append("Closing; kai-gitops reopens this issue if drift comes back.")
    return "\n".join(lines)


def _at(cluster: ClusterReport) -> str:
    if cluster.git and cluster.git.commit:
        return f" (desired state at {inline_code(cluster.git.commit[:12])})"
    return ""
