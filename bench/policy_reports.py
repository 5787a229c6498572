"""Benchmark: policy reports for 5,000 findings over 300 namespaces, three runs (first, unchanged, 1% changed).

naive: what a report writer without bounds or diffing does — every run deletes its reports and creates
them again with every result (the churn and the object sizes that filled etcd for Kyverno's users).
ours:  `write_policy_reports` — bounded objects, updated in place only when changed, stale ones deleted.

Both write through the official kubernetes client to the API test server. Prints one JSON object as the
last line: per run the write requests and seconds, and the largest object stored.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import orjson
from kubernetes import client

from reconciler.core.refs import Location, ObjectRef
from reconciler.core.resources import CLUSTER_POLICY_REPORT, POLICY_REPORT
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.publish.policyreport import write_policy_reports
from reconciler.publish.policyreport.build import (
    ReportSettings,
    Scope,
    build_report,
    managed_labels,
    scopes,
)
from reconciler.reconcile.allowed_writes import check_write
from reconciler.report.report import ClusterReport, GitInfo, Report
from reconciler.sources.cluster.session import ClusterSession
from tests.support.kubeserver import KubeTestServer
from tests.support.report_crds import WG, register_reports

UNBOUNDED = 10**9


def findings(n: int, namespaces: int, *, changed: bool) -> list[Finding]:
    """n findings, a tenth cluster-scoped; `changed` alters 1% of the messages."""
    out = []
    for i in range(n):
        namespace = None if i % 10 == 0 else f"team-{i % namespaces:03d}"
        subject = (
            ObjectRef("v1", "Pod", f"fn-{i}", namespace)
            if namespace
            else ObjectRef("scheduling.run.ai/v2", "Queue", f"q-{i}")
        )
        message = (
            f"pod fn-{i} requests {8 if changed and i % 100 == 7 else 4} GPUs beyond queue team-{i % 40} limit; "
            "the scheduler keeps it Pending until the queue's quota allows it"
        )
        out.append(
            Finding(
                "NVCA-P-003",
                Kind.VIOLATION,
                Severity.WARNING,
                message,
                "bench",
                subject,
                Location("environments/prod.yaml", 10 + i, 3, ("queues", i)),
                title="Pending pod",
            )
        )
    return out


def report(items: list[Finding]) -> Report:
    return Report("reconcile", [ClusterReport("bench", GitInfo("repo", "HEAD", "c0ffee"), None, None, None, items)])


def naive_run(api: client.ApiClient, items: list[Finding], now: datetime) -> None:
    custom = client.CustomObjectsApi(api)
    settings = ReportSettings("bench", "c0ffee", max_results=UNBOUNDED, size_budget=UNBOUNDED)
    for kind in WG:
        listed = custom.list_cluster_custom_object(
            kind.group, kind.version, kind.plural, label_selector="app.kubernetes.io/managed-by=kai-gitops"
        )
        for obj in listed["items"]:
            meta = obj["metadata"]
            if kind.namespaced:
                custom.delete_namespaced_custom_object(
                    kind.group, kind.version, meta["namespace"], kind.plural, meta["name"]
                )
            else:
                custom.delete_cluster_custom_object(kind.group, kind.version, kind.plural, meta["name"])
    for scope in scopes(items):
        kind = POLICY_REPORT if scope.namespace else CLUSTER_POLICY_REPORT
        body = build_report(kind, Scope(scope.namespace, scope.findings), settings, now)
        body["metadata"]["labels"] = managed_labels("bench")
        if kind.namespaced:
            custom.create_namespaced_custom_object(kind.group, kind.version, scope.namespace, kind.plural, body)
        else:
            custom.create_cluster_custom_object(kind.group, kind.version, kind.plural, body)


def largest(server: KubeTestServer) -> int:
    sizes = [len(orjson.dumps(o)) for kind in WG for o in server.list_objects(kind.api_version, kind.kind)]
    return max(sizes, default=0)


def measure(label: str, n: int, namespaces: int) -> dict[str, Any]:
    runs = []
    with KubeTestServer() as server:
        register_reports(server, WG)
        server.add_many(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": f"team-{i:03d}"}} for i in range(namespaces)
        )
        session = ClusterSession(client.Configuration(host=server.url), guard=check_write)  # as cli/live.py opens it
        with client.ApiClient(client.Configuration(host=server.url)) as api:
            for run in (1, 2, 3):
                items = findings(n, namespaces, changed=run == 3)
                now = datetime.now(UTC)
                mark = len(server.requests)
                started = time.perf_counter()
                if label == "naive":
                    naive_run(api, items, now)
                else:
                    write_policy_reports(session, report(items), now=now)
                seconds = time.perf_counter() - started
                writes = [r.method for r in server.requests[mark:] if r.method != "GET"]
                runs.append(
                    {
                        "run": ["first", "unchanged", "1% changed"][run - 1],
                        "seconds": round(seconds, 3),
                        "writes": len(writes),
                        "deletes": writes.count("DELETE"),
                    }
                )
                print(f"{label} run {run}: {runs[-1]}", file=sys.stderr)
            return {"runs": runs, "largest_object_bytes": largest(server)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="500 findings over 30 namespaces")
    args = parser.parse_args()
    n, namespaces = (500, 30) if args.quick else (5000, 300)
    result = {
        "findings": n,
        "namespaces": namespaces,
        "naive": measure("naive", n, namespaces),
        "ours": measure("ours", n, namespaces),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
