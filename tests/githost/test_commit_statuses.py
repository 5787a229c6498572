"""Commit statuses, the rollout waves' reports: each host's client against its stand-in, whose statuses
endpoints are held to GitHub's published description and GitLab's documented attributes."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.model.rollout import apply_context
from tests.support.githost._common import Fault
from tests.support.githost_shared import FakeTime

SHA = "0123456789abcdef0123456789abcdef01234567"
OTHER = "89abcdef0123456789abcdef0123456789abcdef"


def test_a_status_written_is_read_back_with_the_host_time(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    server.status_clock = lambda: 1_800_000_000.0
    written = host.set_commit_status(SHA, apply_context("gpu-a"), "success", "applied, NVCA healthy")
    server.status_clock = lambda: 1_800_000_060.0
    host.set_commit_status(SHA, apply_context("gpu-b"), "failure", "NVCA kai-scheduler-queues unhealthy")
    host.set_commit_status(OTHER, apply_context("gpu-c"), "success", "on another commit")
    read = host.commit_statuses(SHA)
    assert written.state == "success" and written.at == 1_800_000_000.0
    assert [(s.context, s.state, s.at) for s in read] == [
        ("kai-gitops/apply/gpu-b", "failure", 1_800_000_060.0),
        ("kai-gitops/apply/gpu-a", "success", 1_800_000_000.0),
    ]
    assert read[0].cluster == "gpu-b" and read[0].description == "NVCA kai-scheduler-queues unhealthy"


def test_every_page_is_read(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    for i in range(130):
        host.set_commit_status(SHA, apply_context(f"c{i:03d}"), "success", "ok")
    read = host.commit_statuses(SHA)
    assert len(read) == 130 and {s.cluster for s in read} == {f"c{i:03d}" for i in range(130)}
    pages = [r for r in server.requests if r.method == "GET" and "statuses" in r.path]
    assert len(pages) == 2


def test_a_5xx_on_read_past_the_retries_is_one_line(any_host: tuple[Any, Any], fake_time: FakeTime) -> None:
    server, host = any_host
    server.inject(Fault(503, times=10, method="GET", path_contains="statuses"))
    with pytest.raises(UserError) as caught:
        host.commit_statuses(SHA)
    assert "503" in str(caught.value) and "\n" not in str(caught.value)


def test_a_state_the_host_does_not_document_is_refused(any_host: tuple[Any, Any]) -> None:
    server, host = any_host
    with pytest.raises(UserError):
        host.set_commit_status(SHA, apply_context("gpu-a"), "exploded", "no such state")
    assert server.problems
    server.problems.clear()
