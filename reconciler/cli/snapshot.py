"""`kai-gitops snapshot`: the live state the checks read, saved to a file or printed."""

from __future__ import annotations

import click

from reconciler.cli.guard import guard
from reconciler.core.exits import ExitCode
from reconciler.outputs import FORMATS


def _snapshot_output(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """Checked before the cluster is read, like the report commands' -o."""
    from reconciler.core.errors import UserError
    from reconciler.sources.snapshot_writer import SNAPSHOT_FORMATS, SnapshotTarget

    word = value.partition("=")[0].strip().lower()
    if word in FORMATS and word not in SNAPSHOT_FORMATS:  # a report format: never meant as a file name
        raise click.BadParameter(
            f"a snapshot is yaml or json, not {word} (write -o yaml, -o json=PATH or -o PATH)", ctx=ctx, param=param
        )
    try:
        SnapshotTarget.parse(value)
    except UserError as exc:
        raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None
    return value


@click.command("snapshot")
@click.option(
    "--output",
    "-o",
    "--output-file",
    "output",
    required=True,
    metavar="FMT[=PATH]",
    callback=_snapshot_output,
    help="yaml or json, to stdout or to PATH (replaced atomically): -o yaml, -o json=snap.json. A plain "
    "PATH also works: JSON when the name ends in .json, else YAML. (--output-file: the old name.)",
)
@click.option(
    "--kubeconfig",
    type=click.Path(dir_okay=False),
    default=None,
    help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).",
)
@click.option("--context", "kube_context", default=None, help="kubeconfig context (default: its current context).")
@guard
def snapshot_command(output: str, kubeconfig: str | None, kube_context: str | None) -> ExitCode:
    """Save the live state the checks read, for `diff`/`doctor --snapshot` (Secrets only as redacted summaries)."""
    from reconciler.sources.snapshot_writer import snapshot_command as write_snapshot

    result = write_snapshot(output, kubeconfig, kube_context)
    from reconciler.telemetry.logs import say

    say(f"wrote {result.describe()}")
    return ExitCode.CLEAN
