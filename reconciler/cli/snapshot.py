"""`kai-gitops snapshot`: the live state the checks read, saved to a file."""

from __future__ import annotations

import click

from reconciler.cli.guard import guard
from reconciler.core.exits import ExitCode


@click.command("snapshot")
@click.option("--output-file", "-o", "output_file", required=True, type=click.Path(dir_okay=False),
              help="File to write: YAML, or JSON when the name ends in .json. Replaced atomically.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", "kube_context", default=None, help="kubeconfig context (default: its current context).")
@guard
def snapshot_command(output_file: str, kubeconfig: str | None, kube_context: str | None) -> ExitCode:
    """Save the live state the checks read, for `diff`/`doctor --snapshot` (Secrets only as redacted summaries)."""
    from reconciler.sources.snapshot_writer import snapshot_command as write_snapshot

    result = write_snapshot(output_file, kubeconfig, kube_context)
    click.echo(f"kai-gitops: wrote {result.describe()}", err=True)
    return ExitCode.CLEAN
