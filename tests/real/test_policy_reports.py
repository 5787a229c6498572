"""PolicyReports in the real CRDs (reconciler/publish/policyreport/): wgpolicyk8s.io/v1alpha2 and
openreports.io/v1alpha1, namespaced and cluster-scoped, through a real API server that applies the CRDs'
structural schemas (unknown fields pruned, types and enums enforced) and resourceVersion preconditions.

Every body the writer sends is recorded on the client side and compared with what the server stored; the
next run must update in place (same uid, new resourceVersion) or not write at all, and only our own stale
reports, found by label and named kai-gitops-<cluster>, are deleted.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest

from reconciler.core.refs import ObjectRef
from reconciler.core.resources import Resource, queue_ref
from reconciler.findings.finding import Severity
from reconciler.publish.policyreport import write_policy_reports
from reconciler.publish.policyreport.build import REPORT_KINDS
from tests.support.cluster_session import envtest_session
from tests.support.envtest import EnvTest
from tests.support.report_policyreport import NOW, SAMPLE, finding, report

Obj = dict[str, Any]
SERVER_SET = ("uid", "resourceVersion", "generation", "creationTimestamp", "managedFields")
NAMESPACES = ("kai-scheduler", "nvcf-backend")  # where SAMPLE's namespaced findings are
OURS = {"app.kubernetes.io/managed-by": "kai-gitops", "kai-gitops/cluster": "prod"}


class Recording:
    """A session as a run opens one, keeping every create and update body it sends (as JSON goes over the
    wire), recorded where the write guard sees it."""

    def __init__(self, envtest: EnvTest) -> None:
        self.sent: list[tuple[str, str, Obj]] = []
        self.session = envtest_session(envtest, seen=self.record)

    def record(self, method: str, path: str, body: Any) -> None:
        if method in ("POST", "PUT") and body is not None:
            self.sent.append((method, urlsplit(path).path, json.loads(json.dumps(body))))


@pytest.fixture
def writer(envtest: EnvTest) -> Iterator[Recording]:
    for namespace in (*NAMESPACES, "team-x"):
        envtest.create_namespace(namespace)
    recording = Recording(envtest)
    yield recording
    recording.session.close()


def path(kind: Resource, namespace: str | None, name: str) -> str:
    return (
        f"/apis/{kind.group}/{kind.version}/"
        + (f"namespaces/{namespace}/" if kind.namespaced else "")
        + f"{kind.plural}/{name}"
    )


def stored(envtest: EnvTest, url_path: str) -> Obj | None:
    assert envtest.rest is not None
    status, body = envtest.rest.raw("GET", url_path)
    return body if status == 200 else None


def every_report(envtest: EnvTest, name: str = "kai-gitops-prod") -> dict[str, Obj]:
    found = {}
    for kind in REPORT_KINDS:
        for namespace in NAMESPACES if kind.namespaced else (None,):
            obj = stored(envtest, path(kind, namespace, name))
            assert obj is not None, (kind.kind, namespace)
            found[path(kind, namespace, name)] = obj
    return found


def without_server_fields(obj: Obj) -> Obj:
    meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_SET}
    return {**obj, "metadata": meta}


MANY = (
    *SAMPLE,
    *(finding("KAI-D-002", queue_ref(f"team-{i}"), n=i, message=f"quota of team-{i} is 0") for i in range(6)),
    finding(
        "NVCA-P-001",
        ObjectRef("v1", "Pod", "fn-0", "nvcf-backend"),
        Severity.INFO,
        message="pod fn-0 uses default-scheduler",
    ),
)


@pytest.mark.parametrize("max_results", [100, 3], ids=["all-results", "truncated"])
def test_what_the_writer_sends_reads_back_unchanged(envtest: EnvTest, writer: Recording, max_results: int) -> None:
    """Creates, then in-place updates: no field of any result, summary, label or annotation is pruned or
    changed by either API's schema, for the namespaced and the cluster-scoped kind."""
    write_policy_reports(writer.session, report(*SAMPLE), max_results=max_results, now=NOW)
    write_policy_reports(writer.session, report(*MANY), max_results=max_results, now=NOW + timedelta(hours=1))
    methods = {(m, p.split("/")[2]) for m, p, _ in writer.sent}
    assert methods == {(m, g) for m in ("POST", "PUT") for g in ("wgpolicyk8s.io", "openreports.io")}
    last_body: dict[str, Obj] = {}
    for method, url, body in writer.sent:
        name = body["metadata"]["name"]
        last_body[url if method == "PUT" else f"{url}/{name}"] = body
    assert len(last_body) == 6  # two kinds of each API: one cluster report, one per namespace with findings
    for url, body in last_body.items():
        live = stored(envtest, url)
        assert live is not None, url
        sent = {**body, "metadata": {k: v for k, v in body["metadata"].items() if k != "resourceVersion"}}
        assert without_server_fields(live) == sent, url
    truncated = [b for b in last_body.values() if "kai-gitops/results-omitted" in b["metadata"]["annotations"]]
    assert bool(truncated) == (max_results == 3)


def test_the_next_run_updates_in_place_or_not_at_all(envtest: EnvTest, writer: Recording) -> None:
    write_policy_reports(writer.session, report(*SAMPLE), now=NOW)
    first = every_report(envtest)

    [same] = write_policy_reports(writer.session, report(*SAMPLE), now=NOW + timedelta(hours=1))
    assert (same.created, same.updated, same.deleted) == ([], [], [])
    again = every_report(envtest)
    assert {p: o["metadata"]["resourceVersion"] for p, o in again.items()} == {
        p: o["metadata"]["resourceVersion"] for p, o in first.items()
    }  # nothing written

    extra = finding("KAI-D-001", queue_ref("team-a"), n=3)
    moved = finding("NVCA-G-004", SAMPLE[1].subject, Severity.WARNING, message="gate Bar unknown")
    [changed] = write_policy_reports(
        writer.session, report(SAMPLE[0], moved, SAMPLE[2], SAMPLE[3], extra), now=NOW + timedelta(hours=2)
    )
    assert sorted(changed.updated) == [
        "ClusterPolicyReport/kai-gitops-prod",
        "ClusterReport/kai-gitops-prod",
        "PolicyReport/nvcf-backend/kai-gitops-prod",
        "Report/nvcf-backend/kai-gitops-prod",
    ]
    second = every_report(envtest)
    for url in first:
        assert second[url]["metadata"]["uid"] == first[url]["metadata"]["uid"], url
        moved_on = second[url]["metadata"]["resourceVersion"] != first[url]["metadata"]["resourceVersion"]
        assert moved_on == ("/kai-scheduler/" not in url), url
    cluster = second[path(REPORT_KINDS[0], None, "kai-gitops-prod")]
    stamps = {r["policy"]: r["timestamp"]["seconds"] for r in cluster["results"]}
    assert stamps["KAI-D-002"] == int(NOW.timestamp())  # first seen, kept
    assert stamps["KAI-D-001"] == int((NOW + timedelta(hours=2)).timestamp())


def test_stale_reports_are_deleted_by_label_and_name_and_nobody_elses(envtest: EnvTest, writer: Recording) -> None:
    """Ours: both labels and the name kai-gitops-<cluster>. The cluster-scoped ones planted with our labels
    under another name (kai-gitops-prod-retired) are someone's who copied the labels: kept."""
    assert envtest.rest is not None
    envtest.create_namespace("retired")
    planted: dict[str, Obj] = {}
    for kind in REPORT_KINDS:
        for namespace, name, labels in (
            ("retired", "kai-gitops-prod", OURS),  # ours, stale
            ("team-x", "kai-gitops-prod", {"app.kubernetes.io/managed-by": "kyverno"}),  # our name, not ours
            ("team-x", "kai-gitops-lab", {**OURS, "kai-gitops/cluster": "lab"}),  # another cluster's
            ("team-x", "unlabelled", {}),
        ):
            if not kind.namespaced:
                name = f"{name}-{namespace}"
            body: Obj = {
                "apiVersion": kind.api_version,
                "kind": kind.kind,
                "metadata": {"name": name, "labels": labels},
            }
            if kind.namespaced:
                body["metadata"]["namespace"] = namespace
            url = path(kind, namespace, name)
            planted[url] = envtest.rest.call("POST", url.rsplit("/", 1)[0], body, ok=(201,))

    [result] = write_policy_reports(writer.session, report(*SAMPLE), now=NOW)
    assert sorted(result.deleted) == sorted(["PolicyReport/retired/kai-gitops-prod", "Report/retired/kai-gitops-prod"])
    for url, before in planted.items():
        live = stored(envtest, url)
        if before["metadata"].get("labels") == OURS and before["metadata"]["name"] == "kai-gitops-prod":
            assert live is None, url
        else:
            assert live is not None and live["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    every_report(envtest)  # and ours of this run are there
