"""`reconcile --apply` under rollout waves, end to end: the demo cluster on the test API server, the demo
repository with a `rollout:` block, the GitHub stand-in (held to GitHub's description) for the statuses."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest

from tests.support.githost._common import Fault
from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn
from tests.support.reconcile_support import Demo, demo_cluster, prod_without_kai_config_drift

pytestmark = pytest.mark.usefixtures("short_lease")
TOKEN = "ghp_WavesTestTokenThatMustNeverBeShown0123456"
ROLLOUT = """
rollout:
  waves:
    - {name: canary, clusters: [lab-standalone], soak: 1h}
    - {name: prod, clusters: [prod-addon]}
"""
QUEUE_WRITES = "/apis/scheduling.run.ai/"


@pytest.fixture
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")


def healthy_operator() -> list[dict[str, Any]]:
    """The demo cluster, its scheduler pod started after its ServiceAccount was re-created (the demo's pod
    predates it: KAI-O-004, an unhealthy operator, which would make every apply report failure)."""
    items = prod_without_kai_config_drift()
    for item in items:
        if item["kind"] == "Pod" and item["metadata"]["name"].startswith("kai-scheduler-default"):
            item["metadata"]["creationTimestamp"] = item["status"]["startTime"] = "2026-11-30T03:00:00Z"
    return items


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    for demo in demo_cluster(tmp_path, healthy_operator()):
        _commit_rollout(demo.repo)
        yield demo


@pytest.fixture
def github() -> Iterator[GitHubStandIn]:
    server = GitHubStandIn(token=TOKEN).start()
    yield server
    server.stop()
    server.assert_clean()


def _commit_rollout(repo_dir: Path) -> None:
    config = repo_dir / "kai-gitops.yaml"
    config.write_text(config.read_text() + ROLLOUT)
    _commit(repo_dir, "rollout waves")


def _commit(repo_dir: Path, message: str) -> str:
    repo = pygit2.Repository(str(repo_dir))
    repo.index.add_all()
    repo.index.write()
    author = pygit2.Signature("t", "t@example.invalid", time=1764500000 + len(message), offset=0)
    return str(repo.create_commit("HEAD", author, author, message, repo.index.write_tree(), [repo.head.target]))


def head(demo: Demo) -> str:
    return str(pygit2.Repository(str(demo.repo)).head.target)


def run(demo: Demo, github: GitHubStandIn, *extra: str) -> tuple[int, dict[str, Any], str]:
    return demo.reconcile_json(
        "--git-host", "github", "--git-host-url", github.url, "--git-host-repo", github.full_name, *extra
    )


def seed(github: GitHubStandIn, sha: str, cluster: str, state: str, age_s: float) -> None:
    github.status_clock = lambda: time.time() - age_s
    github.create_status(
        {}, {"state": state, "context": f"kai-gitops/apply/{cluster}", "description": "seeded"}, {"sha": sha}
    )
    github.status_clock = time.time


def queue_writes(demo: Demo) -> list[Any]:
    return [r for r in demo.writes() if r.path.startswith(QUEUE_WRITES) and r.query.get("dryRun") != "All"]


@pytest.fixture(autouse=True)
def token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)


def test_a_later_wave_waits_for_the_first_and_writes_nothing(demo: Demo, github: GitHubStandIn) -> None:
    _code, report, _err = run(demo, github, "--apply")
    assert report["apply"] is None and not queue_writes(demo)
    assert report["waves"]["state"] == "waiting"
    assert "waiting for wave 1 (canary): lab-standalone has not reported success" in report["waves"]["reason"]
    assert any(n.startswith("rollout: waiting for wave 1") for n in report["plan"]["notes"])
    assert not github.statuses  # a run that applied nothing reports nothing


def test_the_first_wave_soaked_lets_the_next_apply_and_it_reports_success(demo: Demo, github: GitHubStandIn) -> None:
    sha = head(demo)
    seed(github, sha, "lab-standalone", "success", age_s=20 * 60)
    _code, report, _err = run(demo, github, "--apply")
    assert report["apply"] is None and "to soak: lab-standalone succeeded 20m" in report["waves"]["reason"]
    seed(github, sha, "lab-standalone", "success", age_s=2 * 3600)  # an earlier success: the streak is 2h old
    _code, report, err = run(demo, github, "--apply")
    assert report["apply"]["ok"] and queue_writes(demo), err
    assert report["waves"]["state"] == "apply"
    ours = github.statuses[sha][0]
    assert ours["context"] == "kai-gitops/apply/prod-addon" and ours["state"] == "success"
    assert "NVCA kai-scheduler-queues healthy" in ours["description"]


def test_an_unhealthy_operator_after_the_apply_reports_failure(tmp_path: Path, github: GitHubStandIn) -> None:
    for demo in demo_cluster(tmp_path):  # the demo as it is: KAI-O-004 on the scheduler pod
        _commit_rollout(demo.repo)
        sha = head(demo)
        seed(github, sha, "lab-standalone", "success", age_s=2 * 3600)
        _code, report, _err = run(demo, github, "--apply")
        assert report["apply"]["ok"]
        ours = github.statuses[sha][0]
        assert (ours["context"], ours["state"]) == ("kai-gitops/apply/prod-addon", "failure")
        assert ours["description"].startswith("KAI operator unhealthy: KAI-O-004")


def test_reports_on_a_newer_commit_of_the_branch_count_for_an_older_one(demo: Demo, github: GitHubStandIn) -> None:
    older = head(demo)
    (demo.repo / "NOTES.md").write_text("a later commit\n")
    newer = _commit(demo.repo, "notes")
    seed(github, newer, "lab-standalone", "success", age_s=2 * 3600)
    _code, report, err = run(demo, github, "--apply", "--ref", older)
    assert report["waves"]["state"] == "apply" and report["apply"]["ok"], err
    assert github.statuses[older][0]["context"] == "kai-gitops/apply/prod-addon"  # its report: on what it read
    _code, report, _err = run(demo, github, "--apply", "--ref", newer)
    assert report["apply"] is not None  # at the tip, the same report applies


def test_a_failure_holds_the_later_wave_with_its_reason(demo: Demo, github: GitHubStandIn) -> None:
    seed(github, head(demo), "lab-standalone", "failure", age_s=3 * 3600)
    code, report, _err = run(demo, github, "--apply")
    assert report["apply"] is None and not queue_writes(demo)
    assert report["waves"] == {
        "apply": False,
        "state": "held",
        "reason": "held by wave 1: lab-standalone failed",
        "wave": 2,
        "waveName": "prod",
        "heldBy": "lab-standalone",
    }
    assert "rollout: held by wave 1: lab-standalone failed" in report["plan"]["notes"]
    assert code == 2


def test_the_hold_reaches_the_drift_issue(demo: Demo, github: GitHubStandIn) -> None:
    seed(github, head(demo), "lab-standalone", "failure", age_s=3 * 3600)
    _code, _report, err = run(demo, github, "--apply", "--report-to", "github")
    (issue,) = [i for i in github.issues.values() if "prod-addon" in i["title"]]
    assert "rollout: held by wave 1: lab-standalone failed" in issue["body"], err


def test_an_override_status_releases_the_hold(demo: Demo, github: GitHubStandIn) -> None:
    sha = head(demo)
    seed(github, sha, "lab-standalone", "failure", age_s=3 * 3600)
    github.create_status({}, {"state": "success", "context": "kai-gitops/override"}, {"sha": sha})
    _code, report, err = run(demo, github, "--apply")
    assert report["waves"]["state"] == "override" and report["apply"]["ok"], err


def test_a_5xx_on_the_status_read_applies_nothing(demo: Demo, github: GitHubStandIn) -> None:
    seed(github, head(demo), "lab-standalone", "success", age_s=3 * 3600)
    github.inject(Fault(503, times=20, method="GET", path_contains="/statuses"))
    _code, report, _err = run(demo, github, "--apply", "--git-host-rate-limit-wait", "0")
    assert report["apply"] is None and not queue_writes(demo)
    assert report["waves"]["state"] == "unreadable" and "503" in report["waves"]["reason"]


def test_ignore_waves_applies_with_a_warning(demo: Demo, github: GitHubStandIn) -> None:
    _code, report, err = run(demo, github, "--apply", "--ignore-waves")
    assert report["apply"]["ok"] and queue_writes(demo)
    assert "--ignore-waves" in err and report["waves"]["state"] == "override"
    assert not github.statuses  # nothing to report to: the waves were not consulted


def test_a_plan_by_hand_shows_the_wave_state(demo: Demo, github: GitHubStandIn) -> None:
    code, out, _err = demo.reconcile(
        "--git-host", "github", "--git-host-url", github.url, "--git-host-repo", github.full_name
    )
    assert "note: rollout: waiting for wave 1 (canary)" in out
    assert code == 2 and not queue_writes(demo)


def test_on_gitlab_the_soaked_first_wave_lets_the_next_apply_and_it_reports(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITLAB_TOKEN", TOKEN)
    server = GitLabStandIn("acme/gitops", token=TOKEN).start()
    try:
        sha = head(demo)
        server.status_clock = lambda: time.time() - 2 * 3600
        server.post_statuses({}, {"state": "success", "name": "kai-gitops/apply/lab-standalone"}, {"sha": sha})
        server.status_clock = time.time
        _code, report, err = demo.reconcile_json(
            "--apply", "--git-host", "gitlab", "--git-host-url", server.instance_url, "--git-host-repo", "acme/gitops"
        )
        assert report["waves"]["state"] == "apply" and report["apply"]["ok"], err
        ours = server.statuses[sha][0]
        assert (ours["name"], ours["status"]) == ("kai-gitops/apply/prod-addon", "success")
    finally:
        server.stop()
    server.assert_clean()


def test_a_commit_that_drops_the_rollout_is_rolled_out_under_its_parents(demo: Demo, github: GitHubStandIn) -> None:
    config = demo.repo / "kai-gitops.yaml"
    config.write_text(config.read_text().replace(ROLLOUT, "\n"))
    _commit(demo.repo, "no more waves")
    _code, report, err = run(demo, github, "--apply")
    assert report["apply"] is None and not queue_writes(demo), err
    assert report["waves"]["state"] == "waiting" and "canary" in report["waves"]["reason"]
    (demo.repo / "NOTES.md").write_text("the next commit\n")
    _commit(demo.repo, "next")  # its parent has no rollout: the change is in force
    _code, report, err = run(demo, github, "--apply")
    assert report.get("waves") is None and report["apply"]["ok"], err


def test_a_commit_that_labels_its_cluster_override_does_not_release_itself(demo: Demo, github: GitHubStandIn) -> None:
    config = demo.repo / "kai-gitops.yaml"
    text = config.read_text()
    labelled = "- name: prod-addon\n    labels: {kai-gitops/override: 'true'}\n"
    config.write_text(text.replace("- name: prod-addon\n", labelled, 1))
    assert config.read_text() != text
    _commit(demo.repo, "override prod-addon")
    _code, report, err = run(demo, github, "--apply")
    assert report["waves"]["state"] == "waiting" and not queue_writes(demo), err


def test_a_parent_whose_config_does_not_parse_is_passed_over(demo: Demo, github: GitHubStandIn) -> None:
    """No rollout anywhere: a commit whose kai-gitops.yaml broke was never applied, so the fix on top of it applies
    as it did before the waves were read from the parent (it used to be held as unreadable)."""
    config = demo.repo / "kai-gitops.yaml"
    valid = config.read_text().replace(ROLLOUT, "\n")
    config.write_text(valid)
    _commit(demo.repo, "no waves")
    config.write_text(valid + "bogusTopLevelKey: 1\n")
    _commit(demo.repo, "broken")
    config.write_text(valid)
    _commit(demo.repo, "fixed")
    _code, report, err = run(demo, github, "--apply")
    assert report.get("waves") is None and report["apply"]["ok"], err


def test_ignore_waves_is_the_way_out_before_anything_is_read(demo: Demo, github: GitHubStandIn) -> None:
    (demo.repo / "NOTES.md").write_text("uncommitted\n")
    _code, report, err = run(demo, github, "--apply", "--ignore-waves", "--worktree")
    assert report["apply"]["ok"] and report["waves"]["state"] == "override", err
    assert "--ignore-waves: applying the working tree" in err


def test_too_many_unreadable_ancestors_hold_the_commit(
    demo: Demo, github: GitHubStandIn, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the ancestors it reads, the rollout in force is unknown: the commit is held, not gated by its own waves."""
    monkeypatch.setattr("reconciler.reconcile.rollout.ANCESTORS", 2)
    config = demo.repo / "kai-gitops.yaml"
    valid = config.read_text()
    for broken in ("broken once", "broken twice"):
        config.write_text(valid + f"bogusTopLevelKey: {broken!r}\n")
        _commit(demo.repo, broken)
    config.write_text(valid)
    _commit(demo.repo, "fixed")
    _code, report, err = run(demo, github, "--apply")
    assert report["waves"]["state"] == "unreadable", err
    assert "none of the 2 first-parent commits" in report["waves"]["reason"]
    assert not queue_writes(demo)
