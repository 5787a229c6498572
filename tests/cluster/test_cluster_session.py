"""One cluster session per run (reconciler/sources/cluster/session.py): credentials resolved once, one transport
for every request, every write through the one write guard (reconcile/allowed_writes.py).

The proof on the real API server, from its audit log, is tests/real/test_one_session.py; these run on the
stand-in server, which can throttle a write."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from reconciler.core.resources import CLUSTER_POLICY_REPORT, QUEUE
from reconciler.reconcile.allowed_writes import MERGE_PATCH, WriteForbidden, check_write
from reconciler.sources.cluster import kubeconfig
from reconciler.sources.cluster.client import ApiError, Conflict, NotFound, WriteRefused, api_error
from reconciler.sources.cluster.session import ClusterSession
from tests.support.cluster_session import session_at
from tests.support.kubeserver import Fault
from tests.support.reconcile_support import Demo, demo_cluster
from tests.support.report_crds import WG, register_reports

PARENT = QUEUE.object_path("default-parent-queue")
OURS = {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "prod"}


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


@pytest.mark.parametrize("http_date", [False, True], ids=["seconds", "http-date"])
def test_a_throttled_write_waits_as_long_as_the_server_asks_in_either_form(demo: Demo, http_date: bool) -> None:
    """Retry-After is seconds or an HTTP-date (RFC 9110 §10.2.3); the writer used to read only the first and
    resend a throttled write within a fifth of a second."""
    arrived: list[float] = []
    demo.server.inject_fault(
        Fault(
            PARENT + "$",
            method="PATCH",
            status=429,
            retry_after=2 if http_date else 1,
            retry_after_date=http_date,
            before=lambda: arrived.append(time.monotonic()),
        )
    )
    session = session_at(demo.server.url)
    session.transport.request("PATCH", PARENT, {"spec": {"parentQueue": None}}, content_type=MERGE_PATCH)
    writes = [r.status for r in demo.server.requests if r.method == "PATCH"]
    assert writes == [429, 200]
    # An HTTP-date has whole seconds: two seconds from now is more than one from when it was read.
    assert time.monotonic() - arrived[0] >= 0.9
    session.close()


def test_a_session_opened_without_a_guard_sends_no_write(demo: Demo) -> None:
    session = ClusterSession(client.Configuration(host=demo.server.url))
    with pytest.raises(WriteRefused):
        session.transport.request("PATCH", PARENT, {"spec": {"parentQueue": None}}, content_type=MERGE_PATCH)
    session.transport.request("GET", PARENT)  # reads need no guard
    assert [r.method for r in demo.server.requests] == ["GET"]
    session.close()


def test_the_guard_holds_report_writes_to_the_tools_own_objects() -> None:
    collection = CLUSTER_POLICY_REPORT.collection_path()
    one = CLUSTER_POLICY_REPORT.object_path("kai-gitops-prod")
    report = {
        "apiVersion": CLUSTER_POLICY_REPORT.api_version,
        "kind": CLUSTER_POLICY_REPORT.kind,
        "metadata": {"name": "kai-gitops-prod", "labels": OURS},
    }
    check_write("POST", collection, report, "application/json")
    check_write("PUT", one, report, "application/json")
    check_write("DELETE", one, {"preconditions": {"uid": "0a1b"}}, "application/json")
    theirs = {**report, "metadata": {"name": "kai-gitops-prod", "labels": {"app.kubernetes.io/managed-by": "kyverno"}}}
    for method, path, body in [
        ("POST", collection, theirs),
        ("PUT", one, theirs),
        ("DELETE", one, {}),
        ("DELETE", one, {"preconditions": {"resourceVersion": "7"}}),
        ("DELETE", PARENT, {"preconditions": {"uid": "0a1b"}}),
        ("PATCH", one, {"metadata": {"labels": OURS}}),
    ]:
        with pytest.raises(WriteForbidden):
            check_write(method, path, body, MERGE_PATCH if method == "PATCH" else "application/json")


def test_failures_are_sorted_by_status() -> None:
    status = b'{"kind":"Status","message":"queues \\"q\\" not found","reason":"NotFound"}'
    missing = api_error(404, status)
    assert isinstance(missing, NotFound) and missing.line() == 'HTTP 404 (queues "q" not found)'
    assert missing.reason == "NotFound"
    assert isinstance(api_error(409, b"{}"), Conflict)
    other = api_error(502, b"<html>bad gateway</html>")
    assert type(other) is ApiError and other.line() == "HTTP 502 (<html>bad gateway</html>)"


def test_a_reconcile_apply_with_policy_reports_resolves_the_cluster_once_and_guards_every_write(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the session the read, the identity, the writer, the first-seen times and the PolicyReports each
    loaded the kubeconfig (three times a run) and the reports bypassed the guard."""
    register_reports(demo.server, WG)
    loaded: list[Any] = []
    guarded: list[tuple[str, str]] = []
    lock = threading.Lock()
    load = kubeconfig.load_configuration

    def counting_load(*args: Any) -> Any:
        loaded.append(args)
        return load(*args)

    def counting_guard(method: str, path: str, body: Any, content_type: str | None) -> None:
        with lock:
            guarded.append((method, path))
        check_write(method, path, body, content_type)

    monkeypatch.setattr(kubeconfig, "load_configuration", counting_load)
    monkeypatch.setattr("reconciler.reconcile.allowed_writes.check_write", counting_guard)
    code, out, err = demo.reconcile("--apply", "--report-to", "policyreport")
    assert code == 2 and "Apply complete: 3 applied" in out, out + err  # the operator's items are left
    assert len(loaded) == 1
    writes = [(r.method, r.path) for r in demo.server.requests if r.method != "GET"]
    assert sorted(guarded) == sorted(writes)
    assert {p.split("/")[2] for _m, p in writes} >= {"scheduling.run.ai", "coordination.k8s.io", "wgpolicyk8s.io"}
