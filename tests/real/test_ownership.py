"""Ownership decides, on the real API server: a Queue field another manager owns through a real server-side apply
is never written (KAI-D-008 says whose it is and where its value comes from), a person's edit beside it is
undone, and the server's own conflict answer (a server-side dry-run as kai-gitops, force=false) agrees: the
fields the plan writes conflict with no controller but the KAI release's Helm install of the default queues,
which kai-gitops takes over on purpose (docs/reconcile.md#who-owns-a-field)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.kai_cluster import CHILD, KaiCluster
from tests.support.real_attribution import TEAM_CHART
from tests.support.real_ownership import KRM_APPLY, server_side_apply


def reconcile_json(cluster: KaiCluster, *extra: Any) -> dict[str, Any]:
    result = cluster.run("reconcile", "-o", "json", *extra)
    assert result.code in (0, 2), result
    report: dict[str, Any] = json.loads(result.out)
    return report


def planned(report: dict[str, Any], name: str) -> dict[str, Any]:
    return {
        ".".join(f["path"]): f["after"]
        for c in report["plan"]["changes"]
        if c["object"]["name"] == name
        for f in c["fields"]
    }


def owned_findings(report: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == "KAI-D-008" and f["subject"]["name"] == name]


def as_apply(name: str, fields: dict[str, Any]) -> str:
    """The plan's fields of Queue `name` as an apply configuration."""
    spec: dict[str, Any] = {}
    for dotted, value in fields.items():
        node = spec
        *parents, leaf = dotted.split(".")[1:]
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    return json.dumps({"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec})


@pytest.fixture
def krm_owned(cluster: KaiCluster) -> KaiCluster:
    """The seed's trap, then KAI Resource Management's project controller takes default-queue's gpu quota by a
    real server-side apply (as it takes over a queue whose name a project would generate), and a person patches
    its memory limit with kubectl."""
    cluster.install_trapped()
    done = server_side_apply(cluster, "project-controller", KRM_APPLY, "--force-conflicts")
    assert done.returncode == 0, done.stderr
    cluster.kubectl(
        "patch",
        "queues.scheduling.run.ai",
        CHILD,
        "--type",
        "merge",
        "-p",
        '{"spec": {"resources": {"memory": {"limit": 5}}}}',
    )
    return cluster


def test_a_queue_field_krm_owns_is_never_written_and_a_hand_edit_beside_it_is_undone(krm_owned: KaiCluster) -> None:
    cluster = krm_owned
    report = reconcile_json(cluster)
    fields = planned(report, CHILD)
    assert "spec.resources.gpu.quota" not in fields
    assert fields["spec.resources.memory.limit"] == -1 and fields["spec.resources.cpu.quota"] == -1
    (finding,) = owned_findings(report, CHILD)
    (held,) = finding["details"]["fields"]
    assert (held["field"], held["manager"], held["controller"]) == (
        "gpu.quota",
        "project-controller",
        "KAI Resource Management",
    )
    assert held["source"].endswith("generates Queue default-queue: resources.gpu.deserved")
    assert "KAI-D-008" in [s["rule"] for s in report["plan"]["operator"]]

    audit = cluster.tmp / "audit.jsonl"
    result = cluster.run("reconcile", "--apply", "--audit-log", audit)
    assert "Apply complete:" in result.out, result
    queue = cluster.triples(CHILD)
    assert queue["gpu"]["quota"] == 4  # left to KAI Resource Management
    assert queue["memory"]["limit"] == -1 and queue["cpu"]["quota"] == -1  # the hand edit and the trap, undone
    written = [
        tuple(f["path"])
        for line in audit.read_text().splitlines()
        for f in json.loads(line)["fields"]
        if json.loads(line)["object"]["name"] == CHILD
    ]
    assert written and ("spec", "resources", "gpu", "quota") not in written
    managers = {e["manager"]: e for e in cluster.queue(CHILD)["metadata"]["managedFields"]}
    assert "f:quota" in managers["project-controller"]["fieldsV1"]["f:spec"]["f:resources"]["f:gpu"]
    again = reconcile_json(cluster)
    assert planned(again, CHILD) == {} and owned_findings(again, CHILD)  # nothing to fight over next time


def test_the_servers_conflict_answer_agrees_with_the_plan(krm_owned: KaiCluster) -> None:
    cluster = krm_owned
    fields = planned(reconcile_json(cluster), CHILD)
    # Every planned field as a server-side apply by kai-gitops without force: the server names each other
    # manager of a field it would change. Only Helm's install of the KAI release's default queue and the
    # person's kubectl patch may be among them; never the controller.
    answer = server_side_apply(cluster, "kai-gitops", as_apply(CHILD, fields), "--dry-run=server")
    assert answer.returncode != 0 and "conflict" in answer.stderr, answer
    assert '"helm"' in answer.stderr and "project-controller" not in answer.stderr, answer.stderr
    # The field the plan leaves alone is the controller's, as the server sees it.
    held = server_side_apply(
        cluster, "kai-gitops", as_apply(CHILD, {"spec.resources.gpu.quota": -1}), "--dry-run=server"
    )
    assert held.returncode != 0 and '"project-controller"' in held.stderr, held


def test_a_queue_another_helm_release_manages_is_that_releases(cluster: KaiCluster, tmp_path: Path) -> None:
    chart = tmp_path / "team-queues"
    for name, text in TEAM_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    cluster.helm("install", "team", str(chart), "--namespace", "teams", "--create-namespace", "--set", "cpuQuota=2")
    report = reconcile_json(cluster)
    assert planned(report, CHILD) == {}
    (finding,) = owned_findings(report, CHILD)
    assert [(f["field"], f["manager"], f["source"]) for f in finding["details"]["fields"]] == [
        ("cpu.quota", "helm", "the values of Helm release teams/team (helm upgrade)")
    ]
    assert cluster.run("reconcile", "--apply").code in (0, 2)
    assert cluster.triples(CHILD)["cpu"]["quota"] == 2
