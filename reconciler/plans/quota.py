"""The queue rules beside a plan: which of its changes KAI-Q-020 says cut a queue below its running work.

KAI-Q-020 judges Git's numbers against the live allocation, and a plan writes Git's numbers: a planned
change to a queue the rule flags is the cut itself. Waived findings are accepted cuts and do not count.
"""

from __future__ import annotations

from reconciler.core.refs import ObjectRef
from reconciler.findings.finding import Finding
from reconciler.findings.policy_rules import BY_ID as POLICY_RULES
from reconciler.findings.policy_rules import PLAN_QUEUE_RULES, PlanRole
from reconciler.plans.plan import Change, Plan
from reconciler.report.report import Report

_ORDER = [rule.id for rule in PLAN_QUEUE_RULES]


def queue_findings(report: Report) -> list[Finding]:
    """The active KAI-Q-020..023 findings of the report's cluster, in rule order."""
    found = [f for f in report.clusters[0].active() if f.rule_id in _ORDER]
    return sorted(found, key=lambda f: (_ORDER.index(f.rule_id), str(f.subject or "")))


def over_quota_changes(plan: Plan, report: Report) -> list[tuple[Change, list[Finding]]]:
    """Each planned change that KAI-Q-020 flags, with the findings that flag it."""
    flagged: dict[ObjectRef, list[Finding]] = {}
    for f in queue_findings(report):
        if _refuses_apply(f) and f.subject is not None:
            flagged.setdefault(f.subject, []).append(f)
    return [(c, flagged[c.ref]) for c in plan.changes if c.ref in flagged]


def _refuses_apply(finding: Finding) -> bool:
    return POLICY_RULES[finding.rule_id].plan_role is PlanRole.REFUSES_APPLY
