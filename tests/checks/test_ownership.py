"""Ownership decides (checks/ownership.py): a drifted field another controller owns is reported (KAI-D-008) with
where its value comes from and never planned; a person's edit is still undone; Helm's fields on the KAI release's
install-only default queues are still taken over. The real API server's side is tests/real/test_ownership.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.ownership import BUILTIN_CONTROLLERS, controller_of, controllers, overlaps
from reconciler.core.errors import UserError
from reconciler.sources.repoconfig import parse_repo_config
from tests.support.checks_ownership import LATER, TIME, managed
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    canonical_shard,
    kai_crds,
    make_repo,
    queue,
    run_cli,
    snapshot_file,
    standalone_config,
)

KAI_RELEASE = {"meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai-scheduler"}


def quota(*resources: str) -> dict[str, Any]:
    return {"f:spec": {"f:resources": {f"f:{r}": {"f:quota": {}} for r in resources}}}


def lab(
    tmp_path: Path,
    entries: list[dict[str, Any]],
    *,
    release: dict[str, str] | None = None,
    extra: str = "",
    files: dict[str, str] | None = None,
) -> tuple[Path, Path]:
    """The lab's default-queue with cpu, gpu and memory quota drifted (0, 4, 0 where Git says -1), each field
    owned by the manager `entries` give it."""
    repo, _ = make_repo(
        tmp_path,
        {"kai-gitops.yaml": standalone_config(extra=extra), "kai-values.yaml": CANONICAL_KAI_VALUES, **(files or {})},
    )
    child = queue("default-queue", parent="default-parent-queue")
    for resource, value in (("cpu", 0), ("gpu", 4), ("memory", 0)):
        child["spec"]["resources"][resource]["quota"] = value
    child["metadata"].update(annotations=dict(release if release is not None else KAI_RELEASE), managedFields=entries)
    snap = snapshot_file(tmp_path, [*kai_crds(), queue("default-parent-queue"), child, canonical_shard()])
    return repo, snap


def reconcile(repo: Path, snap: Path) -> dict[str, Any]:
    code, out, err = run_cli(["reconcile", "--repo", repo, "--cluster", "lab", "--snapshot", snap, "-o", "json"])
    assert code == 2, err
    report: dict[str, Any] = json.loads(out)
    return report


def planned(report: dict[str, Any], name: str = "default-queue") -> set[str]:
    return {
        ".".join(f["path"][2:]) for c in report["plan"]["changes"] if c["object"]["name"] == name for f in c["fields"]
    }


def owned(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [f for f in report["findings"] if f["rule"] == "KAI-D-008"]


def test_a_field_krm_owns_is_not_planned_and_its_finding_names_the_project_queue_entry(tmp_path: Path) -> None:
    entries = [
        managed("helm", quota("memory")),
        managed("kubectl-edit", quota("cpu"), time=LATER),
        managed("project-controller", quota("gpu"), operation="Apply", time=LATER),
    ]
    report = reconcile(*lab(tmp_path, entries))
    # the hand edit is undone; Helm's field on the KAI release's default queue is taken over (HELM_NOTE)
    assert planned(report) == {"cpu.quota", "memory.quota"}
    (finding,) = owned(report)
    assert finding["subject"]["name"] == "default-queue" and finding["severity"] == "warning"
    assert finding["details"]["fields"] == [
        {
            "field": "gpu.quota",
            "path": ["spec", "resources", "gpu", "quota"],
            "manager": "project-controller",
            "controller": "KAI Resource Management",
            "source": "the Project or Department whose spec.queues[] entry generates Queue default-queue: "
            "resources.gpu.deserved",
        }
    ]
    assert "gpu.quota (manager project-controller, KAI Resource Management" in finding["message"]
    steps = report["plan"]["operator"]
    assert [s["rule"] for s in steps if s["rule"] == "KAI-D-008"] == ["KAI-D-008"]
    assert any(f["rule"] == "KAI-D-002" for f in report["findings"])  # the drift itself is still reported


def test_a_waived_ownership_finding_still_leaves_the_field_to_its_controller(tmp_path: Path) -> None:
    waivers = (
        "waivers:\n  - rule: KAI-D-008\n    subject: '*'\n    reason: known\n    owner: team@example.com\n"
        '    expires: "2099-12-31"\n'
    )
    entries = [managed("project-controller", quota("gpu"), operation="Apply")]
    report = reconcile(*lab(tmp_path, entries, files={"kai-gitops-waivers.yaml": waivers}))
    (finding,) = owned(report)
    assert finding["waived_by"] and "gpu.quota" not in planned(report)
    assert "KAI-D-008" not in [s["rule"] for s in report["plan"]["operator"]]


def test_every_field_held_leaves_no_change_and_no_kubectl_patch_for_the_operator(tmp_path: Path) -> None:
    entries = [managed("argocd-controller", quota("cpu", "gpu", "memory"), operation="Apply")]
    report = reconcile(*lab(tmp_path, entries))
    assert planned(report) == set()
    (finding,) = owned(report)
    assert {f["field"] for f in finding["details"]["fields"]} == {"cpu.quota", "gpu.quota", "memory.quota"}
    assert "the Argo CD Application that syncs Queue/default-queue" in finding["fix"]["description"]
    rules = [s["rule"] for s in report["plan"]["operator"] if (s.get("subject") or {}).get("name") == "default-queue"]
    assert "KAI-D-008" in rules and "KAI-D-002" not in rules  # no `kubectl patch` that would start a fight


def test_another_helm_release_owns_its_queue_fields_but_the_kai_release_default_queue_is_taken_over(
    tmp_path: Path,
) -> None:
    entries = [managed("helm", quota("cpu", "gpu", "memory"))]
    team = {"meta.helm.sh/release-name": "team", "meta.helm.sh/release-namespace": "teams"}
    report = reconcile(*lab(tmp_path / "team", entries, release=team))
    assert planned(report) == set()
    (finding,) = owned(report)
    assert {f["source"] for f in finding["details"]["fields"]} == {
        "the values of Helm release teams/team (helm upgrade)"
    }
    report = reconcile(*lab(tmp_path / "kai", entries))
    assert planned(report) == {"cpu.quota", "gpu.quota", "memory.quota"} and not owned(report)
    assert any("Default queues are created by Helm" in n for n in report["plan"]["notes"])


def test_kai_gitops_yaml_adds_controllers_and_a_person_is_never_one(tmp_path: Path) -> None:
    entries = [
        managed("queue-syncer", quota("cpu")),
        managed("kubectl-patch", quota("gpu")),
        managed("kai-gitops", quota("memory")),
    ]
    report = reconcile(*lab(tmp_path, entries, extra="ownership:\n  controllers: [queue-sync*, kai-gitops]\n"))
    assert planned(report) == {"gpu.quota", "memory.quota"}
    (finding,) = owned(report)
    assert [(f["field"], f["manager"]) for f in finding["details"]["fields"]] == [("cpu.quota", "queue-syncer")]
    assert finding["details"]["fields"][0]["controller"] == "field manager queue-sync* (ownership.controllers)"


def test_a_queue_without_managed_fields_is_planned_as_before(tmp_path: Path) -> None:
    report = reconcile(*lab(tmp_path, []))
    assert planned(report) == {"cpu.quota", "gpu.quota", "memory.quota"} and not owned(report)


def test_diff_reports_the_owned_field_too(tmp_path: Path) -> None:
    repo, snap = lab(tmp_path, [managed("nodepool-controller", quota("gpu"), operation="Apply")])
    code, out, err = run_cli(["diff", "--repo", repo, "--cluster", "lab", "--snapshot", snap, "-o", "json"])
    assert code == 2, err
    assert [f["rule"] for f in json.loads(out)["findings"] if f["rule"] == "KAI-D-008"] == ["KAI-D-008"]
    code, out, err = run_cli(["diff", "--repo", repo, "--cluster", "lab", "--snapshot", snap])
    assert "KAI-D-008" in out and "nodepool-controller" in out


def test_people_and_kai_gitops_are_not_controllers() -> None:
    known = controllers(["team-*"])
    for person in (
        "kubectl-edit",
        "kubectl-patch",
        "kubectl-client-side-apply",
        "kubectl",
        "kubectl-label",
        "kai-gitops",
        None,
    ):
        assert controller_of(person, known) is None, person
    assert controller_of("team-sync", known) is not None
    assert {c.pattern for c in BUILTIN_CONTROLLERS} >= {
        "helm",
        "kai-config-deployer",
        "project-controller",
        "argocd-controller",
        "kustomize-controller",
    }


def test_a_write_of_a_parent_field_would_rewrite_a_held_child_and_is_held_too() -> None:
    held = (("spec", "resources", "gpu", "quota"),)
    assert overlaps(("spec", "resources"), held) and overlaps(("spec", "resources", "gpu", "quota", "x"), held)
    assert not overlaps(("spec", "resources", "gpu", "limit"), held)


@pytest.mark.parametrize(
    "block", ["ownership:\n  controllers: ['']\n", "ownership:\n  other: 1\n", "ownership:\n  controllers: [a, a]\n"]
)
def test_a_bad_ownership_block_is_one_error_naming_its_line(block: str) -> None:
    text = standalone_config(extra=block)
    with pytest.raises(UserError) as caught:
        parse_repo_config(text.encode())
    assert caught.value.where and "kai-gitops.yaml:" in str(caught.value.where)


def test_the_ownership_block_is_read() -> None:
    config = parse_repo_config(standalone_config(extra="ownership:\n  controllers: [a-*, b]\n").encode())
    assert config.ownership.controllers == ("a-*", "b")
    assert parse_repo_config(standalone_config().encode()).ownership.controllers == ()


# -- controller fights: a field kai-gitops wrote, written back by another manager -------------------------------

OUR_WRITE = "2026-11-30T10:17:03.123456Z"


def audit_line(name: str, *paths: tuple[str, ...], result: str = "applied", cluster: str = "lab") -> str:
    return (
        json.dumps(
            {
                "time": OUR_WRITE,
                "planId": "p",
                "cluster": cluster,
                "server": "https://x",
                "holder": "h",
                "object": {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "namespace": None, "name": name},
                "operation": "update",
                "fields": [{"path": list(p), "before": 0, "after": -1} for p in paths],
                "result": result,
                "error": None,
                "resourceVersion": "7",
                "previousManagers": ["helm"],
                "rules": ["KAI-D-002"],
            }
        )
        + "\n"
    )


def reconcile_with_log(repo: Path, snap: Path, log: Path) -> dict[str, Any]:
    code, out, err = run_cli(
        ["reconcile", "--repo", repo, "--cluster", "lab", "--snapshot", snap, "--audit-log", log, "-o", "json"]
    )
    assert code == 2, err
    report: dict[str, Any] = json.loads(out)
    return report


GPU = ("spec", "resources", "gpu", "quota")
CPU = ("spec", "resources", "cpu", "quota")


def test_a_field_written_back_after_our_write_is_a_fight_left_alone_naming_both_managers(tmp_path: Path) -> None:
    entries = [
        managed("queue-syncer", quota("gpu"), time=LATER),
        managed("kubectl-edit", quota("cpu"), time=LATER),
        managed("helm", quota("memory")),
    ]
    repo, snap = lab(tmp_path, entries)
    log = tmp_path / "audit.jsonl"
    log.write_text(
        audit_line("default-queue", GPU, CPU)
        + audit_line("default-queue", GPU, result="failed")
        + '{"time": "2026-11-30T10:18:00Z", "cluster": "lab", "result": "appl'
    )  # cut by a crash
    report = reconcile_with_log(repo, snap, log)
    assert planned(report) == {"cpu.quota", "memory.quota"}  # the person's edit is undone, not a fight
    (fight,) = [f for f in report["findings"] if f["rule"] == "KAI-D-009"]
    assert fight["details"]["fields"] == [
        {
            "field": "gpu.quota",
            "path": list(GPU),
            "manager": "queue-syncer",
            "controller": "field manager queue-syncer",
            "source": "whatever field manager queue-syncer applies",
            "wroteFirst": "kai-gitops",
            "wroteFirstAt": "2026-11-30T10:17:03Z",
            "wroteBackAt": LATER,
        }
    ]
    assert "kai-gitops wrote it 2026-11-30 10:17:03 UTC, queue-syncer wrote it back" in fight["message"]
    assert "KAI-D-009" in [s["rule"] for s in report["plan"]["operator"]]
    assert not owned(report)


def test_no_fight_without_our_earlier_write_or_when_theirs_came_first(tmp_path: Path) -> None:
    entries = [managed("queue-syncer", quota("gpu"), time=TIME)]  # before our write: not written back
    repo, snap = lab(tmp_path, entries)
    for log_text in ("", audit_line("default-queue", GPU), audit_line("default-queue", GPU, cluster="other")):
        log = tmp_path / "audit.jsonl"
        log.write_text(log_text)
        report = reconcile_with_log(repo, snap, log)
        assert "gpu.quota" in planned(report) and not [f for f in report["findings"] if f["rule"] == "KAI-D-009"]
    missing = tmp_path / "none.jsonl"  # the first run: no log yet
    assert "gpu.quota" in planned(reconcile_with_log(repo, snap, missing))


def test_the_fight_metric_counts_the_fields_left_alone() -> None:
    from prometheus_client import generate_latest

    from reconciler.core.resources import queue_ref
    from reconciler.findings.builtin_rules import CONTROLLER_FIGHT
    from reconciler.findings.finding import Kind
    from reconciler.report.report import ClusterReport, Report
    from reconciler.telemetry.metrics import RunFacts, build_registry

    fight = CONTROLLER_FIGHT.finding(
        Kind.DRIFT,
        "fight",
        "lab",
        subject=queue_ref("q"),
        extra={"fields": [{"field": "gpu.quota"}, {"field": "cpu.quota"}]},
    )
    for findings, expected in (([fight], 2.0), ([], 0.0)):
        report = Report("reconcile", [ClusterReport("lab", None, None, None, None, findings)])
        text = generate_latest(
            build_registry(RunFacts("reconcile", "lab", 0.0, 1.0, ok=True, exit_code=2, report=report))
        ).decode()
        assert f'kai_gitops_controller_fights{{cluster="lab"}} {expected}' in text


# -- KAI Resource Management on the cluster (KAI-D-010) --------------------------------------------------------


def krm_lab(
    tmp_path: Path,
    *,
    crds: tuple[str, ...] = ("projects.kai.resources",),
    queue_labels: dict[str, str] | None = None,
    shard_labels: dict[str, str] | None = None,
    entries: list[dict[str, Any]] | None = None,
) -> tuple[Path, Path]:
    from tests.support.helpers import crd

    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    parent, child = queue("default-parent-queue"), queue("default-queue", parent="default-parent-queue")
    child["metadata"]["labels"] = dict(queue_labels or {})
    parent["metadata"]["labels"] = dict(queue_labels or {})
    child["metadata"]["managedFields"] = entries or []
    shard = canonical_shard()
    shard["metadata"]["labels"] = dict(shard_labels or {})
    return repo, snapshot_file(tmp_path, [*kai_crds(), *(crd(c) for c in crds), parent, child, shard])


def krm(repo: Path, snap: Path) -> list[dict[str, Any]]:
    code, out, err = run_cli(["diff", "--repo", repo, "--cluster", "lab", "--snapshot", snap, "-o", "json"])
    assert code in (0, 2), err
    return [f for f in json.loads(out)["findings"] if f["rule"] == "KAI-D-010"]


def test_git_queues_and_shards_on_a_krm_cluster_are_reported_with_the_opt_out_label(tmp_path: Path) -> None:
    found = krm(*krm_lab(tmp_path, entries=[managed("project-controller", quota("gpu"), operation="Apply")]))
    by_name = {(f["subject"]["kind"], f["subject"]["name"]): f for f in found}
    assert set(by_name) == {
        ("Queue", "default-parent-queue"),
        ("Queue", "default-queue"),
        ("SchedulingShard", "default"),
    }
    child = by_name[("Queue", "default-queue")]
    assert "manages it (manager project-controller)" in child["message"] and child["location"]["file"]
    assert (
        "kubectl label queue default-queue kai.resources/resource-manual-override=true" in child["fix"]["description"]
    )
    assert "deserved" in child["fix"]["description"]
    assert "would use its name" in by_name[("Queue", "default-parent-queue")]["message"]
    shard = by_name[("SchedulingShard", "default")]
    assert "kai.scheduler/ignore-shard-for-krm=true" in shard["fix"]["description"]
    assert "overwrites its spec wholesale" in shard["message"]


def test_the_opt_outs_are_honoured_and_no_krm_means_no_finding(tmp_path: Path) -> None:
    labelled = krm_lab(
        tmp_path / "a",
        queue_labels={"kai.resources/resource-manual-override": "true"},
        shard_labels={"kai.scheduler/ignore-shard-for-krm": "true"},
    )
    # KRM never leaves the shard `default` unmanaged: its install hook strips the label there
    # (kai-resource-management docs/co-install-with-existing-kai.md), so only that one is still reported
    assert [(f["subject"]["kind"], f["subject"]["name"]) for f in krm(*labelled)] == [("SchedulingShard", "default")]
    other_value = krm_lab(tmp_path / "b", queue_labels={"kai.resources/resource-manual-override": "false"})
    assert len(krm(*other_value)) == 3
    assert krm(*krm_lab(tmp_path / "c", crds=())) == []
    assert len(krm(*krm_lab(tmp_path / "d", crds=("krmconfigs.kai.resources",)))) == 3


def test_the_pr_check_with_a_live_snapshot_reports_krm_and_honours_the_opt_out(tmp_path: Path) -> None:
    for labels, expected in (({}, 3), ({"kai.resources/resource-manual-override": "true"}, 1)):
        repo, snap = krm_lab(tmp_path / str(expected), queue_labels=labels)
        code, out, err = run_cli(
            ["check", "--repo", repo, "--live-snapshot", f"lab={snap}", "-o", "json", "--fail-on", "error"]
        )
        assert code in (0, 2), err
        report = json.loads(out)
        (lab,) = report["clusters"]
        found = [f for f in lab["findings"] if f["rule"] == "KAI-D-010"]
        assert len(found) == expected and all(f["subject"]["kind"] in ("Queue", "SchedulingShard") for f in found)
        assert "KAI-D-010" in {r["id"] for r in report["rules"]}
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])  # no snapshot: nothing to tell
    (lab,) = json.loads(out)["clusters"]
    assert not [f for f in lab["findings"] if f["rule"] == "KAI-D-010"], err


def test_kai_config_fields_the_operator_or_the_charts_deployer_own_are_left_to_them(tmp_path: Path) -> None:
    from tests.support.reconcile_kai_config import drifted_spec
    from tests.support.reconcile_support import DEMO, demo_cluster

    fields = {"f:spec": {"f:admission": {"f:gpuSharing": {}}}}
    config = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {
            "name": "kai-config",
            "managedFields": [
                managed("kubectl-edit", fields, time=LATER),
                managed("kai-operator", {"f:spec": {"f:scheduler": {"f:service": {"f:resources": {}}}}}),
                managed("kai-config-deployer", {"f:spec": {"f:global": {"f:nodePoolLabelKey": {}}}}, operation="Apply"),
            ],
        },
        "spec": drifted_spec(),
    }
    items = [*[i for i in DEMO.prod_addon_snapshot() if i["kind"] != "Config"], config]
    for cluster in demo_cluster(tmp_path, items):
        code, report, err = cluster.reconcile_json()
        assert code == 2, err
        [change] = [c for c in report["plan"]["changes"] if c["object"]["kind"] == "Config"]
        assert [f["path"] for f in change["fields"]] == [["spec", "admission", "gpuSharing"]]  # the hand edit
        (finding,) = [f for f in report["findings"] if f["rule"] == "KAI-D-008"]
        assert {(f["field"], f["manager"], f["source"]) for f in finding["details"]["fields"]} == {
            (
                "scheduler.service.resources",
                "kai-operator",
                "the KAI operator's own defaults (set it in kai-config or the chart's values)",
            ),
            (
                "global.nodePoolLabelKey",
                "kai-config-deployer",
                "the KAI chart's values, applied by the kai-config-deployer hook on helm upgrade",
            ),
        }
