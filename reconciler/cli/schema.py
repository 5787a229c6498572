"""`kai-gitops schema`: the JSON Schema of kai-gitops.yaml."""

from __future__ import annotations

import click

from reconciler.cli.guard import guard
from reconciler.cli.stdout import write_stdout
from reconciler.core.exits import ExitCode


@click.command("schema")
@guard
def schema_command() -> ExitCode:
    """Print the JSON Schema of kai-gitops.yaml (for editor completion)."""
    import json

    from reconciler.sources.repoconfig import schema

    write_stdout(json.dumps(schema(), indent=2))
    return ExitCode.CLEAN
