"""Policy reports in the cluster: written, updated in place, stale ones deleted, bounded, schema-valid.

Driven through the official kubernetes client against the API test server, with the report CRDs
registered as kinds (and without them). The objects are validated against the CRDs' published
openAPIV3Schema, which the test server itself does not enforce.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import jsonschema
import orjson
import pytest

from reconciler.core.errors import UserError
from reconciler.core.refs import ObjectRef, release_ref
from reconciler.core.resources import (
    CLUSTER_POLICY_REPORT,
    OPEN_CLUSTER_REPORT,
    OPEN_REPORT,
    POLICY_REPORT,
    QUEUE,
    Resource,
    queue_ref,
)
from reconciler.findings.finding import Severity
from reconciler.publish.policyreport import write_policy_reports
from reconciler.publish.policyreport.build import REPORT_KINDS, SIZE_BUDGET
from reconciler.report.report import ClusterReport, GitInfo, Report
from reconciler.sources.cluster.session import ClusterSession
from tests.support.cluster_session import session_at
from tests.support.kubeserver import Fault, KubeTestServer
from tests.support.report_crds import OPEN, WG, crd_schema, register_reports
from tests.support.report_policyreport import COMMIT, NOW, SAMPLE, backend_ref, finding, report


@pytest.fixture
def server() -> Iterator[KubeTestServer]:
    with KubeTestServer() as srv:
        for name in ("kai-scheduler", "nvcf-backend"):
            srv.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        yield srv


@pytest.fixture
def api(server: KubeTestServer) -> Iterator[ClusterSession]:
    session = session_at(server.url)
    yield session
    session.close()


def stored(server: KubeTestServer, kind: Resource, namespace: str | None = None) -> dict[str, Any] | None:
    return server.get_object(kind.api_version, kind.kind, "kai-gitops-prod", namespace)


def writes(server: KubeTestServer, since: int = 0) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests[since:] if r.method != "GET"]


def test_reports_per_scope_validate_against_the_crd_schemas(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG + OPEN)
    [result] = write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert sorted(result.created) == sorted(
        [
            "ClusterPolicyReport/kai-gitops-prod",
            "PolicyReport/kai-scheduler/kai-gitops-prod",
            "PolicyReport/nvcf-backend/kai-gitops-prod",
            "ClusterReport/kai-gitops-prod",
            "Report/kai-scheduler/kai-gitops-prod",
            "Report/nvcf-backend/kai-gitops-prod",
        ]
    )
    for kind in REPORT_KINDS:
        for namespace in (None,) if not kind.namespaced else ("kai-scheduler", "nvcf-backend"):
            obj = stored(server, kind, namespace)
            assert obj is not None, (kind, namespace)
            jsonschema.validate(obj, crd_schema(kind))
            assert obj["metadata"]["labels"] == {
                "app.kubernetes.io/managed-by": "kai-gitops",
                "kai-gitops/cluster": "prod",
            }

    cluster = stored(server, CLUSTER_POLICY_REPORT)
    assert cluster is not None
    queue_result, waived = cluster["results"]
    assert queue_result == {
        "policy": "KAI-D-002",
        "rule": "title of KAI-D-002",
        "category": "drift",
        "result": "fail",
        "severity": "high",
        "message": "queue quota is 0",
        "source": "kai-gitops",
        "scored": True,
        "timestamp": {"seconds": int(NOW.timestamp()), "nanos": 250_000_000},
        "resources": [{"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "name": "default-parent-queue"}],
        "properties": {
            "fingerprint": SAMPLE[0].fingerprint,
            "cluster": "prod",
            "commit": COMMIT,
            "file": "environments/prod.yaml",
            "line": "26",
            "path": "kai.queues[0]",
            "fix": "kubectl patch queue default",
        },
    }
    assert (waived["policy"], waived["result"], waived["properties"]["waivedBy"]) == (
        "KAI-G-001",
        "skip",
        "accepted until the upgrade",
    )
    assert cluster["summary"] == {"pass": 0, "fail": 1, "warn": 0, "error": 0, "skip": 1}
    backend = stored(server, POLICY_REPORT, "nvcf-backend")
    assert backend is not None
    assert [(r["policy"], r["result"], r["severity"]) for r in backend["results"]] == [("NVCA-G-004", "warn", "medium")]
    open_report = stored(server, OPEN_CLUSTER_REPORT)
    assert open_report is not None
    assert open_report["source"] == "kai-gitops"
    assert open_report["configuration"] == {"limits": {"maxResults": 100}}


def test_next_run_updates_in_place_and_skips_unchanged(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    write_policy_reports(api, report(*SAMPLE), now=NOW)
    first = stored(server, CLUSTER_POLICY_REPORT)
    assert first is not None
    mark = len(server.requests)

    [same] = write_policy_reports(api, report(*SAMPLE), now=NOW + timedelta(hours=1))
    assert (same.created, same.updated, same.deleted) == ([], [], [])
    assert writes(server, mark) == []  # nothing changed: nothing written

    extra = finding("KAI-D-001", queue_ref("team-a"), n=3)
    [changed] = write_policy_reports(api, report(*SAMPLE, extra), now=NOW + timedelta(hours=2))
    assert changed.updated == ["ClusterPolicyReport/kai-gitops-prod"]
    assert [m for m, _ in writes(server, mark)] == ["PUT"]  # in place: no DELETE, no POST
    second = stored(server, CLUSTER_POLICY_REPORT)
    assert second is not None
    assert second["metadata"]["uid"] == first["metadata"]["uid"]
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    stamps = {r["policy"]: r["timestamp"]["seconds"] for r in second["results"]}
    assert stamps["KAI-D-002"] == int(NOW.timestamp())  # first seen, kept
    assert stamps["KAI-D-001"] == int((NOW + timedelta(hours=2)).timestamp())


def test_stale_reports_deleted_and_nobody_elses(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    kyverno = {
        "apiVersion": POLICY_REPORT.api_version,
        "kind": "PolicyReport",
        "metadata": {
            "name": "kai-gitops-prod",
            "namespace": "team-x",
            "labels": {"app.kubernetes.io/managed-by": "kyverno"},
        },
    }
    other_cluster = {
        "apiVersion": POLICY_REPORT.api_version,
        "kind": "PolicyReport",
        "metadata": {
            "name": "kai-gitops-lab",
            "namespace": "nvcf-backend",
            "labels": {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "lab"},
        },
    }
    server.add(kyverno)
    server.add(other_cluster)
    write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert stored(server, POLICY_REPORT, "nvcf-backend") is not None
    mark = len(server.requests)

    [result] = write_policy_reports(api, report(SAMPLE[0]), now=NOW)  # the namespaced findings are fixed
    assert sorted(result.deleted) == [
        "PolicyReport/kai-scheduler/kai-gitops-prod",
        "PolicyReport/nvcf-backend/kai-gitops-prod",
    ]
    assert stored(server, POLICY_REPORT, "nvcf-backend") is None
    assert server.get_object(POLICY_REPORT.api_version, "PolicyReport", "kai-gitops-prod", "team-x") is not None
    assert server.get_object(POLICY_REPORT.api_version, "PolicyReport", "kai-gitops-lab", "nvcf-backend")
    deletes = [p for m, p in writes(server, mark) if m == "DELETE"]
    assert deletes and all("/apis/wgpolicyk8s.io/v1alpha2/" in p for p in deletes)

    [clean] = write_policy_reports(api, report(), now=NOW)  # a clean run empties the cluster report
    cluster = stored(server, CLUSTER_POLICY_REPORT)
    assert cluster is not None and cluster["results"] == [] and clean.updated


def test_a_report_with_our_labels_under_another_name_is_not_ours(server: KubeTestServer, api: ClusterSession) -> None:
    """Anyone may put our labels on their object: the tool's reports are also named kai-gitops-<cluster>, the
    one name the shipped roles may update or delete, so another name is neither deleted nor updated."""
    register_reports(server, WG)
    labelled = {
        "apiVersion": POLICY_REPORT.api_version,
        "kind": "PolicyReport",
        "metadata": {
            "name": "team-x-audit",
            "namespace": "team-x",
            "labels": {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "prod"},
        },
    }
    server.add(labelled)
    [result] = write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert result.deleted == [] and not any("team-x" in u for u in result.updated)
    assert server.get_object(POLICY_REPORT.api_version, "PolicyReport", "team-x-audit", "team-x") is not None


def test_bounded_under_5000_findings(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG + OPEN)
    many = [finding("KAI-D-002", queue_ref(f"q{i}"), n=i, message="x" * 3000) for i in range(4000)]
    many += [
        finding("NVCA-P-001", ObjectRef("v1", "Pod", f"p{i}", "nvcf-backend"), Severity.WARNING, n=i)
        for i in range(1000)
    ]
    [result] = write_policy_reports(api, report(*many), now=NOW)
    omitted = [
        int(o["metadata"]["annotations"]["kai-gitops/results-omitted"])
        for o in (stored(server, CLUSTER_POLICY_REPORT), stored(server, POLICY_REPORT, "nvcf-backend"))
        if o
    ]
    assert result.omitted_results == sum(omitted) > 0  # counted once, not once per report family
    for kind in REPORT_KINDS:
        obj = stored(server, kind, "nvcf-backend" if kind.namespaced else None)
        assert obj is not None
        jsonschema.validate(obj, crd_schema(kind))
        size = len(orjson.dumps(obj))
        assert len(obj["results"]) <= 100 and size <= SIZE_BUDGET, (kind, len(obj["results"]), size)
        marker = obj["results"][-1]
        total = 4000 if not kind.namespaced else 1000
        assert marker["policy"] == "kai-gitops-report-truncated"
        assert int(marker["properties"]["omitted"]) == total - (len(obj["results"]) - 1)
        assert obj["metadata"]["annotations"]["kai-gitops/results-total"] == str(total)
        assert sum(obj["summary"].values()) == total  # the summary counts every finding


def test_max_results_option_bounds_each_object(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    many = [finding("KAI-D-002", queue_ref(f"q{i}"), n=i) for i in range(30)]
    write_policy_reports(api, report(*many), max_results=10, now=NOW)
    obj = stored(server, CLUSTER_POLICY_REPORT)
    assert obj is not None and len(obj["results"]) == 10
    assert obj["results"][-1]["properties"] == {"omitted": "21", "total": "30", "maxResults": "10"}
    assert obj["metadata"]["annotations"]["kai-gitops/results-omitted"] == "21"
    mark = len(server.requests)
    [again] = write_policy_reports(api, report(*many), max_results=10, now=NOW + timedelta(hours=1))
    assert again.unchanged and writes(server, mark) == []  # truncated, but unchanged: not rewritten
    obj["metadata"]["annotations"]["team.example.com/owner"] = "platform"  # someone else's annotation
    server.add(obj)
    write_policy_reports(api, report(*many[:5]), max_results=10, now=NOW)
    smaller = stored(server, CLUSTER_POLICY_REPORT)
    assert smaller is not None and len(smaller["results"]) == 5
    assert smaller["metadata"]["annotations"] == {"kai-gitops/results-total": "5", "team.example.com/owner": "platform"}
    with pytest.raises(UserError, match="at least 1"):
        write_policy_reports(api, report(*many), max_results=0)


def test_absent_crds_one_warning_and_no_writes(
    server: KubeTestServer, api: ClusterSession, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="kai_gitops"):
        [result] = write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert result.kinds == [] and writes(server) == []
    assert len(caplog.records) == 1 and "no reports written" in caplog.records[0].getMessage()


def test_only_openreports_served(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, OPEN)
    [result] = write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert result.kinds == ["ClusterReport", "Report"]
    assert stored(server, OPEN_CLUSTER_REPORT) is not None
    assert writes(server) and all(p.startswith("/apis/openreports.io/v1alpha1/") for _, p in writes(server))


def test_finding_in_a_missing_namespace_joins_the_cluster_report(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    gone = finding("KAI-R-002", release_ref("kai-scheduler", "kai-system"), message="KAI not installed")
    write_policy_reports(api, report(gone), now=NOW)
    cluster = stored(server, CLUSTER_POLICY_REPORT)
    assert cluster is not None and [r["policy"] for r in cluster["results"]] == ["KAI-R-002"]
    assert stored(server, POLICY_REPORT, "kai-system") is None


def test_secret_in_a_message_is_redacted(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    leak = finding("KAI-D-004", None, message="value https://admin:hunter2secret@git.example.com differs")
    write_policy_reports(api, report(leak), now=NOW)
    assert b"hunter2secret" not in orjson.dumps(stored(server, CLUSTER_POLICY_REPORT))


def test_forbidden_is_one_clear_error(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    server.inject_fault(Fault(r"/clusterpolicyreports", method="POST", status=403))
    with pytest.raises(UserError) as caught:
        write_policy_reports(api, report(*SAMPLE), now=NOW)
    assert "HTTP 403" in caught.value.line() and "clusterpolicyreports" in caught.value.line()


def test_concurrent_update_is_reread_once(server: KubeTestServer, api: ClusterSession) -> None:
    register_reports(server, WG)
    write_policy_reports(api, report(*SAMPLE), now=NOW)
    server.inject_fault(Fault(r"/clusterpolicyreports/kai-gitops-prod", method="PUT", status=409))
    [result] = write_policy_reports(api, report(SAMPLE[0]), now=NOW)
    assert result.updated == ["ClusterPolicyReport/kai-gitops-prod"]
    cluster = stored(server, CLUSTER_POLICY_REPORT)
    assert cluster is not None and [r["policy"] for r in cluster["results"]] == ["KAI-D-002"]


def test_a_lone_kind_of_a_pair_still_gets_what_it_can_hold(
    server: KubeTestServer, api: ClusterSession, caplog: pytest.LogCaptureFixture
) -> None:
    register_reports(server, (CLUSTER_POLICY_REPORT, OPEN_REPORT))
    with caplog.at_level(logging.WARNING, logger="kai_gitops"):
        write_policy_reports(api, report(*SAMPLE), now=NOW)
    cluster = stored(server, CLUSTER_POLICY_REPORT)
    assert cluster is not None and len(cluster["results"]) == len(SAMPLE)  # every scope in the one report
    assert stored(server, OPEN_REPORT, "nvcf-backend") is not None
    [warning] = caplog.records
    assert "Report is served without its cluster-scoped kind; 2 cluster-scoped findings" in warning.getMessage()


def test_report_objects_are_the_only_cluster_deletes_in_the_code() -> None:
    """Structural: every delete call in the package is listed here, with what it deletes."""
    import ast

    allowed = {
        ("publish/policyreport/cluster.py", "DELETE"),  # _Store.delete's request
        ("publish/policyreport/cluster.py", "delete"),  # _Store.delete: reports only
        ("plans/writable.py", "DELETE"),  # the report kinds' deletes, in the write guard's table
        ("reconcile/allowed_writes.py", "DELETE"),  # the guard: a delete only with a uid precondition
        ("checks/policy/opa_engine.py", "delete_policy"),  # OPA server policies, not a cluster
        ("gitfix/branch.py", "delete"),  # local ref of a kai-gitops/fix/* branch (guarded)
        ("gitfix/pull_request.py", "delete"),
    }  # FixBranches.delete: kai-gitops/fix/* only
    root = Path(__file__).resolve().parents[2] / "reconciler"
    found = set()
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            name = None
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name = node.func.attr
            elif isinstance(node, ast.Constant) and node.value == "DELETE":
                name = "DELETE"
            if name and name.lower().startswith("delete"):
                found.add((path.relative_to(root).as_posix(), name))
    assert found <= allowed, found - allowed
    assert ("publish/policyreport/cluster.py", "delete") in found


def test_the_delete_refuses_anything_not_ours(server: KubeTestServer, api: ClusterSession) -> None:
    from reconciler.publish.policyreport.cluster import _Store

    register_reports(server, WG)
    theirs = server.add(
        {
            "apiVersion": POLICY_REPORT.api_version,
            "kind": "PolicyReport",
            "metadata": {
                "name": "kai-gitops-prod",
                "namespace": "nvcf-backend",
                "labels": {"app.kubernetes.io/managed-by": "kyverno"},
            },
        }
    )
    with pytest.raises(AssertionError, match="refusing to delete"):
        _Store(api).delete(POLICY_REPORT, theirs, "prod")
    with pytest.raises(AssertionError, match="refusing to delete"):
        _Store(api).delete(
            QUEUE,
            {
                "metadata": {
                    "name": "default",
                    "labels": {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "prod"},
                }
            },
            "prod",
        )
    assert writes(server) == []


def test_any_cluster_name_gives_valid_names_and_labels(server: KubeTestServer, api: ClusterSession) -> None:
    """kai-gitops.yaml bounds a cluster name's characters, not its length: a real API server refuses a label
    value over 63 characters (the test server does not check), so a long name must still give valid objects,
    found again on the next run, and two long names sharing a prefix must not share reports."""
    import re

    register_reports(server, WG)
    long_a, long_b = "a" * 70 + "-eu-west-1", "a" * 70 + "-us-east-1"
    dns_label = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
    for cluster in (long_a, long_b, "b" * 250):
        one = Report(
            "reconcile",
            [
                ClusterReport(
                    cluster, GitInfo("repo", "HEAD", COMMIT), None, None, None, [finding("KAI-D-002", queue_ref("q"))]
                )
            ],
        )
        [result] = write_policy_reports(api, one, now=NOW)
        assert len(result.created) == 1
        [again] = write_policy_reports(api, one, now=NOW)
        assert (again.created, again.unchanged, again.deleted) == ([], result.created, [])
    objects = server.list_objects(CLUSTER_POLICY_REPORT.api_version, CLUSTER_POLICY_REPORT.kind)
    assert len(objects) == 3
    for obj in objects:
        meta = obj["metadata"]
        assert len(meta["name"]) <= 253 and all(dns_label.match(p) for p in meta["name"].split("."))
        value = meta["labels"]["kai-gitops/cluster"]
        assert len(value) <= 63 and dns_label.match(value), value
    assert len({o["metadata"]["labels"]["kai-gitops/cluster"] for o in objects}) == 3


def test_results_do_not_depend_on_the_order_findings_arrive_in() -> None:
    """Two findings of one rule, subject and location (two unknown gates of one backend) tie on the report's
    order; if their arrival order decided, a run that found the same would rewrite the report."""
    from reconciler.publish.policyreport.build import ReportSettings, Scope, build_report

    pair = [finding("NVCA-G-004", backend_ref(), Severity.WARNING, message=f"gate {g} unknown") for g in "AB"]
    settings = ReportSettings("prod", COMMIT)
    bodies = [build_report(POLICY_REPORT, Scope("nvcf-backend", order), settings, NOW) for order in (pair, pair[::-1])]
    assert bodies[0] == bodies[1]
