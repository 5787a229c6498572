"""One `reconcile` run after the diff: choose the plan (fresh or saved), save it, and apply it when asked.

The steps are separate and each takes the typed change set: planner -> dry-run -> apply, with the Lease
around the last two and an audit line per change.
"""

from __future__ import annotations

from collections.abc import Callable

from reconciler.errors import UserError
from reconciler.remedies.apply import ApiFailure, ApplyResult, ChangeResult, ClusterWriter, apply_changes
from reconciler.remedies.audit import AuditLog
from reconciler.remedies.cluster import Connection
from reconciler.remedies.dryrun import dry_run
from reconciler.remedies.events import EVENT_NAMESPACE, event_for
from reconciler.remedies.lease import Lease
from reconciler.remedies.outcome import ReconcileOutcome
from reconciler.remedies.plan import Plan, read_plan, write_plan
from reconciler.remedies.preflight import check_cap, check_cluster_name, check_identity, fresh_state
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


def apply_plan(plan: Plan, report: Report, settings: ReconcileSettings, connection: Connection,
               reread: ReReader) -> ReconcileOutcome:
    """Identity, cap, Lease, fresh read per field, dry-run, writes (+ Events, audit), then a re-read."""
    check_cluster_name(plan, report.clusters[0].cluster)
    check_identity(plan, connection.identity())
    check_cap(plan, settings.max_changes)
    if not plan.changes:
        return ReconcileOutcome(report, plan, ApplyResult(plan.id), None)
    writer = connection.writer()
    try:
        result = _apply_under_lease(plan, settings, connection, writer)
    finally:
        writer.close()
    return ReconcileOutcome(report, plan, result, _reread(reread, result))


def _reread(reread: ReReader, result: ApplyResult) -> Report | None:
    """The cluster as it is after the writes; after a failed apply a failed re-read must not hide the result."""
    if result.ok:
        return reread()
    try:
        return reread()
    except UserError:
        return None


def _apply_under_lease(plan: Plan, settings: ReconcileSettings, connection: Connection,
                       writer: ClusterWriter) -> ApplyResult:
    with Lease(writer, settings.lease_ns(), wait_s=settings.lease_wait_s) as lease:
        try:
            pending, done = fresh_state(writer, plan)   # under the lease: nobody else writes meanwhile
        except ApiFailure as exc:
            hint = "grant the read role (deploy/rbac.yaml) and the fixer role" if exc.status == 403 else None
            raise UserError(f"reading the planned objects again failed, nothing was written: {exc.line()}",
                            hint=hint) from None
        dry_run(writer, pending)
        audit = AuditLog(settings.audit_log, plan_id=plan.id, cluster=plan.cluster, server=connection.server,
                         holder=lease.holder)
        events = EventSender(writer, plan.id, lease.holder)
        try:
            def decided(result: ChangeResult) -> None:
                audit.record(result)
                if result.result == "applied":
                    events.send(result)

            skipped = [ChangeResult(change, "already-applied") for change in done]
            for result in skipped:
                audit.record(result)
            results = apply_changes(writer, pending, decided, lost=lambda: lease.lost)
        finally:
            audit.close()
    return ApplyResult(plan.id, results + skipped, warnings=events.failures)


class EventSender:
    """Events are a record, not the change: one that cannot be created is reported, never fatal."""

    def __init__(self, writer: ClusterWriter, plan_id: str, holder: str) -> None:
        self.writer, self.plan_id, self.holder = writer, plan_id, holder
        self.failures: list[str] = []

    def send(self, result: ChangeResult) -> None:
        try:
            self.writer.create_event(EVENT_NAMESPACE, event_for(result, plan_id=self.plan_id, holder=self.holder))
        except ApiFailure as exc:
            self.failures.append(f"Event for {result.change.ref} not recorded: {exc.line()}")
