"""Shared helpers of tests/githost/conftest.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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


def github_host(server: GitHubStandIn, fake: FakeTime | None = None, **settings: Any) -> GitHubHost:
    config = HostSettings("github", server.url, server.full_name, TOKEN, **settings)
    policy = RetryPolicy(config, "GitHub", sleep=fake.sleep, clock=fake.clock) if fake else None
    return GitHubHost(config, policy=policy, write_interval=0)


def gitlab_host(server: GitLabStandIn, fake: FakeTime | None = None, **settings: Any) -> GitLabHost:
    config = HostSettings("gitlab", server.instance_url, server.path, TOKEN, **settings)
    policy = RetryPolicy(config, "GitLab", sleep=fake.sleep, clock=fake.clock) if fake else None
    return GitLabHost(config, policy=policy)
