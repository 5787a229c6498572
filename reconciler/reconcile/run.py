"""One `reconcile` run after the diff: choose the plan (fresh or saved), save it, and apply it when asked.

The steps are separate and each takes the typed change set: planner -> dry-run -> apply, with the Lease
around the last two and an audit line per change.
"""

from __future__ import annotations

import contextlib
import re
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

from reconciler.core.errors import UserError
from reconciler.model.live import LiveState
from reconciler.model.sensitive import SensitiveAllow
from reconciler.plans.applied import ApplyResult, ChangeResult, WriteResult
from reconciler.plans.plan import Plan
from reconciler.plans.saved import keep_planned_operator_steps, read_plan, write_plan
from reconciler.reconcile.apply import ApiFailure, ClusterWriter, apply_changes
from reconciler.reconcile.audit import AuditLog
from reconciler.reconcile.backed import check_backed_by_git
from reconciler.reconcile.cluster import ClusterTarget
from reconciler.reconcile.dryrun import dry_run
from reconciler.reconcile.events import EVENT_NAMESPACE, event_for
from reconciler.reconcile.lease import Lease, holder_identity
from reconciler.reconcile.outcome import ReconcileOutcome
from reconciler.reconcile.preflight import (
    check_cap,
    check_cluster_name,
    check_identity,
    check_over_quota,
    check_shared_mode_kept,
    fresh_state,
)
from reconciler.reconcile.settings import ReconcileSettings
from reconciler.report.report import Report

NAMESPACE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


def check_settings(settings: ReconcileSettings, live_cluster: bool) -> None:
    """Refuse contradictory options before anything is read."""
    if settings.plan_file and not settings.apply:
        raise UserError(
            "--plan FILE is applied with --apply; without it, just run `kai-gitops reconcile`",
            hint="add --apply, or drop --plan",
        )
    if settings.plan_file and settings.plan_out:
        raise UserError("--plan and --plan-out cannot be combined (a saved plan is applied as it is)")
    if settings.apply and not live_cluster:
        raise UserError(
            "--apply needs a live cluster, not --snapshot",
            hint="pass --context/--kubeconfig; a snapshot only shows the plan",
        )
    if settings.plan_file:
        read_plan(settings.plan_file)  # a broken file is refused now, not after a whole cluster read
    namespace = settings.lease_namespace
    if namespace is not None and (len(namespace) > 63 or not NAMESPACE.fullmatch(namespace)):
        raise UserError(f"--lease-namespace {namespace!r} is not a namespace name (lower-case DNS label)")


def saved_or_fresh(settings: ReconcileSettings, fresh: Plan, live: LiveState) -> Plan:
    """The plan to show or apply: the fresh one, or the saved one held to it (changes Git backs, steps the
    planner writes)."""
    plan = fresh
    if settings.plan_file:
        saved = read_plan(settings.plan_file)
        check_backed_by_git(saved, fresh, live, settings.plan_file)
        plan = keep_planned_operator_steps(saved, fresh, settings.plan_file)
    if settings.plan_out:
        write_plan(plan, settings.plan_out)
    return plan


def plan_only(report: Report, plan: Plan) -> ReconcileOutcome:
    return ReconcileOutcome(report, plan)


# The cluster read again after the writes: its report and its plan (what is still to do).
ReReader = Callable[[], tuple[Report, Plan]]


def apply_plan(
    plan: Plan,
    report: Report,
    settings: ReconcileSettings,
    target: ClusterTarget,
    reread: ReReader,
    live: LiveState | None = None,
) -> ReconcileOutcome:
    """Identity, cap, Lease, fresh read per field, dry-run, writes (+ Events, audit), then a re-read. `live`:
    what the plan was judged on (the Shared Cluster mode check needs the queues and labels)."""
    check_cluster_name(plan, report.clusters[0].cluster)
    check_identity(plan, target.identity(None))  # the session the plan was read through
    check_cap(plan, settings.max_changes)
    check_over_quota(plan, report, settings.allow_over_quota)
    if live is not None:
        check_shared_mode_kept(plan, live)
    if not plan.changes:
        return ReconcileOutcome(report, plan, ApplyResult(plan.id), None)
    holder = holder_identity()
    # Opened before the first write: an audit log that cannot be written refuses the run, not half of it.
    audit = AuditLog(
        settings.audit_log,
        plan_id=plan.id,
        cluster=plan.cluster,
        server=target.connect(None).server,
        holder=holder,
        max_bytes=settings.audit_log_max_bytes,
    )
    writer = target.writer(_allowed_sensitive(report, plan.cluster))
    try:
        with _sigterm_interrupts():
            result = _apply_under_lease(plan, settings, writer, audit)
    finally:
        audit.close()
    after, left = _reread(reread, result)
    return ReconcileOutcome(report, plan, result, after, left)


def _allowed_sensitive(report: Report, cluster: str) -> tuple[SensitiveAllow, ...]:
    """The security-sensitive fields the cluster's entry in kai-gitops.yaml lets self-heal write."""
    config = report.config
    entry = next((c for c in config.clusters if c.name == cluster), None) if config is not None else None
    return entry.allow_sensitive_writes if entry is not None else ()


@contextlib.contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """SIGTERM (how Kubernetes stops a CronJob's pod) stops the writes like Ctrl-C: whatever is in flight
    finishes and is audited, the rest is audited as not attempted, the Lease is released. Python's default
    would end the process at once, the Lease held and the change being written without its audit line."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(_signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _reread(reread: ReReader, result: ApplyResult) -> tuple[Report | None, Plan | None]:
    """The cluster as it is after the writes; after a failed apply a failed re-read must not hide the result."""
    if result.ok:
        return reread()
    try:
        return reread()
    except UserError:
        return None, None


def _apply_under_lease(plan: Plan, settings: ReconcileSettings, writer: ClusterWriter, audit: AuditLog) -> ApplyResult:
    with Lease(writer, settings.lease_ns(), wait_s=settings.lease_wait_s, holder=audit.holder) as lease:
        audit.trim()  # under the lease: no other run appends meanwhile
        try:
            pending, done = fresh_state(writer, plan)  # under the lease: nobody else writes meanwhile
        except ApiFailure as exc:
            hint = (
                "grant the fixer role (deploy/overlays/self-heal/rbac-fixer.yaml): it re-reads the planned objects"
                if exc.status == 403
                else None
            )
            raise UserError(
                f"reading the planned objects again failed, nothing was written: {exc.line()}", hint=hint
            ) from None
        dry_run(writer, pending)
        events = EventSender(writer, plan.id, lease.holder)

        def decided(result: ChangeResult) -> None:
            audit.record(result)
            if result.result == WriteResult.APPLIED:
                events.send(result)

        skipped = [ChangeResult(change, WriteResult.ALREADY_APPLIED) for change in done]
        for result in skipped:
            audit.record(result)
        results = apply_changes(writer, pending, decided, lost=lambda: lease.lost)
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
