"""Desired vs live: queues, SchedulingShard and Helm release values (checks/differ.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.checks.differ import diff, queue_changes, queue_manifest
from reconciler.findings.finding import Action, Kind, Severity
from reconciler.model.queues import QueueSpec, Triple
from reconciler.sources.snapshot import read_snapshot
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    CHART_DEFAULT,
    DEMO_SNAPSHOTS,
    TEMPLATE,
    UNLIMITED,
    addon_config,
    canonical_shard,
    crd,
    default_queues,
    desired_for,
    kai_crds,
    live_state,
    load_demo_builder,
    queue,
    release_secret,
    standalone_config,
)

NOTE = (
    "The chart renders the default queues only on `helm install` and keeps them "
    "(helm.sh/resource-policy: keep), so `helm upgrade` will not fix this."
)
RESEARCH = """\
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: research
spec:
  parentQueue: default-parent-queue
  resources:
    cpu: {quota: 64000, limit: 128000, overQuotaWeight: 1}
    gpu: {quota: 8, limit: 16, overQuotaWeight: 1}
    memory: {quota: 512000, limit: 1024000, overQuotaWeight: 1}
"""
RESEARCH_RESOURCES = {
    "cpu": {"quota": 64000, "limit": 128000, "overQuotaWeight": 1},
    "gpu": {"quota": 8, "limit": 16, "overQuotaWeight": 1},
    "memory": {"quota": 512000, "limit": 1024000, "overQuotaWeight": 1},
}


def values_dict(text: str = CANONICAL_KAI_VALUES) -> dict[str, Any]:
    return YAML(typ="safe", pure=True).load(text)


@pytest.fixture
def lab(tmp_path: Path) -> Any:
    """Standalone cluster: the guide's values at v0.14.7 plus one extra queue file."""
    return desired_for(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(queue_files=["queues.yaml"]),
            "kai-values.yaml": CANONICAL_KAI_VALUES,
            "queues.yaml": RESEARCH,
        },
    )


@pytest.fixture
def prod(tmp_path: Path) -> Any:
    """Add-on cluster from the template's prod environment."""
    return desired_for(
        tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": (TEMPLATE / "environments" / "prod.yaml").read_text()}
    )


def healthy_lab_items(**overrides: Any) -> list[dict[str, Any]]:
    items = {
        "crds": kai_crds(),
        "queues": [*default_queues(), queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue")],
        "shard": [canonical_shard()],
        "release": [release_secret(version="v0.14.7", config=values_dict())],
    }
    items.update(overrides)
    return [item for group in items.values() for item in group]


def by_rule(findings: list[Any], rule: str) -> list[Any]:
    return [f for f in findings if f.rule_id == rule]


# -- equality ----------------------------------------------------------------------------------------------------


def test_no_drift_when_equal(lab: Any) -> None:
    assert diff(lab, live_state(healthy_lab_items())) == []


def test_demo_template_commit_against_lab_snapshot_has_no_drift(tmp_path: Path) -> None:
    build = load_demo_builder()
    build.build_repo(tmp_path / "demo")
    desired = desired_for_existing(tmp_path / "demo", "lab-standalone", "HEAD~1")
    assert diff(desired, read_snapshot(str(DEMO_SNAPSHOTS / "lab-standalone.yaml"))) == []


def desired_for_existing(repo: Path, cluster: str, ref: str) -> Any:
    from reconciler.app.pipeline import desired_clusters, open_desired
    from reconciler.app.settings import GitSettings

    return desired_clusters(open_desired(GitSettings(str(repo), ref)), cluster)[0]


def test_int_and_float_numbers_are_equal(lab: Any) -> None:
    floats = {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
    research = queue(
        "research",
        resources={k: {f: float(v) for f, v in t.items()} for k, t in RESEARCH_RESOURCES.items()},
        parent="default-parent-queue",
    )
    assert diff(lab, live_state(healthy_lab_items(queues=[*default_queues(floats), research]))) == []


def test_absent_number_equals_zero(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace(
        "  childResources:\n    cpu:\n      quota: -1", "  childResources:\n    cpu:\n      quota: 0"
    )
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    child = queue(
        "default-queue",
        parent="default-parent-queue",
        resources={"cpu": {"limit": -1, "overQuotaWeight": 1}, "gpu": UNLIMITED, "memory": UNLIMITED},
    )
    live = live_state([*kai_crds(), queue("default-parent-queue"), child, canonical_shard()])
    assert by_rule(diff(desired, live), "KAI-D-002") == []


def test_queue_status_is_never_diffed(lab: Any) -> None:
    items = healthy_lab_items()
    for item in items:
        if item["kind"] == "Queue":
            item["status"] = {"allocated": {"gpu": 3}, "childQueues": ["x"]}
    assert diff(lab, live_state(items)) == []


# -- queues ------------------------------------------------------------------------------------------------------


def test_missing_default_queue_is_a_create_with_manifest(lab: Any) -> None:
    live = live_state(
        healthy_lab_items(
            queues=[
                queue("default-parent-queue"),
                queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue"),
            ]
        )
    )
    findings = diff(lab, live)
    assert [f.rule_id for f in findings] == ["KAI-D-001"]
    f = findings[0]
    assert (f.kind, f.severity, f.cluster) == (Kind.DRIFT, Severity.ERROR, "lab")
    assert str(f.subject) == "Queue/default-queue"
    assert f.message == f"Queue default-queue does not exist. {NOTE}"
    manifest = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "default-queue"},
        "spec": {
            "resources": {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED},
            "parentQueue": "default-parent-queue",
        },
    }
    assert f.desired == manifest
    assert f.live is None
    assert f.fix is not None and f.fix.action is Action.CREATE
    assert f.fix.patch == manifest
    assert all(type(v) is int for t in f.fix.patch["spec"]["resources"].values() for v in t.values())
    assert f.location is not None
    assert (f.location.file, f.location.line) == ("kai-values.yaml", 19)  # defaultQueue.parentName


def test_drifted_numbers_are_an_update(lab: Any) -> None:
    live = live_state(
        healthy_lab_items(
            queues=[
                queue("default-parent-queue", CHART_DEFAULT),
                queue("default-queue", parent="default-parent-queue"),
                queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue"),
            ]
        )
    )
    findings = diff(lab, live)
    assert [(f.rule_id, str(f.subject)) for f in findings] == [("KAI-D-002", "Queue/default-parent-queue")]
    f = findings[0]
    assert f.message == (
        f"Queue default-parent-queue differs from Git: cpu.quota 0 → -1, gpu.quota 0 → -1, memory.quota 0 → -1. {NOTE}"
    )
    assert _changes(f) == [["cpu.quota", 0.0, -1.0], ["gpu.quota", 0.0, -1.0], ["memory.quota", 0.0, -1.0]]
    assert f.extra["note"] == NOTE
    assert f.desired == {"cpu.quota": -1.0, "gpu.quota": -1.0, "memory.quota": -1.0}
    assert f.live == {"cpu.quota": 0.0, "gpu.quota": 0.0, "memory.quota": 0.0}
    assert f.fix is not None and f.fix.action is Action.UPDATE
    assert f.fix.patch == {
        "spec": {"resources": {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED}, "parentQueue": None}
    }
    assert f.location is not None
    assert (f.location.file, f.location.line, f.location.dotted_path()) == (
        "kai-values.yaml",
        23,
        "defaultQueue.parentResources.cpu.quota",
    )


def test_parent_change(lab: Any) -> None:
    live = live_state(
        healthy_lab_items(
            queues=[
                queue("default-parent-queue"),
                queue("default-queue", parent="other"),
                queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue"),
            ]
        )
    )
    [f] = diff(lab, live)
    assert f.rule_id == "KAI-D-002"
    assert _changes(f) == [["parent", "other", "default-parent-queue"]]
    assert "parent other → default-parent-queue" in f.message
    assert f.fix is not None and f.fix.patch is not None
    assert f.fix.patch["spec"]["parentQueue"] == "default-parent-queue"
    assert f.location is not None and f.location.dotted_path() == "defaultQueue.parentName"


def test_parent_added_where_none_is_wanted(lab: Any) -> None:
    live = live_state(
        healthy_lab_items(
            queues=[
                queue("default-parent-queue", parent="root"),
                queue("default-queue", parent="default-parent-queue"),
                queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue"),
            ]
        )
    )
    [f] = diff(lab, live)
    assert _changes(f) == [["parent", "root", None]]
    assert "parent root → <none>" in f.message


def test_queue_without_resources(lab: Any) -> None:
    live = live_state(
        healthy_lab_items(
            queues=[
                queue("default-parent-queue"),
                queue("default-queue", parent="default-parent-queue", no_resources=True),
                queue("research", resources=RESEARCH_RESOURCES, parent="default-parent-queue"),
            ]
        )
    )
    [f] = diff(lab, live)
    changes = _changes(f)
    assert changes[0] == ["resources", None, "set"]
    assert len(changes) == 10  # the block plus all nine numbers
    assert ["cpu.quota", 0.0, -1.0] in changes and ["memory.overQuotaWeight", 0.0, 1.0] in changes


def test_extra_queue_file_drift(lab: Any) -> None:
    drifted = {**RESEARCH_RESOURCES, "gpu": {"quota": 4, "limit": 16, "overQuotaWeight": 1}}
    live = live_state(
        healthy_lab_items(
            queues=[*default_queues(), queue("research", resources=drifted, parent="default-parent-queue")]
        )
    )
    [f] = diff(lab, live)
    assert (f.rule_id, str(f.subject)) == ("KAI-D-002", "Queue/research")
    assert f.message == "Queue research differs from Git: gpu.quota 4 → 8."  # no helm note for Git-managed queues
    assert f.extra["note"] == ""
    assert f.location is not None
    assert (f.location.file, f.location.line, f.location.dotted_path()) == (
        "queues.yaml",
        9,
        "spec.resources.gpu.quota",
    )
    assert f.fix is not None and f.fix.patch is not None
    assert f.fix.patch["spec"]["resources"]["gpu"] == {"quota": 8, "limit": 16, "overQuotaWeight": 1}


def test_missing_extra_queue(lab: Any) -> None:
    [f] = diff(lab, live_state(healthy_lab_items(queues=default_queues())))
    assert f.rule_id == "KAI-D-001"
    assert f.message == "Queue research does not exist."
    assert f.fix is not None and f.fix.patch is not None
    assert f.fix.patch["spec"]["resources"]["memory"] == {"quota": 512000, "limit": 1024000, "overQuotaWeight": 1}
    assert f.location is not None and (f.location.file, f.location.line) == ("queues.yaml", 6)


def test_live_queues_not_in_git_are_left_alone(lab: Any) -> None:
    items = healthy_lab_items()
    items.append(queue("someone-elses", CHART_DEFAULT))
    assert diff(lab, live_state(items)) == []


def test_no_queue_or_shard_findings_when_kai_is_not_installed(lab: Any) -> None:
    assert diff(lab, live_state([])) == []


def test_queue_changes_and_manifest_units() -> None:
    want = QueueSpec("q", "p", {"cpu": Triple(-1, -1, 1), "gpu": Triple(0.5, 1, 1), "memory": Triple(0, 0, 0)})
    nan = float("nan")
    live = QueueSpec(
        "q", "p", {"cpu": Triple(-1.0, -1.0, 1.0), "gpu": Triple(0.5, 1.0, 1.0), "memory": Triple(0.0, 0.0, 0.0)}
    )
    assert queue_changes(want, live) == []
    with_nan = QueueSpec("q", "p", {"cpu": Triple(nan, -1, 1), "gpu": Triple(0.5, 1, 1), "memory": Triple(0, 0, 0)})
    assert queue_changes(with_nan, with_nan) == []
    assert queue_manifest(want)["spec"]["resources"]["gpu"] == {"quota": 0.5, "limit": 1, "overQuotaWeight": 1}


# -- shard ---------------------------------------------------------------------------------------------------------


def test_shard_drift(lab: Any) -> None:
    shard = canonical_shard()
    shard["spec"]["placementStrategy"] = {"gpu": "spread", "cpu": "binpack"}
    shard["spec"]["actions"]["preempt"]["enabled"] = True
    [f] = diff(lab, live_state(healthy_lab_items(shard=[shard])))
    assert (f.rule_id, str(f.subject), f.severity) == ("KAI-D-003", "SchedulingShard/default", Severity.ERROR)
    assert f.message == (
        "SchedulingShard default differs from the KAI values at actions.preempt.enabled, placementStrategy.gpu"
    )
    assert _paths(f) == ["actions.preempt.enabled", "placementStrategy.gpu"]  # what attribution looks up
    assert f.fix is not None and f.fix.action is Action.UPDATE  # reconcile patches it (test_reconcile_kai_config)
    assert f.fix.patch == {"spec": lab.shard.spec}
    assert f.fix.command == (
        "helm upgrade kai-scheduler oci://ghcr.io/kai-scheduler/kai-scheduler/kai-scheduler "
        "--namespace kai-scheduler --version v0.14.7 -f kai-values.yaml"
    )
    assert f.location is not None and (f.location.file, f.location.line) == ("kai-values.yaml", 4)


def test_shard_plugin_arguments_compare_as_strings(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace("        cpu: spread\n", "        cpu: spread\n        kValue: 2\n")
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    shard = canonical_shard()
    shard["spec"]["plugins"]["nodeplacement"]["arguments"]["kValue"] = "2"
    live = live_state([*kai_crds(), *default_queues(), shard])
    assert by_rule(diff(desired, live), "KAI-D-003") == []


def test_shard_extra_live_fields_are_ignored(lab: Any) -> None:
    shard = canonical_shard()
    shard["spec"]["args"] = {"v": "4"}
    shard["spec"]["minRuntime"] = {"preemptMinRuntime": "5m"}
    assert diff(lab, live_state(healthy_lab_items(shard=[shard]))) == []


def test_missing_shard(lab: Any) -> None:
    [f] = diff(lab, live_state(healthy_lab_items(shard=[])))
    assert (f.rule_id, f.message) == ("KAI-D-003", "SchedulingShard default does not exist")
    assert f.live is None
    assert f.desired == lab.shard.spec


def test_no_shard_expected_before_v0_10(tmp_path: Path) -> None:
    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.9.20"), "kai-values.yaml": CANONICAL_KAI_VALUES}
    )
    findings = diff(desired, live_state([crd("queues.scheduling.run.ai"), *default_queues()]))
    assert by_rule(findings, "KAI-D-003") == []


def test_addon_shard_fix_points_at_the_stack(prod: Any) -> None:
    [f] = by_rule(diff(prod, live_state([*kai_crds(), *default_queues()])), "KAI-D-003")
    assert f.fix is not None
    assert f.fix.command == "apply environment env.yaml through the compute plane stack workflow"


# -- release values -----------------------------------------------------------------------------------------------


def test_release_values_drift_standalone(lab: Any) -> None:
    values = values_dict()
    values["scheduler"]["placementStrategy"] = "spread"
    values["defaultQueue"]["childResources"]["gpu"]["quota"] = 0
    [f] = diff(lab, live_state(healthy_lab_items(release=[release_secret(revision=3, config=values)])))
    assert (f.rule_id, f.severity, str(f.subject)) == (
        "KAI-D-004",
        Severity.WARNING,
        "HelmRelease/kai-scheduler/kai-scheduler",
    )
    assert _paths(f) == ["defaultQueue.childResources.gpu.quota", "scheduler.placementStrategy"]
    assert f.message == (
        "Helm release kai-scheduler/kai-scheduler (revision 3) was installed with values that differ "
        "from Git at defaultQueue.childResources.gpu.quota, scheduler.placementStrategy"
    )
    assert f.location is not None
    assert (f.location.file, f.location.line) == ("kai-values.yaml", 40)  # childResources.gpu.quota
    assert f.desired is None and f.live is None  # never values that may be secret
    assert f.fix is not None and f.fix.command is not None and f.fix.command.startswith("helm upgrade kai-scheduler")


def test_release_values_extra_keys_drift_in_standalone(lab: Any) -> None:
    values = values_dict()
    values["global"] = {"registry": "registry.example.com"}
    [f] = diff(lab, live_state(healthy_lab_items(release=[release_secret(config=values)])))
    assert _paths(f) == ["global"]


def test_release_values_equal_as_floats(lab: Any) -> None:
    values = values_dict()
    values["defaultQueue"]["parentResources"]["cpu"] = {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
    assert diff(lab, live_state(healthy_lab_items(release=[release_secret(config=values)]))) == []


def test_release_values_projected_in_addon_mode(prod: Any) -> None:
    values = values_dict()
    values["global"] = {"registry": "nvcr.io/example", "tag": "v0.16.7"}  # stack-added keys are ignored
    values["scheduler"]["image"] = {"name": "scheduler"}
    live = [*kai_crds(), *default_queues(), canonical_shard()]
    assert diff(prod, live_state([*live, release_secret(version="v0.16.7", config=values)])) == []

    values["scheduler"]["placementStrategy"] = "spread"
    del values["defaultQueue"]["parentName"]
    [f] = diff(prod, live_state([*live, release_secret(version="v0.16.7", config=values)]))
    assert f.rule_id == "KAI-D-004"
    assert _paths(f) == ["defaultQueue.parentName", "scheduler.placementStrategy"]
    assert f.location is not None
    assert (f.location.file, f.location.dotted_path()) == ("env.yaml", "addons.kaiScheduler.enabled")


def test_only_the_canonical_release_is_compared(lab: Any) -> None:
    other = release_secret(name="kai", namespace="runai", config={"totally": "different"})
    wrong_ns = release_secret(name="kai-scheduler", namespace="default", config={"x": 1})
    assert diff(lab, live_state(healthy_lab_items(release=[other, wrong_ns]))) == []


def test_no_release_no_release_finding(lab: Any) -> None:
    assert diff(lab, live_state(healthy_lab_items(release=[]))) == []


# -- the demo ----------------------------------------------------------------------------------------------------


def test_demo_prod_addon_headline_drift(prod: Any) -> None:
    findings = diff(prod, read_snapshot(str(DEMO_SNAPSHOTS / "prod-addon.yaml")))
    assert sorted((f.rule_id, str(f.subject)) for f in findings) == [
        ("KAI-D-002", "Queue/default-parent-queue"),
        ("KAI-D-002", "Queue/default-queue"),
        ("KAI-D-005", "Config/kai-config"),
    ]
    [config] = [f for f in findings if f.rule_id == "KAI-D-005"]
    assert (config.desired, config.live) == ({"admission.gpuSharing": False}, {"admission.gpuSharing": True})
    for f in findings[:2]:
        assert NOTE in f.message
        assert _changes(f) == [["cpu.quota", 0.0, -1.0], ["gpu.quota", 0.0, -1.0], ["memory.quota", 0.0, -1.0]]


def test_v0_9_pin_never_proposes_zeroing_live_queues(tmp_path: Path) -> None:
    desired = desired_for(
        tmp_path,
        {
            "kai-gitops.yaml": standalone_config(version="v0.9.20"),
            "kai-values.yaml": "scheduler:\n  placementStrategy: binpack\n",
        },
    )
    findings = diff(desired, live_state([crd("queues.scheduling.run.ai"), *default_queues()]))
    patches = [f.fix.patch for f in findings if f.fix and f.fix.patch]
    assert all(t["limit"] != 0 for p in patches for t in p["spec"]["resources"].values()), patches


def _changes(finding: Any) -> list[list[Any]]:
    """A drift's field changes as [field, live, Git] (the differ's order)."""
    return [[c.shown, c.live, c.want] for c in finding.changes]


def _paths(finding: Any) -> list[str]:
    return [c.shown for c in finding.changes]
