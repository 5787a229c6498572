"""`kai-gitops upgrade-plan`: what upgrading a cluster's KAI chart to another release changes, for its values."""

from __future__ import annotations

import click

from reconciler.app.upgrade import plan_upgrade
from reconciler.cli.guard import guard
from reconciler.cli.options import git_options
from reconciler.cli.settings import git_settings
from reconciler.cli.stdout import write_stdout
from reconciler.core.exits import ExitCode
from reconciler.outputs.upgrade_plan_views import PLAN_VIEWS, render_plan


@click.command("upgrade-plan")
@git_options
@click.option("--cluster", default=None, help="Cluster name from kai-gitops.yaml (required if it declares several).")
@click.option(
    "--to",
    "target",
    required=True,
    metavar="VERSION",
    help="The KAI chart release to upgrade to: one of the chart versions kai-gitops models.",
)
@click.option(
    "-o",
    "--output",
    "view",
    type=click.Choice(PLAN_VIEWS),
    default="text",
    show_default=True,
    help="text for a terminal, markdown for a pull request comment, json for scripts.",
)
@guard
def upgrade_plan_command(
    repo: str | None, ref: str, worktree: bool, cluster: str | None, target: str, view: str
) -> ExitCode:
    """What upgrading a cluster's KAI chart from its pin to --to changes, for its values: keys renamed or removed,
    defaults, kai-config fields, CRDs, and the steps in order. Exit 2 when Git must change first.

    Every line names its upstream source. Reads Git only, never a cluster.
    """
    plan = plan_upgrade(git_settings({"repo": repo, "ref": ref, "worktree": worktree}), cluster, target)
    write_stdout(render_plan(plan, view), nl=False)
    return ExitCode.FINDINGS if plan.changes_needed else ExitCode.CLEAN
