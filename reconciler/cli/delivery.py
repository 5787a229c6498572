"""What a command does with its report: render it to the `-o` targets, publish it to the `--report-to`
targets, and propose its Git edits with `--fix-git`; and, when it stopped on an error before it had a
report, what its `-o` targets get instead (`emit_error`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from reconciler.cli.stdout import write_stdout

if TYPE_CHECKING:
    from reconciler.core.errors import UserError
    from reconciler.core.exits import ExitCode
    from reconciler.gitfix.run import FixGitSettings
    from reconciler.outputs.destinations import OutputSpec
    from reconciler.outputs.plan_views import PlanRun
    from reconciler.publish.request import PublishSettings
    from reconciler.report.report import Report


def record(**produced: Any) -> None:
    """Hand the run's report (or reconcile outcome) to the metrics of the observed run."""
    from reconciler.telemetry.run import record as record_run

    record_run(**produced)


def emit(report: Report, specs: list[OutputSpec], run: PlanRun | None = None) -> ExitCode:
    """Render `report` to every `-o FMT[=PATH]` and return its exit code.

    `run`: reconcile's plan and apply, which the formats that have a form of it render (`report` is its final
    report).
    """
    from reconciler.outputs.destinations import emit as emit_to

    record(report=report)
    emit_to(report, specs, lambda text: write_stdout(text, nl=False), color=sys.stdout.isatty(), run=run)
    return report.exit_code


def emit_error(exc: UserError, command: str, specs: list[OutputSpec]) -> None:
    """A run that stopped before it had a report: the `-o` formats a CI step reads carry the error (an
    annotation at its line, the job summary, SARIF, Code Quality, JUnit), so the reviewer sees it there and
    the upload steps find their files. After the report was handed over, its outputs are left as they are."""
    import logging

    from reconciler.core.errors import UserError
    from reconciler.outputs.destinations import emit_error as emit_error_to
    from reconciler.outputs.input_error import InputError
    from reconciler.telemetry.run import has_report

    if has_report():
        return
    try:
        emit_error_to(InputError.of(exc, command), specs, lambda text: write_stdout(text, nl=False))
    except UserError as failed:  # the error line is already out; this one only says where it could not go
        logging.getLogger("kai_gitops").warning("the error was not written to the outputs: %s", failed.line())


def publish_report(report: Report, plan: Any, targets: tuple[str, ...], settings: PublishSettings) -> None:
    if not targets:
        return
    from reconciler.publish.request import PublishRequest
    from reconciler.publish.targets import publish

    publish(targets, PublishRequest(report, plan, settings))


def propose_fixes(report: Report, settings: FixGitSettings | None) -> None:
    if settings is None:
        return
    from reconciler.gitfix.run import fix_git

    fix_git(report, settings)
