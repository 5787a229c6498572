"""A credential in a URL never shows, in whichever form the URL carries it: a token as the user name
(`https://TOKEN@host/…`, as GitHub documents it), a secret query parameter (`?private_token=…`,
`?apikey=…`), or a password holding a raw `@` (the userinfo ends at the authority's LAST `@`, as urllib3
splits it). Checked in the `--repo` errors, the report's `git.repo` (text and JSON), the clone cache's
config, the fix-branch push audit line, the `--opa-url` and `--metrics-push` messages and the saved plan's
server identity."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from reconciler.core.redact import REDACTED, redact_free_text, redact_text, url_without_userinfo
from tests.support.git_http import git_http_server, http_backend
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, load_demo_builder, run_cli
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.reconcile_support import Demo, demo_cluster

TOKEN = "ghp_TokenAsUserNeverShown0123456789"
QUERY_TOKEN = "glpat-QueryTokenNeverShown-987654"
PASSWORD_TAIL = "TailAfterTheAt-4242"
SNAPSHOT = DEMO_SNAPSHOTS / "prod-addon.yaml"


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"https://{TOKEN}@github.com/acme/gitops.git", TOKEN),
        (f"https://x:pw@{PASSWORD_TAIL}@git.example.com/r", PASSWORD_TAIL),
        (f"https://gitlab.example.com/api/v4/projects?private_token={QUERY_TOKEN}&per_page=2", QUERY_TOKEN),
        (f"http://opa:8181/v1?apikey={QUERY_TOKEN}", QUERY_TOKEN),
        (f"GET /v2?x=1&access_token={QUERY_TOKEN}#frag", QUERY_TOKEN),
        (f"Invalid header value b'Bearer {TOKEN}'", TOKEN),
        (f"Authorization: Basic {TOKEN}=", TOKEN),
        (f"NGC_API_KEY={QUERY_TOKEN} kai", QUERY_TOKEN),
    ],
)
def test_every_url_credential_form_is_masked(text: str, secret: str) -> None:
    for masked in (redact_text(text), redact_free_text(text)):
        assert secret not in masked and REDACTED in masked, masked
        assert redact_text(masked) == masked  # masking twice changes nothing


def test_what_is_not_a_credential_stays() -> None:
    for text in (
        "ssh://git@github.com/acme/gitops.git",
        "https://github.com/acme/gitops?ref=main",
        "mail ops@example.com",
        "Basic",
        "tokenSecretRef=kai-token",
        "https://@host/x",
        "the bearer token of kubeconfig user 'u1' is empty",
        "Basic settings",
    ):
        assert redact_text(text) == text


def test_the_endpoint_drops_the_userinfo_up_to_its_last_at() -> None:
    assert url_without_userinfo(f"https://admin:pw@{PASSWORD_TAIL}@10.0.0.1:6443/p") == "https://10.0.0.1:6443/p"
    assert url_without_userinfo(f"https://{TOKEN}@h:6443") == "https://h:6443"


@pytest.mark.parametrize(
    "repo",
    [
        f"http://{TOKEN}@127.0.0.1:9/acme/gitops.git",
        f"http://127.0.0.1:9/acme/gitops.git?private_token={TOKEN}",
        f"http://bot:pw@{TOKEN}@127.0.0.1:9/acme/gitops.git",
    ],
    ids=["token-as-user", "query-token", "at-in-password"],
)
@pytest.mark.parametrize("log_format", ["text", "json"])
def test_a_repo_url_credential_is_in_no_error(tmp_path: Path, repo: str, log_format: str) -> None:
    code, out, err = run_cli(
        ["diff", "--repo", repo, "--snapshot", SNAPSHOT, "--log-format", log_format],
        env={"KAI_GITOPS_CACHE": str(tmp_path)},
    )
    assert code == 1 and "cannot clone or fetch" in err, err
    assert "127.0.0.1:9/acme/gitops.git" in err  # the URL is still named, without its credential
    assert TOKEN not in out + err


@pytest.fixture
def served_repo(tmp_path: Path) -> Iterator[str]:
    """The demo repository behind smart HTTP that accepts only the token given as the user name."""
    if http_backend() is None:
        pytest.skip("git http-backend is not installed")
    work, root = tmp_path / "work", tmp_path / "srv"
    load_demo_builder().build_repo(work)
    root.mkdir()
    pygit2.clone_repository(str(work), str(root / "demo.git"), bare=True)
    with git_http_server(root, TOKEN, "") as http:
        yield http.url.replace("://", f"://{TOKEN}@", 1) + "/demo.git"


def test_a_token_as_user_clone_url_is_in_no_report_and_not_in_the_clone_cache(tmp_path: Path, served_repo: str) -> None:
    cache = tmp_path / "cache"
    env = {"KAI_GITOPS_CACHE": str(cache)}
    args = ["check", "--repo", served_repo, "--cluster", "lab-standalone"]
    code, as_json, err = run_cli([*args, "-o", "json", "--log-format", "json"], env=env)
    assert code in (0, 2), err
    assert json.loads(as_json)["clusters"][0]["git"]["repo"] == served_repo.replace(TOKEN, REDACTED)
    code, as_text, err2 = run_cli(args, env=env)  # the second run fetches into the cached clone
    assert code in (0, 2), err2
    [clone] = (cache / "repos").iterdir()
    config = (clone / "config").read_text()
    assert "127.0.0.1" in config and TOKEN not in config
    assert TOKEN not in as_json + err + as_text + err2


def test_a_query_token_of_a_clone_url_is_used_but_never_written_into_the_clone_cache(
    tmp_path: Path, served_repo: str
) -> None:
    """The cache's config and key hold the URL without its secret parameters; the fetch still sends them (an
    anonymous remote, in memory), and the other parameters stay."""
    cache, query_secret = tmp_path / "cache", "QUERYSECRET0123456789"
    url = f"{served_repo}?private_token={query_secret}&ref=main"
    args = ["check", "--repo", url, "--cluster", "lab-standalone", "-o", "json"]
    for _ in range(2):  # a fresh clone, then a fetch into the cached one
        code, out, err = run_cli(args, env={"KAI_GITOPS_CACHE": str(cache)})
        assert code in (0, 2), err
        assert query_secret not in out + err and TOKEN not in out + err
    [clone] = (cache / "repos").iterdir()
    config = (clone / "config").read_text()
    assert "/demo.git?ref=main" in config and query_secret not in config and TOKEN not in config
    assert pygit2.Repository(str(clone)).head.shorthand == "main"  # HEAD as a clone would set it


@pytest.mark.skipif(http_backend() is None, reason="git http-backend is not installed")
def test_the_fix_branch_push_audit_line_shows_no_token_of_the_remote_url(tmp_path: Path) -> None:
    from tests.support.gitfix_pull import HOST_TOKEN, PUSH_TOKEN, _demo
    from tests.support.githost.github import GitHubStandIn

    root = tmp_path / "srv"
    root.mkdir()
    host = GitHubStandIn(token=HOST_TOKEN).start()
    try:
        with git_http_server(root, "x-access-token", PUSH_TOKEN) as http:
            remote = http.url.replace("://", f"://{TOKEN}@", 1) + "/demo.git"
            work, _ = _demo(tmp_path, remote)
            bare = root / "demo.git"
            pygit2.init_repository(str(bare), bare=True, initial_head="main")
            pygit2.Repository(str(work)).remotes.create("seed", str(bare)).push(["refs/heads/main:refs/heads/main"])
            code, out, err = run_cli(
                [
                    "check",
                    "--repo",
                    work,
                    "--cluster",
                    "lab-standalone",
                    "--fix-git",
                    "--git-host",
                    "github",
                    "--git-host-url",
                    host.url,
                    "--git-host-repo",
                    "acme/gitops",
                    "--log-format",
                    "json",
                ],
                env={"GITHUB_TOKEN": HOST_TOKEN, "KAI_GITOPS_GIT_TOKEN": PUSH_TOKEN},
            )
    finally:
        host.stop()
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    pushes = [entry for entry in lines if entry.get("audit") == "push"]
    assert code == 2 and pushes, err
    assert pushes[0]["url"] == remote.replace(TOKEN, REDACTED)
    assert TOKEN not in out + err


@pytest.mark.parametrize(
    "url", [f"ftp://{TOKEN}@opa.example", f"http://{TOKEN}@127.0.0.1:9", f"http://127.0.0.1:9/?apikey={TOKEN}"]
)
def test_an_opa_url_credential_is_in_no_message(url: str) -> None:
    code, out, err = run_cli(["doctor", "--snapshot", SNAPSHOT, "--opa-url", url])
    line = assert_one_line_error(code, out, err, "opa")
    assert TOKEN not in line


@pytest.mark.parametrize(
    ("url", "needle"),
    [
        (f"http://{TOKEN}@127.0.0.1:9", "carries credentials"),
        (f"ftp://{TOKEN}@gateway", "needs an http(s) URL"),
        (f"http://127.0.0.1:9/?apikey={TOKEN}", "pushing metrics"),
    ],
)
def test_a_metrics_push_url_credential_is_in_no_message(demo_repo: Path, url: str, needle: str) -> None:
    code, out, err = run_cli(
        ["diff", "--repo", demo_repo, "--cluster", "prod-addon", "--snapshot", SNAPSHOT, "--metrics-push", url]
    )
    assert code == 2 and "metrics not written: " in err and needle in err, err  # a warning: the run stands
    assert TOKEN not in out + err


@pytest.fixture
def at_in_password(tmp_path: Path) -> Iterator[Demo]:
    for cluster in demo_cluster(tmp_path):
        write_kubeconfig(
            cluster.kubeconfig, "prod", cluster.server.url.replace("://", f"://admin:pw@{PASSWORD_TAIL}@", 1)
        )
        yield cluster


def test_a_raw_at_in_the_server_password_leaves_no_tail_in_the_plan_or_the_audit(at_in_password: Demo) -> None:
    demo = at_in_password
    plan, audit = demo.tmp / "plan.json", demo.tmp / "audit.jsonl"
    _code, text, err = demo.reconcile("--plan-out", plan)
    assert json.loads(plan.read_text())["clusterIdentity"]["server"] == demo.server.url
    code, applied, err2 = demo.reconcile("--plan", plan, "--apply", "--audit-log", audit)
    assert code == 2, applied + err2
    assert {json.loads(line)["server"] for line in audit.read_text().splitlines()} == {demo.server.url}
    assert PASSWORD_TAIL not in text + err + applied + err2 + plan.read_text() + audit.read_text()
