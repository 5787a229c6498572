"""Policies and waivers through the CLI: waivers in `diff`, user policies from the repo, `policy test`,
the OPA server path, `schema` and `--version` (issue 3).

Repositories are real pygit2 repositories built from repo-templates/gitops-repo; live state is the demo
snapshot repo-templates/demo/snapshots/prod-addon.yaml.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import (
    DATA,
    DEMO_SNAPSHOTS,
    TEMPLATE,
    USER_RULE,
    assert_one_line_error,
    load_demo_builder,
    make_repo,
    run_cli,
    template_files,
    timeless,
)
from tests.support.opa_standin import OpaStandin

PROD_SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"
WAIVERS = "kai-gitops-waivers.yaml"
QUEUES = "clusters/lab/queues.yaml"
TOKEN = "opa-s3cret-token"


# -- builders ------------------------------------------------------------------------------------------------------


def diff_json(repo: Path, *args: Any) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(
        ["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT, *args, "-o", "json"]
    )
    assert stderr == "", stderr
    report = json.loads(stdout)
    assert report["exitCode"] == code
    return code, report


def check_json(repo: Path, *args: Any) -> tuple[int, dict[str, Any]]:
    code, stdout, stderr = run_cli(["check", "--repo", repo, *args, "-o", "json"])
    assert stderr == "", stderr
    report = json.loads(stdout)
    assert report["exitCode"] == code
    return code, report


def only(findings: list[dict[str, Any]], rule: str) -> dict[str, Any]:
    found = [f for f in findings if f["rule"] == rule]
    assert len(found) == 1, (rule, [f["rule"] for f in findings])
    return found[0]


def line_at(repo: Path, file: str, line: int, column: int) -> str:
    return (repo / file).read_text().splitlines()[line - 1][column - 1 :]


# -- waivers in `diff` against the demo snapshot --------------------------------------------------------------------

S012_WAIVER = """# Accepted exceptions.
waivers:
  - rule: NVCA-S-012
    subject: {subject}
    reason: label is fixed by the next node image rollout
    owner: nodes@example.com
    expires: {expires}
"""


def prod_repo(tmp_path: Path, waivers: str | None) -> Path:
    repo, _ = make_repo(tmp_path, template_files(**({WAIVERS: waivers} if waivers is not None else {})))
    return repo


def test_snapshot_has_the_finding_the_waiver_tests_waive(tmp_path: Path) -> None:
    _, report = diff_json(prod_repo(tmp_path, None))
    s012 = only(report["findings"], "NVCA-S-012")
    assert s012["subject"] == {"apiVersion": "v1", "kind": "Node", "namespace": None, "name": "gpu-node-2"}
    assert s012["severity"] == "warning" and s012["waived_by"] is None
    assert report["summary"]["waived"] == 0


@pytest.mark.parametrize("subject", ["Node/gpu-node-2", "Node/gpu-node-*", "'*'", "{kind: Node, name: gpu-node-2}"])
def test_waived_finding_in_json(tmp_path: Path, subject: str) -> None:
    baseline = diff_json(prod_repo(tmp_path / "plain", None))[1]["summary"]
    code, report = diff_json(prod_repo(tmp_path, S012_WAIVER.format(subject=subject, expires="2099-12-31")))
    assert code == 2  # the demo's errors remain
    s012 = only(report["findings"], "NVCA-S-012")
    assert s012["waived_by"] == (
        f"{WAIVERS}:3 (nodes@example.com, until 2099-12-31): label is fixed by the next node image rollout"
    )
    assert report["summary"]["waived"] == 1
    assert report["summary"]["warnings"] == baseline["warnings"] - 1
    assert [f["rule"] for f in report["findings"] if f["rule"].startswith("KAI-W-")] == []
    others = [f for f in report["findings"] if f["rule"] != "NVCA-S-012"]
    assert all(f["waived_by"] is None for f in others)  # nothing else is swept up


def test_waived_finding_in_text(tmp_path: Path) -> None:
    repo = prod_repo(tmp_path, S012_WAIVER.format(subject="Node/gpu-node-2", expires="2099-12-31"))
    code, stdout, stderr = run_cli(["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT])
    assert (code, stderr) == (2, "")
    violations, waived = stdout.split("Waived: 1 finding(s)")
    assert "NVCA-S-012" not in violations
    assert (
        "NVCA-S-012 Node/gpu-node-2 — waiver kai-gitops-waivers.yaml:3 (nodes@example.com, until 2099-12-31): "
        "label is fixed by the next node image rollout"
    ) in waived
    assert re.search(r"Violations: \d+ error\(s\), \d+ warning\(s\), 1 info, 1 waived\.", stdout)


def test_expired_waiver_is_a_warning_and_the_finding_is_active_again(tmp_path: Path) -> None:
    code, report = diff_json(prod_repo(tmp_path, S012_WAIVER.format(subject="Node/gpu-node-2", expires="2020-01-31")))
    assert code == 2
    assert only(report["findings"], "NVCA-S-012")["waived_by"] is None
    expired = only(report["repository"]["findings"], "KAI-W-001")
    assert expired["severity"] == "warning" and expired["kind"] == "violation"
    assert (expired["location"]["file"], expired["location"]["line"]) == (WAIVERS, 3)
    assert "expired on 2020-01-31" in expired["message"] and "nodes@example.com" in expired["message"]
    assert report["summary"]["waived"] == 0


def test_expired_waiver_alone_fails_the_run(tmp_path: Path) -> None:
    """KAI-W-001 is a warning: an expired waiver fails a PR check even when nothing else does."""
    text = S012_WAIVER.format(subject="Node/gpu-node-2", expires="2020-01-31")
    repo, _ = make_repo(tmp_path, template_files(**{WAIVERS: text.replace("NVCA-S-012", "KAI-V-001")}))
    code, report = check_json(repo, "--cluster", "lab-standalone")
    assert code == 2
    assert report["clusters"][0]["findings"] == []
    assert [f["rule"] for f in report["repository"]["findings"]] == ["KAI-W-001"]
    assert check_json(repo, "--cluster", "lab-standalone", "--fail-on", "error")[0] == 0


def test_waiver_matching_nothing_is_info(tmp_path: Path) -> None:
    code, report = diff_json(prod_repo(tmp_path, S012_WAIVER.format(subject="Node/gpu-node-9", expires="2099-12-31")))
    assert code == 2
    assert only(report["findings"], "NVCA-S-012")["waived_by"] is None
    unused = only(report["repository"]["findings"], "KAI-W-002")
    assert unused["severity"] == "info"
    assert (unused["location"]["file"], unused["location"]["line"]) == (WAIVERS, 3)
    assert "Node/gpu-node-9" in unused["message"] and "matches no finding" in unused["message"]


def test_waiver_for_another_cluster_is_neither_applied_nor_reported(tmp_path: Path) -> None:
    text = S012_WAIVER.format(subject="Node/gpu-node-2", expires="2099-12-31") + "    cluster: lab-standalone\n"
    _, report = diff_json(prod_repo(tmp_path, text))
    assert only(report["findings"], "NVCA-S-012")["waived_by"] is None
    assert [f["rule"] for f in report["findings"] if f["rule"].startswith("KAI-W-")] == []


GOOD_ENTRY = "  - rule: NVCA-S-012\n    subject: Node/gpu-node-2\n    reason: r\n    owner: o@example.com\n"


@pytest.mark.parametrize(
    "text, where, needle",
    [
        pytest.param(
            "waivers:\n" + GOOD_ENTRY + "    expires: 2026-13-01\n",
            ":6",
            "expires '2026-13-01' is not a date",
            id="bad-date",
        ),
        pytest.param(
            "waivers:\n" + GOOD_ENTRY + "    expires: next week\n", ":6", "is not a date YYYY-MM-DD", id="not-a-date"
        ),
        pytest.param(
            "waivers:\n" + GOOD_ENTRY.replace("    owner: o@example.com\n", "") + "    expires: 2099-01-01\n",
            ":2",
            "waiver 1: missing owner",
            id="missing-owner",
        ),
        pytest.param(
            "waivers:\n" + GOOD_ENTRY + "    owner: other@example.com\n    expires: 2099-01-01\n",
            ":6",
            'duplicate key "owner"',
            id="duplicate-key",
        ),
        pytest.param(
            "waivers:\n" + GOOD_ENTRY + "    expiry: 2099-01-01\n    expires: 2099-01-01\n",
            ":6",
            "unknown key 'expiry'",
            id="unknown-key",
        ),
    ],
)
def test_malformed_waivers_file_is_one_line_error(tmp_path: Path, text: str, where: str, needle: str) -> None:
    repo = prod_repo(tmp_path, text)
    line = assert_one_line_error(
        *run_cli(["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT]), needle
    )
    assert line.startswith(f"kai-gitops: error: {WAIVERS}{where}: "), line
    assert_one_line_error(*run_cli(["check", "--repo", repo]), f"{WAIVERS}{where}: ", needle)  # the PR check too


# -- user policies from the repository -----------------------------------------------------------------------------

USER_RULE_TEST = """package kai_gitops.tests.user.acme.queue_budget

queue(limit) := {"name": "research", "parent": "default-parent-queue", "doc": "queues:0",
	"resources": {"gpu": {"quota": 1, "limit": limit, "overQuotaWeight": 1}}}

test_over_budget_is_flagged if {
	count(data.kai_gitops.rules.user.acme.queue_budget.violations) == 1 with input as {
		"scope": "static", "desired": {"extra_queues": [queue(16)]}}
		with data.user.queue_budget.max_gpu_limit as 8
}

test_within_budget_passes if {
	count(data.kai_gitops.rules.user.acme.queue_budget.violations) == 0 with input as {
		"scope": "static", "desired": {"extra_queues": [queue(4)]}}
		with data.user.queue_budget.max_gpu_limit as 8
}
"""


def user_policy_files(
    data_file: str = "policy/data.yaml", data: str = "queue_budget:\n  max_gpu_limit: 8\n", **extra: str | None
) -> dict[str, str | None]:
    config = ("kai-gitops.yaml", "waiversFile:", f"policies:\n  dirs: [policy]\n  data: [{data_file}]\nwaiversFile:")
    return template_files(
        config,
        **{
            "policy__acme__queue_budget.rego": USER_RULE,
            "policy__acme__queue_budget_test.rego": USER_RULE_TEST,
            data_file.replace("/", "__"): data,
            **extra,
        },
    )


def test_user_rule_fires_with_its_own_id_and_location(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, user_policy_files())
    code, report = check_json(repo)
    assert code == 2
    lab = next(c for c in report["clusters"] if c["cluster"] == "lab-standalone")
    rule = only(lab["findings"], "ACME-Q-100")
    assert rule["location"] == {
        "file": QUEUES,
        "line": 10,
        "column": 21,
        "path": "spec.resources.gpu.limit",
        "endLine": 10,
        "endColumn": 30,
    }  # "limit: 16", key to end of value
    assert line_at(repo, QUEUES, 10, 21).startswith("limit: 16")
    assert (rule["severity"], rule["title"]) == ("warning", "Extra queues stay within the GPU budget")
    assert rule["message"] == "queue research has gpu limit 16, above the budget of 8"
    assert rule["subject"]["name"] == "research"
    assert [f["rule"] for c in report["clusters"] for f in c["findings"]] == ["ACME-Q-100"]
    code, stdout, _ = run_cli(["check", "--repo", repo])
    assert code == 2 and f"WARNING ACME-Q-100 {QUEUES}:10:21" in stdout


def test_user_rule_can_be_waived_like_a_shipped_one(tmp_path: Path) -> None:
    waivers = (
        "waivers:\n  - rule: ACME-Q-*\n    subject: Queue/research\n    reason: research budget raised\n"
        "    owner: acme@example.com\n    expires: 2099-01-01\n"
    )
    repo, _ = make_repo(tmp_path, user_policy_files(**{WAIVERS: waivers}))
    code, report = check_json(repo)
    assert code == 0
    assert report["summary"]["waived"] == 1


@pytest.mark.parametrize(
    "data_file, data, fires",
    [
        ("policy/data.yaml", "queue_budget:\n  max_gpu_limit: 8\n", True),
        ("policy/data.yaml", "queue_budget:\n  max_gpu_limit: 32\n", False),
        ("policy/budget.json", '{"queue_budget": {"max_gpu_limit": 8}}\n', True),
        ("policy/budget.json", '{"queue_budget": {"max_gpu_limit": 16}}\n', False),
    ],
)
def test_policy_data_is_available_under_data_user(tmp_path: Path, data_file: str, data: str, fires: bool) -> None:
    repo, _ = make_repo(tmp_path, user_policy_files(data_file, data))
    code, report = check_json(repo, "--cluster", "lab-standalone")
    assert [f["rule"] for f in report["clusters"][0]["findings"]] == (["ACME-Q-100"] if fires else [])
    assert code == (2 if fires else 0)


def test_policy_data_files_sharing_a_top_level_key_are_merged(tmp_path: Path) -> None:
    files = user_policy_files()
    files["kai-gitops.yaml"] = (files["kai-gitops.yaml"] or "").replace(
        "data: [policy/data.yaml]", "data: [policy/data.yaml, policy/owners.yaml]"
    )
    files["policy/owners.yaml"] = "queue_budget:\n  owner: acme-platform@example.com\n"
    repo, _ = make_repo(tmp_path, files)
    code, report = check_json(repo, "--cluster", "lab-standalone")
    assert [f["rule"] for f in report["clusters"][0]["findings"]] == ["ACME-Q-100"]
    assert code == 2


def test_user_rule_reusing_a_shipped_id_is_one_line_error(tmp_path: Path) -> None:
    reuse = USER_RULE.replace("ACME-Q-100", "KAI-Q-001")
    repo, _ = make_repo(tmp_path, user_policy_files(**{"policy__acme__queue_budget.rego": reuse}))
    assert_one_line_error(
        *run_cli(["check", "--repo", repo]),
        "rule id KAI-Q-001 is defined twice",
        "kai-gitops:policies/kai_gitops/rules/queues/kai_q_001.rego",
        "policy/acme/queue_budget.rego",
    )


def test_two_user_rules_with_one_id_is_one_line_error(tmp_path: Path) -> None:
    twin = USER_RULE.replace("queue_budget\n", "queue_budget_v2\n", 1)
    repo, _ = make_repo(tmp_path, user_policy_files(**{"policy__acme__v2.rego": twin}))
    assert_one_line_error(
        *run_cli(["check", "--repo", repo]),
        "rule id ACME-Q-100 is defined twice",
        "policy/acme/queue_budget.rego",
        "policy/acme/v2.rego",
    )


def test_collision_with_a_vendored_shipped_file_names_two_different_files(tmp_path: Path) -> None:
    shipped = Path(__file__).resolve().parents[2] / "policies/kai_gitops/rules/queues/kai_q_001.rego"
    config = ("kai-gitops.yaml", "waiversFile:", "policies:\n  dirs: [policies]\nwaiversFile:")
    files = template_files(
        config,
        **{
            "policies__kai_gitops__rules__queues__kai_q_001.rego": shipped.read_text().replace(
                "KAI-Q-001", "ACME-Q-001"
            )
        },
    )
    repo, _ = make_repo(tmp_path, files)
    line = assert_one_line_error(*run_cli(["check", "--repo", repo]), "kai_q_001.rego")
    names = re.findall(r"(\S+kai_q_001\.rego)", line)
    assert len(names) == 2 and names[0] != names[1], line


BROKEN = "package kai_gitops.rules.user.acme.broken\n\nallowed if {\n\tinput.scope ==\n\n\n}\n"


def test_rego_syntax_error_in_a_user_policy_is_one_line_error(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, user_policy_files(**{"policy__x.rego": BROKEN}))
    line = assert_one_line_error(*run_cli(["check", "--repo", repo]))
    assert re.fullmatch(r"kai-gitops: error: policy/x\.rego:7:1: \S.*", line), line
    line = assert_one_line_error(
        *run_cli(["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT])
    )
    assert line.startswith("kai-gitops: error: policy/x.rego:7:1: "), line


def _kai_gitops() -> list[str]:
    script = Path(sys.executable).parent / "kai-gitops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]


@pytest.mark.parametrize("command", ["check", "policy-test"])
def test_rego_syntax_error_has_no_backtrace_with_rust_backtrace_set(tmp_path: Path, command: str) -> None:
    """A fresh process, so the Rust runtime reads RUST_BACKTRACE=1 itself (CliRunner would be too late)."""
    repo, _ = make_repo(tmp_path, user_policy_files(**{"policy__x.rego": BROKEN}))
    args = ["check", "--repo", str(repo)] if command == "check" else ["policy", "test", "policy"]
    env = {k: v for k, v in os.environ.items() if k != "KAI_GITOPS_DEBUG"}
    done = subprocess.run(
        [*_kai_gitops(), *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=repo,
        env={**env, "RUST_BACKTRACE": "1", "RUST_LIB_BACKTRACE": "1"},
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert done.stdout == ""
    assert re.fullmatch(r"kai-gitops: error: policy/x\.rego:7:1: [^\n]+\n", done.stderr), done.stderr
    for word in ("backtrace", "Traceback", "panicked", "0x"):
        assert word not in done.stderr


# -- kai-gitops policy test ------------------------------------------------------------------------------------------


def test_policy_test_shipped_pack_passes() -> None:
    code, stdout, stderr = run_cli(["policy", "test"])
    assert (code, stderr) == (0, "")
    summary = re.fullmatch(r"(\d+) passed, 0 failed", stdout.rstrip("\n").splitlines()[-1])
    assert summary and int(summary.group(1)) >= 100, stdout[-200:]
    assert stdout.strip() == summary.group(0)  # quiet: only failures would be listed


def test_policy_test_verbose_lists_every_test() -> None:
    code, stdout, _ = run_cli(["policy", "test", "-v"])
    assert code == 0
    lines = stdout.rstrip("\n").splitlines()
    passed = int(lines[-1].split()[0])
    assert len(lines) == passed + 1
    assert all(line.startswith("PASS kai-gitops:policies/kai_gitops/") for line in lines[:-1])
    assert (
        "PASS kai-gitops:policies/kai_gitops/rules/components/components_test.rego: "
        "data.kai_gitops.tests.components.test_c001_ready_pods_pass"
    ) in lines


def policy_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "policy"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_policy_test_user_dir(tmp_path: Path) -> None:
    root = policy_dir(tmp_path, {"acme/queue_budget.rego": USER_RULE, "acme/queue_budget_test.rego": USER_RULE_TEST})
    code, stdout, stderr = run_cli(["policy", "test", root, "-v"])
    assert (code, stderr) == (0, ""), stdout
    assert stdout.splitlines() == [
        f"PASS {root}/acme/queue_budget_test.rego: data.kai_gitops.tests.user.acme.queue_budget."
        "test_over_budget_is_flagged",
        f"PASS {root}/acme/queue_budget_test.rego: data.kai_gitops.tests.user.acme.queue_budget."
        "test_within_budget_passes",
        "2 passed, 0 failed",
    ]


def test_policy_test_failing_test_exits_2(tmp_path: Path) -> None:
    wrong = USER_RULE_TEST.replace(
        "count(data.kai_gitops.rules.user.acme.queue_budget.violations) == 0",
        "count(data.kai_gitops.rules.user.acme.queue_budget.violations) == 1",
    )
    root = policy_dir(tmp_path, {"acme/queue_budget.rego": USER_RULE, "acme/queue_budget_test.rego": wrong})
    code, stdout, stderr = run_cli(["policy", "test", root])
    assert (code, stderr) == (2, "")
    lines = stdout.rstrip("\n").splitlines()
    assert lines[-1] == "1 passed, 1 failed"
    assert lines[:-1] == [
        f"FAIL {root}/acme/queue_budget_test.rego: "
        "data.kai_gitops.tests.user.acme.queue_budget.test_within_budget_passes (undefined)"
    ]
    code, stdout, _ = run_cli(["policy", "test", root, "-v"])
    assert code == 2 and "PASS " in stdout and "FAIL " in stdout


def test_policy_test_syntax_error_is_one_line_error(tmp_path: Path) -> None:
    test = "package kai_gitops.tests.x\n\ntest_ok if { true }\n"
    root = policy_dir(tmp_path, {"x.rego": BROKEN, "x_test.rego": test})
    line = assert_one_line_error(*run_cli(["policy", "test", root]))
    assert line.startswith(f"kai-gitops: error: {root}/x.rego:7:1: "), line


def test_policy_test_missing_dir_is_one_line_error(tmp_path: Path) -> None:
    assert_one_line_error(*run_cli(["policy", "test", tmp_path / "nope"]), str(tmp_path / "nope"), "does not exist")


# -- the OPA server path through the CLI ------------------------------------------------------------------------------


@pytest.fixture()
def opa() -> Iterator[OpaStandin]:
    server = OpaStandin(token=TOKEN).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


_AGE = re.compile(r"is \d+d\d+h old")  # NVCA-P-001 quotes the pod's age, which moves with the clock


def comparable(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(
        ({**timeless(f), "message": _AGE.sub("is <age> old", f["message"])} for f in findings),
        key=lambda f: f["fingerprint"],
    )


def test_opa_server_gives_the_same_findings_as_the_embedded_engine(demo: Path, opa: OpaStandin) -> None:
    embedded_code, embedded = diff_json(demo)
    remote_code, remote = diff_json(demo, "--opa-url", opa.url, "--opa-token", TOKEN)
    assert remote_code == embedded_code == 2
    assert len(remote["findings"]) >= 10
    assert comparable(remote["findings"]) == comparable(embedded["findings"])
    assert remote["summary"] == embedded["summary"]
    assert ("POST", "/v1/data/kai_gitops/rules") in opa.requests  # the server really evaluated


def test_opa_server_runs_user_policies_from_the_repo(tmp_path: Path, opa: OpaStandin) -> None:
    repo, _ = make_repo(tmp_path, user_policy_files())
    embedded = check_json(repo)[1]
    remote = check_json(repo, "--opa-url", opa.url, "--opa-token", TOKEN)[1]
    for local, other in zip(embedded["clusters"], remote["clusters"], strict=True):
        assert comparable(other["findings"]) == comparable(local["findings"])
    assert any(p.endswith("policy/acme/queue_budget.rego") for p in opa.policies)
    assert opa.data["user"] == {"queue_budget": {"max_gpu_limit": 8}}


def test_opa_token_from_the_environment(demo: Path, opa: OpaStandin) -> None:
    code, stdout, stderr = run_cli(
        [
            "diff",
            "--repo",
            demo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            PROD_SNAPSHOT,
            "--opa-url",
            opa.url,
            "-o",
            "json",
        ],
        env={"KAI_GITOPS_OPA_TOKEN": TOKEN},
    )
    assert (code, stderr) == (2, "")
    assert json.loads(stdout)["findings"]


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_opa_server_down_is_one_line_error_naming_the_url(demo: Path) -> None:
    url = closed_port_url()
    for command in (["diff", "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT], ["check"]):
        line = assert_one_line_error(
            *run_cli([*command, "--repo", demo, "--opa-url", url, "--opa-token", TOKEN]),
            f"cannot connect to OPA at {url}",
            "--opa-url",
        )
        assert TOKEN not in line


def test_opa_wrong_token_is_one_line_error(demo: Path, opa: OpaStandin) -> None:
    line = assert_one_line_error(
        *run_cli(
            [
                "diff",
                "--repo",
                demo,
                "--cluster",
                "prod-addon",
                "--snapshot",
                PROD_SNAPSHOT,
                "--opa-url",
                opa.url,
                "--opa-token",
                "not-the-token",
            ]
        ),
        opa.url,
        "--opa-token",
    )
    assert "not-the-token" not in line
    assert not opa.policies  # nothing was uploaded


# -- schema and version ------------------------------------------------------------------------------------------------


def test_schema_command_prints_the_shipped_schema() -> None:
    code, stdout, stderr = run_cli(["schema"])
    assert (code, stderr) == (0, "")
    assert json.loads(stdout) == json.loads((DATA / "kai-gitops.schema.json").read_text())
    assert json.loads(stdout) == json.loads((TEMPLATE / "kai-gitops.schema.json").read_text())  # editor copy in sync


def test_version_option() -> None:
    code, stdout, stderr = run_cli(["--version"])
    assert (code, stderr) == (0, "")
    assert stdout == f"kai-gitops, version {version('kai-gitops')}\n"


def test_policy_test_with_a_missing_data_file_is_one_error_line(tmp_path: Path) -> None:
    """It was an 'internal error … report it' (FileNotFoundError) instead of saying which file is missing."""
    missing = tmp_path / "no-such-data.yaml"
    assert_one_line_error(*run_cli(["policy", "test", "--data", missing]), str(missing), "does not exist")
