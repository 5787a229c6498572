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
@click.option(
    "--ignore-waves",
    is_flag=True,
    help="Apply whatever kai-gitops.yaml's rollout waves say (a warning is logged); for a person's run.",
)
@guard
def reconcile_command(**opts: Any) -> ExitCode:
    """Plan what kai-gitops may fix (Queues, kai-config, SchedulingShards, node labels) and, with --apply, apply it
    safely.

    The only objects it may write: Queues (create a missing one, patch spec.resources and spec.parentQueue),
    the Config kai-config and SchedulingShards (spec fields the pinned KAI chart renders; security-sensitive
    ones only where allowSensitiveWrites names them), and the nvca.nvcf.nvidia.io/schedule label of Nodes;
    besides, its own Lease and Events, and with --report-to its own PolicyReports, the only objects it ever
    deletes. Never a Secret, a Pod or a Helm release (docs/reconcile-scope.md).
    """
    from reconciler.app import pipeline
    from reconciler.cli import settings
    from reconciler.cli.delivery import emit, propose_fixes, publish_report, record
    from reconciler.cli.live import cluster_target, run_cluster

    # One cluster session from the read to the published reports: one server, one identity, one guard.
    with run_cluster(settings.live_settings(opts)) as cluster:
        outcome = pipeline.run_reconcile_command(
            settings.run_settings(opts, cluster), settings.reconcile_settings(opts), cluster_target(cluster)
        )
        record(outcome=outcome)
        # Through the format registry: each format's form of the plan and apply, or the findings after the run.
        emit(outcome.after or outcome.report, settings.outputs(opts), outcome.shown())
        # After an apply the issue shows what is left (the re-read's plan); the applied plan is history.
        publish_report(
            outcome.after or outcome.report,
            outcome.plan if outcome.applied is None else outcome.left,
            settings.report_targets(opts),
            settings.publish_settings(opts, cluster),
        )
    propose_fixes(outcome.report, settings.fix_git_settings(opts))
    return outcome.exit_code
