"""One command run as its operators see it: a run id on every log line, and metrics at the end, even of a
failed run (that is when `last_run_success` matters most).

The CLI's guard opens `observed_run` around each command; the command hands over what it produced with
`record(report=…, outcome=…)`. Sinks that fail (a Pushgateway down) log one warning line and leave the
exit code alone: the report has been produced, and a stale `last_success_timestamp` is what alerts.
"""

from __future__ import annotations

import contextvars
import logging
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.core.errors import UserError
from reconciler.telemetry import logs

log = logging.getLogger("kai_gitops.run")
_CURRENT: contextvars.ContextVar[RunObservation | None] = contextvars.ContextVar("kai_gitops_run", default=None)


@dataclass
class RunObservation:
    command: str
    started: float
    retries_before: int
    report: Any = None      # reconciler.report.report.Report
    outcome: Any = None     # reconciler.reconcile.outcome.ReconcileOutcome
    exit_code: int = 1
    json_logs: bool = False

    @property
    def lifecycle_level(self) -> int:
        """A log stack wants the start and end of every run; a person at a terminal does not."""
        return logging.INFO if self.json_logs else logging.DEBUG


def record(*, report: Any = None, outcome: Any = None) -> None:
    """What the current command produced (no-op outside an observed run)."""
    current = _CURRENT.get()
    if current is None:
        return
    if outcome is not None:
        current.outcome = outcome
        report = outcome.after or outcome.report
    if report is not None:
        current.report = report


@contextmanager
def observed_run(command: str, options: Mapping[str, Any]) -> Iterator[RunObservation]:
    from reconciler.sources.cluster.client import RETRIES

    # Commands without --log-format (policy test, schema, snapshot) are run by people: text unless told.
    fmt = options.get("log_format") or os.environ.get("KAI_GITOPS_LOG_FORMAT") or "text"
    with logs.logging_to_stderr(fmt) as chosen, logs.run_context(logs.new_run_id(), options.get("cluster")):
        run = RunObservation(command, time.time(), RETRIES.count, json_logs=chosen == "json")
        token = _CURRENT.set(run)
        log.log(run.lifecycle_level, "run started", extra={"event": "run-start", "command": command})
        try:
            yield run
        finally:
            _CURRENT.reset(token)
            _finish(run, options)


def _finish(run: RunObservation, options: Mapping[str, Any]) -> None:
    from reconciler.sources.cluster.client import RETRIES

    duration = time.time() - run.started
    cluster = _cluster(run, options)
    logs.set_cluster(cluster)
    log.log(run.lifecycle_level, "run finished: exit %d in %.1f s", run.exit_code, duration,
            extra={"event": "run-end", "command": run.command, "exitCode": run.exit_code,
                   "durationSeconds": round(duration, 3)})
    if not (options.get("metrics_file") or options.get("metrics_push")):
        return
    from reconciler.telemetry.metrics import RunFacts, push, write_textfile

    facts = RunFacts(run.command, cluster, run.started, duration, ok=run.exit_code in (0, 2),
                     exit_code=run.exit_code, report=run.report, live_read_retries=RETRIES.count - run.retries_before)
    _changes(facts, run.outcome)
    with logs.phase("metrics"):
        sends: dict[str, Callable[[str], None]] = {"metrics_file": lambda v: write_textfile(Path(v), facts),
                                                   "metrics_push": lambda v: push(v, facts)}
        for sink, send in sends.items():
            if options.get(sink):
                try:
                    send(options[sink])
                except UserError as exc:
                    log.warning("metrics not written: %s", exc.line())


def _cluster(run: RunObservation, options: Mapping[str, Any]) -> str:
    clusters = [c.cluster for c in getattr(run.report, "clusters", None) or []]
    if len(clusters) == 1:
        return str(clusters[0])
    return str(options.get("cluster") or logs.current()["cluster"] or ("all" if clusters else "unknown"))


def _changes(facts: Any, outcome: Any) -> None:
    if outcome is None:
        return
    facts.changes_planned = len(outcome.plan.changes)
    applied = outcome.applied
    facts.changes_applied = applied.count("applied") if applied is not None else 0
    facts.changes_failed = applied.count("failed") if applied is not None else 0
