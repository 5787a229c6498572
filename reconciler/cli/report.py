"""`kai-gitops report merge`: saved JSON reports folded into one."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli import settings
from reconciler.cli.guard import guard
from reconciler.cli.options import SEVERITIES, output_option
from reconciler.core.exits import ExitCode
from reconciler.outputs.fleet_matrix import matrix_markdown
from reconciler.report.reader import load_report
from reconciler.sources.git import open_tree


@click.group("report")
def report_group() -> None:
    """Work with saved JSON reports."""


@report_group.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default=None,
    help="Exit 2 when a merged finding at or above this severity remains (default: the reports' own --fail-on).",
)
@output_option
@guard
def report_merge_command(files: tuple[str, ...], **opts: Any) -> ExitCode:
    """Fold the JSON reports of `check --shard I/N` jobs (or of `check --cluster` runs) into one report.

    Exit 2 when the merged findings are at or above --fail-on, 0 when clean, 1 on an error.
    """
    from reconciler.cli.delivery import emit
    from reconciler.report.merge import merge_files

    report = merge_files(files, settings.merge_fail_on(opts))
    return emit(report, settings.outputs(opts))


# -- fleet (hub) mode: which clusters an Indexed Job's pod checks ------------------------------------------------
@report_group.command("shard")
@click.argument("names", nargs=-1)
@click.option(
    "--shard",
    "shard_spec",
    metavar="I/N",
    required=True,
    help="The shard: I/N, or auto/N in a Kubernetes Indexed Job (I is $JOB_COMPLETION_INDEX + 1).",
)
@guard
def report_shard_command(names: tuple[str, ...], shard_spec: str) -> ExitCode:
    """Print the NAMES (cluster names) shard I of N owns, one a line: the split `check --shard I/N` makes, for a
    hub's Indexed Job pod to loop over its share of the fleet (deploy/helm, mode fleet)."""
    shard = settings.shard({"shard": shard_spec})
    assert shard is not None  # the option is required
    for name in names:
        if shard.owns(name):
            click.echo(name)
    return ExitCode.CLEAN


@report_group.command("commit")
@click.option("--repo", required=True, help="The GitOps repository: a path or a clone URL.")
@click.option("--ref", default="HEAD", show_default=True, help="The branch, tag or commit to resolve.")
@guard
def report_commit_command(repo: str, ref: str) -> ExitCode:
    """Print the full commit id REF names in the repository (a clone URL fetched first): a hub's Indexed Job
    resolves its ref once and checks every cluster at that commit, so a push during the run cannot split the
    shards between two commits, which `report merge` refuses (deploy/helm, mode fleet)."""
    commit = open_tree(repo, ref).commit_id
    assert commit is not None  # a ref, not a working tree
    click.echo(commit)
    return ExitCode.CLEAN


@report_group.command("matrix")
@click.argument("file", type=click.Path(dir_okay=False, allow_dash=True))
@guard
def report_matrix_command(file: str) -> ExitCode:
    """Print a saved JSON report (e.g. a fleet's `report merge`) as one Markdown table: a row per cluster, a column
    per rule that found something, each cell the cluster's findings of that rule."""
    click.echo(matrix_markdown(load_report(file)), nl=False)
    return ExitCode.CLEAN
