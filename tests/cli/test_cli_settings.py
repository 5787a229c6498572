"""reconciler/cli/settings.py: every option a command declares reaches the typed settings it is meant for.

The options are parsed by click itself from real argument lists, so a parameter name misspelt in settings.py
(which would read as "not given") fails here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest

from reconciler.app.settings import GitSettings, LiveSettings, PolicySettings
from reconciler.cli import main, settings
from reconciler.core.errors import UserError
from reconciler.findings.finding import Severity
from reconciler.gitfix.run import FixGitSettings
from reconciler.githost.base import HostFlags
from reconciler.publish.request import PublishSettings
from reconciler.reconcile.settings import ReconcileSettings, RolloutSettings
from reconciler.sources.cluster.session import ClusterSessions
from reconciler.telemetry.run import TelemetrySettings

HOST = [
    "--git-host",
    "gitlab",
    "--git-host-url",
    "https://gl.example",
    "--git-host-repo",
    "grp/proj",
    "--git-host-rate-limit-wait",
    "5",
]
FLAGS = HostFlags("gitlab", "https://gl.example", "grp/proj", "dev", 5.0)


def parsed(*args: str) -> dict[str, Any]:
    command = main.get_command(click.Context(main), args[0])
    assert command is not None
    return command.make_context(args[0], list(args[1:])).params


def test_reconcile_options_reach_every_room(tmp_path: Path) -> None:
    key = tmp_path / "id_ed25519"
    key.write_text("key")
    opts = parsed(
        "reconcile",
        "--repo",
        "https://git.example/gitops.git",
        "--ref",
        "main",
        "--cluster",
        "prod",
        "--kubeconfig",
        "kc",
        "--context",
        "ctx",
        "--fail-on",
        "error",
        "--opa-url",
        "http://opa",
        "--opa-token",
        "t",
        "--opa-ca",
        "ca.pem",
        "--opa-timeout",
        "3",
        "--opa-preloaded",
        "--apply",
        "--plan",
        "plan.json",
        "--max-changes",
        "3",
        "--lease-namespace",
        "ns",
        "--lease-wait",
        "1",
        "--audit-log",
        "audit.jsonl",
        "--report-to",
        "github",
        "--report-max-results",
        "7",
        "--fix-git-dry-run",
        "--git-author",
        "A <a@example.com>",
        "--git-ssh-key",
        str(key),
        "--git-host-base-branch",
        "dev",
        *HOST,
        "--metrics-file",
        "m.prom",
        "--metrics-push",
        "http://pushgateway",
        "--log-format",
        "json",
        "--ignore-waves",
    )
    run = settings.run_settings(opts)
    assert (run.git, run.cluster, run.fail_on, run.base_ref) == (
        GitSettings("https://git.example/gitops.git", "main", False),
        "prod",
        Severity.ERROR,
        None,
    )
    assert run.policy == PolicySettings("http://opa", "t", Path("ca.pem"), 3.0, True)
    assert settings.live_settings(opts) == LiveSettings("kc", "ctx", None)
    assert settings.reconcile_settings(opts) == ReconcileSettings(
        apply=True,
        plan_file="plan.json",
        plan_out=None,
        max_changes=3,
        lease_namespace="ns",
        lease_wait_s=1.0,
        audit_log="audit.jsonl",
        live=LiveSettings("kc", "ctx", None),
        rollout=RolloutSettings(ignore_waves=True, host_flags=FLAGS, repo="https://git.example/gitops.git"),
    )
    assert settings.report_targets(opts) == ("github",)
    cluster = ClusterSessions("kc", "ctx")  # the run's cluster, opened from live_settings by cli/live.py
    assert settings.publish_settings(opts, cluster) == PublishSettings(
        run.git, LiveSettings("kc", "ctx", None), cluster, 7, FLAGS
    )
    assert settings.run_settings(opts, cluster).history.cluster is cluster
    assert settings.fix_git_settings(opts) == FixGitSettings(True, run.git, "A <a@example.com>", str(key), FLAGS)
    assert settings.telemetry_settings(opts) == TelemetrySettings("json", "prod", "m.prom", "http://pushgateway")
    assert [spec.format for spec in settings.outputs(opts)] == ["text"]


def test_diff_has_no_fix_git_and_no_base_branch() -> None:
    opts = parsed("diff", "--snapshot", "s.yaml", "--report-to", "policyreport", *HOST)
    assert settings.fix_git_settings(opts) is None
    assert settings.live_settings(opts) == LiveSettings(None, None, "s.yaml")
    assert settings.publish_settings(opts) == PublishSettings(
        GitSettings(),
        LiveSettings(None, None, "s.yaml"),
        None,
        100,
        HostFlags("gitlab", "https://gl.example", "grp/proj", None, 5.0),
    )


def test_check_shard_and_fix_git() -> None:
    opts = parsed("check", "--shard", "2/3", "--fix-git", "--base", "origin/main", "-o", "json")
    shard = settings.shard(opts)
    assert str(shard) == "2/3"
    assert settings.run_settings(opts).base_ref == "origin/main"
    assert settings.fix_git_settings(opts) == FixGitSettings(
        False, GitSettings(), None, None, HostFlags(None, None, None, None, None)
    )
    assert [spec.format for spec in settings.outputs(opts)] == ["json"]
    assert settings.shard(parsed("check")) is None
    with pytest.raises(UserError, match="--shard and --cluster cannot be combined"):
        settings.shard(parsed("check", "--shard", "1/2", "--cluster", "prod"))


def test_commands_without_telemetry_options_are_observed_as_run_by_people() -> None:
    assert settings.telemetry_settings(parsed("schema")) == TelemetrySettings()
    doctor = parsed("doctor", "--cluster", "lab", "--log-format", "text")
    assert settings.telemetry_settings(doctor) == TelemetrySettings("text", "lab", None, None)
