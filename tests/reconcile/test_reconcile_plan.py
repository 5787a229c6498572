"""`kai-gitops reconcile` without --apply: the plan, its JSON and saved form, and that it writes nothing."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import queue_ref
from reconciler.outputs.plan_text import render_plan
from reconciler.plans.plan import Change, ClusterIdentity, FieldChange, Operation, Plan
from reconciler.plans.saved import plan_from_dict, read_plan
from reconciler.plans.writable import LABEL_PATH
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, run_cli
from tests.support.reconcile_support import DEMO, Demo, demo_cluster


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def test_plan_text_shows_field_level_changes_and_writes_nothing(demo: Demo) -> None:
    code, out, err = demo.reconcile()
    assert code == 2, err
    assert "~ update Queue/default-parent-queue  (KAI-D-002)" in out
    assert "spec.resources.cpu.quota     0 → -1" in out
    assert "~ update Node/gpu-node-2  (NVCA-S-012)" in out
    assert 'metadata.labels["nvca.nvcf.nvidia.io/schedule"]  "True" → <none>' in out
    assert "! operator KAI-R-011 HelmRelease/runai/kai" in out
    assert "run: helm uninstall kai --namespace runai" in out
    assert "! operator KAI-O-004 Pod/kai-scheduler/kai-scheduler-default-7d9f5c6b8-x2k4q" in out  # the 401 window
    assert "run: kubectl -n kai-scheduler rollout restart deployment/kai-scheduler-default\n" in out
    assert "Plan: 0 to create, 3 to change, 6 for the operator." in out
    assert f"for {demo.server.url} (kube-system " in out
    assert demo.writes() == []
    assert demo.queue("default-parent-queue")["spec"]["resources"]["cpu"]["quota"] == 0


def test_json_is_the_diff_report_plus_the_plan(demo: Demo) -> None:
    code, report, _ = demo.reconcile_json()
    diff_code, diff_out, _ = run_cli(
        ["diff", "--repo", demo.repo, "--cluster", "prod-addon", "--kubeconfig", demo.kubeconfig, "-o", "json"]
    )
    diff = json.loads(diff_out)
    assert code == 2 and diff_code == 2
    assert report["command"] == "reconcile"
    assert report["summary"] == diff["summary"]
    assert {k for k in diff if k != "command"} <= set(report)
    plan = report["plan"]
    assert plan["kind"] == "kai-gitops/plan" and plan["version"] == 1
    assert plan["summary"] == {"create": 0, "update": 3, "operator": 6}
    uid = demo.server.get_object("v1", "Namespace", "kube-system")["metadata"]["uid"]
    assert plan["clusterIdentity"] == {"server": demo.server.url, "kubeSystemUID": uid}
    assert plan["git"]["commit"] == report["git"]["commit"]
    first = plan["changes"][0]
    assert first["object"]["name"] == "default-parent-queue" and first["operation"] == "update"
    assert {"path": ["spec", "resources", "cpu", "quota"], "before": 0, "after": -1} in first["fields"]
    assert report["apply"] is None


def test_saved_plan_round_trips_and_its_id_is_a_content_hash(demo: Demo, tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    code, report, _ = demo.reconcile_json("--plan-out", out)
    assert code == 2
    saved = json.loads(out.read_text())
    assert saved["id"] == report["plan"]["id"]
    plan = read_plan(str(out))
    assert plan.to_dict() == saved
    again = tmp_path / "again.json"
    demo.reconcile("--plan-out", again)
    assert json.loads(again.read_text())["id"] == saved["id"]  # same content, same id
    saved["changes"][0]["fields"][0]["after"] = -2
    out.write_text(json.dumps(saved))
    with pytest.raises(UserError, match="does not match its content"):
        read_plan(str(out))


def test_a_plan_that_asks_for_a_forbidden_write_is_refused_on_load(tmp_path: Path) -> None:
    secret = Change(
        ObjectRef("v1", "Secret", "s", "default"),
        Operation.UPDATE,
        (FieldChange(("data", "token"), None, "x"),),
        (),
        "steal",
    )
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(Plan("prod", None, ClusterIdentity("https://x", "u"), (secret,)).to_dict()))
    with pytest.raises(UserError, match="is not one kai-gitops may write"):
        read_plan(str(path))
    label = Change(ObjectRef("v1", "Node", "n1"), Operation.UPDATE, (FieldChange(LABEL_PATH, None, "yes"),), (), "")
    path.write_text(json.dumps(Plan("prod", None, None, (label,)).to_dict()))
    with pytest.raises(UserError, match='only "true" or removal'):
        read_plan(str(path))


def test_snapshot_shows_the_plan_without_identity_and_cannot_apply(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    args = ["reconcile", "--repo", repo, "--cluster", "prod-addon", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml"]
    code, out, err = run_cli(args)
    assert code == 2, err
    assert "no cluster identity: a snapshot" in out and "Plan: 0 to create, 4 to change" in out


def test_missing_queue_is_planned_as_a_create_with_its_spec(tmp_path: Path) -> None:
    items = [
        i for i in DEMO.prod_addon_snapshot() if not (i["kind"] == "Queue" and i["metadata"]["name"] == "default-queue")
    ]
    for cluster in demo_cluster(tmp_path, items):
        code, report, _ = cluster.reconcile_json()
        assert code == 2
        creates = [c for c in report["plan"]["changes"] if c["operation"] == "create"]
        assert [c["object"]["name"] for c in creates] == ["default-queue"]
        assert creates[0]["manifest"]["spec"]["parentQueue"] == "default-parent-queue"
        assert all(f["before"] is None for f in creates[0]["fields"])
        text = "\n".join(render_plan(plan_from_dict(report["plan"], "test")))
        assert "+ create Queue/default-queue" in text and "spec.parentQueue" in text


def test_contradictory_options_are_refused_before_any_read(demo: Demo, tmp_path: Path) -> None:
    assert_one_line_error(*demo.reconcile("--plan", tmp_path / "a.json"), "--plan FILE is applied with --apply")
    assert_one_line_error(
        *demo.reconcile("--plan", tmp_path / "a.json", "--apply", "--plan-out", tmp_path / "b"),
        "--plan and --plan-out cannot be combined",
    )
    assert demo.server.requests == []


def test_shared_intent_labels_nodes_and_leaves_missing_ones_to_the_operator(tmp_path: Path) -> None:
    from tests.support.helpers import snapshot_file

    items = [i for i in DEMO.lab_standalone_snapshot() if i["metadata"]["name"] != "lab-gpu-1"]
    for item in items:
        if item["kind"] == "Node":
            item["metadata"]["labels"].pop("nvca.nvcf.nvidia.io/schedule", None)
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    code, out, err = run_cli(
        [
            "reconcile",
            "--repo",
            repo,
            "--ref",
            "HEAD~1",
            "--cluster",
            "lab-standalone",
            "--snapshot",
            snapshot_file(tmp_path, items),
            "-o",
            "json",
        ]
    )
    assert code == 2, err
    plan = json.loads(out)["plan"]
    labels = [(c["object"]["name"], c["fields"][0]["after"], c["rules"]) for c in plan["changes"]]
    assert labels == [("lab-gpu-2", "true", ["NVCA-S-011"])], err
    assert "NVCA-S-011" in [o["rule"] for o in plan["operator"]]  # lab-gpu-1 is not in the cluster


def test_render_of_an_empty_plan_says_so() -> None:
    lines = render_plan(Plan("prod", None, None, ()))
    assert lines[-1] == "Plan: 0 to create, 0 to change, 0 for the operator."
    assert "No changes" in lines[0]
    assert queue_ref("q").kind == "Queue"


def test_a_clean_cluster_has_nothing_to_do_and_exits_0(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    code, out, err = run_cli(
        [
            "reconcile",
            "--repo",
            repo,
            "--ref",
            "HEAD~1",
            "--cluster",
            "lab-standalone",
            "--snapshot",
            DEMO_SNAPSHOTS / "lab-standalone.yaml",
        ]
    )
    assert code == 0, out + err
    assert "No changes" in out and "Plan: 0 to create, 0 to change, 0 for the operator." in out


def test_diff_counts_its_plan_line_as_reconcile_plans_it(demo_repo: Path) -> None:
    """The same state, the same Plan: line: operator commands from violations (KAI-R-011's helm uninstall, the
    releases' helm upgrade) and the node label a plan sets were counted by reconcile only."""
    snapshot = ["--repo", demo_repo, "--cluster", "prod-addon", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml"]
    _code, diff_out, _ = run_cli(["diff", *snapshot])
    _code, reconcile_out, _ = run_cli(["reconcile", *snapshot])
    [diff_plan] = [line.split(". Plan: ")[1].split(". ")[0] for line in diff_out.splitlines() if ". Plan: " in line]
    [reconcile_plan] = [
        line.removeprefix("Plan: ").rstrip(".") for line in reconcile_out.splitlines() if line.startswith("Plan: ")
    ]
    assert diff_plan == reconcile_plan and not reconcile_plan.endswith(" 0 for the operator"), reconcile_out


def test_every_format_renders_the_run_through_the_registry(demo: Demo, tmp_path: Path) -> None:
    """`-o FMT=PATH` behaves as for the other commands: one run feeds every format; text, JSON, JSON Lines and
    Markdown carry the plan, the rest the findings; text on stdout is the plan."""
    from reconciler.outputs import FORMATS

    files = {fmt: tmp_path / f"out.{fmt}" for fmt in FORMATS if fmt != "text"}
    code, out, err = demo.reconcile("-o", "text", *(f"-o{fmt}={path}" for fmt, path in files.items()))
    assert code == 2, err
    assert "Plan: 0 to create, 3 to change, 6 for the operator." in out
    document = json.loads(files["json"].read_text())
    assert json.loads(files["jsonl"].read_text()) == document and document["plan"]["summary"]["update"] == 3
    markdown = files["markdown"].read_text()
    assert "### Plan `" in markdown and "~ update Queue/default-parent-queue  (KAI-D-002)" in markdown
    assert markdown.index("## ") < markdown.index("### Plan")  # the findings first, as for diff
    sarif = json.loads(files["sarif"].read_text())
    assert sarif["runs"][0]["results"] and "plan" not in sarif
    assert "title=KAI-D-002" in files["github"].read_text()
    assert "KAI-D-002" in files["junit"].read_text() and "KAI-D-002" in files["gitlab"].read_text()
