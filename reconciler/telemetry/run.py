"""One command run as its operators see it: a run id on every log line, and metrics at the end, even of a
failed run (that is when `last_run_success` matters most).

The CLI's guard opens `observed_run` around each command, with its `TelemetrySettings`; the command hands
over what it produced with `record(report=…, outcome=…)`. Sinks that fail (a Pushgateway down) log one
warning line and leave the exit code alone: the report has been produced, and a stale
`last_success_timestamp` is what alerts.
"""

from __future__ import annotations

import contextvars
import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from reconciler.core.errors import UserError
from reconciler.core.exits import ExitCode
from reconciler.sources.retry_tally import RETRIES
from reconciler.telemetry import logs

if TYPE_CHECKING:
    from reconciler.checks.waves import WaveDecision
    from reconciler.plans.applied import ApplyResult
    from reconciler.plans.plan import Plan
    from reconciler.report.report import Report
    from reconciler.telemetry.metrics import RunFacts

log = logging.getLogger("kai_gitops.run")
_CURRENT: contextvars.ContextVar[RunObservation | None] = contextvars.ContextVar("kai_gitops_run", default=None)


@dataclass(frozen=True)
class TelemetrySettings:
    """How a command's run is observed, as its options ask."""

    log_format: str | None = None  # auto | json | text; None: a command run by people (no --log-format)
    cluster: str | None = None  # the cluster named on the command line, for log lines and metrics
    metrics_file: str | None = None  # node-exporter textfile to replace
    metrics_push: str | None = None  # Pushgateway URL


class ReconcileResult(Protocol):
    """What a run keeps of reconcile's outcome (reconciler.reconcile.outcome.ReconcileOutcome, a room above)."""

    @property
    def report(self) -> Report: ...
    @property
    def plan(self) -> Plan: ...
    @property
    def applied(self) -> ApplyResult | None: ...
    @property
    def after(self) -> Report | None: ...
    @property
    def waves(self) -> WaveDecision | None: ...


@dataclass
class RunObservation:
    command: str
    started: float
    retries_before: int
    report: Report | None = None
    outcome: ReconcileResult | None = None
    exit_code: ExitCode = ExitCode.ERROR
    json_logs: bool = False

    @property
    def lifecycle_level(self) -> int:
        """A log stack wants the start and end of every run; a person at a terminal does not."""
        return logging.INFO if self.json_logs else logging.DEBUG


def record(*, report: Report | None = None, outcome: ReconcileResult | None = None) -> None:
    """What the current command produced (no-op outside an observed run)."""
    current = _CURRENT.get()
    if current is None:
        return
    if outcome is not None:
        current.outcome = outcome
        report = outcome.after or outcome.report
    if report is not None:
        current.report = report


def has_report() -> bool:
    """Whether the current command has handed over its report (or outcome): from then on, its outputs are
    its own, and an error after that is not a run without a report."""
    current = _CURRENT.get()
    return current is not None and (current.report is not None or current.outcome is not None)


@contextmanager
def observed_run(command: str, settings: TelemetrySettings) -> Iterator[RunObservation]:
    # Commands without --log-format (policy test, schema, snapshot) are run by people: text unless told.
    fmt = settings.log_format or os.environ.get("KAI_GITOPS_LOG_FORMAT") or "text"
    with logs.logging_to_stderr(fmt) as chosen, logs.run_context(logs.new_run_id(), settings.cluster):
        run = RunObservation(command, time.time(), RETRIES.count, json_logs=chosen == "json")
        token = _CURRENT.set(run)
        log.log(run.lifecycle_level, "run started", extra={"event": "run-start", "command": command})
        try:
            yield run
        finally:
            _CURRENT.reset(token)
            _finish(run, settings)


def _finish(run: RunObservation, settings: TelemetrySettings) -> None:
    duration = time.time() - run.started
    cluster = _cluster(run, settings)
    logs.set_cluster(cluster)
    log.log(
        run.lifecycle_level,
        "run finished: exit %d in %.1f s",
        run.exit_code,
        duration,
        extra={
            "event": "run-end",
            "command": run.command,
            "exitCode": run.exit_code,
            "durationSeconds": round(duration, 3),
        },
    )
    if not (settings.metrics_file or settings.metrics_push):
        return
    from reconciler.telemetry.metrics import RunFacts, push, write_textfile

    facts = RunFacts(
        run.command,
        cluster,
        run.started,
        duration,
        ok=run.exit_code in (ExitCode.CLEAN, ExitCode.FINDINGS),
        exit_code=run.exit_code,
        report=run.report,
        live_read_retries=RETRIES.count - run.retries_before,
    )
    _changes(facts, run.outcome)
    with logs.phase("metrics"):
        sends: list[tuple[str | None, Callable[[str], None]]] = [
            (settings.metrics_file, lambda v: write_textfile(Path(v), facts)),
            (settings.metrics_push, lambda v: push(v, facts)),
        ]
        for target, send in sends:
            if target:
                try:
                    send(target)
                except UserError as exc:
                    log.warning("metrics not written: %s", exc.line())


def _cluster(run: RunObservation, settings: TelemetrySettings) -> str:
    clusters = [c.cluster for c in getattr(run.report, "clusters", None) or []]
    if len(clusters) == 1:
        return str(clusters[0])
    return str(settings.cluster or logs.current()["cluster"] or ("all" if clusters else "unknown"))


def _changes(facts: RunFacts, outcome: ReconcileResult | None) -> None:
    if outcome is None:
        return
    facts.changes_planned = len(outcome.plan.changes)
    counts = outcome.applied.counts() if outcome.applied is not None else {}
    facts.changes_applied = counts.get("applied", 0)
    facts.changes_failed = counts.get("failed", 0)
    facts.rollout = outcome.waves
