"""`kai-gitops check`: the pull request check over the desired configuration in Git."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli.guard import guard
from reconciler.cli.options import (
    fix_git_options,
    git_host_options,
    git_options,
    judging_options,
    live_snapshot_option,
    metrics_options,
)
from reconciler.core.exits import ExitCode


@click.command("check")
@git_options
@click.option("--cluster", default=None, help="Check only this cluster (default: every cluster in kai-gitops.yaml).")
@click.option(
    "--base",
    metavar="REF",
    default=None,
    help="Pull request base: policies, user policies and waivers are read from this ref, not the PR.",
)
@click.option(
    "--shard",
    metavar="I/N",
    default=None,
    help="Check only shard I of N (a stable subset by cluster name); fold the shards' JSON reports "
    "with `report merge`.",
)
@click.option(
    "--policy-timeout",
    metavar="SECONDS",
    type=click.FloatRange(min=0, min_open=True),
    default=60.0,
    show_default=True,
    help="Without --base: seconds one evaluation of the pull request's own policies may take (they run in a "
    "child process), per cluster.",
)
@click.option(
    "--policy-memory",
    metavar="MB",
    type=click.IntRange(min=1),
    default=2048,
    show_default=True,
    help="Without --base: memory the pull request's own policies may take beyond what kai-gitops "
    "already uses (an address-space limit on their process).",
)
@click.option(
    "--helm",
    metavar="PATH",
    default=None,
    help="The helm binary that renders the function charts listed under workloads: in kai-gitops.yaml "
    "(default: helm on PATH).",
)
@click.option(
    "--helm-memory",
    metavar="MB",
    type=click.IntRange(min=1),
    default=4096,
    show_default=True,
    help="Address space `helm template` may map while it renders one function chart (a limit on its "
    "process; helm's Go runtime takes about 1.5 GB of it before rendering).",
)
@live_snapshot_option
@judging_options
@metrics_options
@fix_git_options
@git_host_options
@guard
def check_command(**opts: Any) -> ExitCode:
    """The PR check: static policies over the desired configuration in Git. No cluster access (the live Queues
    only from --live-snapshot files)."""
    from reconciler.app import pipeline
    from reconciler.cli import settings
    from reconciler.cli.delivery import emit, propose_fixes

    run = settings.run_settings(opts)
    run.shard = settings.shard(opts)
    report = pipeline.run_check(run)
    code = emit(report, settings.outputs(opts))
    propose_fixes(report, settings.fix_git_settings(opts))
    return code
