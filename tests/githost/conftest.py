"""Fixtures for the Git host tests: both stand-ins on real HTTP, hosts wired to them, simulated waiting."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from reconciler.githost.base import HostSettings
from reconciler.githost.github import GitHubHost
from reconciler.githost.gitlab import GitLabHost
from reconciler.githost.retry import RetryPolicy
from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn

TOKEN = "ghp_Tok3nValueThatMustNeverBeShown0123456789"


@dataclass
class FakeTime:
    """Sleeping advances a clock instead of the test: rate-limit waits cost nothing and are recorded."""

    now: float = 1_800_000_000.0
    slept: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds

    def clock(self) -> float:
        return self.now


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


@pytest.fixture(params=["", "/api/v3"], ids=["github.com", "enterprise"])
def github(request: pytest.FixtureRequest) -> Iterator[GitHubStandIn]:
    server = GitHubStandIn(prefix=request.param, token=TOKEN).start()
    yield server
    server.stop()
    server.assert_clean()


@pytest.fixture(params=["", "/gitlab"], ids=["gitlab.com", "self-managed"])
def gitlab(request: pytest.FixtureRequest) -> Iterator[GitLabStandIn]:
    server = GitLabStandIn("acme/platform/gitops", prefix=request.param, token=TOKEN).start()
    yield server
    server.stop()
    server.assert_clean()


def github_host(server: GitHubStandIn, fake: FakeTime | None = None, **settings: Any) -> GitHubHost:
    config = HostSettings("github", server.url, server.full_name, TOKEN, **settings)
    policy = RetryPolicy(config, "GitHub", sleep=fake.sleep, clock=fake.clock) if fake else None
    return GitHubHost(config, policy=policy, write_interval=0)


def gitlab_host(server: GitLabStandIn, fake: FakeTime | None = None, **settings: Any) -> GitLabHost:
    config = HostSettings("gitlab", server.instance_url, server.path, TOKEN, **settings)
    policy = RetryPolicy(config, "GitLab", sleep=fake.sleep, clock=fake.clock) if fake else None
    return GitLabHost(config, policy=policy)


@pytest.fixture(params=["github", "gitlab"])
def any_host(request: pytest.FixtureRequest, fake_time: FakeTime) -> Iterator[tuple[Any, Any]]:
    """(stand-in, host) for each host kind, at its public base URL."""
    if request.param == "github":
        server: Any = GitHubStandIn(token=TOKEN).start()
        host: Any = github_host(server, fake_time)
    else:
        server = GitLabStandIn("acme/platform/gitops", token=TOKEN).start()
        host = gitlab_host(server, fake_time)
    yield server, host
    server.stop()
    server.assert_clean()
