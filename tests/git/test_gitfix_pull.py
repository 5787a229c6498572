"""`check --fix-git` end to end: real repositories (file:// bare remote, smart HTTP via git http-backend) and
the GitHub/GitLab stand-ins: open → re-run no-op → base already fixed → closed and branch deleted."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pygit2
import pytest

from reconciler.core.errors import UserError
from reconciler.gitfix.branch import DEFAULT_AUTHOR, Author
from reconciler.gitfix.pull_request import own_branches
from tests.support.git_http import git_http_server, http_backend
from tests.support.gitfix_pull import HOST_TOKEN, PUSH_TOKEN, _demo
from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn
from tests.support.helpers import assert_one_line_error, file_url, load_demo_builder, run_cli

CLUSTER = "lab-standalone"
BRANCH_PREFIX = f"refs/heads/kai-gitops/fix/{CLUSTER}-"
CPU = '"HelmAllowCPUNodes"'


@pytest.fixture(
    params=[("github", ""), ("github", "/api/v3"), ("gitlab", ""), ("gitlab", "/gitlab")],
    ids=["github.com", "github-enterprise", "gitlab.com", "gitlab-self-managed"],
)
def host(request: pytest.FixtureRequest) -> Iterator[tuple[str, Any]]:
    kind, prefix = request.param
    if kind == "github":
        server: Any = GitHubStandIn(prefix=prefix, token=HOST_TOKEN).start()
    else:
        server = GitLabStandIn("acme/gitops", prefix=prefix, token=HOST_TOKEN).start()
    yield kind, server
    server.stop()
    server.assert_clean()


@pytest.fixture
def server() -> Iterator[GitHubStandIn]:
    """The GitHub stand-in, for tests about one host; it must have seen no contract violation."""
    stand_in = GitHubStandIn(token=HOST_TOKEN).start()
    yield stand_in
    stand_in.stop()
    stand_in.assert_clean()


def _host_args(kind: str, server: Any) -> list[str]:
    url = server.url if kind == "github" else server.instance_url
    return ["--git-host", kind, "--git-host-url", url, "--git-host-repo", "acme/gitops"]


def _push_main(work: Path) -> None:
    pygit2.Repository(str(work)).remotes["origin"].push(["+refs/heads/main:refs/heads/main"])


def _fix_branches(bare: Path) -> dict[str, str]:
    repo = pygit2.Repository(str(bare))
    return {name: str(repo.references[name].target) for name in repo.references if name.startswith(BRANCH_PREFIX)}


def _check(
    work: Path,
    kind: str,
    server: Any,
    *extra: str,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    token_env = {"GITHUB_TOKEN" if kind == "github" else "GITLAB_TOKEN": HOST_TOKEN}
    return run_cli(
        ["check", "--repo", work, "--cluster", CLUSTER, "--fix-git", *_host_args(kind, server), *extra],
        env={**token_env, **(env or {})},
    )


def _pulls(kind: str, server: Any) -> list[dict[str, Any]]:
    return list(server.pulls.values() if kind == "github" else server.merge_requests.values())


def _audits(err: str) -> list[dict[str, Any]]:
    """The audit records among the run's JSON log lines on stderr."""
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    return [line for line in lines if "audit" in line]


def _writes(server: Any) -> list[str]:
    return [f"{r.method} {r.path}" for r in server.requests if r.method in ("POST", "PATCH", "PUT", "DELETE")]


def test_fix_pull_request_open_rerun_fixed_closed(tmp_path: Path, host: tuple[str, Any]) -> None:
    kind, server = host
    work, bare = _demo(tmp_path)
    _push_main(work)
    code, _out, err = _check(work, kind, server, "--log-format", "json")
    assert code == 2, err  # the findings still count: the PR is a proposal
    assert "opened (pushed kai-gitops/fix/lab-standalone-" in err
    branches = _fix_branches(bare)
    assert len(branches) == 1
    [(ref, tip)] = branches.items()
    noun, sigil = _words(kind)
    assert [(a["audit"], a["object"].split(f" {sigil}")[0]) for a in _audits(err)] == [
        ("push", f"branch {ref.removeprefix('refs/heads/')}"),
        ("create", noun),
    ]
    assert _audits(err)[0]["commit"] == tip and HOST_TOKEN not in err
    repo = pygit2.Repository(str(bare))
    commit = repo.get(tip)
    assert [str(p) for p in commit.parent_ids] == [str(repo.references["refs/heads/main"].target)]
    assert f"{commit.author.name} <{commit.author.email}>" == DEFAULT_AUTHOR
    diff = repo.diff(commit.parents[0], commit, context_lines=0).patch
    changed = [line for line in diff.splitlines() if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert changed == [
        "-  placementStrategy: spread",
        "+  placementStrategy: binpack",
        "-      enabled: yes",
        "+      enabled: false",
        "-      quota: 0",
        "+      quota: -1",
        f'-  featureGateValues: ["DynamicGPUDiscovery", "SelfHosted", "kaischeduler", {CPU}]',
        f'+  featureGateValues: ["DynamicGPUDiscovery", "SelfHosted", "KAIScheduler", {CPU}]',
    ]
    [pull] = _pulls(kind, server)
    body = pull.get("body") or pull.get("description")
    assert body.startswith(f"<!-- kai-gitops:fix cluster={CLUSTER} -->")
    assert "KAI-V-001" in body and "NVCA-G-005" in body and "+  placementStrategy: binpack" in body
    head = pull["head"]["ref"] if kind == "github" else pull["source_branch"]
    assert f"refs/heads/{head}" == ref

    writes_before = len(_writes(server))
    code, _out, err = _check(work, kind, server)
    assert "unchanged (branch unchanged" in err, err
    assert _fix_branches(bare) == branches  # no new commit, no push
    assert len(_writes(server)) == writes_before  # no host write either

    # The operator merges the fix: the base now holds it, so the PR is closed and the branch deleted.
    wc = pygit2.Repository(str(work))
    wc.remotes["origin"].fetch([f"+{ref}:{ref}"])
    wc.references["refs/heads/main"].set_target(tip)
    _push_main(work)
    code, _out, err = _check(work, kind, server, "--log-format", "json")
    assert f"fix {noun} for {CLUSTER}: base already fixed; closed {sigil}" in err, err
    assert _fix_branches(bare) == {}
    assert {(a["audit"], a["object"].split(f" {sigil}")[0]) for a in _audits(err)} >= {
        ("close", noun),
        ("delete", f"branch {ref.removeprefix('refs/heads/')}"),
    }
    [pull] = _pulls(kind, server)
    assert pull["state"] == "closed"
    number = pull["number"] if kind == "github" else pull["iid"]
    comments = server.comments[number] if kind == "github" else server.notes[("merge_requests", number)]
    [closing] = [c["body"] for c in comments if "needs no kai-gitops edit" in c["body"]]
    assert closing.endswith(f"Closing this {noun} and deleting its branch.")


def _words(kind: str) -> tuple[str, str]:
    """What each host calls a fix proposal and how it links one: on GitLab `#2` is an issue, `!2` a merge request."""
    return ("pull request", "#") if kind == "github" else ("merge request", "!")


def _number(kind: str, pull: dict[str, Any]) -> int:
    return int(pull["number"] if kind == "github" else pull["iid"])


def test_changed_findings_supersede_the_old_pull_request_in_the_hosts_words(
    tmp_path: Path, host: tuple[str, Any]
) -> None:
    """Every host-facing text of a fix proposal, on both hosts: the stderr lines, the body, the superseded note."""
    kind, server = host
    noun, sigil = _words(kind)
    other = "merge request" if kind == "github" else "pull request"
    work, bare = _demo(tmp_path)
    _push_main(work)
    _code, _out, err = _check(work, kind, server)
    [old_pull] = _pulls(kind, server)
    old_number = _number(kind, old_pull)
    assert f"fix {noun} for {CLUSTER} {sigil}{old_number}: http" in err and ": opened (pushed " in err, err
    [old] = _fix_branches(bare)
    from tests.support.helpers import commit_files

    text = (work / "clusters/lab/kai-values.yaml").read_text().replace("      quota: -1\n", "      quota: 5\n", 1)
    commit_files(work, {"clusters/lab/kai-values.yaml": text}, "lab: parent cpu quota 5")
    _push_main(work)
    _code, _out, err = _check(work, kind, server)
    [new] = _fix_branches(bare)
    assert new != old
    assert sorted(p["state"] for p in _pulls(kind, server)) == ["closed", "open" if kind == "github" else "opened"]
    [new_pull] = [p for p in _pulls(kind, server) if p["state"] != "closed"]
    new_number = _number(kind, new_pull)
    assert f"fix {noun} for {CLUSTER} {sigil}{new_number}: http" in err and ": opened (pushed " in err, err
    assert f"; closed {sigil}{old_number}" in err, err
    comments = server.comments[old_number] if kind == "github" else server.notes[("merge_requests", old_number)]
    assert [c["body"] for c in comments] == [f"Superseded by {sigil}{new_number}: the findings changed."]
    body = new_pull.get("body") or new_pull.get("description") or ""
    assert f"This {noun} changes only the lines below" in body and f"kai-gitops keeps this {noun} current" in body
    assert other not in body and other not in err, err


@pytest.mark.skipif(http_backend() is None, reason="git http-backend is not installed")
def test_https_token_push_through_git_http_backend(tmp_path: Path, server: GitHubStandIn) -> None:
    root = tmp_path / "srv"
    root.mkdir()
    with git_http_server(root, "x-access-token", PUSH_TOKEN) as http:
        work, _ = _demo(tmp_path, f"{http.url}/demo.git")
        bare = root / "demo.git"
        pygit2.init_repository(str(bare), bare=True, initial_head="main")
        pygit2.Repository(str(work)).remotes.create("seed", str(bare)).push(["refs/heads/main:refs/heads/main"])

        code, out, err = _check(work, "github", server, env={"KAI_GITOPS_GIT_TOKEN": "wrong-token"})
        line = assert_one_line_error(code, out, err, "refused the credentials", "KAI_GITOPS_GIT_TOKEN")
        assert "wrong-token" not in line and not server.pulls  # nothing proposed after a failed push

        code, out, err = _check(work, "github", server, env={"KAI_GITOPS_GIT_TOKEN": PUSH_TOKEN})
        assert code == 2 and "opened (pushed" in err, err
        assert len(_fix_branches(bare)) == 1
        assert any(method == "POST" and "git-receive-pack" in path and ok for method, path, ok in http.requests)
        assert all(PUSH_TOKEN not in path for _m, path, _ok in http.requests)  # never in a URL
        assert PUSH_TOKEN not in out + err


SECRETS = [
    "hunter2-Pa55word-planted",
    "https://admin:s3cr3tpw@registry.example.com/v2",
    "AKIAZZZZabcdefghijklmnopqrstuvwxyz0123456789ABCD",
]


def test_no_release_value_reaches_the_commit_message_or_the_pull_request(tmp_path: Path, server: GitHubStandIn) -> None:
    work, bare = _demo(tmp_path)
    from tests.support.helpers import commit_files

    values = (work / "clusters/lab/kai-values.yaml").read_text()
    planted = values.replace(
        "scheduler:\n",
        f"global:\n  password: {SECRETS[0]}\n  registry: {SECRETS[1]}\n"
        f"  blob: {SECRETS[2]}\nscheduler:\n  token: {SECRETS[0]}\n",
        1,
    )
    commit_files(work, {"clusters/lab/kai-values.yaml": planted}, "plant credentials")
    _push_main(work)
    code, out, err = _check(work, "github", server)
    assert code == 2 and "opened" in err, err
    [tip] = _fix_branches(bare).values()
    message = pygit2.Repository(str(bare)).get(tip).message
    sent = b"\n".join(r.body for r in server.requests if r.body).decode()
    for secret in SECRETS:
        assert secret not in message and secret not in sent and secret not in out + err


def test_fix_git_refuses_the_working_tree(tmp_path: Path, server: GitHubStandIn) -> None:
    work, _ = _demo(tmp_path)
    code, out, err = _check(work, "github", server, "--worktree")
    assert_one_line_error(code, out, err, "--fix-git needs committed files")


def test_own_branches_never_claim_another_clusters() -> None:
    heads = {
        "kai-gitops/fix/prod-0123abcd": "1",
        "kai-gitops/fix/prod-addon-0123abcd": "2",
        "kai-gitops/fix/prod-notahash": "3",
    }
    assert own_branches(heads, "prod") == {"kai-gitops/fix/prod-0123abcd": "1"}


def test_author_parsing() -> None:
    assert Author.parse("Ops Bot <ops@example.com>") == Author("Ops Bot", "ops@example.com")
    with pytest.raises(UserError, match="is not 'Name <email>'"):
        Author.parse("just-a-name")


def test_reconcile_fix_git_proposes_the_same_fix(tmp_path: Path, server: GitHubStandIn) -> None:
    from tests.support.helpers import DEMO_SNAPSHOTS

    work, bare = _demo(tmp_path)
    _push_main(work)
    code, _out, err = run_cli(
        [
            "reconcile",
            "--repo",
            work,
            "--cluster",
            CLUSTER,
            "--snapshot",
            DEMO_SNAPSHOTS / "lab-standalone.yaml",
            "--fix-git",
            "--git-author",
            "Ops Bot <ops@example.com>",
            *_host_args("github", server),
        ],
        env={"GITHUB_TOKEN": HOST_TOKEN},
    )
    assert code == 2 and "opened (pushed" in err, err
    [tip] = _fix_branches(bare).values()
    author = pygit2.Repository(str(bare)).get(tip).author
    assert (author.name, author.email) == ("Ops Bot", "ops@example.com")
    [pull] = server.pulls.values()
    assert "`kai-gitops reconcile`" in pull["body"]


def test_ssh_key_credentials_are_offered_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No SSH server can run here; what libgit2 is handed is checked instead (the agent path too)."""
    from pygit2.enums import CredentialType

    from reconciler.sources.git import git_callbacks

    key = tmp_path / "deploy_key"
    key.write_text("not a real key")
    (tmp_path / "deploy_key.pub").write_text("ssh-ed25519 AAAA test")
    monkeypatch.setenv("KAI_GITOPS_GIT_SSH_PASSPHRASE", "pp")
    callbacks = git_callbacks(str(key))
    offered = callbacks.credentials("ssh://git@git.example.com/acme/gitops.git", "git", CredentialType.SSH_KEY)
    assert type(offered).__name__ == "Keypair"
    assert offered.credential_tuple == ("git", str(key) + ".pub", str(key), "pp")
    with pytest.raises(UserError, match="refused the credentials") as refused:
        callbacks.credentials("ssh://git@git.example.com/acme/gitops.git", "git", CredentialType.SSH_KEY)
    assert "--git-ssh-key" in refused.value.line()
    agent = git_callbacks().credentials("git@git.example.com:acme/gitops.git", None, CredentialType.SSH_KEY)
    assert type(agent).__name__ == "KeypairFromAgent"


def test_dry_run_needs_no_remote_and_no_host(tmp_path: Path) -> None:
    work = tmp_path / "work"
    load_demo_builder().build_repo(work)  # no remote at all, no token
    code, _out, err = run_cli(["check", "--repo", work, "--cluster", CLUSTER, "--fix-git-dry-run"])
    assert code == 2, err
    assert f"fix pull request for {CLUSTER}: would push kai-gitops/fix/{CLUSTER}-" in err
    assert "+  placementStrategy: binpack" in err
    assert "  plugins:" not in err  # changed lines only, as in the PR body
    assert not [r for r in pygit2.Repository(str(work)).references if "kai-gitops/fix" in r]


def test_a_dry_run_for_a_gitlab_remote_speaks_of_a_merge_request(tmp_path: Path) -> None:
    work, _bare = _demo(tmp_path, "https://gitlab.example.com/acme/gitops.git")
    code, _out, err = run_cli(["check", "--repo", work, "--cluster", CLUSTER, "--fix-git-dry-run"])
    assert code == 2, err
    assert f"fix merge request for {CLUSTER}: would push kai-gitops/fix/{CLUSTER}-" in err, err
    assert "pull request" not in err, err


def test_another_clone_sees_the_same_fix_and_a_moved_base_rebuilds_it(tmp_path: Path, server: GitHubStandIn) -> None:
    from tests.support.helpers import commit_files

    work, bare = _demo(tmp_path)
    _push_main(work)
    _check(work, "github", server)
    [first] = _fix_branches(bare).values()
    clone = tmp_path / "clone"  # e.g. the CronJob's own checkout: the branch tip is fetched, not pushed
    pygit2.clone_repository(file_url(bare), str(clone))
    _code, _out, err = _check(clone, "github", server)
    assert "unchanged (branch unchanged" in err, err
    assert list(_fix_branches(bare).values()) == [first]

    commit_files(clone, {"README.md": "unrelated\n"}, "docs")  # the base moves, the fix is still needed
    pygit2.Repository(str(clone)).remotes["origin"].push(["refs/heads/main:refs/heads/main"])
    _code, _out, err = _check(clone, "github", server)
    assert "updated (pushed" in err, err
    [second] = _fix_branches(bare).values()
    repo = pygit2.Repository(str(bare))
    assert second != first and [str(p) for p in repo.get(second).parent_ids] == [
        str(repo.references["refs/heads/main"].target)
    ]
    assert len(server.pulls) == 1


def test_a_failed_pull_request_takes_its_branch_back_and_a_closed_one_is_not_reopened(
    tmp_path: Path, server: GitHubStandIn
) -> None:
    from tests.support.githost._common import Fault

    work, bare = _demo(tmp_path)
    _push_main(work)
    server.inject(
        Fault(
            422,
            body={"message": "Validation Failed", "documentation_url": "https://docs.github.com"},
            method="POST",
            path_contains="/pulls",
        )
    )
    code, out, err = _check(work, "github", server)
    assert_one_line_error(code, out, err, "422")
    assert _fix_branches(bare) == {}  # pushed, then taken back: nothing half-proposed
    _code, _out, err = _check(work, "github", server)
    assert "opened (pushed" in err, err

    [pull] = server.pulls.values()  # a person closes it
    pull["state"] = "closed"
    server.issues[pull["number"]]["state"] = "closed"
    _code, _out, err = _check(work, "github", server)
    assert "closed by a person; not reopened" in err, err
    from tests.support.helpers import commit_files

    commit_files(work, {"README.md": "unrelated\n"}, "docs")  # the base moves: still declined
    _push_main(work)
    tips = _fix_branches(bare)
    _code, _out, err = _check(work, "github", server)
    assert "closed by a person; not reopened" in err, err
    assert len(server.pulls) == 1 and _fix_branches(bare) == tips


@pytest.mark.skipif(http_backend() is None, reason="git http-backend is not installed")
def test_a_private_https_repository_is_read_with_the_token(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "srv"
    root.mkdir()
    work = tmp_path / "work"
    load_demo_builder().build_repo(work)
    pygit2.clone_repository(str(work), str(root / "demo.git"), bare=True)
    with git_http_server(root, "x-access-token", PUSH_TOKEN) as http:
        url = f"{http.url}/demo.git"
        args = ["check", "--repo", url, "--cluster", CLUSTER]
        code, out, err = run_cli(args, env={"KAI_GITOPS_GIT_TOKEN": "nope"})
        assert_one_line_error(code, out, err, "refused the credentials")
        code, out, err = run_cli(args, env={"KAI_GITOPS_GIT_TOKEN": PUSH_TOKEN})
        assert code == 2 and "KAI-V-001" in out, err


def test_a_pull_request_another_run_opened_meanwhile_is_taken_as_ours(tmp_path: Path) -> None:
    """Two CronJob runs at once: the loser's create fails (422), and it must not delete the winner's branch."""
    from reconciler.app.settings import GitSettings, RunSettings
    from reconciler.gitfix.branch import FixBranches
    from reconciler.gitfix.plan import plan_fix
    from reconciler.gitfix.pull_request import FixContext, fix_marker, propose_fix
    from reconciler.githost.base import HostPull, HostSettings

    work, bare = _demo(tmp_path)
    _push_main(work)
    from reconciler.app import pipeline

    report = pipeline.run_check(RunSettings(GitSettings(str(work)), cluster=CLUSTER))
    repo = pygit2.Repository(str(work))
    plan = plan_fix(CLUSTER, report.clusters[0].findings, lambda rel: (work / rel).read_bytes())
    winner = HostPull(7, "t", fix_marker(CLUSTER), "open", (), "https://x/7", plan.branch, "main")

    class RacingHost:
        """The other run opens its PR between our push and our create."""

        settings = HostSettings("github", "https://api.github.com", "acme/gitops", HOST_TOKEN)
        other_run_done = False

        def find_pull(self, marker: str, head: str) -> HostPull | None:
            return winner if self.other_run_done and marker == fix_marker(CLUSTER) else None

        def create_pull(self, *args: Any, **kwargs: Any) -> HostPull:
            self.other_run_done = True
            raise UserError("GitHub answered HTTP 422: A pull request already exists")

    ctx = FixContext("main", str(repo.head.target), Author.parse(None))
    outcome = propose_fix(RacingHost(), FixBranches(repo), plan, ctx)  # type: ignore[arg-type]
    assert outcome.action == "opened" and outcome.pull == winner
    assert list(_fix_branches(bare)) == [f"refs/heads/{plan.branch}"]


def test_a_fix_branch_someone_pushed_onto_is_never_force_pushed_over(tmp_path: Path, server: GitHubStandIn) -> None:
    work, bare = _demo(tmp_path)
    _push_main(work)
    _check(work, "github", server)
    [(ref, tip)] = _fix_branches(bare).items()
    repo = pygit2.Repository(str(bare))  # a reviewer adds a commit on the bot's branch
    person = pygit2.Signature("Reviewer", "reviewer@example.com")
    theirs = repo.create_commit(ref, person, person, "tweak", repo.get(tip).tree_id, [repo.get(tip).id])
    from tests.support.helpers import commit_files

    commit_files(work, {"README.md": "unrelated\n"}, "docs")  # the base moves: the tool would rebuild
    _push_main(work)
    _code, _out, err = _check(work, "github", server)
    assert "has commits by someone else; not rewritten" in err, err
    assert _fix_branches(bare) == {ref: str(theirs)}


def test_only_fix_branches_can_ever_be_deleted(tmp_path: Path) -> None:
    from reconciler.gitfix.branch import FixBranches

    work, bare = _demo(tmp_path)
    _push_main(work)
    branches = FixBranches(pygit2.Repository(str(work)))
    for name in ("main", "kai-gitops/other", "kai-gitops/fix/../../main"):
        with pytest.raises(ValueError, match="refusing to delete"):
            branches.delete(name)
    assert "main" in pygit2.Repository(str(bare)).branches.local


def test_a_set_token_the_server_cannot_take_is_not_called_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    from pygit2.enums import CredentialType

    from reconciler.sources.git import git_callbacks

    monkeypatch.setenv("KAI_GITOPS_GIT_TOKEN", "t0ken")
    with pytest.raises(UserError, match="cannot offer") as raised:
        git_callbacks().credentials("https://git.example.com/acme/gitops.git", None, CredentialType.DEFAULT)
    assert "none are set" not in raised.value.line() and "t0ken" not in raised.value.line()
    monkeypatch.delenv("KAI_GITOPS_GIT_TOKEN")
    with pytest.raises(UserError, match="none are set"):
        git_callbacks().credentials("https://git.example.com/acme/gitops.git", None, CredentialType.DEFAULT)


def test_a_fix_pull_request_someone_else_opened_is_never_rewritten_commented_or_closed(
    tmp_path: Path, server: GitHubStandIn
) -> None:
    work, bare = _demo(tmp_path)
    _push_main(work)
    _check(work, "github", server)
    [pull] = server.pulls.values()  # as if mallory had opened it from the tool's branch
    planted = f"<!-- kai-gitops:fix cluster={CLUSTER} -->\nplanted"
    pull["user"] = server.issues[pull["number"]]["user"] = server._user("mallory")
    pull["body"] = server.issues[pull["number"]]["body"] = planted
    [(ref, tip)] = _fix_branches(bare).items()
    wc = pygit2.Repository(str(work))  # the base gets the fix: kai-gitops would close its own PR
    wc.remotes["origin"].fetch([f"+{ref}:{ref}"])
    wc.references["refs/heads/main"].set_target(tip)
    _push_main(work)
    writes = len(_writes(server))
    code, _out, err = _check(work, "github", server, "--log-format", "text")
    assert code in (0, 2), err
    assert f"pull request {pull['html_url']} carries kai-gitops's marker but was opened by 'mallory'" in err, err
    assert (pull["state"], pull["body"], server.comments[pull["number"]]) == ("open", planted, [])
    assert len(_writes(server)) == writes


# What a Git host hands back (a URL) is quoted in the outcome line: it must neither drive the terminal, start a
# line of its own, nor carry a credential onto stderr.
HOSTILE_URL = "https://github.invalid/acme/gitops/pull/1\n::error::x\x1b]0;t\x07 https://u:hunter2hunter2@h"


def test_the_fix_outcome_line_shows_what_the_host_said_escaped_and_redacted(
    tmp_path: Path, server: GitHubStandIn
) -> None:
    work, _bare = _demo(tmp_path)
    _push_main(work)
    _check(work, "github", server)
    [pull] = server.pulls.values()
    pull["html_url"] = HOSTILE_URL
    _code, _out, err = _check(work, "github", server)
    [line] = [line for line in err.splitlines() if "fix pull request for" in line]
    assert "unchanged" in line and "pull/1 ::error::x\\x1b]0;t\\x07 https://<redacted>@h" in line, err
    assert not any(raw in err for raw in ("\x1b", "\x07", "\n::error", "hunter2")), err


@pytest.mark.parametrize("body", ["marked", "unmarked"])
def test_an_open_pull_request_someone_else_has_on_the_fix_branch_is_not_called_closed(
    tmp_path: Path, host: tuple[str, Any], body: str
) -> None:
    """Not "closed by a person": it is open, and not the tool's (another author, or no marker). Left alone."""
    kind, server = host
    work, _bare = _demo(tmp_path)
    _push_main(work)
    _check(work, kind, server)
    [pull] = _pulls(kind, server)
    author = server._user("mallory") if kind == "github" else {"id": 666, "username": "mallory"}
    key = "user" if kind == "github" else "author"
    text = f"<!-- kai-gitops:fix cluster={CLUSTER} -->\nplanted" if body == "marked" else "my own take"
    pull[key] = author
    pull["body" if kind == "github" else "description"] = text
    if kind == "github":
        server.issues[pull["number"]].update(user=author, body=text)
    code, _out, err = _check(work, kind, server, "--log-format", "text")
    assert code == 2, err
    [line] = [line for line in err.splitlines() if f"fix {'pull' if kind == 'github' else 'merge'} request for" in line]
    url = pull["html_url" if kind == "github" else "web_url"]
    assert "is open but was opened by 'mallory', not by kai-gitops; left as it is" in line, err
    assert url in line and "closed by a person" not in err, err


def test_dry_run_names_the_errors_no_edit_fixes_instead_of_saying_none_is_needed(tmp_path: Path) -> None:
    from tests.support.helpers import make_repo, template_files

    files = template_files()
    files["clusters/lab/queues.yaml"] = (files["clusters/lab/queues.yaml"] or "") + "".join(
        f"---\napiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: {name}\nspec:\n"
        f"  parentQueue: {parent}\n"
        for name, parent in (("team-x", "team-y"), ("team-y", "team-x"))
    )  # a cycle: only a person can break it
    repo, _ = make_repo(tmp_path, files)
    code, _out, err = run_cli(["check", "--repo", repo, "--fix-git-dry-run"])
    assert code == 2, err
    assert "fix pull request for lab-standalone: none possible (1 error(s) with no automatic fix) [dry run]" in err
    assert "no automatic fix: KAI-Q-023 at clusters/lab/queues.yaml:" in err and "parentQueue cycle" in err
    assert "fix pull request for prod-addon: none needed (Git needs no edit) [dry run]" in err
