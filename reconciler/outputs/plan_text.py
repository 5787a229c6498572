"""A plan, an apply and a whole `reconcile` run as text, in Terraform's shape (its views beside its plans).

Every line is built whole, then its control characters made visible (core/printable.py): a value never
breaks a line or reaches the terminal as a sequence.
"""

from __future__ import annotations

from reconciler.core.printable import visible
from reconciler.core.show import show_value
from reconciler.findings.policy_rules import OVER_QUOTA
from reconciler.plans.applied import ApplyResult, WriteResult
from reconciler.plans.plan import Operation, Plan
from reconciler.plans.quota import over_quota_changes, queue_findings
from reconciler.report.report import Report

_MARKS = {
    WriteResult.APPLIED: "✓ applied",
    WriteResult.FAILED: "✗ failed",
    WriteResult.NOT_ATTEMPTED: "- not applied",
    WriteResult.ALREADY_APPLIED: "= already applied",
}


def render_plan(plan: Plan) -> list[str]:
    """`+ create`, `~ update` with field-level before → after, `! operator`, and the Plan: line."""
    lines: list[str] = []
    for change in plan.changes:
        sign = "+" if change.operation is Operation.CREATE else "~"
        rules = f"  ({', '.join(change.rules)})" if change.rules else ""
        lines.append(f"  {sign} {change.operation.value} {change.ref}{rules}")
        width = max(len(f.dotted()) for f in change.fields)
        for f in change.fields:
            lines.append(
                f"      {f.dotted():<{width}}  {show_value(f.before, quote_strings=True)} → "
                f"{show_value(f.after, quote_strings=True)}"
            )
    for action in plan.operator:
        subject = f" {action.subject}" if action.subject else ""
        lines.append(f"  ! operator {action.rule}{subject}")
        lines.append(f"      run: {action.command}" if action.command else f"      {action.description}")
    lines += [f"  note: {note}" for note in plan.notes]
    counts = plan.counts()
    if not plan.changes and not plan.operator:
        lines.append("  No changes: the cluster matches Git for everything kai-gitops may change.")
    lines.append(
        f"Plan: {counts['create']} to create, {counts['update']} to change, {counts['operator']} for the operator."
    )
    return [visible(line) for line in lines]


def render_apply(applied: ApplyResult) -> list[str]:
    """A line per change with its result, the warnings, and the Apply line."""
    if not applied.results:
        return ["Nothing to apply."]
    lines = [
        f"  {_MARKS[r.result]} {r.change.operation.value} {r.change.ref}" + (f": {r.error}" if r.error else "")
        for r in applied.results
    ]
    lines += [f"  warning: {w}" for w in applied.warnings]
    c = applied.counts()
    verdict = "Apply complete" if applied.ok else "Apply stopped"
    done = applied.count(WriteResult.ALREADY_APPLIED)  # a re-run after a crash: counted apart from "not applied"
    already = f"{done} already applied, " if done else ""
    lines.append(
        f"{verdict}: {c['applied']} applied, {already}{c['failed']} failed, "
        f"{applied.count(WriteResult.NOT_ATTEMPTED)} not applied (of {c['planned']})."
    )
    return [visible(line) for line in lines]


def render_queue_checks(report: Report, plan: Plan) -> list[str]:
    """The queue rules' findings (KAI-Q-020..023) beside the plan: what its queue changes would do."""
    found = queue_findings(report)
    if not found:
        return []
    lines = ["", "Queue checks (what the queues in Git would do):"]
    lines += [f"  {f.severity.value.upper():<7} {f.rule_id} {f.message}" for f in found]
    flagged = over_quota_changes(plan, report)
    if flagged:
        refs = ", ".join(str(change.ref) for change, _findings in flagged)
        lines.append(f"  --apply refuses the change to {refs} unless --allow-over-quota ({OVER_QUOTA.id}).")
    return lines


def render_reconcile(report: Report, plan: Plan, applied: ApplyResult | None, after: Report | None) -> str:
    """One `reconcile` run: where desired and live state came from, the plan, what was applied, the verdict.

    `report` is the diff before any change; `after` the cluster read again after a successful apply.
    """
    cluster = report.clusters[0]
    lines = [f"kai-gitops reconcile — cluster {cluster.cluster}"]
    if cluster.git:
        lines.append(f"  desired: {cluster.git.repo} @ {cluster.git.ref} ({(cluster.git.commit or '')[:12]})")
    if cluster.live_source:
        lines.append(f"  live:    {cluster.live_source}")
    identity = f" for {plan.identity}" if plan.identity else " (no cluster identity: a snapshot)"
    lines.append(f"  plan:    {plan.id}{identity}")
    lines.append("")
    lines += render_plan(plan)
    writers = [
        f"  {f.subject}: {f.last_write.shown()}" for f in report.clusters[0].active() if f.last_write is not None
    ]
    if writers:
        lines += ["Whose changes the plan undoes (the cluster's audit log):", *writers]
    lines += render_queue_checks(report, plan)
    if applied is not None:
        lines.append("")
        lines += render_apply(applied)
    final = (after or report).clusters[0]
    if final.nvca is not None:
        when = "after apply" if after is not None else ("before apply" if applied else "now")
        lines.append(f"NVCA prediction ({when}) kai-scheduler-queues: {final.nvca.status}")
        lines += [f"  {e}" for e in final.nvca.errors]
    s = final.summary()
    waived = f", {s['waived']} waived" if s["waived"] else ""
    lines.append(
        f"Findings: {s['drift']} drift, {s['errors']} error(s), {s['warnings']} warning(s), "
        f"{s['info']} info{waived} (see `kai-gitops diff`)."
    )
    return "\n".join(visible(line) for line in lines) + "\n"  # idempotent on render_plan's lines
