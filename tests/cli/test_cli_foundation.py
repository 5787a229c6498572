"""`kai-gitops` end to end on the bundled demo, its exit codes, and one-line errors for bad input."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pygit2
import pytest

from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    DATA,
    DEMO_SNAPSHOTS,
    ROOT,
    assert_one_line_error,
    canonical_shard,
    default_queues,
    kai_crds,
    load_demo_builder,
    make_repo,
    no_policies,  # noqa: F401  (fixture)
    release_secret,
    run_cli,
    snapshot_file,
    standalone_config,
)

PROD_SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"
LAB_SNAPSHOT = DEMO_SNAPSHOTS / "lab-standalone.yaml"
DEMO_VIOLATION = (
    "CPU resource violation for queue default-parent-queue: expected limit=-1, quota=-1, "
    "overQuotaWeight=1, got limit=-1, quota=0, overQuotaWeight=1"
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo GitOps repo: commit 1 = template, commit 2 = the operator's pull request."""
    target = tmp_path_factory.mktemp("demo") / "repo"
    load_demo_builder().build_repo(target)
    return target


def diff_json(*args: Any) -> tuple[int, dict[str, Any], str]:
    code, stdout, stderr = run_cli(["diff", *args, "-o", "json"])
    assert stderr == "", stderr
    return code, json.loads(stdout), stderr


# -- the demo -----------------------------------------------------------------------------------------------------


def test_demo_repo_has_two_commits(demo: Path) -> None:
    repo = pygit2.Repository(str(demo))
    commits = list(repo.walk(repo.head.target))
    assert len(commits) == 2
    assert repo.head.shorthand == "main"


def test_diff_prod_addon_text(demo: Path) -> None:
    code, stdout, stderr = run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT])
    assert code == 2, stderr
    assert stderr == ""
    assert "kai-gitops diff — cluster prod-addon" in stdout
    assert "~ Queue/default-parent-queue KAI-D-002" in stdout
    assert "~ Queue/default-queue KAI-D-002" in stdout
    assert re.search(r"cpu\.quota\s+0 → -1", stdout)
    assert "so `helm upgrade` will not fix this" in stdout
    assert "NVCA prediction kai-scheduler-queues: unhealthy" in stdout
    assert DEMO_VIOLATION in stdout
    assert "\x1b[" not in stdout  # no colour codes when not on a terminal


def test_diff_prod_addon_json(demo: Path) -> None:
    code, report, _ = diff_json("--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT)
    assert code == 2
    assert report["schemaVersion"] == 1
    assert (report["tool"], report["command"], report["exitCode"], report["failOn"]) == (
        "kai-gitops",
        "diff",
        2,
        "warning",
    )
    assert report["cluster"] == "prod-addon"
    repo = pygit2.Repository(str(demo))
    assert report["git"] == {"repo": str(demo), "ref": "HEAD", "commit": str(repo.head.target), "worktree": False}
    assert report["live"] == {"source": f"snapshot {PROD_SNAPSHOT}"}
    queue_findings = {f["subject"]["name"]: f for f in report["findings"] if f["rule"] == "KAI-D-002"}
    assert set(queue_findings) == {"default-parent-queue", "default-queue"}
    for finding in queue_findings.values():
        assert finding["live"] == {"cpu.quota": 0, "gpu.quota": 0, "memory.quota": 0}
        assert finding["desired"] == {"cpu.quota": -1, "gpu.quota": -1, "memory.quota": -1}
        assert finding["kind"] == "drift" and finding["severity"] == "error"
        assert finding["fix"]["action"] == "update"
    for finding in report["findings"]:  # policy findings too, once the pack is installed
        assert re.fullmatch(r"[0-9a-f]{16}", finding["fingerprint"])
        assert set(finding) >= {"rule", "kind", "severity", "message", "location", "fix", "fingerprint"}
    drift = [f for f in report["findings"] if f["kind"] == "drift"]
    for finding in drift:
        assert finding["location"]["file"] == "environments/prod.yaml"
        assert isinstance(finding["location"]["line"], int) and finding["location"]["line"] > 0
        assert finding["location"]["path"] == "addons.kaiScheduler.enabled"
    assert len({f["fingerprint"] for f in drift}) == len(drift) == 3  # two Queues and kai-config
    # as reconcile plans them: the three, and the schedule label of gpu-node-2 (NVCA-S-012, a violation)
    assert report["summary"]["to_update"] == 4
    assert report["nvca"] == {"kai-scheduler-queues": {"status": "unhealthy", "errors": [DEMO_VIOLATION]}}
    assert report["healthz"]["kai-scheduler-queues"]["errors"] == [DEMO_VIOLATION]


def test_fingerprints_are_stable_across_runs(demo: Path) -> None:
    args = ("--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT)
    first = [f["fingerprint"] for f in diff_json(*args)[1]["findings"]]
    second = [f["fingerprint"] for f in diff_json(*args)[1]["findings"]]
    assert first == second


def test_doctor_json_predicts_nvca_exactly() -> None:
    code, stdout, stderr = run_cli(["doctor", "--snapshot", PROD_SNAPSHOT, "-o", "json"])
    assert stderr == ""
    report = json.loads(stdout)
    assert json.dumps({"nvca": report["nvca"]})[1:-1] == (
        '"nvca": {"kai-scheduler-queues": {"status": "unhealthy", "errors": ["CPU resource violation for queue '
        "default-parent-queue: expected limit=-1, quota=-1, overQuotaWeight=1, got limit=-1, quota=0, "
        'overQuotaWeight=1"]}}'
    )
    assert report["command"] == "doctor"
    assert report["git"] is None
    assert code == report["exitCode"]


def test_doctor_exits_2_on_the_demo() -> None:
    code, _, stderr = run_cli(["doctor", "--snapshot", PROD_SNAPSHOT, "-o", "json"])
    assert code == 2, stderr


def test_doctor_without_a_repo_claims_no_cluster_name_and_no_git_list(demo: Path) -> None:
    """Without --repo nothing names the cluster and Git was not read: the text says so instead of `cluster live`,
    and NVCA-G-013 compares the overrides with the list the cluster shows, not with an empty "Git list []"."""
    code, stdout, stderr = run_cli(["doctor", "--snapshot", PROD_SNAPSHOT])
    assert code == 2, stderr
    assert stdout.startswith("kai-gitops doctor — live state\n  desired: not read (no --repo)")
    assert "cluster live" not in stdout and "Git list" not in stdout
    (overrides,) = [line for line in stdout.splitlines() if "spec.overrides.featureGate.values" in line]
    assert "which replace spec.featureGate.values [" in overrides and "pass --repo to compare" in overrides
    _, report, _ = diff_json("--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT)
    (finding,) = [f for f in report["findings"] if f["rule"] == "NVCA-G-013"]
    assert "which replace the Git list [" in finding["message"] and "--repo" not in finding["message"]


@pytest.mark.parametrize("fmt", ["markdown", "github"])
def test_doctor_without_a_repo_names_no_cluster_in_markdown_either(fmt: str, tmp_path: Path) -> None:
    """Markdown (and the GitHub job summary, which is Markdown) says what the text says: live state, Git not
    read; the machine formats keep the report key `live`."""
    summary = tmp_path / "summary.md"
    code, stdout, stderr = run_cli(
        ["doctor", "--snapshot", PROD_SNAPSHOT, "-o", fmt], env={"GITHUB_STEP_SUMMARY": str(summary)}
    )
    assert code == 2, stderr
    markdown = stdout if fmt == "markdown" else summary.read_text()
    assert "| live state (Git not read) | " in markdown and "\n### Live state\n" in markdown, markdown
    assert "Git was not read (no --repo): only the live checks ran" in markdown
    assert "| live |" not in markdown and "Cluster live" not in markdown
    report = json.loads(run_cli(["doctor", "--snapshot", PROD_SNAPSHOT, "-o", "json"])[1])
    assert report["cluster"] == "live" and report["git"] is None


@pytest.mark.parametrize(
    ("cluster", "version", "command"),
    [
        ("lab-standalone", "v0.14.0", "--version v0.14.7 -f clusters/lab/kai-values.yaml"),
        ("prod-addon", "v0.16.5", "apply environment environments/prod.yaml through the compute plane stack workflow"),
    ],
)
def test_every_finding_about_the_kai_release_gives_one_and_the_same_command(
    demo: Path, tmp_path: Path, cluster: str, version: str, command: str
) -> None:
    """KAI-D-003/KAI-D-004 (the differ) and KAI-R-012 (a Rego rule) ask the operator to redo the same release: the
    same text, naming the values file the desired state came from (never a generic values.yaml)."""
    demo_builder = load_demo_builder()
    items = (
        demo_builder.lab_standalone_snapshot() if cluster == "lab-standalone" else demo_builder.prod_addon_snapshot()
    )
    values = demo_builder._canonical_values()
    values["podAnnotations"] = {"team": "ml"}  # KAI-D-004 (standalone: the values Git keeps are compared whole)
    release = demo_builder._release("kai-scheduler", "kai-scheduler", 9, "deployed", version, values)
    items = [i for i in items if i["kind"] != "Secret" or "kai-scheduler.v" not in i["metadata"]["name"]]
    (shard,) = [i for i in items if i["kind"] == "SchedulingShard"]
    shard["spec"]["placementStrategy"]["gpu"] = "spread"  # KAI-D-003: the shard is rendered from the values
    snapshot = snapshot_file(tmp_path, [*items, release])
    _, report, err = diff_json("--repo", demo, "--cluster", cluster, "--snapshot", snapshot)
    fixes = {
        f["rule"]: f["fix"]["command"]
        for f in report["findings"]
        if f["rule"] in ("KAI-D-003", "KAI-D-004", "KAI-R-012")
    }
    assert {"KAI-D-003", "KAI-R-012"} <= set(fixes), (fixes, err)
    assert len(set(fixes.values())) == 1, fixes
    assert command in fixes["KAI-R-012"]


def test_doctor_with_repo_and_cluster_uses_that_cluster(demo: Path) -> None:
    code, stdout, stderr = run_cli(
        ["doctor", "--repo", demo, "--cluster", "lab-standalone", "--snapshot", LAB_SNAPSHOT, "-o", "json"]
    )
    assert stderr == ""
    report = json.loads(stdout)
    assert code == report["exitCode"] == 2
    assert report["cluster"] == "lab-standalone"
    # KAI-D-001: the two queues the PR adds do not exist yet
    assert {f["rule"] for f in report["findings"] if f["kind"] == "drift"} == {
        "KAI-D-001",
        "KAI-D-002",
        "KAI-D-003",
        "KAI-D-004",
    }


def test_doctor_with_repo_but_no_cluster_is_refused_on_a_multi_cluster_repo(demo: Path) -> None:
    code, stdout, stderr = run_cli(["doctor", "--repo", demo, "--snapshot", LAB_SNAPSHOT])
    assert_one_line_error(code, stdout, stderr, "--cluster")


def test_lab_standalone_template_commit_has_no_queue_drift(demo: Path) -> None:
    _, report, _ = diff_json(
        "--repo", demo, "--ref", "HEAD~1", "--cluster", "lab-standalone", "--snapshot", LAB_SNAPSHOT
    )
    assert report["git"]["ref"] == "HEAD~1"
    drift = [f for f in report["findings"] if f["kind"] == "drift"]
    assert drift == []
    assert report["nvca"] == {"kai-scheduler-queues": {"status": "healthy", "errors": []}}


def test_lab_standalone_pull_request_commit_drifts(demo: Path) -> None:
    code, report, _ = diff_json("--repo", demo, "--cluster", "lab-standalone", "--snapshot", LAB_SNAPSHOT)
    assert code == 2
    rules = sorted((f["rule"], f["subject"]["name"]) for f in report["findings"] if f["kind"] == "drift")
    assert rules == [
        ("KAI-D-001", "research-nlp"),
        ("KAI-D-001", "research-vision"),  # the PR's new queues
        ("KAI-D-002", "default-queue"),
        ("KAI-D-003", "default"),
        ("KAI-D-004", "kai-scheduler"),
    ]


def test_worktree_flag_reads_uncommitted_edit(demo: Path, tmp_path: Path) -> None:
    copy, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    edited = CANONICAL_KAI_VALUES.replace("placementStrategy: binpack", "placementStrategy: spread")
    (copy / "kai-values.yaml").write_text(edited)
    snapshot = snapshot_file(tmp_path, [*kai_crds(), *default_queues(), canonical_shard()])
    _, stdout, stderr = run_cli(
        ["diff", "--repo", copy, "--snapshot", snapshot, "-o", "json"],
        env={"CI": None, "GITHUB_ACTIONS": None, "GITLAB_CI": None},
    )
    assert "kai-values.yaml has uncommitted edits this run did not read" in stderr  # and says so
    assert [f["rule"] for f in json.loads(stdout)["findings"] if f["kind"] == "drift"] == []
    worktree = diff_json("--repo", copy, "--worktree", "--snapshot", snapshot)[1]
    assert worktree["git"]["worktree"] is True and worktree["git"]["commit"] is None
    assert [f["rule"] for f in worktree["findings"] if f["kind"] == "drift"] == ["KAI-D-003"]


def test_clone_url_through_the_cli(demo: Path, tmp_path: Path) -> None:
    bare = tmp_path / "demo.git"
    pygit2.clone_repository(str(demo), str(bare), bare=True)
    env = {"KAI_GITOPS_CACHE": str(tmp_path / "cache")}
    code, stdout, stderr = run_cli(
        ["diff", "--repo", f"file://{bare}", "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT, "-o", "json"],
        env=env,
    )
    assert code == 2, stderr
    assert json.loads(stdout)["git"]["commit"] == str(pygit2.Repository(str(demo)).head.target)
    assert (tmp_path / "cache" / "repos").is_dir()


# -- --fail-on ---------------------------------------------------------------------------------------------------


@pytest.fixture
def warning_only(tmp_path: Path) -> tuple[Path, Path]:
    """Queues and shard match Git; only the release values differ (a WARNING, KAI-D-004)."""
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    from ruamel.yaml import YAML

    values = YAML(typ="safe", pure=True).load(CANONICAL_KAI_VALUES)
    values["scheduler"]["placementStrategy"] = "spread"
    items = [*kai_crds(), *default_queues(), canonical_shard(), release_secret(config=values)]
    return repo, snapshot_file(tmp_path, items)


@pytest.mark.usefixtures("no_policies")
@pytest.mark.parametrize("fail_on, expected", [("info", 2), ("warning", 2), ("error", 0)])
def test_fail_on_threshold(warning_only: tuple[Path, Path], fail_on: str, expected: int) -> None:
    repo, snapshot = warning_only
    code, stdout, stderr = run_cli(["diff", "--repo", repo, "--snapshot", snapshot, "--fail-on", fail_on, "-o", "json"])
    assert stderr == ""
    report = json.loads(stdout)
    assert [(f["rule"], f["severity"]) for f in report["findings"]] == [("KAI-D-004", "warning")]
    assert code == expected == report["exitCode"]
    assert report["failOn"] == fail_on


@pytest.mark.usefixtures("no_policies")
def test_fail_on_error_still_fails_on_error_drift(demo: Path) -> None:
    code, _, _ = run_cli(
        ["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT, "--fail-on", "error"]
    )
    assert code == 2


@pytest.mark.usefixtures("no_policies")
def test_clean_run_exits_0(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    snapshot = snapshot_file(tmp_path, [*kai_crds(), *default_queues(), canonical_shard()])
    code, stdout, _ = run_cli(["diff", "--repo", repo, "--snapshot", snapshot])
    assert code == 0
    assert "Plan: 0 to create, 0 to change, 0 for the operator." in stdout


def test_invalid_fail_on_is_a_usage_error(demo: Path) -> None:
    code, _, stderr = run_cli(["diff", "--repo", demo, "--snapshot", PROD_SNAPSHOT, "--fail-on", "fatal"])
    assert code == 1  # a usage mistake is an error, never "findings" (2)
    assert "Traceback" not in stderr
    assert stderr.count("\n") == 1 and stderr.startswith("kai-gitops: error: ")
    assert "--fail-on" in stderr


# -- bad input: exit 1, one line, file:line, no traceback -------------------------------------------------------------


def bomb() -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi", start=1):
        lines.append(f"{name}: &{name} [" + ",".join([f"*{'abcdefghi'[i - 1]}"] * 9) + "]")
    return "\n".join(lines) + "\n"


def run_bad(
    tmp_path: Path,
    values: str | bytes,
    config: str | None = None,
    extra_args: tuple[Any, ...] = (),
    snapshot: Path | None = None,
) -> tuple[int, str, str]:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": config or standalone_config(), "kai-values.yaml": values})
    snap = snapshot or snapshot_file(tmp_path, [*kai_crds(), *default_queues()])
    return run_cli(["diff", "--repo", repo, "--snapshot", snap, *extra_args])


def test_error_malformed_yaml_in_values(tmp_path: Path) -> None:
    line = assert_one_line_error(
        *run_bad(tmp_path, "scheduler:\n  placementStrategy: [binpack\n"), "kai-values.yaml:", "invalid YAML"
    )
    assert re.match(r"kai-gitops: error: kai-values\.yaml:\d+:\d+: ", line)


def test_error_duplicate_keys(tmp_path: Path) -> None:
    values = "scheduler:\n  placementStrategy: binpack\n  placementStrategy: spread\n"
    assert_one_line_error(*run_bad(tmp_path, values), "kai-values.yaml:3:", 'duplicate key "placementStrategy"')


def test_error_alias_bomb(tmp_path: Path) -> None:
    line = assert_one_line_error(*run_bad(tmp_path, bomb()), "kai-values.yaml:", "alias bomb")
    assert re.match(r"kai-gitops: error: kai-values\.yaml:\d+: ", line)


def test_error_wrong_types(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace(
        "  childResources:\n    cpu:\n      quota: -1", "  childResources:\n    cpu:\n      quota: unlimited"
    )
    assert_one_line_error(
        *run_bad(tmp_path, values), "kai-values.yaml:36:7", "defaultQueue.childResources.cpu.quota must be a number"
    )


def test_error_unknown_config_key(tmp_path: Path) -> None:
    config = standalone_config() + "    kubeContex: lab\n"
    line = assert_one_line_error(*run_bad(tmp_path, CANONICAL_KAI_VALUES, config), "'kubeContex'")
    assert re.match(r"kai-gitops: error: kai-gitops\.yaml:\d+:\d+: ", line)


def test_error_missing_file(tmp_path: Path) -> None:
    config = standalone_config(values="clusters/lab/kai-values.yaml")
    assert_one_line_error(
        *run_bad(tmp_path, CANONICAL_KAI_VALUES, config), "clusters/lab/kai-values.yaml", "file not found at ref HEAD"
    )


def test_error_missing_config_file(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"README.md": "no config\n"})
    assert_one_line_error(
        *run_cli(["diff", "--repo", repo, "--snapshot", PROD_SNAPSHOT]),
        "no kai-gitops.yaml at the root of the repository",
        "create one with `kai-gitops init`",
        "--repo",
    )


def test_error_ref_that_does_not_exist(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(
            ["diff", "--repo", demo, "--ref", "release-9", "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT]
        ),
        "ref 'release-9' does not exist",
        str(demo),
    )


def test_error_non_utf8_file(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.encode().replace(b"binpack", b"b\xe4npack", 1)
    assert_one_line_error(*run_bad(tmp_path, values), "kai-values.yaml:5", "UTF-8")


def test_error_missing_snapshot(demo: Path, tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert_one_line_error(
        *run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", missing]),
        str(missing),
        "snapshot file not found",
    )


def test_error_malformed_snapshot(demo: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"kind": "List",\n "items": [\n')
    assert_one_line_error(
        *run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", bad]), f"{bad}:3:", "invalid JSON"
    )


def test_error_more_than_one_cluster_without_cluster(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(["diff", "--repo", demo, "--snapshot", PROD_SNAPSHOT]),
        "kai-gitops.yaml",
        "2 clusters",
        "--cluster",
        "prod-addon",
        "lab-standalone",
    )


def test_error_unknown_cluster(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(["diff", "--repo", demo, "--cluster", "staging", "--snapshot", PROD_SNAPSHOT]),
        "kai-gitops.yaml",
        "no cluster named 'staging'",
    )


def test_error_not_a_repository(tmp_path: Path) -> None:
    assert_one_line_error(
        *run_cli(["diff", "--repo", tmp_path, "--snapshot", PROD_SNAPSHOT]), str(tmp_path), "not a Git repository"
    )


def test_error_snapshot_with_context(demo: Path) -> None:
    assert_one_line_error(
        *run_cli(["diff", "--repo", demo, "--cluster", "prod-addon", "--snapshot", PROD_SNAPSHOT, "--context", "prod"]),
        "--snapshot cannot be combined",
    )


def test_error_bad_env_type_in_addon_mode(demo: Path, tmp_path: Path) -> None:
    from tests.support.helpers import addon_config

    repo, _ = make_repo(
        tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": "addons:\n  kaiScheduler:\n    enabled: maybe\n"}
    )
    assert_one_line_error(
        *run_cli(["diff", "--repo", repo, "--snapshot", PROD_SNAPSHOT]), "env.yaml:3:5", "must be true or false"
    )


# -- start-up cost -------------------------------------------------------------------------------------------------


def _script() -> list[str]:
    script = Path(sys.executable).parent / "kai-gitops"
    return [str(script)] if script.exists() else [sys.executable, "-m", "reconciler"]


def test_help_is_fast_in_a_fresh_process() -> None:
    start = time.perf_counter()
    done = subprocess.run(
        [*_script(), "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    assert "Usage: kai-gitops" in done.stdout
    for command in ("diff", "doctor", "schema"):
        assert command in done.stdout
    assert elapsed < 1.5, elapsed


def test_cli_import_does_not_pull_heavy_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", "import reconciler.cli"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    modules = [line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert "reconciler.cli" in modules
    heavy = ("ruamel", "pygit2", "kubernetes", "regorus", "deepdiff", "rich")
    loaded = [m for m in modules if m.split(".")[0] in heavy]
    assert loaded == []


def test_help_lists_every_command_without_importing_one() -> None:
    script = (
        "import sys; from click.testing import CliRunner; from reconciler.cli import main; "
        "out = CliRunner().invoke(main, ['--help']).output; "
        "print(sorted(m for m in sys.modules if m.startswith('reconciler.cli.'))); print(out)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    loaded, _, help_text = done.stdout.partition("\n")
    assert loaded == "['reconciler.cli.lazy']"
    from reconciler.cli import COMMANDS

    for name in COMMANDS:
        assert re.search(rf"^  {name} +\S", help_text, re.M), name


def test_command_table_says_what_each_command_says() -> None:
    # `--help` shortens the table's summary; it must read exactly as the command's own help would.
    import click

    from reconciler.cli import COMMANDS

    for name, entry in COMMANDS.items():
        command = entry.load()
        assert command.name == name
        for limit in range(20, 140):
            summary = click.Command(name, help=entry.summary).get_short_help_str(limit)
            assert summary == command.get_short_help_str(limit), (name, limit)


def test_reconcile_help_names_every_kind_a_plan_may_change() -> None:
    from reconciler.plans.writable import PLANNED

    code, stdout, _ = run_cli(["reconcile", "--help"])
    first = " ".join(stdout.split("\n\n")[1].split()).replace("- ", "-")  # click wraps after a hyphen
    names = {"Queue": "Queues", "Node": "node label", "Config": "kai-config", "SchedulingShard": "SchedulingShards"}
    assert code == 0 and {r.kind for r in PLANNED} == set(names)
    assert all(shown in first for shown in names.values()), first


def test_version_and_schema_commands() -> None:
    code, stdout, _ = run_cli(["--version"])
    assert code == 0 and stdout.startswith("kai-gitops, version ")
    code, stdout, _ = run_cli(["schema"])
    assert code == 0
    assert json.loads(stdout) == json.loads((DATA / "kai-gitops.schema.json").read_text())


@pytest.mark.parametrize(
    ("cluster", "command"),
    [
        (
            "lab-standalone",
            "helm install kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler "
            "--namespace kai-scheduler --create-namespace --version v0.14.7 "
            "-f clusters/lab/kai-values.yaml",
        ),
        ("prod-addon", "apply environment environments/prod.yaml through the compute plane stack workflow"),
    ],
)
def test_the_install_command_names_the_values_file_git_keeps(
    demo: Path, tmp_path: Path, cluster: str, command: str
) -> None:
    """KAI-R-010 (no KAI release while Git installs KAI) asks for an install: with the values file the desired state
    came from (standalone) or the stack workflow (add-on), as the upgrade command does, never a generic values.yaml."""
    demo_builder = load_demo_builder()
    items = (
        demo_builder.lab_standalone_snapshot() if cluster == "lab-standalone" else demo_builder.prod_addon_snapshot()
    )
    items = [i for i in items if i["kind"] != "Secret" or not i["metadata"]["name"].startswith("sh.helm.release.")]
    _, report, err = diff_json("--repo", demo, "--cluster", cluster, "--snapshot", snapshot_file(tmp_path, items))
    (fix,) = [f["fix"]["command"] for f in report["findings"] if f["rule"] == "KAI-R-010"]
    assert fix == command, err
