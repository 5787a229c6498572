"""Inputs an operator (or a review) threw at the tool: each once crashed, leaked or misjudged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pygit2
import pytest

from reconciler.checks.differ import diff
from reconciler.checks.facts import build_facts
from reconciler.checks.nvca import gate_enabled, predict
from reconciler.core.redact import REDACTED, redact, redact_text
from reconciler.findings.finding import Action
from reconciler.model.gates import SignedGates
from reconciler.model.helm import latest_per_release, release_from_json
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    addon_config,
    assert_one_line_error,
    commit_files,
    default_queues,
    desired_for,
    kai_crds,
    live_state,
    make_repo,
    obj,
    queue,
    release_payload,
    run_cli,
    snapshot_file,
    standalone_config,
)


def check_json(repo: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", "--repo", repo, "-o", "json", *extra])
    assert code in (0, 2), stderr
    return code, json.loads(stdout)


# -- YAML the way Helm reads it ---------------------------------------------------------------------------


def test_non_string_keys_and_huge_integers_do_not_crash_the_check(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES + "\nextra:\n  1: a\n  on: b\n  ~: c\n  big: 99999999999999999999\n"
    nvca = 'selfManaged:\n  featureGateValues: ["DynamicGPUDiscovery", "KAIScheduler"]\n'
    repo, _ = make_repo(
        tmp_path, {"kai-gitops.yaml": standalone_config(nvca="nvca.yaml"), "kai-values.yaml": values, "nvca.yaml": nvca}
    )
    code, report = check_json(repo)
    [finding] = report["clusters"][0]["findings"]  # the made-up top-level key is named, nothing crashes
    assert (code, finding["rule"], finding["location"]["path"]) == (2, "KAI-V-011", "extra")


# -- text output never interprets user text as markup ----------------------------------------------------------


def test_markup_in_user_text_is_printed_verbatim() -> None:
    from reconciler.core.refs import Location, ObjectRef
    from reconciler.findings.finding import Finding, Fix, Kind, Severity
    from reconciler.outputs import render
    from reconciler.report.report import ClusterReport, GitInfo, Report

    finding = Finding(
        "USER-[/]-1",
        Kind.VIOLATION,
        Severity.ERROR,
        "see [/] and [bold]",
        "c[/]",
        ObjectRef("v1", "Node", "n[/]"),
        Location("dir[/]/f.yaml", 3, 1),
        fix=Fix(Action.NONE, "run [/red]"),
        waived_by=None,
    )
    waived = Finding("X-1", Kind.VIOLATION, Severity.INFO, "m", "c", waived_by="reason [/] here")
    report = Report(
        "diff", [ClusterReport("c[/]", GitInfo("repo[/]", "ref[/]", None), "snap [/]", None, None, [finding, waived])]
    )
    text = render(report, "text", color=True)
    for needle in (
        "USER-[/]-1",
        "see [/] and [bold]",
        "dir[/]/f.yaml:3:1",
        "run [/red]",
        "reason [/] here",
        "repo[/]",
        "snap [/]",
    ):
        assert needle in text, needle


# -- malformed snapshots: one line naming the object --------------------------------------------------------


@pytest.mark.parametrize(
    "item",
    [
        obj("scheduling.run.ai/v2", "Queue", "q", spec=[1]),
        obj("v1", "Pod", "p", "ns", metadata={"labels": ["a"]}),
        obj("nvcf.nvidia.io/v1", "NVCFBackend", "b", "nvca-operator", spec={"featureGate": {"values": 5}}),
        {"apiVersion": "kai-gitops/v1", "kind": "HelmReleaseSummary", "metadata": {"name": "r"}, "revision": "abc"},
    ],
)
def test_misshapen_snapshot_item_is_one_line_naming_it(tmp_path: Path, item: dict[str, Any]) -> None:
    snap = snapshot_file(tmp_path, [*kai_crds(), item])
    code, stdout, stderr = run_cli(["doctor", "--snapshot", snap])
    line = assert_one_line_error(code, stdout, stderr, f"{item['kind']}/")
    assert "kai-gitops snapshot" in line


def test_empty_snapshot_is_an_error_not_an_empty_cluster(tmp_path: Path) -> None:
    snap = tmp_path / "empty.yaml"
    snap.write_text("\n")
    code, stdout, stderr = run_cli(["doctor", "--snapshot", snap])
    assert_one_line_error(code, stdout, stderr, "empty.yaml:1", "empty")


def test_queue_file_with_a_list_spec(tmp_path: Path) -> None:
    bad = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: q\nspec: [1]\n"
    repo, _ = make_repo(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(queue_files=["q.yaml"]),
            "kai-values.yaml": CANONICAL_KAI_VALUES,
            "q.yaml": bad,
        },
    )
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "q.yaml:5", "spec must be a mapping")


def test_scalar_resource_in_values_is_a_type_error(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace(
        "  childResources:\n    cpu:\n      quota: -1\n      limit: -1\n      overQuotaWeight: 1\n",
        "  childResources:\n    cpu: -1\n",
    )
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "kai-values.yaml:", "childResources.cpu must be a mapping")


# -- Git: links are not followed out of the repository ---------------------------------------------------------


def test_symlink_at_a_ref_is_refused(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "real.yaml": CANONICAL_KAI_VALUES})
    os.symlink("real.yaml", repo / "kai-values.yaml")
    commit_files(repo, {}, "add link")
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "kai-values.yaml", "symbolic link")


def test_worktree_symlink_out_of_the_repository_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside.yaml"
    outside.write_text(CANONICAL_KAI_VALUES)
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config()})
    os.symlink(outside, repo / "kai-values.yaml")
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--worktree"])
    assert_one_line_error(code, stdout, stderr, "kai-values.yaml", "outside the repository")


# -- secrets ----------------------------------------------------------------------------------------------------


def test_redaction_catches_secret_shapes_under_any_key() -> None:
    values = {
        "basicAuth": {"user": "u", "pass": "p"},
        "authorization": "Bearer abc",
        "sshKey": "k",
        "connectionString": "Server=x;Password=y",
        "caBundle": "LS0t",
        "tls.key": "k",
        "tls.crt": "c",
        "env": [{"name": "DB_PASSWORD", "value": "s3"}, {"name": "LOG_LEVEL", "value": "info"}],
        "args": ["--token=abc", "--password", "pw", "--verbose"],
        "url": "https://user:pw@git.example/x",
        "blob": "dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZTEyMzQ=",
        "pem": "-----BEGIN PRIVATE KEY-----\nMII",
        "author": "me",
        "scheduler": {"placementStrategy": "binpack"},
    }
    out = json.dumps(redact(values))
    for secret in ("Bearer abc", '"k"', "Password=y", "LS0t", "s3", "abc", '"pw"', "user:pw", "dGhpcyBp", "MII"):
        assert secret not in out, secret
    red = redact(values)
    assert red["env"][1]["value"] == "info" and red["args"][3] == "--verbose" and red["author"] == "me"
    assert red["url"] == f"https://{REDACTED}@git.example/x"
    assert red["scheduler"] == {"placementStrategy": "binpack"}


def test_a_secret_flag_value_ends_at_a_quote_so_the_next_flag_is_masked_too() -> None:
    text = redact_text('args: ["--token=A1b2","--secret B3c4"] and --password="two words"')
    for secret in ("A1b2", "B3c4", "two words"):
        assert secret not in text, text
    assert text.count(REDACTED) == 3


def test_live_gate_values_are_redacted_where_they_are_read() -> None:
    from reconciler.model.live import _gates_at

    blob = "dGhpcyBpcyBhIHNlY3JldCB0b2tlbiB2YWx1ZTEyMzQ="
    assert _gates_at({"featureGate": {"values": ["KAIScheduler", blob]}}, "featureGate") == ["KAIScheduler", REDACTED]
    assert _gates_at({"featureGate": {"values": f"KAIScheduler,{blob}"}}, "featureGate") == ["KAIScheduler", REDACTED]


def test_facts_sent_to_a_policy_server_carry_redacted_values(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES + "\nglobal:\n  registryPassword: hunter2\n"
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    assert "hunter2" not in json.dumps(build_facts("lab", desired, None, None))


# -- domain ----------------------------------------------------------------------------------------------------


def test_prediction_is_not_evaluated_when_the_running_nvca_has_the_gate_off() -> None:
    backend = obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "b",
        "nvca-operator",
        spec={"featureGate": {"values": ["SelfHosted"]}},
        status={"featureGate": {"values": ["SelfHosted", "-KAIScheduler"]}},
    )
    live = live_state([backend])  # KAI not installed at all
    verdict = predict(live.queues, kind_served=live.queue_kind_served, gate_enabled=gate_enabled(live, None))
    assert verdict.status == "not-evaluated" and verdict.errors == ()


def test_gate_state_prefers_what_nvca_runs_with() -> None:
    backend = obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "b",
        "nvca-operator",
        spec={
            "featureGate": {
                "values": ["SelfHosted"],
            }
        },
        status={"featureGate": {"values": ["KAIScheduler"]}},
    )
    assert gate_enabled(live_state([backend]), ["-KAIScheduler"]) is True
    assert gate_enabled(live_state([]), ["-KAIScheduler"]) is False
    assert gate_enabled(live_state([]), None) is None


def test_one_sign_is_stripped_like_nvca_does() -> None:
    gates = SignedGates.of(["--KAIScheduler", "+SelfHosted", " LogPosting "])
    assert gates.enabled == {"SelfHosted", "LogPosting"}
    assert gates.disabled == {"-KAIScheduler"}  # a disabled gate named "-KAIScheduler": unknown


def test_addon_mode_with_the_addon_off_expects_no_kai_objects(tmp_path: Path) -> None:
    env = "addons:\n  kaiScheduler:\n    enabled: false\n"
    desired = desired_for(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})
    assert desired.queues == [] and desired.shard is None and not desired.installs_kai
    live = live_state([*kai_crds(), *default_queues({"quota": 0, "limit": -1, "overQuotaWeight": 1})])
    assert diff(desired, live) == []


def test_patch_is_not_proposed_when_git_asks_for_a_limited_default_queue(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace(
        "  childResources:\n    cpu:\n      quota: -1", "  childResources:\n    cpu:\n      quota: 0"
    )
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    findings = diff(desired, live_state([*kai_crds(), *default_queues()]))
    [drift] = [f for f in findings if f.subject and f.subject.name == "default-queue"]
    assert drift.fix is not None and drift.fix.action is Action.NONE and "KAI-Q-001" in drift.fix.description


def test_extra_queue_drift_is_still_patched(tmp_path: Path) -> None:
    queues = (
        "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: team\nspec:\n  resources:\n"
        "    cpu: {quota: 8, limit: 16, overQuotaWeight: 1}\n"
    )
    desired = desired_for(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(queue_files=["q.yaml"]),
            "kai-values.yaml": CANONICAL_KAI_VALUES,
            "q.yaml": queues,
        },
    )
    live = live_state([*kai_crds(), *default_queues(), queue("team", {"quota": 1, "limit": 16, "overQuotaWeight": 1})])
    [drift] = [f for f in diff(desired, live) if f.subject and f.subject.name == "team"]
    assert drift.fix is not None and drift.fix.action is Action.UPDATE


def test_old_charts_do_not_expect_plugins_in_the_shard(tmp_path: Path) -> None:
    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.10.5"), "kai-values.yaml": CANONICAL_KAI_VALUES}
    )
    assert desired.shard is not None
    assert set(desired.shard.spec) == {"placementStrategy"}


def test_failed_upgrade_and_uninstalled_releases() -> None:
    def rel(name: str, revision: int, status: str) -> Any:
        return release_from_json(release_payload(name=name, revision=revision, status=status))

    chosen = latest_per_release(
        [
            rel("kai-scheduler", 4, "deployed"),
            rel("kai-scheduler", 5, "failed"),
            rel("old", 1, "superseded"),
            rel("old", 2, "uninstalled"),
        ]
    )
    assert [(r.name, r.revision, r.latest_revision, r.latest_status) for r in chosen] == [
        ("kai-scheduler", 4, 5, "failed")
    ]


def test_release_values_drift_names_leaf_paths(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    from reconciler.model.helm import encode_release_secret

    secret = encode_release_secret(release_payload(config={"global": {"registry": "x"}}))
    [drift] = [
        f for f in diff(desired, live_state([*kai_crds(), *default_queues(), secret])) if f.rule_id == "KAI-D-004"
    ]
    assert "differ from Git at " in drift.message and not drift.message.endswith("at ")
    assert drift.location is not None and drift.location.line and drift.location.line > 1


def test_bare_repo_has_no_worktree(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    bare = tmp_path / "bare.git"
    pygit2.clone_repository(str(repo), str(bare), bare=True)
    code, stdout, stderr = run_cli(["check", "--repo", bare, "--worktree"])
    assert_one_line_error(code, stdout, stderr, "bare")


def test_password_in_a_clone_url_never_reaches_errors_or_reports(tmp_path: Path) -> None:
    code, stdout, stderr = run_cli(
        ["check", "--repo", "https://operator:s3cr3t-pw@127.0.0.1:9/gitops.git"],
        env={"KAI_GITOPS_CACHE": str(tmp_path / "cache")},
    )
    line = assert_one_line_error(code, stdout, stderr, "cannot clone or fetch")
    assert "s3cr3t-pw" not in line and REDACTED in line


def test_no_gate_list_in_git_is_not_a_missing_gate(tmp_path: Path) -> None:
    """Standalone KAI whose NVCA is managed elsewhere: Git says nothing about gates, so nothing is judged."""
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    code, report = check_json(repo)
    assert code == 0 and report["clusters"][0]["findings"] == []


def test_shared_intent_by_node_selector_is_resolved_against_node_labels(tmp_path: Path) -> None:
    config = standalone_config(shared=None).replace(
        "    kaiValuesFile: kai-values.yaml\n",
        "    kaiValuesFile: kai-values.yaml\n    sharedCluster:\n      intent: shared\n"
        "      nodeSelector: {pool: nvcf}\n",
    )
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": config, "kai-values.yaml": CANONICAL_KAI_VALUES})

    def labelled(name: str, **labels: str) -> dict[str, Any]:
        return obj("v1", "Node", name, metadata={"labels": labels})

    nodes = [
        labelled("gpu-a", pool="nvcf", **{"nvca.nvcf.nvidia.io/schedule": "true"}),
        labelled("gpu-b", pool="nvcf"),  # intended, not labelled
        labelled("cpu-x", pool="batch", **{"nvca.nvcf.nvidia.io/schedule": "true"}),
    ]  # labelled, not intended
    snap = snapshot_file(tmp_path, [*kai_crds(), *default_queues(), *nodes])
    code, stdout, stderr = run_cli(["diff", "--repo", repo, "--snapshot", snap, "-o", "json"])
    assert code == 2, stderr
    messages = {f["rule"]: f["message"] for f in json.loads(stdout)["findings"] if f["rule"].startswith("NVCA-S")}
    assert set(messages) == {"NVCA-S-011", "NVCA-S-013"}
    assert "gpu-b" in messages["NVCA-S-011"] and "gpu-a" not in messages["NVCA-S-011"]
    assert "cpu-x" in messages["NVCA-S-013"] and "gpu-a" not in messages["NVCA-S-013"]


def test_password_in_an_opa_url_never_reaches_errors(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--opa-url", "http://admin:opa-pw-123@127.0.0.1:9"])
    line = assert_one_line_error(code, stdout, stderr, "OPA at http://")
    assert "opa-pw-123" not in line and REDACTED in line


def test_a_waivers_file_named_in_the_config_must_exist(tmp_path: Path) -> None:
    config = standalone_config() + "waiversFile: exceptions.yaml\n"
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": config, "kai-values.yaml": CANONICAL_KAI_VALUES})
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "exceptions.yaml", "file not found at ref HEAD")


def test_a_symlinked_waivers_file_is_an_error_not_silently_no_waivers(tmp_path: Path) -> None:
    repo, _ = make_repo(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(),
            "kai-values.yaml": CANONICAL_KAI_VALUES,
            "real-waivers.yaml": "waivers: []\n",
        },
    )
    os.symlink("real-waivers.yaml", repo / "kai-gitops-waivers.yaml")
    commit_files(repo, {}, "link the waivers")
    code, stdout, stderr = run_cli(["check", "--repo", repo])
    assert_one_line_error(code, stdout, stderr, "kai-gitops-waivers.yaml", "symbolic link")
