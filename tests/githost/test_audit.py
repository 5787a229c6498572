"""Every Git-host write made through `open_host` leaves one JSON audit line; reads leave none; no token."""

from __future__ import annotations

import io
from typing import Any

import orjson
import pytest

from reconciler.core.errors import UserError
from reconciler.githost import HostSettings, open_host
from reconciler.telemetry.logs import logging_to_stderr
from tests.support.githost_shared import TOKEN

MARKER = "<!-- kai-gitops:drift cluster=prod -->"


def _host(server: Any) -> Any:
    if hasattr(server, "instance_url"):
        return open_host(HostSettings("gitlab", server.instance_url, server.path, TOKEN))
    return open_host(HostSettings("github", server.url, server.full_name, TOKEN))


def _audit_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    lines = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    return [line for line in lines if "audit" in line]


def test_each_issue_and_pull_write_is_one_audit_line(any_host: tuple[Any, Any]) -> None:
    server, _ = any_host
    host = _host(server)
    stream = io.StringIO()
    with logging_to_stderr("json", stream=stream):
        issue = host.create_issue("drift in prod", f"{MARKER}\nbody with {TOKEN}", ("kai-gitops",))
        host.update_issue(issue.number, body=f"{MARKER}\nnew body")
        host.comment_issue(issue.number, "still drifting")
        host.close_issue(issue.number)
        host.reopen_issue(issue.number)
        assert host.find_issue(MARKER, "kai-gitops") is not None  # a read: no audit line
        pull = host.create_pull("kai-gitops/fix-prod", "main", "fix prod", f"{MARKER}\nfix")
        host.update_pull(pull.number, title="fix prod (2)")
        host.comment_pull(pull.number, "updated")
        host.close_pull(pull.number)
    lines = _audit_lines(stream)
    # each host in its own words: a GitLab merge request is !N (#N links an issue there)
    pull_ref = f"pull request #{pull.number}" if host.settings.kind == "github" else f"merge request !{pull.number}"
    assert [(line["audit"], line["object"]) for line in lines] == [
        ("create", f"issue #{issue.number}"),
        ("update", f"issue #{issue.number}"),
        ("comment", f"issue #{issue.number}"),
        ("close", f"issue #{issue.number}"),
        ("reopen", f"issue #{issue.number}"),
        ("create", pull_ref),
        ("update", pull_ref),
        ("comment", pull_ref),
        ("close", pull_ref),
    ]
    assert all(line["repo"] == host.settings.repo and line["host"] == host.settings.kind for line in lines)
    assert lines[0]["title"] == "drift in prod" and len(lines[0]["bodySha256"]) == 64
    assert lines[5]["head"] == "kai-gitops/fix-prod" and lines[6]["title"] == "fix prod (2)"
    assert TOKEN not in stream.getvalue()


def test_a_failed_write_leaves_no_audit_line(any_host: tuple[Any, Any]) -> None:
    server, _ = any_host
    host = _host(server)
    stream = io.StringIO()
    with logging_to_stderr("json", stream=stream), pytest.raises(UserError):
        host.close_issue(4242)
    assert _audit_lines(stream) == []
