"""`kai-gitops diff`: desired against live, as a report."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli.guard import guard
from reconciler.cli.options import (
    desired_and_live_options,
    git_host_options,
    judging_options,
    metrics_options,
    report_max_results_option,
    report_to_option,
)
from reconciler.core.exits import ExitCode


@click.command("diff")
@desired_and_live_options
@judging_options
@report_to_option
@report_max_results_option
@git_host_options
@metrics_options
@guard
def diff_command(**opts: Any) -> ExitCode:
    """Desired (Git) vs live (cluster or snapshot): a plan of what would change, and what violates."""
    from reconciler.app import pipeline
    from reconciler.cli import settings
    from reconciler.cli.delivery import emit, publish_report
    from reconciler.cli.live import live_reader, run_cluster

    live = settings.live_settings(opts)
    with run_cluster(live) as cluster:
        run = settings.run_settings(opts, cluster)
        report = pipeline.run_diff(run, live_reader(live, cluster))
        code = emit(report, settings.outputs(opts))
        publish_report(report, None, settings.report_targets(opts), settings.publish_settings(opts, cluster))
    return code
