"""The only code that reads click's parameter names: from a command's options, as click passes them, to the
typed settings each room takes. Below `cli/`, no code knows what an option is called.

Each type is imported where it is built, so a command pays only for the settings it uses.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.app.settings import HistorySettings, RunSettings
    from reconciler.findings.finding import Severity
    from reconciler.gitfix.run import FixGitSettings
    from reconciler.githost.base import HostFlags
    from reconciler.outputs.destinations import OutputSpec
    from reconciler.publish.request import PublishSettings
    from reconciler.reconcile.settings import ReconcileSettings
    from reconciler.report.shards import Shard
    from reconciler.sources.cluster.session import ClusterSessions
    from reconciler.sources.settings import GitSettings, LiveSettings
    from reconciler.telemetry.run import TelemetrySettings

Options = Mapping[str, Any]  # a command's parameters by click's names, as the command function receives them


def run_settings(opts: Options, cluster: ClusterSessions | None = None) -> RunSettings:
    """`cluster`: the run's cluster sessions (cli/live.py run_cluster), None without a live cluster."""
    from datetime import timedelta
    from pathlib import Path

    from reconciler.app.settings import PolicySettings, RunSettings
    from reconciler.findings.finding import Severity

    policy = PolicySettings(
        opts.get("opa_url"),
        opts.get("opa_token"),
        Path(opts["opa_ca"]) if opts.get("opa_ca") else None,
        opts.get("opa_timeout", 10.0),
        bool(opts.get("opa_preloaded")),
        timeout_s=opts.get("policy_timeout", 60.0),
        memory_mb=opts.get("policy_memory", 2048),
    )
    git = git_settings(opts)
    return RunSettings(
        git,
        opts.get("cluster"),
        Severity(opts.get("fail_on", "warning")),
        policy,
        opts.get("base"),
        k8s_audit_logs=tuple(opts.get("k8s_audit_log") or ()),
        helm=opts.get("helm"),
        helm_memory_mb=opts.get("helm_memory", 4096),
        history=history_settings(opts, cluster),
        live_snapshots=tuple(opts.get("live_snapshot") or ()),
        live_snapshot_max_age=timedelta(hours=opts.get("live_snapshot_max_age") or 24.0),
    )


def history_settings(opts: Options, cluster: ClusterSessions | None = None) -> HistorySettings:
    """--previous-report, and the live cluster whose PolicyReports say when findings were first reported: that
    of the commands with live options (not `check`), unless they read a snapshot."""
    from reconciler.app.settings import HistorySettings

    return HistorySettings(opts.get("previous_report"), cluster)


def shard(opts: Options) -> Shard | None:
    """`check --shard I/N` (or auto/N in an Indexed Job); it cannot be combined with --cluster."""
    if opts.get("shard") is None:
        return None
    from reconciler.core.errors import UserError
    from reconciler.report.shards import parse_shard

    if opts.get("cluster"):
        raise UserError("--shard and --cluster cannot be combined", hint="use one: a shard, or one cluster")
    return parse_shard(opts["shard"], os.environ)  # auto/N: the index of a Kubernetes Indexed Job's pod


def git_settings(opts: Options) -> GitSettings:
    from reconciler.sources.settings import GitSettings

    return GitSettings(opts.get("repo"), opts.get("ref") or "HEAD", bool(opts.get("worktree")))


def live_settings(opts: Options) -> LiveSettings:
    from reconciler.sources.settings import LiveSettings

    return LiveSettings(opts.get("kubeconfig"), opts.get("kube_context"), opts.get("snapshot"))


def reconcile_settings(opts: Options) -> ReconcileSettings:
    from reconciler.reconcile.settings import ReconcileSettings, RolloutSettings

    return ReconcileSettings(
        apply=bool(opts.get("do_apply")),
        plan_file=opts.get("plan_file"),
        plan_out=opts.get("plan_out"),
        max_changes=int(opts.get("max_changes", 10)),
        lease_namespace=opts.get("lease_namespace"),
        lease_wait_s=float(opts.get("lease_wait", 30.0)),
        audit_log=opts.get("audit_log"),
        audit_log_max_bytes=int(opts.get("audit_log_max_bytes") or 0),
        live=live_settings(opts),
        allow_over_quota=bool(opts.get("allow_over_quota")),
        # --ignore-waves, and the Git host whose commit statuses carry the waves' reports
        rollout=RolloutSettings(
            ignore_waves=bool(opts.get("ignore_waves")), host_flags=host_flags(opts), repo=opts.get("repo")
        ),
    )


def outputs(opts: Options) -> list[OutputSpec]:
    """The `-o FMT[=PATH]` targets, already parsed by the option's callback."""
    return list(opts["output"])


def check_stdout_sharing(opts: Options) -> None:
    """The report formats and the other outputs a command writes may not share stdout (destinations.py)."""
    from reconciler.outputs.destinations import check_stdout_streams

    check_stdout_streams(
        report_outputs(opts),
        {
            "--plan-out": opts.get("plan_out"),
            "--metrics-file": opts.get("metrics_file"),
            "--audit-log": opts.get("audit_log"),
        },
    )


def report_outputs(opts: Options) -> list[OutputSpec]:
    """The report formats a failed run can still write its error into: `-o FMT[=PATH]` of the commands that
    make a report. `snapshot -o` and `policy bundle -o` name their own file (a plain string), and have none."""
    from reconciler.outputs.destinations import OutputSpec

    return [spec for spec in opts.get("output") or () if isinstance(spec, OutputSpec)]


def merge_fail_on(opts: Options) -> Severity | None:
    """`report merge --fail-on`; None keeps the reports' own."""
    from reconciler.findings.finding import Severity

    return Severity(opts["fail_on"]) if opts["fail_on"] else None


def report_targets(opts: Options) -> tuple[str, ...]:
    """The `--report-to` targets, already checked by the option's callback."""
    return tuple(opts.get("report_to") or ())


def publish_settings(opts: Options, cluster: ClusterSessions | None = None) -> PublishSettings:
    from reconciler.publish.request import PublishSettings

    return PublishSettings(
        git=git_settings(opts),
        live=live_settings(opts),
        cluster=cluster,
        max_results=opts.get("report_max_results"),
        host_flags=host_flags(opts),
    )


def fix_git_settings(opts: Options) -> FixGitSettings | None:
    """None unless --fix-git or --fix-git-dry-run was given."""
    if not (opts.get("fix_git") or opts.get("fix_git_dry_run")):
        return None
    from reconciler.gitfix.run import FixGitSettings

    return FixGitSettings(
        dry_run=bool(opts.get("fix_git_dry_run")),
        git=git_settings(opts),
        author=opts.get("git_author"),
        ssh_key=opts.get("git_ssh_key"),
        host_flags=host_flags(opts),
    )


def host_flags(opts: Options) -> HostFlags:
    """The --git-host* options (shared by drift issues and fix pull requests)."""
    from reconciler.githost.base import HostFlags

    wait = opts.get("git_host_rate_limit_wait")
    return HostFlags(
        opts.get("git_host"),
        opts.get("git_host_url"),
        opts.get("git_host_repo"),
        opts.get("git_host_base_branch"),
        None if wait is None else float(wait),
    )


def telemetry_settings(opts: Options) -> TelemetrySettings:
    from reconciler.telemetry.run import TelemetrySettings

    return TelemetrySettings(
        log_format=opts.get("log_format"),
        cluster=opts.get("cluster"),
        metrics_file=opts.get("metrics_file"),
        metrics_push=opts.get("metrics_push"),
    )
