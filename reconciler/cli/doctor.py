"""`kai-gitops doctor`: the user guide's Verify and Troubleshoot steps against a live cluster."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli.guard import guard
from reconciler.cli.options import judging_options, k8s_audit_log_option, live_options, log_option
from reconciler.core.exits import ExitCode


@click.command("doctor")
@live_options
@k8s_audit_log_option
@click.option("--repo", metavar="PATH|URL", default=None, help="Optional GitOps repository, for intent-aware checks.")
@click.option("--ref", default="HEAD", show_default=True, help="Git ref (with --repo).")
@click.option("--worktree", is_flag=True, help="Read the working tree (with --repo).")
@click.option("--cluster", default=None, help="Cluster name from kai-gitops.yaml (with --repo).")
@judging_options
@log_option
@guard
def doctor_command(**opts: Any) -> ExitCode:
    """The user guide's Verify and Troubleshoot steps as checks, with NVCA's predicted verdict. Needs no Git."""
    from reconciler.app import pipeline
    from reconciler.cli import settings
    from reconciler.cli.delivery import emit
    from reconciler.cli.live import live_reader, run_cluster

    live = settings.live_settings(opts)
    with run_cluster(live) as cluster:
        run = settings.run_settings(opts, cluster)
        report = pipeline.run_doctor(run, live_reader(live, cluster), live.kube_context)
    return emit(report, settings.outputs(opts))
