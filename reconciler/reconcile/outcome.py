"""What one `reconcile` run produced: the diff report, the plan, and (with --apply) what was applied; and its
exit code. The formats show it as a `PlanRun` (outputs/plan_views.py)."""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.checks.waves import WaveDecision
from reconciler.core.exits import ExitCode
from reconciler.findings.finding import Severity
from reconciler.outputs.plan_views import PlanRun
from reconciler.plans.applied import ApplyResult
from reconciler.plans.plan import Plan
from reconciler.report.report import Report


@dataclass
class ReconcileOutcome:
    report: Report  # before any change
    plan: Plan
    applied: ApplyResult | None = None
    after: Report | None = None  # re-read after a successful apply
    left: Plan | None = None  # the plan of that re-read: what is still to do
    waves: WaveDecision | None = None  # the rollout's say on this run, when kai-gitops.yaml has waves

    @property
    def exit_code(self) -> ExitCode:
        """1 a failed apply; 2 changes or operator items left whose rules are at/above --fail-on (the plan
        alone exits 2 for them, and so does an apply that leaves them) or findings at/above --fail-on; else 0."""
        if self.applied is not None and not self.applied.ok:
            return ExitCode.ERROR
        final = self.after or self.report
        left = self.left or self.plan  # no re-read: nothing was applied (a failed apply is 1 above)
        if _left_at_or_above(left, final):
            return ExitCode.FINDINGS
        return final.exit_code

    def shown(self) -> PlanRun:
        return PlanRun(self.report, self.plan, self.applied, self.after, self.exit_code, self.waves)


def _left_at_or_above(left: Plan, report: Report) -> bool:
    """Whether a change or operator item left comes from a rule at or above --fail-on.

    Below it, an item is in the plan, the report and the metrics but fails nothing: the CronJob's
    `--fail-on error` must not fail every hour for a Pending pod's `kubectl describe` (a warning). A rule the
    report does not know, or a change naming none, counts as an error: an unknown item never passes quietly.
    """
    severity = {meta.id: meta.severity for meta in report.rules()}
    items = [change.rules for change in left.changes] + [(item.rule,) for item in left.operator]
    return any(
        max((severity.get(rule, Severity.ERROR).rank for rule in rules), default=Severity.ERROR.rank)
        >= report.fail_on.rank
        for rules in items
    )
