"""Intent, not assumption (docs/reconcile.md#what-a-plan-holds-back): a plan writes only what Git declares or the
pinned chart renders from Git's values, what the live KAI version serves, and nothing version-dependent while
the release runs another chart version than Git pins. Every field held back stays a finding and becomes an
operator item with its reason."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.differ import diff
from reconciler.checks.node_labels import intent_findings, label_changes
from reconciler.core.errors import UserError
from reconciler.findings.drifted_field import DriftedField
from reconciler.model.config import SharedClusterIntent
from reconciler.model.kai_config import ValueSource, render_kai_config
from reconciler.model.provenance import Origin
from reconciler.model.values import chart_defaults, deep_merge
from reconciler.plans.plan import Change, FieldChange, Operation, Plan
from reconciler.plans.writable import LABEL_PATH
from reconciler.reconcile.planner import build_plan
from reconciler.reconcile.preflight import check_shared_mode_kept
from tests.support.helpers import (
    DATA,
    desired_for,
    held_fields,
    live_state,
    node,
    obj,
    queue,
    release_secret,
    standalone_config,
)

VALUES = (DATA / "canonical-kai-values.yaml").read_text()
CAPPED = {"quota": 4, "limit": 8, "overQuotaWeight": 1}


def repo(version: str = "v0.14.7", shared: str | None = None) -> dict[str, str]:
    return {"kai-gitops.yaml": standalone_config(version=version, shared=shared), "kai-values.yaml": VALUES}


# -- shared-cluster intent -----------------------------------------------------------------------------------


def test_no_declared_intent_changes_no_label_whatever_the_nodes_carry() -> None:
    live = live_state([node("a", "true"), node("b", "True"), node("c")])
    assert label_changes(SharedClusterIntent(), live) == []
    assert [c.node for c in label_changes(SharedClusterIntent("dedicated"), live)] == ["a", "b"]


def test_an_entry_without_shared_cluster_is_an_info_finding_naming_the_line_to_add(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, repo())
    [finding] = intent_findings(desired)
    assert (finding.rule_id, finding.severity.value, str(finding.location)) == (
        "NVCA-S-003",
        "info",
        "kai-gitops.yaml:3:5",
    )
    assert "`sharedCluster: {intent: dedicated}`" in finding.message
    assert "sharedCluster: {intent: shared, nodeSelector:" in finding.message


def test_a_declared_intent_raises_nothing(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, repo(shared="dedicated"))
    assert intent_findings(desired) == []


def test_the_plan_of_an_undeclared_intent_removes_no_label(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, repo())
    live = live_state([node("gpu-1", "true"), node("cpu-1")])
    plan = build_plan(diff(desired, live), desired, live, git=None, identity=None)
    assert [c for c in plan.changes if c.ref.kind == "Node"] == []


def test_queue_fields_are_declared_where_git_sets_them_and_the_charts_elsewhere(tmp_path: Path) -> None:
    files = repo(shared="dedicated")
    files["kai-values.yaml"] = "defaultQueue:\n  parentResources:\n    gpu:\n      quota: -1\n"
    desired = desired_for(tmp_path, files)
    parent = next(q for q in desired.queues if q.spec.name == "default-parent-queue")
    declared = desired.queue_provenance(parent, "gpu.quota")
    assert (declared.origin, declared.path) == (Origin.DECLARED, ("defaultQueue", "parentResources", "gpu", "quota"))
    assert desired.queue_provenance(parent, "gpu.limit").origin is Origin.CHART  # the chart's default: writable
    assert desired.queue_provenance(parent, "gpu.limit").writable
    assert desired.shared_provenance.origin is Origin.DECLARED
    assert desired_for(tmp_path / "other", repo()).shared_provenance.origin is Origin.ASSUMED


def label_plan(*removed: str) -> Plan:
    changes = tuple(
        Change(
            obj_ref(name),
            Operation.UPDATE,
            (FieldChange(LABEL_PATH, "true", None),),
            ("NVCA-S-010",),
            f"remove the label from {name}",
        )
        for name in removed
    )
    return Plan("lab", None, None, changes)


def obj_ref(name: str) -> Any:
    from reconciler.core.resources import NODE

    return NODE.ref(name)


def test_turning_shared_mode_off_while_queues_cap_usage_is_refused_in_one_line() -> None:
    live = live_state([node("gpu-1", "true"), node("gpu-2", "true"), queue("team-a", CAPPED)])
    with pytest.raises(UserError) as refused:
        check_shared_mode_kept(label_plan("gpu-1", "gpu-2"), live)
    message = str(refused.value)
    assert "\n" not in message and "turns NVCA's Shared Cluster mode off while 1 queue(s) cap usage" in message
    assert "team-a; NVCA-S-014" in message and "nothing was written" in message


@pytest.mark.parametrize(
    ("items", "removed"),
    [
        ([node("gpu-1", "true"), node("gpu-2", "true"), queue("team-a", CAPPED)], ("gpu-1",)),  # one stays labelled
        ([node("gpu-1", "true"), queue("team-a")], ("gpu-1",)),  # no queue caps usage
        ([node("gpu-1"), queue("team-a", CAPPED)], ()),  # the mode was off
    ],
)
def test_shared_mode_kept_or_no_cap_is_no_refusal(items: list[dict[str, Any]], removed: tuple[str, ...]) -> None:
    check_shared_mode_kept(label_plan(*removed), live_state(items))


# -- kai-config: provenance, version skew, served fields ------------------------------------------------------


def live_config(version: str) -> dict[str, Any]:
    """kai-config as chart `version` renders it from the canonical values (what its deployer applied)."""
    from ruamel.yaml import YAML

    given = YAML(typ="safe", pure=True).load(VALUES)
    values = deep_merge(chart_defaults(version), given)
    spec = render_kai_config(version, values, ValueSource("values", given, ("values", ())), version).spec()
    return obj("kai.scheduler/v1", "Config", "kai-config", spec=spec)


def config_plan(tmp_path: Path, pin: str, running: str) -> tuple[Plan, list[Any]]:
    desired = desired_for(tmp_path, repo(pin, "dedicated"))
    live = live_state([live_config(running), release_secret(version=running)])
    findings = diff(desired, live)
    return build_plan(findings, desired, live, git=None, identity=None), findings


def test_a_pin_ahead_of_the_live_chart_plans_no_version_dependent_field(tmp_path: Path) -> None:
    plan, findings = config_plan(tmp_path, "v0.16.8", "v0.14.7")
    [drift] = [f for f in findings if f.rule_id == "KAI-D-005"]
    assert "binder.service.image.tag" in drift.desired  # diff still reports every field
    assert "admission.blockNvidiaVisibleDevices" in drift.desired
    assert [c for c in plan.changes if c.ref.kind == "Config"] == []
    [held] = [o for o in plan.operator if o.subject is not None and o.subject.kind == "Config"]
    groups = held_fields(held.description)
    waits = "waits for the upgrade to v0.16.8 (KAI-R-012)"
    assert "spec.binder.service.image.tag" in groups[f"an image of the chart version: {waits}"]
    assert "spec.admission.blockNvidiaVisibleDevices" in groups[f"KAI v0.14.7's chart renders no such field: {waits}"]
    assert held.command is None  # the upgrade is KAI-R-012's item; nothing here is a patch to run
    assert held.description.endswith(
        " — the release runs v0.14.7, Git pins v0.16.8: the upgrade is Helm's, and "
        "the run after it writes what still differs"
    )


def test_after_the_upgrade_what_still_differs_is_planned(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, repo("v0.16.8", "dedicated"))
    config = live_config("v0.16.8")
    config["spec"]["admission"]["gpuSharing"] = True  # a hand edit
    live = live_state([config, release_secret(version="v0.16.8")])
    plan = build_plan(diff(desired, live), desired, live, git=None, identity=None)
    [change] = [c for c in plan.changes if c.ref.kind == "Config"]
    assert [(f.path, f.after) for f in change.fields] == [(("spec", "admission", "gpuSharing"), False)]
    assert not [o for o in plan.operator if o.subject is not None and o.subject.kind == "Config"]


def test_a_field_left_to_the_operators_default_is_reported_never_written(tmp_path: Path) -> None:
    desired = desired_for(tmp_path, repo("v0.16.8", "dedicated"))
    config = live_config("v0.16.8")
    config["spec"]["global"]["schedulerName"] = "my-scheduler"  # Git leaves it to the operator
    live = live_state([config, release_secret(version="v0.16.8")])
    assert desired.kai_config.provenance("global.schedulerName").origin is Origin.OPERATOR_DEFAULT
    assert desired.kai_config.provenance("admission.gpuSharing").origin is Origin.CHART
    findings = diff(desired, live)
    drift = next(f for f in findings if f.rule_id == "KAI-D-005")
    assert "global.schedulerName" in drift.message  # reported, with where Git's value comes from
    assert drift.changes == (
        DriftedField(
            ("spec", "global", "schedulerName"),
            "my-scheduler",
            None,
            "global.schedulerName",
            None,
            "an operator default (nothing renders it)",
        ),
    )
    plan = build_plan(findings, desired, live, git=None, identity=None)
    assert [c for c in plan.changes if c.ref.kind == "Config"] == []
    [held] = [o for o in plan.operator if o.subject is not None and o.subject.kind == "Config"]
    assert held.description == (
        "not written by kai-gitops: spec.global.schedulerName (Git's value is an operator default (nothing renders it))"
    )


def test_a_value_set_in_the_values_file_is_declared_at_its_line(tmp_path: Path) -> None:
    files = repo("v0.16.8")
    files["kai-values.yaml"] += "\nglobal:\n  gpuSharing: true\n"
    desired = desired_for(tmp_path, files)
    provenance = desired.kai_config.provenance("admission.gpuSharing")
    assert provenance.origin is Origin.DECLARED and provenance.writable
    assert str(desired.locate(provenance.doc, provenance.path)).startswith("kai-values.yaml:")


# -- what each chart version renders (issue: false drift on v0.12-v0.14) ----------------------------------------

NOT_RENDERED = {  # read from each tag's kai-config template (templates/kai-config.yaml or _helpers.tpl)
    "v0.10.5": {"scheduler.service.enabled", "podGrouper.service.enabled"},
    "v0.12.13": {"scheduler.service.enabled", "podGrouper.service.enabled"},
    "v0.12.23": {"scheduler.service.enabled", "podGrouper.service.enabled"},
    "v0.13.4": {"scheduler.service.enabled"},
    "v0.14.7": {"scheduler.service.enabled"},
}


@pytest.mark.parametrize(
    ("version", "absent"),
    [
        ("v0.10.5", {"scheduler.service.enabled", "podGrouper.service.enabled"}),
        ("v0.12.13", {"scheduler.service.enabled", "podGrouper.service.enabled"}),
        ("v0.12.23", {"scheduler.service.enabled", "podGrouper.service.enabled"}),
        ("v0.13.4", {"scheduler.service.enabled"}),
        ("v0.14.7", {"scheduler.service.enabled"}),
    ],
)
def test_fields_the_chart_does_not_render_are_no_desired_fields(version: str, absent: set[str]) -> None:
    """KAI-Scheduler deployments/kai-scheduler at each tag: `scheduler.service` has no `enabled` before v0.15.3
    and the Config has no `podGrouper` block before v0.13.4; the operator defaults both in memory only."""
    config = render_kai_config(version, chart_defaults(version), ValueSource("values", {}, ("config", ())), version)
    assert absent.isdisjoint(config.fields)
    assert {"binder.service.enabled", "admission.service.enabled"} <= set(config.fields)


@pytest.mark.parametrize("version", ["v0.15.3", "v0.16.8", "v0.17.0"])
def test_from_v0_15_3_the_chart_renders_every_components_enabled(version: str) -> None:
    config = render_kai_config(version, chart_defaults(version), ValueSource("values", {}, ("config", ())), version)
    assert {"scheduler.service.enabled", "podGrouper.service.enabled"} <= set(config.fields)


@pytest.mark.parametrize("version", ["v0.12.23", "v0.13.4", "v0.14.7"])
def test_a_kai_config_the_chart_rendered_shows_no_drift(tmp_path: Path, version: str) -> None:
    """The false drift of scheduler.service.enabled null → true on clusters whose kai-config came from the chart."""
    desired = desired_for(tmp_path, repo(version, "dedicated"))
    config = live_config(version)
    for path in NOT_RENDERED[version]:  # what the chart's own template leaves out, whatever the model says
        block = path.split(".")[0]
        config["spec"].get(block, {}).get("service", {}).pop("enabled", None)
    live = live_state([config, release_secret(version=version)])
    findings = diff(desired, live)
    plan = build_plan(findings, desired, live, git=None, identity=None)
    assert [f.message for f in findings if f.rule_id == "KAI-D-005"] == []
    assert [c for c in plan.changes if c.ref.kind == "Config"] == []
