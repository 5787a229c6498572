"""Which host, API URL, repository and token a run uses: flags over `gitHost:` over the remote URL."""

from __future__ import annotations

import pytest

from reconciler.core.errors import UserError
from reconciler.githost.base import HostFlags, resolve_host_settings
from reconciler.model.config import GitHostConfig

ENV = {"GITHUB_TOKEN": "gh-token", "GITLAB_TOKEN": "gl-token"}


@pytest.mark.parametrize(
    ("remote", "kind", "api", "repo"),
    [
        ("https://github.com/acme/gitops.git", "github", "https://api.github.com", "acme/gitops"),
        ("git@github.com:acme/gitops.git", "github", "https://api.github.com", "acme/gitops"),
        ("ssh://git@github.com/acme/gitops", "github", "https://api.github.com", "acme/gitops"),
        ("https://x-access-token:s3cret@github.com/acme/gitops", "github", "https://api.github.com", "acme/gitops"),
        ("https://github.example.com/acme/gitops.git", "github", "https://github.example.com/api/v3", "acme/gitops"),
        ("https://gitlab.com/acme/platform/gitops.git", "gitlab", "https://gitlab.com", "acme/platform/gitops"),
        ("git@gitlab.example.com:acme/gitops.git", "gitlab", "https://gitlab.example.com", "acme/gitops"),
    ],
)
def test_inferred_from_the_remote(remote: str, kind: str, api: str, repo: str) -> None:
    settings = resolve_host_settings(remote, None, HostFlags(), ENV)
    assert (settings.kind, settings.api_url, settings.repo) == (kind, api, repo)
    assert settings.token == ENV[f"{kind.upper()}_TOKEN"]


def test_self_managed_gitlab_under_a_path_prefix() -> None:
    settings = resolve_host_settings(
        "https://example.com/gitlab/acme/gitops.git",
        None,
        HostFlags(host="gitlab", url="https://example.com/gitlab/"),
        ENV,
    )
    assert (settings.api_url, settings.repo) == ("https://example.com/gitlab", "acme/gitops")
    assert (
        settings.blob_url("abc", "envs/prod.yaml", 3)
        == "https://example.com/gitlab/acme/gitops/-/blob/abc/envs/prod.yaml#L3"
    )


def test_enterprise_links_point_at_the_web_host() -> None:
    settings = resolve_host_settings("https://ghe.corp/acme/gitops", None, HostFlags(host="github"), ENV)
    assert settings.blob_url("abc", "a b.yaml", 7) == "https://ghe.corp/acme/gitops/blob/abc/a%20b.yaml#L7"
    public = resolve_host_settings("git@github.com:acme/gitops.git", None, HostFlags(), ENV)
    assert public.blob_url("abc", "x.yaml") == "https://github.com/acme/gitops/blob/abc/x.yaml"


def test_flags_override_the_config_block_which_overrides_the_remote() -> None:
    block = GitHostConfig(
        host="gitlab",
        url="https://gitlab.corp",
        repo="team/gitops",
        labels=("drift", "kai"),
        assignees=("alice",),
        base_branch="develop",
    )
    settings = resolve_host_settings("https://github.com/acme/gitops", block, HostFlags(), ENV)
    assert (
        settings.kind,
        settings.api_url,
        settings.repo,
        settings.labels,
        settings.assignees,
        settings.base_branch,
    ) == ("gitlab", "https://gitlab.corp", "team/gitops", ("drift", "kai"), ("alice",), "develop")
    flagged = resolve_host_settings(
        "https://github.com/acme/gitops",
        block,
        HostFlags(host="github", url="https://ghe.corp/api/v3", repo="o/r", base_branch="main", rate_limit_wait=5),
        ENV,
    )
    assert (flagged.kind, flagged.api_url, flagged.repo, flagged.base_branch, flagged.rate_limit_wait) == (
        "github",
        "https://ghe.corp/api/v3",
        "o/r",
        "main",
        5,
    )


def test_the_kai_gitops_token_wins_over_the_generic_one() -> None:
    settings = resolve_host_settings(
        "https://github.com/a/b", None, HostFlags(), {**ENV, "KAI_GITOPS_GIT_HOST_TOKEN": "dedicated"}
    )
    assert settings.token == "dedicated"


def test_token_is_not_in_the_settings_repr() -> None:
    settings = resolve_host_settings("https://github.com/a/b", None, HostFlags(), ENV)
    assert "gh-token" not in repr(settings)
    assert settings.scrub("Authorization: token gh-token") == "Authorization: token <redacted>"


@pytest.mark.parametrize(
    ("remote", "flags", "env", "needle"),
    [
        ("https://github.com/a/b", HostFlags(), {}, "no github token: set $KAI_GITOPS_GIT_HOST_TOKEN or $GITHUB_TOKEN"),
        ("https://git.corp/a/b", HostFlags(), ENV, "cannot tell whether the Git host is GitHub or GitLab"),
        ("/srv/gitops", HostFlags(host="github"), ENV, "cannot tell which repository"),
        ("https://github.com/a/b/c", HostFlags(), ENV, "'a/b/c' is not a github repository path"),
        (None, HostFlags(host="gitlab", repo="single"), ENV, "'single' is not a gitlab repository path"),
    ],
)
def test_what_cannot_be_resolved_is_one_clear_error(
    remote: str | None, flags: HostFlags, env: dict[str, str], needle: str
) -> None:
    with pytest.raises(UserError) as caught:
        resolve_host_settings(remote, None, flags, env)
    assert needle in caught.value.line()


def test_bot_identities_come_from_kai_gitops_yaml() -> None:
    from reconciler.sources.repoconfig import parse_repo_config

    head = (
        b"apiVersion: kai-gitops/v1\nclusters:\n  - {name: prod, mode: addon, kaiChartVersion: v0.16.7, "
        b"environmentFile: env.yaml}\n"
    )
    config = parse_repo_config(head + b"gitHost:\n  botIdentities: ['my-app[bot]', renovate]\n")
    settings = resolve_host_settings("https://github.com/acme/gitops", config.git_host, HostFlags(), ENV)
    assert settings.bot_identities == ("my-app[bot]", "renovate")
    with pytest.raises(UserError, match="botIdentities"):
        parse_repo_config(head + b"gitHost:\n  botIdentities: ['a b']\n")
