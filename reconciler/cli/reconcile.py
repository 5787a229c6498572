"""`kai-gitops reconcile`: the plan of what kai-gitops may fix, and with --apply, the apply."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli.guard import guard
from reconciler.cli.options import (
    apply_options,
    desired_and_live_options,
    fix_git_options,
    git_host_options,
    judging_options,
    metrics_options,
    plan_options,
    report_max_results_option,
    report_to_option,
)
from reconciler.core.exits import ExitCode


@click.command("reconcile")
@desired_and_live_options
@judging_options
@plan_options
@apply_options
@report_to_option
@report_max_results_option
@fix_git_options
@git_host_options
@metrics_options
@guard
def reconcile_command(**opts: Any) -> ExitCode:
    """Plan what kai-gitops may fix (Queues, the shared-cluster node label, kai-config, SchedulingShards) and, with
    --apply, apply it safely."""
    from reconciler.app import pipeline
    from reconciler.cli import settings
    from reconciler.cli.delivery import emit, propose_fixes, publish_report, record
    from reconciler.cli.live import cluster_target

    target = cluster_target(settings.live_settings(opts))
    try:
        outcome = pipeline.run_reconcile_command(settings.run_settings(opts), settings.reconcile_settings(opts),
                                                 target)
    finally:
        if target is not None:
            target.close()
    record(outcome=outcome)
    from reconciler.outputs.json_format import dumps

    # text, json and jsonl show the plan and the apply; the other formats render the findings after the run.
    emit(outcome.after or outcome.report, settings.outputs(opts),
         overrides={"json": lambda: dumps(outcome.to_dict()), "text": outcome.render_text,
                    "jsonl": lambda: dumps(outcome.to_dict(), compact=True)})
    # After an apply the issue shows what is left (the re-read's plan); the applied plan is history.
    publish_report(outcome.after or outcome.report, outcome.plan if outcome.applied is None else outcome.left,
                   settings.report_targets(opts), settings.publish_settings(opts))
    propose_fixes(outcome.report, settings.fix_git_settings(opts))
    return outcome.exit_code
