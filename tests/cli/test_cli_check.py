"""`kai-gitops check` end to end: the demo pull request, --cluster, --fail-on, and --base (issue 3).

Every repository here is a real pygit2 repository built from repo-templates/ (the demo via its own
build.py), and every run goes through the CLI with CliRunner, so the tests see what an operator sees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import (
    USER_RULE,
    addon_config,
    assert_one_line_error,
    commit_files,
    load_demo_builder,
    make_repo,
    run_cli,
    template_files,
)

LAB_VALUES = "clusters/lab/kai-values.yaml"
LAB_NVCA = "clusters/lab/nvca-operator-values.yaml"
LAB_QUEUES = "clusters/lab/queues.yaml"
PROD_ENV = "environments/prod.yaml"
WAIVERS = "kai-gitops-waivers.yaml"

# Every static violation the demo PR (repo-templates/demo/build.py PR_EDITS) introduces:
# cluster -> {(rule, file, line, column, YAML path)}. Lines/columns are those of the PR commit's files.
DEMO_PR_FINDINGS = {
    "prod-addon": {
        ("KAI-M-004", PROD_ENV, 32, 5, "addons.dynamoOperator.enabled"),
    },
    "lab-standalone": {
        ("KAI-V-001", LAB_VALUES, 5, 3, "scheduler.placementStrategy"),
        ("KAI-V-003", LAB_VALUES, 13, 7, "scheduler.actions.preempt.enabled"),
        ("KAI-Q-001", LAB_VALUES, 35, 5, "defaultQueue.childResources.cpu"),
        ("KAI-V-010", LAB_VALUES, 49, 3, "binder.replicas"),
        ("NVCA-G-001", LAB_NVCA, 5, 3, "selfManaged.featureGateValues"),
        ("NVCA-G-005", LAB_NVCA, 5, 60, "selfManaged.featureGateValues[2]"),
        ("NVCA-G-006", LAB_NVCA, 5, 3, "selfManaged.featureGateValues"),
        ("KAI-Q-021", LAB_QUEUES, 10, 11, "spec.resources.gpu.quota"),  # research's quota, its new children's sum
    },
}
# What the text at each location starts with, in the PR commit (guards the table above against drift).
DEMO_PR_TEXT_AT = {
    ("KAI-M-004", PROD_ENV): "enabled: true",
    ("KAI-V-001", LAB_VALUES): "placementStrategy: spread",
    ("KAI-V-003", LAB_VALUES): "enabled: yes",
    ("KAI-Q-001", LAB_VALUES): "cpu:",
    ("KAI-V-010", LAB_VALUES): "replicas: 2",
    ("NVCA-G-001", LAB_NVCA): "featureGateValues:",
    ("NVCA-G-005", LAB_NVCA): '"kaischeduler"',
    ("NVCA-G-006", LAB_NVCA): "featureGateValues:",
    ("KAI-Q-021", LAB_QUEUES): "quota: 8",
}

SPREAD = (LAB_VALUES, "  placementStrategy: binpack", "  placementStrategy: spread")


# -- builders ------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo GitOps repo: commit 1 = template, commit 2 = the operator's pull request."""
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


def waiver(
    rule: str,
    *,
    subject: str = "'*'",
    cluster: str | None = None,
    expires: str = "2099-12-31",
    reason: str = "accepted for the lab trial",
    owner: str = "lab-team@example.com",
) -> str:
    text = f"  - rule: {rule}\n    subject: {subject}\n"
    if cluster:
        text += f"    cluster: {cluster}\n"
    return text + f"    reason: {reason}\n    owner: {owner}\n    expires: {expires}\n"


def waivers_file(*entries: str) -> str:
    return "# reviewed exceptions\nwaivers:\n" + "".join(entries)


def check_json(*args: Any, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", *args, "-o", "json"], env=env)
    assert stderr == "", stderr
    report = json.loads(stdout)
    assert report["command"] == "check" and report["schemaVersion"] == 1
    assert report["exitCode"] == code, (report["exitCode"], code)
    return code, report


def cluster_of(report: dict[str, Any], name: str) -> dict[str, Any]:
    found = [c for c in report["clusters"] if c["cluster"] == name]
    assert len(found) == 1, [c["cluster"] for c in report["clusters"]]
    return found[0]


def located(cluster: dict[str, Any]) -> set[tuple[Any, ...]]:
    """Active findings as (rule, file, line, column, path)."""
    out = set()
    for f in cluster["findings"]:
        if f["waived_by"] is None:
            loc = f["location"] or {}
            out.add((f["rule"], loc.get("file"), loc.get("line"), loc.get("column"), loc.get("path")))
    return out


def active_rules(cluster: dict[str, Any]) -> list[str]:
    return sorted(f["rule"] for f in cluster["findings"] if f["waived_by"] is None)


def finding(cluster: dict[str, Any], rule: str) -> dict[str, Any]:
    found = [f for f in cluster["findings"] if f["rule"] == rule]
    assert len(found) == 1, (rule, [f["rule"] for f in cluster["findings"]])
    return found[0]


# -- the demo pull request ------------------------------------------------------------------------------------------


def test_demo_pr_reports_every_static_violation_with_file_and_line(demo: Path) -> None:
    code, report = check_json("--repo", demo)
    assert code == 2
    assert [c["cluster"] for c in report["clusters"]] == ["prod-addon", "lab-standalone"]
    for name, expected in DEMO_PR_FINDINGS.items():
        cluster = cluster_of(report, name)
        assert located(cluster) == expected, name
        assert cluster["live"] is None and cluster["nvca"] is None  # no cluster access in a PR check
        for f in cluster["findings"]:
            assert f["kind"] == "violation" and f["cluster"] == name and f["waived_by"] is None
    assert report["repository"] == {"findings": []}
    assert (report["summary"]["errors"], report["summary"]["warnings"], report["summary"]["waived"]) == (7, 2, 0)


def test_demo_pr_locations_point_at_the_offending_text(demo: Path) -> None:
    """The table above is not a snapshot of whatever the tool printed: each line:column holds the key."""
    for cluster in DEMO_PR_FINDINGS.values():
        for rule, file, line, column, _ in cluster:
            text = (demo / file).read_text().splitlines()[line - 1]
            assert text[column - 1 :].startswith(DEMO_PR_TEXT_AT[(rule, file)]), (rule, file, line, column, text)


def test_demo_pr_messages_explain_each_mistake(demo: Path) -> None:
    _, report = check_json("--repo", demo)
    lab = cluster_of(report, "lab-standalone")
    assert '"spread"' in finding(lab, "KAI-V-001")["message"]
    v003 = finding(lab, "KAI-V-003")
    assert "preempt.enabled is true" in v003["message"]  # `yes` is read the way Helm reads it: boolean true
    assert v003["severity"] == "error"
    assert "quota=0" in finding(lab, "KAI-Q-001")["message"]
    g005 = finding(lab, "NVCA-G-005")["message"]
    assert '"kaischeduler"' in g005 and '"KAIScheduler"' in g005
    assert "HelmAllowCPUNodes" in finding(lab, "NVCA-G-006")["message"]
    assert "KAIScheduler" in finding(lab, "NVCA-G-001")["message"]
    v010 = finding(lab, "KAI-V-010")["message"]  # no chart carries it into kai-config
    assert "v0.14.7" in v010 and "KAI-Scheduler #1124" in v010 and "operator.replicaCount" in v010
    prod = cluster_of(report, "prod-addon")
    assert "dynamoOperator" in finding(prod, "KAI-M-004")["message"]
    assert "groveOperator" in finding(prod, "KAI-M-004")["message"]


def test_demo_pr_text_report_names_file_line_column(demo: Path) -> None:
    code, stdout, stderr = run_cli(["check", "--repo", demo])
    assert (code, stderr) == (2, "")
    for cluster in DEMO_PR_FINDINGS.values():
        for rule, file, line, column, _ in cluster:
            assert f"{rule} {file}:{line}:{column}" in stdout, rule
    assert "kai-gitops check — cluster prod-addon" in stdout
    assert "kai-gitops check — cluster lab-standalone" in stdout
    assert stdout.rstrip().splitlines()[-1] == (
        "All clusters: 2 checked, 9 problems (9 findings): 7 error(s), 2 warning(s), 0 info."
    )


def test_template_commit_is_clean(demo: Path) -> None:
    code, report = check_json("--repo", demo, "--ref", "HEAD~1")
    assert code == 0
    for cluster in report["clusters"]:
        assert [f["rule"] for f in cluster["findings"] if f["severity"] in ("error", "warning")] == []
        assert cluster["git"]["ref"] == "HEAD~1"
    assert report["summary"]["errors"] == report["summary"]["warnings"] == 0


def test_cluster_option_restricts_the_check(demo: Path) -> None:
    code, report = check_json("--repo", demo, "--cluster", "lab-standalone")
    assert code == 2
    assert [c["cluster"] for c in report["clusters"]] == ["lab-standalone"]
    assert located(report["clusters"][0]) == DEMO_PR_FINDINGS["lab-standalone"]
    code, report = check_json("--repo", demo, "--cluster", "prod-addon")
    assert code == 2
    assert [c["cluster"] for c in report["clusters"]] == ["prod-addon"]
    assert active_rules(report["clusters"][0]) == ["KAI-M-004"]
    code, _ = check_json("--repo", demo, "--cluster", "prod-addon", "--ref", "HEAD~1")
    assert code == 0


def test_unknown_cluster_is_one_line_error(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(["check", "--repo", demo, "--cluster", "staging"]),
        "kai-gitops.yaml",
        "no cluster named 'staging'",
        "prod-addon",
        "lab-standalone",
    )


# -- --fail-on -----------------------------------------------------------------------------------------------------


def demo_with_errors_waived(tmp_path: Path) -> Path:
    """The demo PR plus waivers for every error: only the warnings KAI-V-001 and KAI-V-010 stay active."""
    repo = tmp_path / "demo"
    load_demo_builder().build_repo(repo)
    commit_files(
        repo,
        {
            WAIVERS: waivers_file(
                waiver("KAI-M-004", cluster="prod-addon"),
                waiver("KAI-Q-001", cluster="lab-standalone"),
                waiver("KAI-V-003", cluster="lab-standalone"),
                waiver("NVCA-G-00[156]", cluster="lab-standalone"),
                waiver("KAI-Q-021", cluster="lab-standalone"),
            )
        },
    )
    return repo


@pytest.mark.parametrize("fail_on, expected", [("info", 2), ("warning", 2), ("error", 0)])
def test_fail_on_when_only_a_warning_remains(tmp_path: Path, fail_on: str, expected: int) -> None:
    repo = demo_with_errors_waived(tmp_path)
    code, report = check_json("--repo", repo, "--fail-on", fail_on)
    assert report["failOn"] == fail_on
    assert code == expected
    assert active_rules(cluster_of(report, "lab-standalone")) == ["KAI-V-001", "KAI-V-010"]
    assert active_rules(cluster_of(report, "prod-addon")) == []
    assert (report["summary"]["errors"], report["summary"]["warnings"], report["summary"]["waived"]) == (0, 2, 7)


@pytest.mark.parametrize("fail_on, expected", [("info", 2), ("warning", 0), ("error", 0)])
def test_fail_on_when_only_info_remains(tmp_path: Path, fail_on: str, expected: int) -> None:
    stale = waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))  # nothing to waive on the template
    repo, _ = make_repo(tmp_path, template_files(**{WAIVERS: stale}))
    code, report = check_json("--repo", repo, "--fail-on", fail_on)
    assert code == expected
    assert cluster_of(report, "lab-standalone")["findings"] == []
    assert [(f["rule"], f["severity"]) for f in report["repository"]["findings"]] == [("KAI-W-002", "info")]
    assert report["repository"]["findings"][0]["location"]["file"] == WAIVERS
    assert cluster_of(report, "prod-addon")["findings"] == []


# -- --base: the rules and waivers come from the base ref ---------------------------------------------------------


def test_waiver_added_by_the_pr_is_not_applied_with_base(tmp_path: Path) -> None:
    pr = template_files(SPREAD, **{WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))})
    repo, (base, _) = make_repo(tmp_path, template_files(), [pr])

    code, report = check_json("--repo", repo, "--base", base)
    assert code == 2
    lab = cluster_of(report, "lab-standalone")
    assert finding(lab, "KAI-V-001")["waived_by"] is None
    assert report["summary"]["waived"] == 0 and report["summary"]["warnings"] == 1
    notes = report["repository"]["findings"]
    assert [(f["rule"], f["severity"]) for f in notes] == [("KAI-W-003", "info")]
    assert WAIVERS in notes[0]["message"] and base[:12] in notes[0]["message"]
    assert notes[0]["location"]["file"] == WAIVERS and notes[0]["details"]["paths"] == [WAIVERS]

    code, report = check_json("--repo", repo)  # without --base the PR's own waiver applies
    assert code == 0
    v001 = finding(cluster_of(report, "lab-standalone"), "KAI-V-001")
    assert v001["waived_by"].startswith(f"{WAIVERS}:3 (lab-team@example.com, until 2099-12-31)")
    assert report["summary"]["waived"] == 1 and report["summary"]["warnings"] == 0
    assert report["repository"]["findings"] == []


def test_base_waivers_apply_with_base(tmp_path: Path) -> None:
    """The base's reviewed waivers are the ones in force; the PR changing nothing there gets no note."""
    reviewed = {WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))}
    repo, (base, _) = make_repo(tmp_path, template_files(**reviewed), [template_files(SPREAD, **reviewed)])
    code, report = check_json("--repo", repo, "--base", base)
    assert code == 0
    assert finding(cluster_of(report, "lab-standalone"), "KAI-V-001")["waived_by"] is not None
    assert report["repository"]["findings"] == []


def test_pr_cannot_replace_base_waivers(tmp_path: Path) -> None:
    """The PR swaps the reviewed waiver for another: with --base the old one applies, the new one does not."""
    reviewed = {WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))}
    swapped = {WAIVERS: waivers_file(waiver("KAI-V-003", cluster="lab-standalone"))}
    preempt = (LAB_VALUES, "    preempt:\n      enabled: false", "    preempt:\n      enabled: true")
    repo, (base, _) = make_repo(tmp_path, template_files(**reviewed), [template_files(SPREAD, preempt, **swapped)])
    _, report = check_json("--repo", repo, "--base", base)
    lab = cluster_of(report, "lab-standalone")
    assert finding(lab, "KAI-V-001")["waived_by"] is not None
    assert finding(lab, "KAI-V-003")["waived_by"] is None
    _, report = check_json("--repo", repo)
    lab = cluster_of(report, "lab-standalone")
    assert finding(lab, "KAI-V-001")["waived_by"] is None
    assert finding(lab, "KAI-V-003")["waived_by"] is not None


KEEP_RULE = (
    USER_RULE.replace("ACME-Q-100", "ACME-Q-101")
    .replace("queue_budget\n", "keep\n", 1)
    .replace("> data.user.queue_budget.max_gpu_limit\n", "> 100000\n", 1)
)
POLICY_CONFIG = (
    "kai-gitops.yaml",
    "waiversFile:",
    "policies:\n  dirs: [policy]\n  data: [policy/data.yaml]\nwaiversFile:",
)


def policy_repo_files(**extra: str | None) -> dict[str, str | None]:
    return template_files(
        POLICY_CONFIG,
        **{
            "policy__acme__queue_budget.rego": USER_RULE,
            "policy__acme__keep.rego": KEEP_RULE,
            "policy__data.yaml": "queue_budget:\n  max_gpu_limit: 8\n",
            **extra,
        },
    )


def test_pr_deleting_a_user_rule_is_still_judged_by_it_with_base(tmp_path: Path) -> None:
    repo, (base, _) = make_repo(tmp_path, policy_repo_files(), [{"policy/acme/queue_budget.rego": None}])
    code, report = check_json("--repo", repo, "--base", base)
    assert code == 2
    lab = cluster_of(report, "lab-standalone")
    assert located(lab) == {("ACME-Q-100", "clusters/lab/queues.yaml", 10, 21, "spec.resources.gpu.limit")}
    notes = report["repository"]["findings"]
    assert [f["rule"] for f in notes] == ["KAI-W-003"]
    assert "policy/acme/queue_budget.rego" in notes[0]["message"]

    code, report = check_json("--repo", repo)  # the PR's own rules: the rule is gone
    assert code == 0
    assert all(c["findings"] == [] for c in report["clusters"])


def test_pr_editing_policy_data_is_judged_by_the_base_data(tmp_path: Path) -> None:
    repo, (base, _) = make_repo(
        tmp_path, policy_repo_files(), [{"policy/data.yaml": "queue_budget:\n  max_gpu_limit: 64\n"}]
    )
    code, report = check_json("--repo", repo, "--base", base)
    assert code == 2
    assert active_rules(cluster_of(report, "lab-standalone")) == ["ACME-Q-100"]
    assert "policy/data.yaml" in report["repository"]["findings"][0]["message"]
    code, _ = check_json("--repo", repo)
    assert code == 0


def test_base_without_config_uses_shipped_policies_only(tmp_path: Path) -> None:
    pr = template_files(
        SPREAD,
        POLICY_CONFIG,
        **{
            "policy__acme__queue_budget.rego": USER_RULE,
            "policy__data.yaml": "queue_budget:\n  max_gpu_limit: 8\n",
            WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone")),
        },
    )
    repo, (base, _) = make_repo(tmp_path, {"README.md": "GitOps repo, config to come\n"}, [pr])

    code, report = check_json("--repo", repo, "--base", base)
    assert code == 2
    lab = cluster_of(report, "lab-standalone")
    assert active_rules(lab) == ["KAI-V-001"]  # shipped rule, PR waiver ignored, user rule not run
    assert report["summary"]["waived"] == 0
    notes = report["repository"]["findings"]
    assert [(f["rule"], f["severity"]) for f in notes] == [("KAI-W-003", "info")]
    assert "kai-gitops.yaml" in notes[0]["message"] and "shipped policies only" in notes[0]["message"]

    code, report = check_json("--repo", repo)  # without --base: the PR's user rule and waiver
    lab = cluster_of(report, "lab-standalone")
    assert active_rules(lab) == ["ACME-Q-100"]
    assert finding(lab, "KAI-V-001")["waived_by"] is not None


def test_base_note_is_in_the_text_report(tmp_path: Path) -> None:
    pr = template_files(**{WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))})
    repo, _ = make_repo(tmp_path, template_files(), [pr])
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--base", "HEAD~1"])
    assert (code, stderr) == (0, "")
    head = stdout.split("kai-gitops check — cluster")[0]
    assert "kai-gitops check — this run (waivers, policy changes)" in head
    assert "INFO    KAI-W-003" in head and WAIVERS in head and "HEAD~1" in head


def test_nonexistent_base_is_one_line_error(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(["check", "--repo", demo, "--base", "origin/main"]), "ref 'origin/main' does not exist", str(demo)
    )


def test_nonexistent_base_hint_names_the_base_option(demo: Path) -> None:
    line = assert_one_line_error(*run_cli(["check", "--repo", demo, "--base", "origin/main"]), "origin/main")
    assert "--base" in line and "--ref" not in line


# -- waivers over several clusters -----------------------------------------------------------------------------------


def test_waiver_used_in_one_cluster_is_not_reported_unused_in_another(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, template_files(SPREAD, **{WAIVERS: waivers_file(waiver("KAI-V-001"))}))
    code, report = check_json("--repo", repo, "--fail-on", "info")
    assert finding(cluster_of(report, "lab-standalone"), "KAI-V-001")["waived_by"] is not None
    every = [f["rule"] for c in report["clusters"] for f in c["findings"]] + [
        f["rule"] for f in report["repository"]["findings"]
    ]
    assert "KAI-W-002" not in every
    assert code == 0


def test_total_summary_accounts_for_the_findings_that_set_the_exit_code(tmp_path: Path) -> None:
    pr = template_files(**{WAIVERS: waivers_file(waiver("KAI-V-001", cluster="lab-standalone"))})
    repo, (base, _) = make_repo(tmp_path, template_files(), [pr])
    code, report = check_json("--repo", repo, "--base", base, "--fail-on", "info")
    assert code == 2
    assert report["summary"]["info"] >= 1


@pytest.mark.parametrize(
    ("item", "rule", "severity", "outcome", "fixed"),
    [
        # The stack appends KAIScheduler (the add-on is on) as the list does not name it exactly: NVCA runs as meant.
        (
            "KaiScheduler",
            "NVCA-G-004",
            "warning",
            "it does no harm, as NVCA runs with KAIScheduler on (the add-on stack appends it itself",
            "KAIScheduler",
        ),
        # Meant to turn the gate off, but NVCA ignores the item and the stack appends KAIScheduler: on after all. The
        # add-on needs the gate, so the fix removes the item; `-KAIScheduler` would stop NVCA from using KAI.
        (
            "-KaiScheduler",
            "NVCA-G-005",
            "error",
            "NVCA ignores it, so NVCA runs with KAIScheduler on (the add-on stack",
            None,
        ),
        # LogPosting is no stack default: nothing puts it back, so NVCA runs without it.
        ("logposting", "NVCA-G-005", "error", "NVCA ignores it, so NVCA runs without LogPosting", "LogPosting"),
    ],
)
def test_a_misspelt_gate_is_judged_by_what_nvca_then_runs(
    tmp_path: Path, item: str, rule: str, severity: str, outcome: str, fixed: str | None
) -> None:
    repo, _ = make_repo(
        tmp_path,
        template_files(
            (
                PROD_ENV,
                'featureGateValues: ["SelfHosted", "LogPosting"]',
                f'featureGateValues: ["SelfHosted", "{item}"]',
            )
        ),
    )
    _, report = check_json("--repo", repo, "--cluster", "prod-addon")
    typos = [f for f in cluster_of(report, "prod-addon")["findings"] if f["rule"] in ("NVCA-G-004", "NVCA-G-005")]
    assert [(f["rule"], f["severity"]) for f in typos] == [(rule, severity)], typos
    assert outcome in typos[0]["message"]
    (edit,) = typos[0]["fix"]["git_edits"]  # --fix-git does what the message says
    if fixed is None:
        assert (
            "remove the item: the add-on stack turns KAIScheduler on for the kaiScheduler add-on" in typos[0]["message"]
            and '"-KAIScheduler"' not in typos[0]["message"].split("remove the item")[0]
        )
        assert edit["op"] == "remove" and edit["path"][-1] == 1
    else:
        assert f'write "{fixed}"' in typos[0]["message"] or f'but write "{fixed}"' in typos[0]["message"]
        assert edit["value"] == fixed and edit["path"][-1] == 1


@pytest.mark.parametrize(("pin", "rule"), [("v0.16.5", "KAI-R-002"), ("v0.13.4", "KAI-R-003")])
def test_a_finding_about_the_kai_pin_points_at_the_clusters_pin(tmp_path: Path, pin: str, rule: str) -> None:
    """The pin is one key of one cluster's entry in kai-gitops.yaml: the finding names its line, not the file's
    first line, so the reviewer lands on the value to change (here the second cluster's)."""
    config = (
        addon_config(name="other", shared=None) + "  - name: prod\n    mode: addon\n"
        f"    kaiChartVersion: {pin}\n    environmentFile: env.yaml\n"
    )
    repo, _ = make_repo(
        tmp_path, {"kai-gitops.yaml": config, "env.yaml": "addons:\n  kaiScheduler:\n    enabled: true\n"}
    )
    code, report = check_json("--repo", repo, "--cluster", "prod")
    assert code == 2
    (finding,) = [f for f in cluster_of(report, "prod")["findings"] if f["rule"] == rule]
    location = finding["location"]
    assert (location["file"], location["line"], location["column"]) == ("kai-gitops.yaml", 9, 5), location
    assert config.splitlines()[8].strip() == f"kaiChartVersion: {pin}"
