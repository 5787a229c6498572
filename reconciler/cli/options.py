"""Options shared by several commands, each declared once. Their values are read only in `settings.py`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from reconciler.outputs import FORMATS
from reconciler.publish.targets import TARGETS

SEVERITIES = ("info", "warning", "error")


def git_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option("--worktree", is_flag=True, help="Read uncommitted files from the working tree.")(func)
    func = click.option("--ref", default="HEAD", show_default=True, help="Git ref to read desired files at.")(func)
    func = click.option(
        "--repo",
        metavar="PATH|URL",
        default=None,
        help="GitOps repository: working copy, bare repo or clone URL (default: .).",
    )(func)
    return func


def cluster_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """The one cluster `diff` and `reconcile` read."""
    return click.option(
        "--cluster", default=None, help="Cluster name from kai-gitops.yaml (required if it declares several)."
    )(func)


def live_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--kubeconfig",
        type=click.Path(dir_okay=False),
        default=None,
        help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).",
    )(func)
    func = click.option(
        "--context",
        "kube_context",
        default=None,
        help="kubeconfig context (default: the cluster's kubeContext in kai-gitops.yaml).",
    )(func)
    func = click.option(
        "--snapshot",
        type=click.Path(dir_okay=False),
        default=None,
        help="Read live state from a saved snapshot instead of a cluster.",
    )(func)
    return func


def _audit_logs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """A directory stands for the log files in it (the API server's log and its rotated backups); each file's first
    line is read before the run: a wrong path must not cost a cluster read first."""
    from reconciler.core.errors import UserError
    from reconciler.sources.audit_log import audit_log_files, check_audit_log

    files: list[str] = []
    try:
        for value in values:
            files += audit_log_files(value)
        for file in files:
            check_audit_log(file)
    except UserError as exc:
        raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None
    return tuple(files)


def k8s_audit_log_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """The cluster's audit logs, read for who last wrote each drifted object (`lastWrite`)."""
    return click.option(
        "--k8s-audit-log",
        "k8s_audit_log",
        multiple=True,
        metavar="PATH",
        callback=_audit_logs,
        help="The API server's audit log (JSON lines of audit.k8s.io/v1 Events, plain or gzip), "
        "streamed: each drift finding names its object's last writer before the run, their "
        "user agent and source IP, or says that the log has no write to it. A directory "
        "means every log file in it (the log and its rotated backups). Repeatable.",
    )(func)


def _live_snapshots(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> tuple[tuple[str | None, str], ...]:
    """CLUSTER=FILE, or a bare FILE for the one --cluster names; each file must exist before the run starts."""
    from pathlib import Path

    parsed: list[tuple[str | None, str]] = []
    for value in values:
        name, sep, path = value.partition("=")
        if not sep or not name or "/" in name:  # no cluster name holds a slash; a path may
            name, path = "", value
        if not path:
            raise click.BadParameter(f"'{value}' names no file: write CLUSTER=FILE", ctx=ctx, param=param)
        if not Path(path).is_file():
            raise click.BadParameter(
                f"{path}: snapshot file not found (write one with `kai-gitops snapshot`)", ctx=ctx, param=param
            )
        parsed.append((name or None, path))
    return tuple(parsed)


def live_snapshot_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`check`: live Queues from a saved snapshot, where `--snapshot` (diff, doctor) stands for the whole cluster."""
    func = click.option(
        "--live-snapshot-max-age",
        "live_snapshot_max_age",
        metavar="HOURS",
        default=24.0,
        show_default=True,
        type=click.FloatRange(min=0, min_open=True),
        help="A --live-snapshot taken longer ago than this is still judged, with a warning that "
        "its live checks are stale.",
    )(func)
    return click.option(
        "--live-snapshot",
        "live_snapshot",
        multiple=True,
        metavar="[CLUSTER=]FILE",
        callback=_live_snapshots,
        help="The cluster's Queues from a `kai-gitops snapshot` file (only their specs and "
        "status.allocated are read): judge quota cuts below running work (KAI-Q-020) and "
        "parents that exist only live (KAI-Q-023). Repeatable, one per cluster; a bare FILE "
        "with --cluster.",
    )(func)


def report_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--fail-on",
        type=click.Choice(SEVERITIES),
        default="warning",
        show_default=True,
        help="Exit 2 when a finding at or above this severity remains (drift counts at its own severity).",
    )(func)
    return output_option(func)


def _output_specs(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[Any]:
    """Checked before the run starts: a typo in -o must not cost a whole fleet check."""
    from reconciler.core.errors import UserError
    from reconciler.outputs.destinations import parse_output_specs

    try:
        return parse_output_specs(values)
    except UserError as exc:
        raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None


def output_option(func: Callable[..., Any]) -> Callable[..., Any]:
    """`-o FMT[=PATH]`, repeatable; any command that renders a Report can take it (see `delivery.emit`)."""
    return click.option(
        "--output",
        "-o",
        "output",
        multiple=True,
        default=("text",),
        show_default=True,
        metavar="FMT[=PATH]",
        callback=_output_specs,
        help=f"Report format, to stdout or to PATH (written atomically); repeatable. FMT: "
        f"{', '.join(FORMATS)}. Several may share stdout unless one is "
        f"{'/'.join(f for f, entry in FORMATS.items() if entry.whole_document)}. "
        f"{'/'.join(f for f, entry in FORMATS.items() if entry.step_summary)} also appends the job summary "
        "to $GITHUB_STEP_SUMMARY.",
    )(func)


def _url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A URL option Python cannot split (an unclosed IPv6 bracket, a port that is no number) is a usage error
    now, not an internal error when the URL is first used."""
    from reconciler.core.errors import UserError
    from reconciler.core.urls import split_url

    if value is not None:
        try:
            split_url(value, "the URL")
        except UserError as exc:
            raise click.BadParameter(exc.line(), ctx=ctx, param=param) from None
    return value


def policy_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--opa-preloaded", is_flag=True, help="Assume the OPA server already has the policies; do not upload them."
    )(func)
    func = click.option(
        "--opa-timeout", type=float, default=10.0, show_default=True, help="Seconds to wait for the OPA server."
    )(func)
    func = click.option(
        "--opa-ca",
        type=click.Path(dir_okay=False, exists=False),
        default=None,
        help="CA bundle to verify the OPA server's TLS certificate.",
    )(func)
    func = click.option(
        "--opa-token",
        envvar="KAI_GITOPS_OPA_TOKEN",
        default=None,
        help="Bearer token for the OPA server (or $KAI_GITOPS_OPA_TOKEN).",
    )(func)
    func = click.option(
        "--opa-url",
        default=None,
        callback=_url,
        help="Evaluate policies on this OPA server instead of the embedded engine.",
    )(func)
    return func


def git_host_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Where drift issues and fix pull requests go; each overrides the `gitHost:` block of kai-gitops.yaml."""
    func = click.option(
        "--git-host-rate-limit-wait",
        type=click.FloatRange(min=0),
        default=None,
        help="Seconds a run may spend waiting out the host's rate limits in total, then exit 1 [default: 300].",
    )(func)
    func = click.option(
        "--git-host-repo",
        metavar="OWNER/NAME",
        default=None,
        help="Repository (GitLab: group/project path). Default: from the remote URL.",
    )(func)
    func = click.option(
        "--git-host-url",
        metavar="URL",
        default=None,
        callback=_url,
        help="API base: GitHub Enterprise https://HOST/api/v3, self-managed GitLab https://HOST[/PREFIX].",
    )(func)
    func = click.option(
        "--git-host",
        type=click.Choice(["github", "gitlab"]),
        default=None,
        help="Git host kind (default: inferred from the remote URL). Token from $GITHUB_TOKEN, "
        "$GITLAB_TOKEN or $KAI_GITOPS_GIT_HOST_TOKEN.",
    )(func)
    return func


def log_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--log-format",
        type=click.Choice(["auto", "json", "text"]),
        default="auto",
        envvar="KAI_GITOPS_LOG_FORMAT",
        show_default=True,
        help="stderr log lines: text for people, json (one object per line) for log stacks; "
        "auto is json inside a Kubernetes pod, text elsewhere, CI included "
        "(or $KAI_GITOPS_LOG_FORMAT).",
    )(func)


def metrics_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--metrics-file",
        type=click.Path(dir_okay=False),
        default=None,
        help="Write the run's Prometheus metrics to this file (node-exporter textfile collector; replaced atomically).",
    )(func)
    func = click.option(
        "--metrics-push",
        metavar="URL",
        default=None,
        callback=_url,
        help="Push the run's Prometheus metrics to this Pushgateway (job kai-gitops, grouped by "
        "cluster; basic auth from $KAI_GITOPS_PUSHGATEWAY_USERNAME/_PASSWORD).",
    )(func)
    return log_option(func)


def report_max_results_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--report-max-results",
        type=click.IntRange(min=1),
        default=100,
        show_default=True,
        help="With --report-to policyreport: most results per report object (the rest are "
        "counted in the report, not listed).",
    )(func)


def fix_git_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """Fix pull requests: the Git edits of the findings, committed on kai-gitops/fix/<cluster>-<hash8>."""
    func = click.option(
        "--git-host-base-branch",
        metavar="BRANCH",
        default=None,
        help="Target branch of fix pull requests (default: gitHost.baseBranch, else the branch of --ref).",
    )(func)
    func = click.option(
        "--git-ssh-key",
        metavar="FILE",
        type=click.Path(dir_okay=False, exists=True),
        default=None,
        help="SSH private key for pushing (passphrase: $KAI_GITOPS_GIT_SSH_PASSPHRASE; default: "
        "ssh-agent). HTTPS pushes use $KAI_GITOPS_GIT_TOKEN.",
    )(func)
    func = click.option(
        "--git-author",
        metavar="'NAME <EMAIL>'",
        default=None,
        help="Author of fix commits [default: kai-gitops <kai-gitops@users.noreply>].",
    )(func)
    func = click.option(
        "--fix-git-dry-run",
        is_flag=True,
        help="What --fix-git would do: the fix branch and its changed lines on stderr; push nothing, call no Git host.",
    )(func)
    func = click.option(
        "--fix-git",
        is_flag=True,
        help="Open or update one pull/merge request per cluster with the Git edits that fix its "
        "findings; close it when the base branch no longer needs them.",
    )(func)
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
    return click.option(
        "--report-to",
        "report_to",
        multiple=True,
        metavar="TARGET",
        callback=_report_targets,
        help="Also publish the report: "
        + "; ".join(f"{name}: {entry.summary}" for name, entry in TARGETS.items())
        + ". Repeatable.",
    )(func)


def apply_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--allow-over-quota",
        is_flag=True,
        help="Apply changes that cut a queue's quota or limit below what its running work "
        "holds now (KAI-Q-020); refused without it.",
    )(func)
    func = click.option(
        "--audit-log",
        type=click.Path(dir_okay=False),
        default=None,
        help="Append the JSON audit lines (one per change) to this file instead of stderr.",
    )(func)
    func = click.option(
        "--audit-log-max-bytes",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Once the --audit-log file is larger, rewrite it to the last `applied` line of each "
        "field, the history that controller-fight detection (KAI-D-009) reads; 0: never.",
    )(func)
    func = click.option(
        "--lease-wait",
        type=click.FloatRange(min=0),
        default=30.0,
        show_default=True,
        help="Seconds to wait for another reconciler's Lease before giving up.",
    )(func)
    func = click.option(
        "--lease-namespace",
        default=None,
        help="Namespace of the kai-gitops Lease (default: the pod's own, else kai-gitops).",
    )(func)
    func = click.option(
        "--max-changes",
        type=click.IntRange(min=0),
        default=10,
        show_default=True,
        help="Refuse (whole) a plan with more changes than this.",
    )(func)
    func = click.option(
        "--plan",
        "plan_file",
        type=click.Path(dir_okay=False),
        default=None,
        help="With --apply: apply exactly this saved plan (from --plan-out).",
    )(func)
    func = click.option(
        "--apply",
        "do_apply",
        is_flag=True,
        help="Apply the plan: server-side dry-run first, then the writes, under a Lease.",
    )(func)
    return func


def plan_options(func: Callable[..., Any]) -> Callable[..., Any]:
    func = click.option(
        "--plan-out",
        type=click.Path(dir_okay=False),
        default=None,
        help="Write the plan as versioned JSON, for review and `--plan FILE --apply`.",
    )(func)
    return func


def desired_and_live_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--repo/--ref/--worktree, --cluster, and the live side: what diff and reconcile compare."""
    return git_options(cluster_option(live_options(k8s_audit_log_option(func))))


def previous_report_option(func: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--previous-report",
        metavar="FILE",
        type=click.Path(dir_okay=False),
        default=None,
        help="An earlier `-o json` report: a finding it lists keeps the firstSeen time it gives "
        "(the cluster's PolicyReports, where there are any, come first).",
    )(func)


def judging_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--fail-on, -o, --previous-report and the policy engine: every command that evaluates the policies and
    renders a report."""
    return report_options(previous_report_option(policy_options(func)))
