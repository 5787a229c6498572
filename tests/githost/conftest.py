"""Fixtures for the Git host tests: both stand-ins on real HTTP, hosts wired to them, simulated waiting."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn
from tests.support.githost_shared import TOKEN, FakeTime, github_host, gitlab_host


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
