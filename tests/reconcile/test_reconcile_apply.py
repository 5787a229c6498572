"""`kai-gitops reconcile --apply` against the Kubernetes API test server, with the real kubernetes client.

Every guard rail is exercised: dry-run first, field manager, preconditions, staleness per field, cluster
identity, the cap, the Lease, Events, the audit trail, stop-on-failure, and converging re-runs.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.reconcile.lease import Lease, micro_time
from tests.support.cluster_session import session_at
from tests.support.helpers import assert_one_line_error, run_cli
from tests.support.kubeserver import Fault
from tests.support.reconcile_support import DEMO, Demo, demo_cluster

pytestmark = pytest.mark.usefixtures("short_lease")

PARENT = "/apis/scheduling.run.ai/v2/queues/default-parent-queue"
CHILD = "/apis/scheduling.run.ai/v2/queues/default-queue"
NODE = "/api/v1/nodes/gpu-node-2"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kai-gitops/leases"
TARGETS = re.compile(r"^/apis/scheduling\.run\.ai/|^/api/v1/nodes")


@pytest.fixture
def short_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def target_writes(demo: Demo, *, dry_run: bool | None = False) -> list[Any]:
    """Writes to Queues and Nodes; dry_run=None: dry-runs included."""
    return [
        r
        for r in demo.writes()
        if TARGETS.match(r.path) and (dry_run is None or (r.query.get("dryRun") == "All") == dry_run)
    ]


def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_plan_apply_then_rerun_has_nothing_to_do_and_nvca_turns_healthy(demo: Demo, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    code, report, err = demo.reconcile_json("--apply", "--audit-log", audit)
    assert code == 2, err  # the operator's items (Helm releases, gates…) remain findings
    assert report["apply"]["ok"] and report["apply"]["applied"] == 3 and report["apply"]["failed"] == 0
    assert report["nvca"]["kai-scheduler-queues"]["status"] == "healthy"  # after apply, re-read
    assert report["healthz"]["kai-scheduler-queues"]["status"] == "healthy"  # NVCA itself agrees
    assert report["before"]["nvca"]["kai-scheduler-queues"]["status"] == "unhealthy"
    assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == -1
    assert demo.node_label("gpu-node-2") is None

    writes = [(r.method, r.path, r.query.get("dryRun")) for r in target_writes(demo, dry_run=None)]
    # every change dry-run first (concurrently: any order), then written (queues in plan order)
    assert sorted(writes[:3]) == [("PATCH", NODE, "All"), ("PATCH", PARENT, "All"), ("PATCH", CHILD, "All")]
    assert writes[3:] == [("PATCH", PARENT, None), ("PATCH", CHILD, None), ("PATCH", NODE, None)]
    assert all(r.query.get("fieldManager") == "kai-gitops" for r in demo.writes())
    assert all(r.method != "DELETE" for r in demo.server.requests)
    assert not [r for r in demo.writes() if "/secrets" in r.path or "/pods" in r.path]
    managers = {e["manager"] for e in demo.queue("default-queue")["metadata"]["managedFields"]}
    assert "kai-gitops" in managers

    lines = audit_lines(audit)
    # an intent line before each write, its outcome after (queues one by one; the node last)
    assert [(a["object"]["name"], a["result"]) for a in lines] == [
        ("default-parent-queue", "started"),
        ("default-parent-queue", "applied"),
        ("default-queue", "started"),
        ("default-queue", "applied"),
        ("gpu-node-2", "started"),
        ("gpu-node-2", "applied"),
    ]
    assert lines[0]["planId"] == report["plan"]["id"] and lines[0]["time"].endswith("Z")
    assert lines[0]["fields"] == lines[1]["fields"] and lines[0]["time"] <= lines[1]["time"]
    assert {"path": ["spec", "resources", "cpu", "quota"], "before": 0, "after": -1} in lines[0]["fields"]

    events = demo.server.list_objects("events.k8s.io/v1", "Event")
    assert sorted(e["regarding"]["name"] for e in events) == ["default-parent-queue", "default-queue", "gpu-node-2"]
    assert all(e["reportingController"] == "kai-gitops" and e["metadata"]["namespace"] == "default" for e in events)
    parent_event = next(e for e in events if e["regarding"]["name"] == "default-parent-queue")
    assert parent_event["reason"] == "QueueUpdated" and "spec.resources.cpu.quota 0 → -1" in parent_event["note"]
    assert parent_event["reportingController"] == "kai-gitops" and parent_event["type"] == "Normal"

    before = len(demo.server.requests)
    code, again, _ = demo.reconcile_json("--apply", "--audit-log", audit)
    assert again["plan"]["summary"]["create"] == again["plan"]["summary"]["update"] == 0
    assert again["apply"]["planned"] == 0
    assert [r for r in demo.server.requests[before:] if r.method != "GET"] == []  # not even a Lease
    assert len(audit_lines(audit)) == 6


def test_a_saved_plan_is_applied_exactly(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    saved = json.loads(plan.read_text())
    _code, report, err = demo.reconcile_json("--plan", plan, "--apply")
    assert report["apply"]["planId"] == saved["id"] and report["plan"]["id"] == saved["id"]
    assert report["apply"]["applied"] == 3, err


def test_a_saved_plan_applied_again_finds_everything_done_and_writes_nothing(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    demo.reconcile("--plan", plan, "--apply")
    before = len(demo.server.requests)
    code, report, err = demo.reconcile_json("--plan", plan, "--apply")
    assert code == 2, err  # applied, but the operator's findings remain
    assert {c["result"] for c in report["apply"]["changes"]} == {"already-applied"}
    assert report["apply"]["ok"] and report["apply"]["skipped"] == 3
    assert [r for r in demo.server.requests[before:] if TARGETS.match(r.path) and r.method != "GET"] == []


def test_a_stale_field_refuses_the_whole_plan_and_nothing_is_written(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    child = demo.queue("default-queue")
    child["spec"]["resources"]["gpu"]["quota"] = 4
    del child["metadata"]["resourceVersion"]
    demo.server.add(child)  # someone else edits one planned field
    status = demo.queue("default-parent-queue")
    status["status"] = {"allocated": {"gpu": 3}}  # a status change alone is not staleness
    del status["metadata"]["resourceVersion"]
    demo.server.add(status)
    before = len(demo.server.requests)
    code, out, err = demo.reconcile("--plan", plan, "--apply")
    assert_one_line_error(
        code,
        out,
        err,
        "the plan is stale, nothing was written",
        "Queue/default-queue spec.resources.gpu.quota is 4, the plan expected 0",
    )
    assert "default-parent-queue" not in err
    assert [r for r in demo.server.requests[before:] if TARGETS.match(r.path) and r.method != "GET"] == []
    assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == 0


def test_a_plan_for_another_cluster_is_refused(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    for other in demo_cluster(tmp_path / "other"):
        code, out, err = other.reconcile("--plan", plan, "--apply")
        assert_one_line_error(
            code, out, err, f"the plan is for cluster {demo.server.url}", f"but this is {other.server.url}"
        )
        assert other.writes() == []


def test_same_url_with_another_kube_system_uid_is_refused() -> None:
    from reconciler.plans.plan import ClusterIdentity, Plan
    from reconciler.reconcile.preflight import check_identity

    plan = Plan("prod", None, ClusterIdentity("https://k8s.example:6443", "uid-a"), ())
    check_identity(plan, ClusterIdentity("https://k8s.example:6443", "uid-a"))
    with pytest.raises(UserError, match=r"kube-system uid-a.*kube-system uid-b"):
        check_identity(plan, ClusterIdentity("https://k8s.example:6443", "uid-b"))
    with pytest.raises(UserError, match=r"made through https://k8s.example:6443, but .* https://10.0.0.1:443"):
        check_identity(plan, ClusterIdentity("https://10.0.0.1:443", "uid-a"))
    with pytest.raises(UserError, match="made from a snapshot"):
        check_identity(Plan("prod", None, None, ()), ClusterIdentity("https://k8s.example:6443", "uid-a"))


def test_a_plan_for_another_kai_gitops_cluster_is_refused(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    saved = json.loads(plan.read_text())
    args = [
        "reconcile",
        "--repo",
        demo.repo,
        "--cluster",
        "lab-standalone",
        "--kubeconfig",
        demo.kubeconfig,
        "--context",
        "prod",
        "--plan",
        plan,
        "--apply",
    ]
    assert saved["cluster"] == "prod-addon"
    assert_one_line_error(*run_cli(args), "the plan is for cluster 'prod-addon'", "this run is for 'lab-standalone'")
    assert target_writes(demo, dry_run=None) == []


def test_a_dry_run_refusal_aborts_with_nothing_applied(demo: Demo) -> None:
    demo.server.inject_fault(Fault(NODE + "$", method="PATCH", status=422))
    code, out, err = demo.reconcile("--apply")
    assert_one_line_error(
        code,
        out,
        err,
        "the server-side dry-run refused the plan, nothing was written",
        "update Node/gpu-node-2: HTTP 422",
    )
    assert target_writes(demo) == []
    assert len(target_writes(demo, dry_run=True)) == 3
    assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == 0


def test_a_409_mid_apply_stops_and_reports_what_was_and_was_not_applied(demo: Demo, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    # after its dry-run, the write and its one retry with a fresh resourceVersion both conflict
    demo.server.inject_fault(Fault(CHILD + "$", method="PATCH", status=409, after=1, times=2))
    code, report, _err = demo.reconcile_json("--apply", "--audit-log", audit)
    assert code == 1
    results = {c["object"]["name"]: c["result"] for c in report["apply"]["changes"]}
    assert results == {"default-parent-queue": "applied", "default-queue": "failed", "gpu-node-2": "not-attempted"}
    failed = next(c for c in report["apply"]["changes"] if c["result"] == "failed")
    assert "HTTP 409" in failed["error"]
    assert report["apply"]["ok"] is False and report["exitCode"] == 1
    assert [(a["object"]["name"], a["result"]) for a in audit_lines(audit) if a["result"] != "started"] == [
        ("default-parent-queue", "applied"),
        ("default-queue", "failed"),
        ("gpu-node-2", "not-attempted"),
    ]
    code, out, _ = demo.reconcile("--apply")
    assert "✓ applied update Queue/default-queue" in out and "default-parent-queue" not in out.split("Plan:")[0]


def change_object(demo: Demo, api_version: str, kind: str, name: str, edit: Callable[[dict[str, Any]], None]) -> None:
    """Another client's write: the object gets a new resourceVersion, so a write with the old one gets 409."""
    obj = demo.server.get_object(api_version, kind, name)
    assert obj is not None
    edit(obj)
    obj["metadata"].pop("resourceVersion")  # the server assigns the next one
    demo.server.add(obj)


def test_a_409_from_a_change_of_a_planned_field_stops_the_run(demo: Demo, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"

    def operator_sets_gpu_quota() -> None:
        change_object(
            demo,
            "scheduling.run.ai/v2",
            "Queue",
            "default-queue",
            lambda q: q["spec"]["resources"]["gpu"].update(quota=4),
        )

    demo.server.inject_fault(Fault(CHILD + "$", method="PATCH", after=1, before=operator_sets_gpu_quota))
    code, report, _err = demo.reconcile_json("--apply", "--audit-log", audit)
    assert code == 1
    results = {c["object"]["name"]: c["result"] for c in report["apply"]["changes"]}
    assert results == {"default-parent-queue": "applied", "default-queue": "failed", "gpu-node-2": "not-attempted"}
    failed = next(c for c in report["apply"]["changes"] if c["result"] == "failed")
    assert "HTTP 409" in failed["error"] and "spec.resources.gpu.quota is 4, the plan expected 0" in failed["error"]
    assert demo.queue("default-queue")["spec"]["resources"]["gpu"]["quota"] == 4  # the operator's value stays
    assert [r.path for r in target_writes(demo)].count(CHILD) == 1  # no second write after a real change


def test_a_409_from_an_unrelated_change_is_written_again_and_applies(demo: Demo, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"

    def labeller_adds_a_label() -> None:
        change_object(
            demo,
            "v1",
            "Node",
            "gpu-node-2",
            lambda n: n["metadata"].setdefault("labels", {}).update({"feature.node/x": "true"}),
        )

    demo.server.inject_fault(Fault(NODE + "$", method="PATCH", after=1, before=labeller_adds_a_label))
    code, report, err = demo.reconcile_json("--apply", "--audit-log", audit)
    assert code == 2, err  # the operator's items remain, as after any complete apply of the demo
    assert report["apply"]["ok"] is True and report["apply"]["applied"] == 3
    assert [r.status for r in target_writes(demo) if r.path == NODE] == [409, 200]
    assert demo.node_label("gpu-node-2") is None
    labels = demo.server.get_object("v1", "Node", "gpu-node-2")["metadata"]["labels"]  # type: ignore[index]
    assert labels["feature.node/x"] == "true"
    node_lines = [a["result"] for a in audit_lines(audit) if a["object"]["name"] == "gpu-node-2"]
    assert node_lines == ["started", "applied"]  # one intent, one outcome: the second write is not a second change


def test_a_connection_reset_mid_apply_then_a_re_run_converges(demo: Demo, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    demo.server.inject_fault(Fault(NODE + "$", method="PATCH", reset=True, after=1))
    code, out, err = demo.reconcile("--apply", "--audit-log", audit)
    assert code == 1, out
    assert "✗ failed update Node/gpu-node-2: PATCH /api/v1/nodes/gpu-node-2: connection reset" in out
    assert "Apply stopped: 2 applied, 1 failed" in out
    code, out, err = demo.reconcile("--apply", "--audit-log", audit)
    assert "Apply complete: 1 applied, 0 failed" in out, out + err
    lines = audit_lines(audit)
    applied = [a["object"]["name"] for a in lines if a["result"] == "applied"]
    assert sorted(applied) == ["default-parent-queue", "default-queue", "gpu-node-2"]  # each exactly once
    assert [r.path for r in target_writes(demo)].count(PARENT) == 1
    code, out, _ = demo.reconcile("--apply", "--audit-log", audit)
    assert "Nothing to apply." in out and len(audit_lines(audit)) == len(lines)


@pytest.mark.parametrize("landed", [True, False], ids=["write-landed", "write-lost"])
def test_a_hard_kill_mid_write_leaves_its_started_line_and_a_re_run_converges(
    demo: Demo, tmp_path: Path, landed: bool
) -> None:
    # SIGKILL (or the OOM killer) while the node write is in flight: no handler runs, no outcome line is
    # written. The intent line says the write was under way; the re-run settles whether it landed.
    import subprocess
    import sys

    audit, plan = tmp_path / "audit.jsonl", tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)  # the same reviewed plan for the crashed run and the re-run
    arrived = threading.Event()
    demo.server.inject_fault(
        Fault(NODE + "$", method="PATCH", after=1, before=arrived.set, delay_s=0.5, reset=not landed)
    )  # after its dry-run; served (or dropped) after the kill
    args = demo.args("--plan", plan, "--apply", "--audit-log", audit)
    proc = subprocess.Popen(
        [sys.executable, "-m", "reconciler", *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        assert arrived.wait(30), "the node write never arrived"
        proc.kill()
        proc.wait(10)
    finally:
        proc.kill()
    served = lambda: [r.status for r in demo.server.requests if r.path == NODE and r.method == "PATCH"]  # noqa: E731
    deadline = time.monotonic() + 10
    while len(served()) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert served() == [200, 200 if landed else 0]
    crashed = [(a["object"]["name"], a["result"]) for a in audit_lines(audit)]
    assert crashed[-1] == ("gpu-node-2", "started")  # the only trace of the write in flight
    assert demo.node_label("gpu-node-2") == (None if landed else "True")

    # the re-run takes the dead run's Lease over once it expires
    code, report, err = demo.reconcile_json("--plan", plan, "--apply", "--audit-log", audit)
    assert code == 2 and report["apply"]["ok"], err
    rerun = [(a["object"]["name"], a["result"]) for a in audit_lines(audit)][len(crashed) :]
    assert sorted(rerun) == sorted(
        [
            ("default-parent-queue", "already-applied"),
            ("default-queue", "already-applied"),
            *(
                [("gpu-node-2", "already-applied")]
                if landed
                else [("gpu-node-2", "started"), ("gpu-node-2", "applied")]
            ),
        ]
    )
    assert demo.node_label("gpu-node-2") is None
    writes = [r for r in target_writes(demo) if r.path == NODE and r.status == 200]
    assert len(writes) == 1  # applied once, never twice


def test_max_changes_refuses_a_larger_plan_whole(demo: Demo) -> None:
    code, out, err = demo.reconcile("--apply", "--max-changes", "2")
    assert_one_line_error(code, out, err, "the plan has 3 changes, more than --max-changes 2")
    assert demo.writes() == []


def _held_lease(holder: str, *, renewed: str, duration: int) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "kai-gitops-reconcile", "namespace": "kai-gitops"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": duration,
            "renewTime": renewed,
            "acquireTime": renewed,
            "leaseTransitions": 3,
        },
    }


def test_a_second_run_waits_for_the_lease_then_fails_naming_the_holder(demo: Demo) -> None:
    demo.server.add(_held_lease("other-reconciler_1234", renewed=micro_time(), duration=300))
    started = time.monotonic()
    code, out, err = demo.reconcile("--apply", "--lease-wait", "0.4")
    assert time.monotonic() - started >= 0.4
    assert_one_line_error(
        code,
        out,
        err,
        "another reconciler holds Lease kai-gitops/kai-gitops-reconcile",
        "other-reconciler_1234",
        "nothing was written",
    )
    assert target_writes(demo, dry_run=None) == []


def test_two_concurrent_runs_one_holds_the_other_waits_and_fails(demo: Demo) -> None:
    from reconciler.reconcile.apply import ClusterWriter

    def writer() -> ClusterWriter:
        return ClusterWriter(session_at(demo.server.url))

    first = Lease(writer(), "kai-gitops", wait_s=0, holder="run-a", duration_s=5)
    errors: list[str] = []
    with first:

        def second() -> None:
            try:
                with Lease(writer(), "kai-gitops", wait_s=0.3, holder="run-b", duration_s=5):
                    errors.append("acquired while held")
            except UserError as exc:
                errors.append(exc.message)

        thread = threading.Thread(target=second)
        thread.start()
        thread.join(5)
    assert len(errors) == 1 and "run-a" in errors[0]
    with Lease(writer(), "kai-gitops", wait_s=0.3, holder="run-b", duration_s=5):  # released: free now
        spec = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")["spec"]
        assert spec["holderIdentity"] == "run-b"


def test_an_expired_lease_is_taken_over(demo: Demo) -> None:
    demo.server.add(_held_lease("crashed-run_1", renewed="2026-01-01T00:00:00.000000Z", duration=15))
    _code, report, err = demo.reconcile_json("--apply", "--lease-wait", "0")
    assert report["apply"]["applied"] == 3, err
    lease = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")
    assert lease["spec"]["leaseTransitions"] == 4
    assert "holderIdentity" not in lease["spec"]  # released at the end
    puts = [r for r in demo.server.requests if r.method == "PUT" and r.path.startswith(LEASES)]
    assert puts and all(r.status == 200 for r in puts)


def test_helm_owned_fields_are_taken_over_on_purpose_and_said_so(tmp_path: Path) -> None:
    items = DEMO.prod_addon_snapshot()
    for item in items:
        if item["kind"] == "Queue":
            item["metadata"]["managedFields"] = [
                {
                    "manager": "helm",
                    "operation": "Update",
                    "apiVersion": "scheduling.run.ai/v2",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {
                        "f:spec": {
                            "f:resources": {
                                "f:cpu": {"f:quota": {}},
                                "f:gpu": {"f:quota": {}},
                                "f:memory": {"f:quota": {}},
                            }
                        }
                    },
                }
            ]
    for demo in demo_cluster(tmp_path, items):
        audit = tmp_path / "audit.jsonl"
        _code, report, _ = demo.reconcile_json("--apply", "--audit-log", audit)
        assert report["apply"]["ok"]
        queues = [a for a in audit_lines(audit) if a["object"]["kind"] == "Queue"]
        assert all(a["previousManagers"] == ["helm"] for a in queues)
        events = demo.server.list_objects("events.k8s.io/v1", "Event")
        assert any("taken over from helm" in e["note"] for e in events)
        assert "Default queues are created by Helm" in " ".join(report["plan"]["notes"])


def test_an_event_that_cannot_be_created_is_a_warning_not_a_failure(demo: Demo) -> None:
    demo.server.inject_fault(Fault(r"/apis/events\.k8s\.io/", method="POST", status=403, times=-1))
    _code, report, err = demo.reconcile_json("--apply")
    assert report["apply"]["ok"] and report["apply"]["applied"] == 3, err
    assert len(report["apply"]["warnings"]) == 3 and "HTTP 403" in report["apply"]["warnings"][0]


def test_429_with_retry_after_on_a_write_is_retried(demo: Demo) -> None:
    demo.server.inject_fault(Fault(PARENT + "$", method="PATCH", status=429, retry_after=0.1, after=1))
    _code, report, err = demo.reconcile_json("--apply")
    assert report["apply"]["applied"] == 3, err
    statuses = [r.status for r in demo.server.requests if r.path == PARENT and r.method == "PATCH"]
    assert statuses == [200, 429, 200]  # dry-run, throttled write, the write once more


def test_many_node_changes_are_read_again_with_one_paged_list(tmp_path: Path) -> None:
    from tests.support.helpers import node

    extra = [node(f"gpu-extra-{i:02d}", "true") for i in range(60)]  # dedicated intent: all 60 lose it
    for demo in demo_cluster(tmp_path, [*DEMO.prod_addon_snapshot(), *extra]):
        plan = tmp_path / "plan.json"
        demo.reconcile("--plan-out", plan)
        stale = demo.server.get_object("v1", "Node", "gpu-extra-07")
        stale["metadata"]["labels"]["nvca.nvcf.nvidia.io/schedule"] = "false"
        del stale["metadata"]["resourceVersion"]
        demo.server.add(stale)
        since = len(demo.server.requests)
        code, out, err = demo.reconcile("--plan", plan, "--apply", "--max-changes", "100")
        assert_one_line_error(
            code,
            out,
            err,
            'Node/gpu-extra-07 metadata.labels["nvca.nvcf.nvidia.io/schedule"] is "false", the plan expected "true"',
        )
        node_gets = [
            r for r in demo.server.requests[since:] if r.method == "GET" and r.path.startswith("/api/v1/nodes")
        ]
        assert {r.path for r in node_gets} == {"/api/v1/nodes"}  # the run's live read lists too; no GET per node
        assert target_writes(demo, dry_run=None) == []


def test_a_failing_re_read_is_one_line_and_nothing_is_written(demo: Demo) -> None:
    demo.server.inject_fault(Fault(PARENT + "$", method="GET", status=403, after=0, times=-1))
    code, out, err = demo.reconcile("--apply")
    assert_one_line_error(
        code,
        out,
        err,
        "reading the planned objects again failed, nothing was written",
        "HTTP 403",
        "grant the fixer role",
    )
    assert target_writes(demo, dry_run=None) == []


def _lease_spec(demo: Demo) -> dict[str, Any]:
    lease = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")
    assert lease is not None
    return dict(lease["spec"])


def test_a_held_lease_is_renewed_and_a_lost_one_stops_the_writes(demo: Demo) -> None:
    from reconciler.plans.saved import read_plan
    from reconciler.reconcile.apply import ClusterWriter, Pending, apply_changes

    writer = ClusterWriter(session_at(demo.server.url))
    with Lease(writer, "kai-gitops", wait_s=0, holder="run-a", duration_s=1) as lease:
        first = _lease_spec(demo)["renewTime"]
        deadline = time.monotonic() + 3
        while _lease_spec(demo)["renewTime"] == first and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _lease_spec(demo)["renewTime"] != first and lease.lost is None
        taken = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")
        taken["spec"]["holderIdentity"] = "intruder"
        del taken["metadata"]["resourceVersion"]
        demo.server.add(taken)  # someone took it over: the next renewal conflicts
        while lease.lost is None and time.monotonic() < deadline + 3:
            time.sleep(0.05)
        assert lease.lost and "could not be renewed" in lease.lost
        plan_file = demo.tmp / "plan.json"
        demo.reconcile("--plan-out", plan_file)
        pending = [Pending(c, None) for c in read_plan(str(plan_file)).changes]
        results = apply_changes(writer, pending, lambda _r: None, lost=lambda: lease.lost)
    assert {r.result for r in results} == {"not-attempted"}
    assert _lease_spec(demo)["holderIdentity"] == "intruder"  # release leaves a lease it lost alone


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("DELETE", "/apis/scheduling.run.ai/v2/queues/default-queue", None),
        ("PATCH", "/api/v1/namespaces/kai-scheduler/secrets/sh.helm.release.v1.kai-scheduler.v1", {"data": {}}),
        ("PATCH", "/api/v1/namespaces/nvcf-backend/pods/fn-llama-1", {"spec": {"schedulerName": "x"}}),
        ("POST", "/api/v1/namespaces/default/pods", {"metadata": {"name": "p"}}),
        ("PUT", "/apis/scheduling.run.ai/v2/queues/default-queue", {"spec": {}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/default-queue", {"spec": {"priority": 1}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/default-queue", {"metadata": {"labels": {"a": "b"}}}),
        ("PATCH", "/api/v1/nodes/gpu-node-2", {"metadata": {"labels": {"other": "x"}}}),
        ("PATCH", "/api/v1/nodes/gpu-node-2", {"metadata": {"labels": {"nvca.nvcf.nvidia.io/schedule": "True"}}}),
        ("PATCH", "/api/v1/nodes/gpu-node-2", {"spec": {"unschedulable": True}}),
        ("POST", "/apis/coordination.k8s.io/v1/namespaces/kai-gitops/leases/x/y", {}),
    ],
)
def test_the_writer_cannot_send_any_other_write(demo: Demo, method: str, path: str, body: Any) -> None:
    from reconciler.reconcile.apply import MERGE_PATCH, ClusterWriter, WriteForbidden

    writer = ClusterWriter(session_at(demo.server.url))
    with pytest.raises(WriteForbidden):
        writer._request(method, path, body, MERGE_PATCH if method == "PATCH" else None)
    assert demo.server.requests == []


def test_a_re_applied_plan_says_already_applied_not_not_applied(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    demo.reconcile("--plan-out", plan)
    demo.reconcile("--plan", plan, "--apply")
    _code, out, err = demo.reconcile("--plan", plan, "--apply")
    assert "Apply complete: 0 applied, 3 already applied, 0 failed, 0 not applied (of 3)." in out, out + err
