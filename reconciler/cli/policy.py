"""`kai-gitops policy test` and `policy bundle`: the Rego policy pack's tests, and the pack as an OPA bundle."""

from __future__ import annotations

from typing import Any

import click

from reconciler.cli.guard import guard
from reconciler.cli.stdout import write_stdout
from reconciler.core.exits import ExitCode


@click.group("policy")
def policy_group() -> None:
    """Work with the Rego policy pack."""


@policy_group.command("test")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False))
@click.option(
    "--data",
    "data_files",
    multiple=True,
    type=click.Path(dir_okay=False, exists=True),
    help="YAML or JSON data file, mounted at data.user like kai-gitops.yaml `policies.data` (repeatable).",
)
@click.option("--verbose", "-v", is_flag=True, help="List every test, not only the failures.")
@guard
def policy_test_command(dirs: tuple[str, ...], data_files: tuple[str, ...], verbose: bool) -> ExitCode:
    """Run the test_* rules of the shipped pack (default) or of DIRS, like `opa test`."""
    from pathlib import Path

    from reconciler.checks.policy.testing import format_report, run_policy_tests
    from reconciler.core.errors import UserError
    from reconciler.yamlio.document import load_document

    user_data: dict[str, Any] = {}
    for name in data_files:
        value = load_document(Path(name).read_bytes(), name).data
        if not isinstance(value, dict):
            raise UserError("policy data must be a mapping", where=f"{name}:1")
        user_data.update(value)
    report = run_policy_tests([Path(d) for d in dirs] or None, user_data=user_data or None)
    write_stdout(format_report(report, verbose))
    return ExitCode.CLEAN if report.ok else ExitCode.FINDINGS


@policy_group.command("bundle")
@click.option(
    "--output-file",
    "-o",
    "output_file",
    required=True,
    type=click.Path(dir_okay=False),
    help="Bundle to write (.tar.gz), e.g. for `opa run --server --bundle FILE`. Replaced atomically.",
)
@click.option(
    "--repo",
    metavar="PATH|URL",
    default=None,
    help="Add this GitOps repository's policies.dirs and policies.data (default: the shipped pack only).",
)
@click.option("--ref", default="HEAD", show_default=True, help="Git ref to read them at (with --repo).")
@click.option("--worktree", is_flag=True, help="Read uncommitted files (with --repo).")
@guard
def policy_bundle_command(output_file: str, repo: str | None, ref: str, worktree: bool) -> ExitCode:
    """Write the policy pack (and a repo's own policies and data) as an OPA bundle, for --opa-preloaded."""
    from reconciler.app.pipeline import open_desired
    from reconciler.app.policy_bundle import build_bundle, write_bundle
    from reconciler.app.settings import GitSettings

    desired = open_desired(GitSettings(repo, ref, worktree)) if repo is not None else None
    bundle = build_bundle(desired)
    write_bundle(bundle, output_file)
    from reconciler.telemetry.logs import say

    say(f"wrote {output_file}: {bundle.describe()}")
    return ExitCode.CLEAN
