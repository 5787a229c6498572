"""Command line: parses options, calls the pipeline, renders the report, exits 0 / 2 / 1.

Only click is imported at start-up so `kai-gitops --help` answers at once: `COMMANDS` names each command as
a string (`reconciler/core/lazy.py`), imported when the command runs or shows its help (tests/project/test_registries.py
loads each: mypy cannot type a decorated command across the package's imports). Everything heavy is imported
inside the command that needs it. Shared options are declared in `options.py`; `settings.py` turns them into
typed settings.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from reconciler.cli.lazy import LazyCommand, LazyCommands, LazyGroup
from reconciler.core.collector import tune_for_one_run
from reconciler.core.exits import ExitCode
from reconciler.core.lazy import LazyRef

# Each summary is the first paragraph of the command's help; tests/cli/test_cli_foundation.py holds them equal.
COMMANDS = {
    "check": LazyCommand(
        LazyRef("reconciler.cli.check:check_command"),
        "The PR check: static policies over the desired configuration in Git. No cluster access.",
    ),
    "diff": LazyCommand(
        LazyRef("reconciler.cli.diff:diff_command"),
        "Desired (Git) vs live (cluster or snapshot): a plan of what would change, and what violates.",
    ),
    "doctor": LazyCommand(
        LazyRef("reconciler.cli.doctor:doctor_command"),
        "The user guide's Verify and Troubleshoot steps as checks, with NVCA's predicted verdict. Needs no Git.",
    ),
    "init": LazyCommand(
        LazyRef("reconciler.cli.init:init_command"),
        "Scaffold a GitOps repository in DIRECTORY (default: here), refusing to overwrite any file.",
    ),
    "policy": LazyCommand(LazyRef("reconciler.cli.policy:policy_group"), "Work with the Rego policy pack."),
    "reconcile": LazyCommand(
        LazyRef("reconciler.cli.reconcile:reconcile_command"),
        "Plan what kai-gitops may fix (Queues, kai-config, SchedulingShards, node labels) and, "
        "with --apply, apply it safely.",
    ),
    "report": LazyCommand(LazyRef("reconciler.cli.report:report_group"), "Work with saved JSON reports."),
    "schema": LazyCommand(
        LazyRef("reconciler.cli.schema:schema_command"),
        "Print the JSON Schema of kai-gitops.yaml (for editor completion).",
    ),
    "snapshot": LazyCommand(
        LazyRef("reconciler.cli.snapshot:snapshot_command"),
        "Save the live state the checks read, for `diff`/`doctor --snapshot` (Secrets only as redacted summaries).",
    ),
    "upgrade-plan": LazyCommand(
        LazyRef("reconciler.cli.upgrade_plan:upgrade_plan_command"),
        "What upgrading a cluster's KAI chart from its pin to --to changes, for its values: "
        "keys renamed or removed, defaults, kai-config fields, CRDs, and the steps in order. "
        "Exit 2 when Git must change first.",
    ),
}


class _Cli(LazyGroup):
    """Usage mistakes exit 1 like every other error: click's own 2 would read as "findings" in a CronJob."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(ExitCode.CLEAN)
        except click.UsageError as exc:
            from reconciler.telemetry.logs import one_line

            where = exc.ctx.command_path if exc.ctx else "kai-gitops"
            click.echo(f"kai-gitops: error: {one_line(exc.format_message())} (see '{where} --help')", err=True)
            sys.exit(ExitCode.ERROR)
        except click.ClickException as exc:
            from reconciler.telemetry.logs import one_line

            click.echo(f"kai-gitops: error: {one_line(exc.format_message())}", err=True)
            sys.exit(ExitCode.ERROR)
        except click.Abort:
            click.echo("kai-gitops: aborted", err=True)
            sys.exit(ExitCode.ERROR)


@click.group(
    cls=_Cli,
    commands=LazyCommands(COMMANDS),
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="kai-gitops", prog_name="kai-gitops")
def main() -> None:
    """Reconcile and policy-check KAI Scheduler and NVCA configuration: Git is desired, the cluster is live.

    Exit codes: 0 clean, 2 findings at or above --fail-on, 1 error.
    """


def run() -> object:
    """The `kai-gitops` program (and `python -m reconciler`): one command in its own process."""
    tune_for_one_run()
    return main()
