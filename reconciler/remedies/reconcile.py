"""One `reconcile` run after the diff: choose the plan (fresh or saved), save it, and apply it when asked.

The steps are separate and each takes the typed change set: planner -> dry-run -> apply, with the Lease
around the last two and an audit line per change.
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.errors import UserError
from reconciler.remedies.outcome import ReconcileOutcome
from reconciler.remedies.plan import Plan, read_plan, write_plan
from reconciler.remedies.settings import ReconcileSettings
from reconciler.report import Report


def check_settings(settings: ReconcileSettings, live_cluster: bool) -> None:
    """Refuse contradictory options before anything is read."""
    if settings.plan_file and not settings.apply:
        raise UserError("--plan FILE is applied with --apply; without it, just run `kai-gitops reconcile`",
                        hint="add --apply, or drop --plan")
    if settings.plan_file and settings.plan_out:
        raise UserError("--plan and --plan-out cannot be combined (a saved plan is applied as it is)")
    if settings.apply and not live_cluster:
        raise UserError("--apply needs a live cluster, not --snapshot",
                        hint="pass --context/--kubeconfig; a snapshot only shows the plan")


def saved_or_fresh(settings: ReconcileSettings, fresh: Plan) -> Plan:
    plan = read_plan(settings.plan_file) if settings.plan_file else fresh
    if settings.plan_out:
        write_plan(plan, settings.plan_out)
    return plan


def plan_only(report: Report, plan: Plan) -> ReconcileOutcome:
    return ReconcileOutcome(report, plan)


ReReader = Callable[[], Report]


def apply_plan(plan: Plan, report: Report, settings: ReconcileSettings, connection: object,
               reread: ReReader) -> ReconcileOutcome:
    raise UserError("--apply is not available in this build yet")
