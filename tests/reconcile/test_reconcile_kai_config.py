"""`reconcile` patches a drifted kai-config (KAI-D-005) with the guard rails of the Queue patches: dry run,
field manager, resourceVersion precondition, per-field staleness, only the allowed fields of the one
Config the operator reads. The expected spec is the NVCF stack's golden render (tests/fixtures/nvcf/golden)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.refs import ObjectRef
from reconciler.plans.plan import Change, FieldChange, Operation
from reconciler.plans.validate import check_change
from reconciler.reconcile.allowed_writes import MERGE_PATCH, WriteForbidden, check_write
from tests.support.helpers import assert_one_line_error
from tests.support.reconcile_kai_config import CONFIG_PATH, GOLDEN, drifted_spec, stored_spec
from tests.support.reconcile_support import DEMO, Demo, demo_cluster


@pytest.fixture
def demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Demo]:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    items = [
        *[i for i in DEMO.prod_addon_snapshot() if i["kind"] != "Config"],
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "Config",
            "metadata": {"name": "kai-config"},
            "spec": drifted_spec(),
        },
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "Config",
            "metadata": {"name": "not-the-singleton"},
            "spec": {"admission": {"gpuSharing": True}},
        },
    ]
    yield from demo_cluster(tmp_path, items)


def test_the_demos_prod_kai_config_has_gpu_sharing_turned_on_by_hand() -> None:
    [config] = [i for i in DEMO.prod_addon_snapshot() if i["kind"] == "Config"]
    expected = copy.deepcopy(GOLDEN)  # the stack's render of prod's environment equals the golden one
    expected["admission"]["gpuSharing"] = True
    assert config["spec"] == expected


def test_plan_shows_each_kai_config_field_and_apply_patches_them_and_reads_back(demo: Demo, tmp_path: Path) -> None:
    code, report, err = demo.reconcile_json()
    assert code == 2, err
    [change] = [c for c in report["plan"]["changes"] if c["object"]["kind"] == "Config"]
    assert change["rules"] == ["KAI-D-005"] and change["operation"] == "update"
    resources = GOLDEN["scheduler"]["service"]["resources"]
    assert {(".".join(f["path"]), json.dumps(f["before"]), json.dumps(f["after"])) for f in change["fields"]} == {
        ("spec.admission.gpuSharing", "true", "false"),
        (
            "spec.scheduler.service.resources",
            json.dumps({"limits": {"cpu": "4000m"}, "requests": resources["requests"]}),
            json.dumps(resources),
        ),
    }
    # Git leaves nodePoolLabelKey to the operator's in-memory default: no intent, so no write, but an operator item
    [held] = [o for o in report["plan"]["operator"] if o["subject"] and o["subject"]["kind"] == "Config"]
    assert held["rule"] == "KAI-D-005"
    assert held["description"] == (
        "not written by kai-gitops: spec.global.nodePoolLabelKey (Git's value is an "
        "operator default (nothing renders it))"
    )

    audit = tmp_path / "audit.jsonl"
    code, applied, err = demo.reconcile_json("--apply", "--audit-log", audit)
    assert applied["apply"]["ok"], err
    # read back: exactly Git's render, and the field no intent covers as it was
    assert stored_spec(demo) == {**GOLDEN, "global": {**GOLDEN["global"], "nodePoolLabelKey": "team.example/pool"}}
    writes = [r for r in demo.writes() if r.path == CONFIG_PATH]
    assert [(r.method, r.query.get("dryRun")) for r in writes] == [("PATCH", "All"), ("PATCH", None)]
    assert all(r.query.get("fieldManager") == "kai-gitops" for r in writes)
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    config_lines = [a for a in lines if a["object"]["kind"] == "Config"]
    assert [a["result"] for a in config_lines] == ["started", "applied"]
    assert config_lines[0]["resourceVersion"]  # the write's precondition
    assert not [r for r in demo.writes() if "/configs/not-the-singleton" in r.path]
    events = demo.server.list_objects("events.k8s.io/v1", "Event")
    assert any(e["regarding"]["kind"] == "Config" and e["reason"] == "ConfigUpdated" for e in events)

    code, again, _ = demo.reconcile_json()
    assert [c for c in again["plan"]["changes"] if c["object"]["kind"] == "Config"] == []
    # nothing diff reports is lost: the field left unwritten is still a finding
    [left] = [f for f in again["findings"] if f["rule"] == "KAI-D-005"]
    assert "global.nodePoolLabelKey" in left["message"] and "admission.gpuSharing" not in left["message"]


def test_a_kai_config_field_changed_since_the_plan_refuses_the_plan(demo: Demo, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    code, _, err = demo.reconcile("--plan-out", plan)
    assert code == 2, err
    config = demo.server.get_object("kai.scheduler/v1", "Config", "kai-config")
    assert config is not None
    config["spec"]["admission"]["gpuSharing"] = "yes"
    del config["metadata"]["resourceVersion"]
    demo.server.add(config)  # someone else edits one planned field
    before = len(demo.server.requests)
    code, out, err = demo.reconcile("--plan", plan, "--apply")
    assert_one_line_error(
        code,
        out,
        err,
        "the plan is stale, nothing was written",
        'Config/kai-config spec.admission.gpuSharing is "yes", the plan expected true',
    )
    assert [
        r
        for r in demo.server.requests[before:]
        if r.method not in ("GET",) and "/leases" not in r.path and "/events" not in r.path
    ] == []
    assert stored_spec(demo)["admission"]["gpuSharing"] == "yes"


KAI_CONFIG = ObjectRef("kai.scheduler/v1", "Config", "kai-config")


@pytest.mark.parametrize(
    ("ref", "field", "after", "refused"),
    [
        (KAI_CONFIG, ("spec", "admission", "gpuSharing"), "true", "only true, false or removal"),
        (KAI_CONFIG, ("spec", "admission", "madeUp"), True, "is not one kai-gitops may write"),
        (
            ObjectRef("kai.scheduler/v1", "Config", "other"),
            ("spec", "admission", "gpuSharing"),
            True,
            "is not one kai-gitops may write",
        ),
    ],
)
def test_a_plan_may_change_only_kai_configs_fields_with_their_types(
    ref: ObjectRef, field: tuple[str, ...], after: Any, refused: str
) -> None:
    from reconciler.core.errors import UserError

    with pytest.raises(UserError, match=refused):
        check_change(Change(ref, Operation.UPDATE, (FieldChange(field, None, after),), ("KAI-D-005",), "x"), "plan")


def test_the_write_guard_lets_only_kai_config_spec_patches_through() -> None:
    check_write("PATCH", CONFIG_PATH, {"spec": {"admission": {"gpuSharing": False}}}, MERGE_PATCH)
    for path, body in (
        (CONFIG_PATH, {"metadata": {"labels": {"a": "b"}}}),
        ("/apis/kai.scheduler/v1/configs/other", {"spec": {"admission": {"gpuSharing": False}}}),
        (CONFIG_PATH, {"spec": {"admission": {"gpuSharing": "no"}}}),
    ):
        with pytest.raises(WriteForbidden):
            check_write("PATCH", path, body, MERGE_PATCH)
    with pytest.raises(WriteForbidden):
        check_write("DELETE", CONFIG_PATH, None, None)
