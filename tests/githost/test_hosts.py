"""The Git host clients against the stand-ins: issues, pulls/MRs, pagination, rate limits, 5xx, auth."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.core.errors import UserError
from tests.support.githost._common import Fault
from tests.support.githost.github import GitHubStandIn
from tests.support.githost.gitlab import GitLabStandIn
from tests.support.githost_shared import TOKEN, FakeTime, github_host, gitlab_host

MARKER = "<!-- kai-gitops:drift cluster=prod -->"


def _writes(server: Any) -> list[str]:
    return [f"{r.method} {r.path}" for r in server.requests if r.method in ("POST", "PATCH", "PUT")]


def _issue_round_trip(host: Any) -> None:
    assert host.find_issue(MARKER, "kai-gitops") is None
    decoy = host.create_issue(
        "kai-gitops: drift in cluster prod", "a human's issue with the same title", ("kai-gitops",)
    )
    unlabelled = host.create_issue("other", f"{MARKER}\nbut no label", ())
    quoted = host.create_issue("quoted", f"a comment quoting it: {MARKER}\n```\n{MARKER}\n```", ("kai-gitops",))
    issue = host.create_issue("kai-gitops: drift in cluster prod", f"{MARKER}\nbody", ("kai-gitops", "ops"), ("alice",))
    assert issue.state == "open" and issue.labels == ("kai-gitops", "ops")
    host.update_issue(issue.number, title="Prod drift (renamed by a human)")
    found = host.find_issue(MARKER, "kai-gitops")
    assert found is not None and found.number == issue.number and found.title == "Prod drift (renamed by a human)"
    assert found.number not in (decoy.number, unlabelled.number, quoted.number)
    host.comment_issue(issue.number, "first")
    host.comment_issue(issue.number, "second")
    assert [c.body for c in host.issue_comments(issue.number)] == ["first", "second"]
    assert host.close_issue(issue.number).state == "closed"
    closed = host.find_issue(MARKER, "kai-gitops")
    assert closed is not None and closed.state == "closed"  # closed issues are found too: they reopen
    assert host.reopen_issue(issue.number).state == "open"
    assert host.update_issue(issue.number, body=f"{MARKER}\nnew").body == f"{MARKER}\nnew"


def test_github_issues_round_trip(github: GitHubStandIn) -> None:
    _issue_round_trip(github_host(github))
    assert github.requests[0].headers["authorization"] == f"token {TOKEN}"


def test_gitlab_issues_round_trip(gitlab: GitLabStandIn) -> None:
    _issue_round_trip(gitlab_host(gitlab))
    assert all(
        r.path.startswith("/projects/acme%2Fplatform%2Fgitops")
        or r.path.startswith("/projects/42")
        or r.path in ("/users", "/user")
        for r in gitlab.requests
    )


def _pull_round_trip(host: Any) -> None:
    head, marker = "kai-gitops/fix/prod-0123abcd", "<!-- kai-gitops:fix cluster=prod -->"
    assert host.find_pull(marker, head) is None
    pull = host.create_pull(head, "main", "Fix prod", f"{marker}\nfixes", ("kai-gitops",), ("bob",))
    assert (pull.head, pull.base, pull.state, pull.labels) == (head, "main", "open", ("kai-gitops",))
    other = host.create_pull("feature/x", "main", "unrelated", "no marker here")
    found = host.find_pull(marker, head)
    assert found is not None and found.number == pull.number != other.number
    assert host.find_pull(marker, "feature/x") is None
    assert host.update_pull(pull.number, title="Fix prod (2)", body=f"{marker}\nv2").body == f"{marker}\nv2"
    assert host.comment_pull(pull.number, "base already has the fix").body == "base already has the fix"
    assert host.close_pull(pull.number).state == "closed"
    assert host.find_pull(marker, head) is None  # only open ones are candidates


def test_github_pulls_round_trip(github: GitHubStandIn) -> None:
    _pull_round_trip(github_host(github))


def test_gitlab_merge_requests_round_trip(gitlab: GitLabStandIn) -> None:
    _pull_round_trip(gitlab_host(gitlab))


def test_second_pull_from_the_same_branch_is_one_clear_error(any_host: tuple[Any, Any]) -> None:
    _, host = any_host
    host.create_pull("kai-gitops/fix/a", "main", "t", "b")
    with pytest.raises(UserError) as caught:
        host.create_pull("kai-gitops/fix/a", "main", "t", "b")
    assert "already exists" in caught.value.line() or "HTTP 422" in caught.value.line()


def test_listing_follows_pagination(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    target = host.create_issue("old", f"{MARKER}", ("kai-gitops",))
    for i in range(120):  # seeded inside the stand-in: 120 creates over HTTP would only slow the test down
        server.seed_issue(f"noise {i}", "x", ["kai-gitops"])
    server.requests.clear()
    found = host.find_issue(MARKER, "kai-gitops")
    assert found is not None and found.number == target.number
    pages = [r.query.get("page", "1") for r in server.requests if r.method == "GET" and r.path.endswith("/issues")]
    assert pages == ["1", "2"]


def test_marker_counts_only_on_its_own_line_outside_code() -> None:
    from reconciler.githost.base import has_marker

    assert has_marker(f"{MARKER}\n## title", MARKER)
    assert has_marker(f"intro\n\n  {MARKER}  \n", MARKER)
    assert not has_marker(f"see {MARKER} here", MARKER)
    assert not has_marker(f"```sh\n{MARKER}\n```", MARKER)
    assert not has_marker(f"````\n```\n{MARKER}\n````", MARKER)  # a shorter fence does not close it
    assert has_marker(f"```\ncode\n```\n{MARKER}", MARKER)
    assert not has_marker(f"~~~\n{MARKER}\n~~~", MARKER)


# -- rate limits and server errors -------------------------------------------------------------------------


def test_github_primary_rate_limit_is_waited_out(github: GitHubStandIn, fake_time: FakeTime) -> None:
    host = github_host(github, fake_time)
    reset = int(fake_time.now) + 42
    github.inject(
        Fault(
            403,
            {"X-RateLimit-Remaining": "0", "X-RateLimit-Limit": "5000", "X-RateLimit-Reset": str(reset)},
            {
                "message": "API rate limit exceeded for user ID 7.",
                "documentation_url": "https://docs.github.com/rest/overview/rate-limits",
            },
        )
    )
    assert host.find_issue(MARKER, "kai-gitops") is None
    assert fake_time.slept == [43.0]


def test_github_secondary_rate_limit_waits_a_minute(github: GitHubStandIn, fake_time: FakeTime) -> None:
    host = github_host(github, fake_time)
    github.inject(
        Fault(
            403,
            {},
            {"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."},
            method="POST",
        )
    )
    assert host.create_issue("t", MARKER, ("kai-gitops",)).number == 1
    assert fake_time.slept == [60.0]
    assert len(github.issues) == 1  # a limited request was not processed: retrying cannot duplicate


def test_retry_after_is_honoured(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    server.inject(Fault(429, {"Retry-After": "7"}, {"message": "Too Many Requests"}, times=2))
    assert host.find_issue(MARKER, "kai-gitops") is None
    assert fake_time.slept == [7.0, 7.0]


def test_gitlab_ratelimit_reset_header(gitlab: GitLabStandIn, fake_time: FakeTime) -> None:
    host = gitlab_host(gitlab, fake_time)
    gitlab.inject(
        Fault(
            429,
            {"RateLimit-Reset": str(int(fake_time.now) + 9), "RateLimit-Remaining": "0"},
            {"message": "Retry later"},
        )
    )
    assert host.find_issue(MARKER, "kai-gitops") is None
    assert fake_time.slept == [10.0]


def test_rate_limit_beyond_the_bound_is_one_clear_line(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    server.inject(Fault(429, {"Retry-After": "3600"}, {"message": "Too Many Requests"}))
    with pytest.raises(UserError) as caught:
        host.find_issue(MARKER, "kai-gitops")
    line = caught.value.line()
    assert "rate limit" in line and "beyond the 300s this run may wait" in line and "\n" not in line
    assert fake_time.slept == []  # it does not sleep first and fail later


def test_waits_add_up_against_one_bound(github: GitHubStandIn, fake_time: FakeTime) -> None:
    host = github_host(github, fake_time, rate_limit_wait=20)
    github.inject(Fault(429, {"Retry-After": "8"}, {"message": "slow down"}, times=3))
    with pytest.raises(UserError, match="beyond the 20s"):
        host.find_issue(MARKER, "kai-gitops")
    assert fake_time.slept == [8.0, 8.0]


def test_5xx_is_retried_with_backoff(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    server.inject(Fault(502, {}, {"message": "Bad Gateway"}, times=2, method="GET"))
    assert host.find_issue(MARKER, "kai-gitops") is None
    assert fake_time.slept == [1.0, 2.0]


def test_5xx_beyond_the_retries_is_one_clear_line(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    server.inject(Fault(503, {}, {"message": "Service Unavailable"}, times=10))
    with pytest.raises(UserError) as caught:
        host.find_issue(MARKER, "kai-gitops")
    assert "HTTP 503 (4 attempts)" in caught.value.line()
    assert len(fake_time.slept) == 3


def test_5xx_on_create_is_not_retried(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    host.find_issue(MARKER, "kai-gitops")
    server.inject(Fault(500, {}, {"message": "boom"}, method="POST"))
    with pytest.raises(UserError) as caught:
        host.create_issue("t", MARKER, ("kai-gitops",))
    assert "not retried because it may have been applied" in caught.value.line()
    assert fake_time.slept == []


def test_bad_token_is_one_line_without_the_token(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    server.token = "another-token"
    with pytest.raises(UserError) as caught:
        host.find_issue(MARKER, "kai-gitops")
    line = caught.value.line()
    assert "rejected the token (HTTP 401)" in line and TOKEN not in line


def test_wrong_repository_says_so(github: GitHubStandIn) -> None:
    host = github_host(github)
    host.settings = host.settings.__class__("github", github.url, "acme/missing", TOKEN)
    with pytest.raises(UserError, match="'acme/missing' right"):
        type(host)(host.settings, write_interval=0).find_issue(MARKER, "kai-gitops")


def test_stand_in_refuses_what_github_does_not_describe(github: GitHubStandIn) -> None:
    """The stand-in is strict: a request body outside GitHub's description is a recorded violation."""
    import requests

    response = requests.post(
        f"{github.repo_url}/issues",
        json={"title": 5, "labels": "not-a-list"},
        headers={"Authorization": f"token {TOKEN}"},
        timeout=10,
    )
    assert response.status_code == 400
    assert github.problems and "violates GitHub's description" in github.problems[0]
    github.problems.clear()


def test_github_stand_in_serves_search_and_labels_as_described(github: GitHubStandIn) -> None:
    """Search and labels are not on kai-gitops's path (see github.py) but PyGithub reaches them; the
    stand-in's answers must still match GitHub's description."""
    host = github_host(github)
    host.create_issue("a", f"{MARKER}\nx", ("kai-gitops",))
    host.create_issue("b", "other", ("kai-gitops",))
    client = host._client
    found = list(client.search_issues(f'repo:{github.full_name} label:kai-gitops is:issue "{MARKER}"'))
    assert [i.title for i in found] == ["a"]
    repo = client.get_repo(github.full_name)
    repo.create_label("drift", "ff0000")
    assert sorted(label.name for label in repo.get_labels()) == ["drift", "kai-gitops"]


def test_a_marked_pull_request_someone_else_opened_is_not_adopted(any_host: tuple[Any, Any]) -> None:
    """A person who can push to a fix branch can open a pull request from it with the marker: it is not the
    tool's to update, comment on or close."""
    server, host = any_host
    head, marker = "kai-gitops/fix/prod-0123abcd", "<!-- kai-gitops:fix cluster=prod -->"
    seed = server.seed_pull if hasattr(server, "seed_pull") else server.seed_merge_request
    seed(head, "main", "Fix prod", f"{marker}\nplanted", author="mallory")
    assert host.find_pull(marker, head) is None
    assert _writes(server) == []
