"""Command line: parses options, calls the pipeline, renders the report, exits 0 / 2 / 1.

Only click is imported at start-up so `kai-gitops --help` answers at once; everything heavy is
imported inside the command that needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from reconciler.core.exits import ExitCode

SEVERITIES = ("info", "warning", "error")


def _guard(func: Callable[..., ExitCode]) -> Callable[..., None]:
    """Every failure becomes one line on stderr and exit 1; tracebacks only with KAI_GITOPS_DEBUG=1.

    The run is observed (run id and format for log lines, metrics at the end, failed runs included)."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        from reconciler.core.errors import UserError
        from reconciler.telemetry.logs import error_line
        from reconciler.telemetry.run import observed_run

        command = func.__name__.removesuffix("_command").replace("_", " ")
        try:
            with observed_run(command, kwargs) as run:
                run.exit_code = code = _guarded(func, args, kwargs)
        except UserError as exc:   # the run's own set-up, outside _guarded: e.g. a bad $KAI_GITOPS_LOG_FORMAT
            error_line(exc.line())
            code = ExitCode.ERROR
        sys.exit(code)

    return wrapper


def _guarded(func: Callable[..., ExitCode], args: Any, kwargs: Any) -> ExitCode:
    from reconciler.core.errors import UserError
    from reconciler.telemetry.logs import error_line

    try:
        return func(*args, **kwargs)
    except UserError as exc:
        error_line(exc.line())
        return ExitCode.ERROR
    except KeyboardInterrupt:
        click.echo("kai-gitops: interrupted", err=True)
        return ExitCode.INTERRUPTED
    except Exception as exc:  # the last line of defence: no traceback reaches an operator
        if os.environ.get("KAI_GITOPS_DEBUG"):
            raise
        from reconciler.core.redact import redact_text

        text = redact_text(" ".join(str(exc).split())[:300])  # an unknown error may quote a value
        error_line(f"{type(exc).__name__}: {text} (re-run with KAI_GITOPS_DEBUG=1 and report it)", internal=True)
        return ExitCode.ERROR


def git_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--worktree", is_flag=True, help="Read uncommitted files from the working tree.")(func)
    func = click.option("--ref", default="HEAD", show_default=True, help="Git ref to read desired files at.")(func)
    func = click.option("--repo", metavar="PATH|URL", default=None,
                        help="GitOps repository: working copy, bare repo or clone URL (default: .).")(func)
    return func


def live_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
                        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")(func)
    func = click.option("--context", "kube_context", default=None,
                        help="kubeconfig context (default: the cluster's kubeContext in kai-gitops.yaml).")(func)
    func = click.option("--snapshot", type=click.Path(dir_okay=False), default=None,
                        help="Read live state from a saved snapshot instead of a cluster.")(func)
    return func


def report_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--fail-on", type=click.Choice(SEVERITIES), default="warning", show_default=True,
                        help="Exit 2 when a finding at or above this severity remains (drift counts at its "
                             "own severity).")(func)
    return output_option(func)


def _output_specs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Any]:
    """Checked before the run starts: a typo in -o must not cost a whole fleet check."""
    from reconciler.core.errors import UserError
    from reconciler.outputs.destinations import parse_output_specs

    try:
        return parse_output_specs(values)
    except UserError as exc:
        raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None


OUTPUT_FORMATS = ("text", "json", "jsonl", "sarif", "github", "gitlab", "junit", "markdown")  # outputs/destinations.py


def output_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`-o FMT[=PATH]`, repeatable; any command that renders a Report can take it (see `_emit`)."""
    return click.option(
        "--output", "-o", "output", multiple=True, default=("text",), show_default=True, metavar="FMT[=PATH]",
        callback=_output_specs,
        help=f"Report format, to stdout or to PATH (written atomically); repeatable. FMT: "
             f"{', '.join(OUTPUT_FORMATS)}. Several may share stdout unless one is json/jsonl/sarif/gitlab/junit. "
             "github also appends the job summary to $GITHUB_STEP_SUMMARY.")(func)


def policy_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--opa-preloaded", is_flag=True,
                        help="Assume the OPA server already has the policies; do not upload them.")(func)
    func = click.option("--opa-timeout", type=float, default=10.0, show_default=True,
                        help="Seconds to wait for the OPA server.")(func)
    func = click.option("--opa-ca", type=click.Path(dir_okay=False, exists=False), default=None,
                        help="CA bundle to verify the OPA server's TLS certificate.")(func)
    func = click.option("--opa-token", envvar="KAI_GITOPS_OPA_TOKEN", default=None,
                        help="Bearer token for the OPA server (or $KAI_GITOPS_OPA_TOKEN).")(func)
    func = click.option("--opa-url", default=None,
                        help="Evaluate policies on this OPA server instead of the embedded engine.")(func)
    return func


def git_host_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Where drift issues and fix pull requests go; each overrides the `gitHost:` block of kai-gitops.yaml."""
    func = click.option("--git-host-rate-limit-wait", type=click.FloatRange(min=0), default=None,
                        help="Seconds a run may spend waiting out the host's rate limits in total, then exit 1 "
                             "[default: 300].")(func)
    func = click.option("--git-host-repo", metavar="OWNER/NAME", default=None,
                        help="Repository (GitLab: group/project path). Default: from the remote URL.")(func)
    func = click.option("--git-host-url", metavar="URL", default=None,
                        help="API base: GitHub Enterprise https://HOST/api/v3, self-managed GitLab "
                             "https://HOST[/PREFIX].")(func)
    func = click.option("--git-host", type=click.Choice(["github", "gitlab"]), default=None,
                        help="Git host kind (default: inferred from the remote URL). Token from $GITHUB_TOKEN, "
                             "$GITLAB_TOKEN or $KAI_GITOPS_GIT_HOST_TOKEN.")(func)
    return func


def log_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--log-format", type=click.Choice(["auto", "json", "text"]), default="auto",
                        envvar="KAI_GITOPS_LOG_FORMAT", show_default=True,
                        help="stderr log lines: text for people, json (one object per line) for log stacks; "
                             "auto is text on a terminal, json otherwise (or $KAI_GITOPS_LOG_FORMAT).")(func)


def metrics_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--metrics-file", type=click.Path(dir_okay=False), default=None,
                        help="Write the run's Prometheus metrics to this file (node-exporter textfile "
                             "collector; replaced atomically).")(func)
    func = click.option("--metrics-push", metavar="URL", default=None,
                        help="Push the run's Prometheus metrics to this Pushgateway (job kai-gitops, grouped by "
                             "cluster; basic auth from $KAI_GITOPS_PUSHGATEWAY_USERNAME/_PASSWORD).")(func)
    return log_option(func)


def report_max_results_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--report-max-results", type=click.IntRange(min=1), default=100, show_default=True,
                        help="With --report-to policyreport: most results per report object (the rest are "
                             "counted in the report, not listed).")(func)


def fix_git_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Fix pull requests: the Git edits of the findings, committed on kai-gitops/fix/<cluster>-<hash8>."""
    func = click.option("--git-host-base-branch", metavar="BRANCH", default=None,
                        help="Target branch of fix pull requests (default: gitHost.baseBranch, else the branch "
                             "of --ref).")(func)
    func = click.option("--git-ssh-key", metavar="FILE", type=click.Path(dir_okay=False, exists=True), default=None,
                        help="SSH private key for pushing (passphrase: $KAI_GITOPS_GIT_SSH_PASSPHRASE; default: "
                             "ssh-agent). HTTPS pushes use $KAI_GITOPS_GIT_TOKEN.")(func)
    func = click.option("--git-author", metavar="'NAME <EMAIL>'", default=None,
                        help="Author of fix commits [default: kai-gitops <kai-gitops@users.noreply>].")(func)
    func = click.option("--fix-git-dry-run", is_flag=True,
                        help="What --fix-git would do: the fix branch and its changed lines on stderr; push "
                             "nothing, call no Git host.")(func)
    func = click.option("--fix-git", is_flag=True,
                        help="Open or update one pull/merge request per cluster with the Git edits that fix its "
                             "findings; close it when the base branch no longer needs them.")(func)
    return func


def _report_targets(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """Checked before the run starts, like -o: a typo must not surface only after the report is printed."""
    from reconciler.core.errors import UserError
    from reconciler.publish.targets import check_targets

    try:
        check_targets(values)
    except UserError as exc:
        raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None
    return values


def report_to_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--report-to", "report_to", multiple=True, metavar="TARGET", callback=_report_targets,
                        help="Also publish the report: github or gitlab (one drift issue per cluster, kept "
                             "current), policyreport (PolicyReport objects in the cluster read). "
                             "Repeatable.")(func)


class _Cli(click.Group):
    """Usage mistakes exit 1 like every other error: click's own 2 would read as "findings" in a CronJob."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            return super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(ExitCode.CLEAN)
        except click.UsageError as exc:
            where = exc.ctx.command_path if exc.ctx else "kai-gitops"
            click.echo(f"kai-gitops: error: {exc.format_message()} (see '{where} --help')", err=True)
            sys.exit(ExitCode.ERROR)
        except click.ClickException as exc:
            click.echo(f"kai-gitops: error: {exc.format_message()}", err=True)
            sys.exit(ExitCode.ERROR)
        except click.Abort:
            click.echo("kai-gitops: aborted", err=True)
            sys.exit(ExitCode.ERROR)


@click.group(cls=_Cli, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="kai-gitops", prog_name="kai-gitops")
def main() -> None:
    """Reconcile and policy-check KAI Scheduler and NVCA configuration: Git is desired, the cluster is live.

    Exit codes: 0 clean, 2 findings at or above --fail-on, 1 error.
    """


@main.command("diff")
@git_options
@click.option("--cluster", default=None, help="Cluster name from kai-gitops.yaml (required if it declares several).")
@live_options
@report_options
@policy_options
@report_to_option
@report_max_results_option
@git_host_options
@metrics_options
@_guard
def diff_command(**opts: Any) -> ExitCode:
    """Desired (Git) vs live (cluster or snapshot): a plan of what would change, and what violates."""
    from reconciler.app import pipeline

    settings = _settings(opts)
    report = pipeline.run_diff(settings, _live_reader(opts))
    code = _emit(report, opts["output"])
    _publish(report, None, opts)
    return code


def apply_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--audit-log", type=click.Path(dir_okay=False), default=None,
                        help="Append the JSON audit lines (one per change) to this file instead of stderr.")(func)
    func = click.option("--lease-wait", type=click.FloatRange(min=0), default=30.0, show_default=True,
                        help="Seconds to wait for another reconciler's Lease before giving up.")(func)
    func = click.option("--lease-namespace", default=None,
                        help="Namespace of the kai-gitops Lease (default: the pod's own, else kai-gitops).")(func)
    func = click.option("--max-changes", type=click.IntRange(min=0), default=10, show_default=True,
                        help="Refuse (whole) a plan with more changes than this.")(func)
    func = click.option("--plan", "plan_file", type=click.Path(dir_okay=False), default=None,
                        help="With --apply: apply exactly this saved plan (from --plan-out).")(func)
    func = click.option("--apply", "do_apply", is_flag=True,
                        help="Apply the plan: server-side dry-run first, then the writes, under a Lease.")(func)
    return func


def plan_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--plan-out", type=click.Path(dir_okay=False), default=None,
                        help="Write the plan as versioned JSON, for review and `--plan FILE --apply`.")(func)
    return func


@main.command("reconcile")
@git_options
@click.option("--cluster", default=None, help="Cluster name from kai-gitops.yaml (required if it declares several).")
@live_options
@report_options
@policy_options
@plan_options
@apply_options
@report_to_option
@report_max_results_option
@fix_git_options
@git_host_options
@metrics_options
@_guard
def reconcile_command(**opts: Any) -> ExitCode:
    """Plan what kai-gitops may fix (Queues, the shared-cluster node label) and, with --apply, apply it safely."""
    from reconciler.app import pipeline

    target = _cluster_target(opts)
    try:
        outcome = pipeline.run_reconcile_command(_settings(opts), _reconcile_settings(opts), target)
    finally:
        if target is not None:
            target.close()
    record(outcome=outcome)
    from reconciler.outputs.json_format import dumps

    # text, json and jsonl show the plan and the apply; the other formats render the findings after the run.
    _emit(outcome.after or outcome.report, opts["output"],
          overrides={"json": lambda: dumps(outcome.to_dict()), "text": outcome.render_text,
                     "jsonl": lambda: dumps(outcome.to_dict(), compact=True)})
    # After an apply the issue shows what is left (the re-read's plan); the applied plan is history.
    _publish(outcome.after or outcome.report, outcome.plan if outcome.applied is None else outcome.left, opts)
    _fix_git(outcome.report, opts)
    return outcome.exit_code


@main.command("doctor")
@live_options
@click.option("--repo", metavar="PATH|URL", default=None, help="Optional GitOps repository, for intent-aware checks.")
@click.option("--ref", default="HEAD", show_default=True, help="Git ref (with --repo).")
@click.option("--worktree", is_flag=True, help="Read the working tree (with --repo).")
@click.option("--cluster", default=None, help="Cluster name from kai-gitops.yaml (with --repo).")
@report_options
@policy_options
@log_option
@_guard
def doctor_command(**opts: Any) -> ExitCode:
    """The user guide's Verify and Troubleshoot steps as checks, with NVCA's predicted verdict. Needs no Git."""
    from reconciler.app import pipeline

    settings = _settings(opts)
    report = pipeline.run_doctor(settings, _live_reader(opts), opts["kube_context"])
    return _emit(report, opts["output"])


@main.command("check")
@git_options
@click.option("--cluster", default=None, help="Check only this cluster (default: every cluster in kai-gitops.yaml).")
@click.option("--base", metavar="REF", default=None,
              help="Pull request base: policies, user policies and waivers are read from this ref, not the PR.")
@click.option("--shard", metavar="I/N", default=None,
              help="Check only shard I of N (a stable subset by cluster name); fold the shards' JSON reports "
                   "with `report merge`.")
@report_options
@policy_options
@metrics_options
@fix_git_options
@git_host_options
@_guard
def check_command(**opts: Any) -> ExitCode:
    """The PR check: static policies over the desired configuration in Git. No cluster access."""
    from reconciler.app import pipeline

    settings = _settings(opts)
    if opts.get("shard") is not None:
        settings.shard = _shard(opts)
    report = pipeline.run_check(settings)
    code = _emit(report, opts["output"])
    _fix_git(report, opts)
    return code


def _shard(opts: dict[str, Any]) -> Any:
    from reconciler.core.errors import UserError
    from reconciler.report.shards import parse_shard

    if opts.get("cluster"):
        raise UserError("--shard and --cluster cannot be combined", hint="use one: a shard, or one cluster")
    return parse_shard(opts["shard"])


@main.group("report")
def report_group() -> None:
    """Work with saved JSON reports."""


@report_group.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, allow_dash=True))
@click.option("--fail-on", type=click.Choice(SEVERITIES), default=None,
              help="Exit 2 when a merged finding at or above this severity remains (default: the reports' "
                   "own --fail-on).")
@output_option
@_guard
def report_merge_command(files: tuple[str, ...], **opts: Any) -> ExitCode:
    """Fold the JSON reports of `check --shard I/N` jobs (or of `check --cluster` runs) into one report.

    Exit 2 when the merged findings are at or above --fail-on, 0 when clean, 1 on an error.
    """
    from reconciler.findings.finding import Severity
    from reconciler.report.merge import merge_files

    report = merge_files(files, Severity(opts["fail_on"]) if opts["fail_on"] else None)
    return _emit(report, opts["output"])


@main.group("policy")
def policy_group() -> None:
    """Work with the Rego policy pack."""


@policy_group.command("test")
@click.argument("dirs", nargs=-1, type=click.Path(file_okay=False))
@click.option("--data", "data_files", multiple=True, type=click.Path(dir_okay=False),
              help="YAML or JSON data file, mounted at data.user like kai-gitops.yaml `policies.data` (repeatable).")
@click.option("--verbose", "-v", is_flag=True, help="List every test, not only the failures.")
@_guard
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
    click.echo(format_report(report, verbose))
    return ExitCode.CLEAN if report.ok else ExitCode.FINDINGS


@policy_group.command("bundle")
@click.option("--output-file", "-o", "output_file", required=True, type=click.Path(dir_okay=False),
              help="Bundle to write (.tar.gz), e.g. for `opa run --server --bundle FILE`. Replaced atomically.")
@click.option("--repo", metavar="PATH|URL", default=None,
              help="Add this GitOps repository's policies.dirs and policies.data (default: the shipped pack only).")
@click.option("--ref", default="HEAD", show_default=True, help="Git ref to read them at (with --repo).")
@click.option("--worktree", is_flag=True, help="Read uncommitted files (with --repo).")
@_guard
def policy_bundle_command(output_file: str, repo: str | None, ref: str, worktree: bool) -> ExitCode:
    """Write the policy pack (and a repo's own policies and data) as an OPA bundle, for --opa-preloaded."""
    from reconciler.app.pipeline import open_desired
    from reconciler.app.policy_bundle import build_bundle, write_bundle
    from reconciler.app.settings import GitSettings

    desired = open_desired(GitSettings(repo, ref, worktree)) if repo is not None else None
    bundle = build_bundle(desired)
    write_bundle(bundle, output_file)
    click.echo(f"kai-gitops: wrote {output_file}: {bundle.describe()}", err=True)
    return ExitCode.CLEAN


@main.command("snapshot")
@click.option("--output-file", "-o", "output_file", required=True, type=click.Path(dir_okay=False),
              help="File to write: YAML, or JSON when the name ends in .json. Replaced atomically.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", "kube_context", default=None, help="kubeconfig context (default: its current context).")
@_guard
def snapshot_command(output_file: str, kubeconfig: str | None, kube_context: str | None) -> ExitCode:
    """Save the live state the checks read, for `diff`/`doctor --snapshot` (Secrets only as redacted summaries)."""
    from reconciler.sources.snapshot_writer import snapshot_command as write_snapshot

    result = write_snapshot(output_file, kubeconfig, kube_context)
    click.echo(f"kai-gitops: wrote {result.describe()}", err=True)
    return ExitCode.CLEAN


@main.command("schema")
@_guard
def schema_command() -> ExitCode:
    """Print the JSON Schema of kai-gitops.yaml (for editor completion)."""
    import json

    from reconciler.sources.repoconfig import schema

    click.echo(json.dumps(schema(), indent=2))
    return ExitCode.CLEAN


def _settings(opts: dict[str, Any]) -> Any:
    from pathlib import Path

    from reconciler.app.settings import GitSettings, PolicySettings, RunSettings
    from reconciler.findings.finding import Severity

    policy = PolicySettings(opts.get("opa_url"), opts.get("opa_token"),
                            Path(opts["opa_ca"]) if opts.get("opa_ca") else None,
                            opts.get("opa_timeout", 10.0), bool(opts.get("opa_preloaded")))
    git = GitSettings(opts.get("repo"), opts.get("ref") or "HEAD", bool(opts.get("worktree")))
    return RunSettings(git, opts.get("cluster"), Severity(opts.get("fail_on", "warning")), policy,
                       opts.get("base"))


def _live_reader(opts: dict[str, Any]) -> Callable[[str | None], Any]:
    snapshot = opts.get("snapshot")
    if snapshot:
        if opts.get("kube_context") or opts.get("kubeconfig"):
            from reconciler.core.errors import UserError

            raise UserError("--snapshot cannot be combined with --context/--kubeconfig")
        from reconciler.sources.snapshot import read_snapshot

        return lambda _context: read_snapshot(snapshot)
    from reconciler.sources.cluster import cluster_reader

    return cluster_reader(opts.get("kubeconfig"), opts.get("kube_context"))


def _publish(report: Any, plan: Any, opts: dict[str, Any]) -> None:
    if not opts.get("report_to"):
        return
    from reconciler.publish.targets import PublishRequest, publish

    publish(opts["report_to"], PublishRequest(report, plan, opts))


def _fix_git(report: Any, opts: dict[str, Any]) -> None:
    if not (opts.get("fix_git") or opts.get("fix_git_dry_run")):
        return
    from reconciler.gitfix.run import fix_git

    fix_git(report, opts)


def _cluster_target(opts: dict[str, Any]) -> Any:
    """The live cluster to plan against and apply to; None with --snapshot (a plan, never an apply)."""
    if opts.get("snapshot"):
        if opts.get("kube_context") or opts.get("kubeconfig"):
            from reconciler.core.errors import UserError

            raise UserError("--snapshot cannot be combined with --context/--kubeconfig")
        return None
    from reconciler.reconcile.cluster import ClusterTarget

    return ClusterTarget(opts.get("kubeconfig"), opts.get("kube_context"))


def _reconcile_settings(opts: dict[str, Any]) -> Any:
    from reconciler.reconcile.settings import ReconcileSettings

    return ReconcileSettings(apply=bool(opts.get("do_apply")), plan_file=opts.get("plan_file"),
                             plan_out=opts.get("plan_out"), max_changes=int(opts.get("max_changes", 10)),
                             lease_namespace=opts.get("lease_namespace"),
                             lease_wait_s=float(opts.get("lease_wait", 30.0)),
                             audit_log=opts.get("audit_log"), snapshot=opts.get("snapshot"))


def record(**produced: Any) -> None:
    """Hand the run's report (or reconcile outcome) to the metrics of the observed run."""
    from reconciler.telemetry.run import record as record_run

    record_run(**produced)


def _emit(report: Any, specs: list[Any], overrides: dict[str, Callable[[], str]] | None = None) -> ExitCode:
    """Render `report` to every `-o FMT[=PATH]` (the OutputSpecs `output_option` parsed) and return its exit code.

    `overrides` render some formats another way (reconcile's text and json carry its plan).
    """
    from reconciler.outputs.destinations import emit

    record(report=report)
    emit(report, specs, lambda text: click.echo(text, nl=False), color=sys.stdout.isatty(), overrides=overrides)
    return report.exit_code


if __name__ == "__main__":
    main()
