"""Who last set each drifted field: the managedFields walk (checks/attribution.py), what the reader keeps of
managedFields, and the `attribution` every output shows (docs/policies.md#who-changed-it)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.attribution import owner
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import CLUSTER_POLICY_REPORT
from reconciler.findings.attribution import Attribution, ReleaseRevision, attribution_line
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.model.helm import encode_release_secret
from reconciler.model.managed_fields import ManagedEntry
from reconciler.publish.policyreport.build import ReportSettings, Scope, build_report
from reconciler.sources.cluster import slim
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    canonical_shard,
    kai_crds,
    make_repo,
    queue,
    release_payload,
    run_cli,
    snapshot_file,
    standalone_config,
)

HELM_TIME, EDIT_TIME, LABEL_TIME = "2026-11-02T09:00:00Z", "2026-11-30T14:02:11Z", "2026-11-29T08:30:00Z"
SECRET = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"


def entry(
    manager: str,
    fields: dict[str, Any],
    *,
    time: str | None = HELM_TIME,
    operation: str = "Update",
    subresource: str | None = None,
) -> ManagedEntry:
    return ManagedEntry(manager, operation, subresource, time, fields)


def spec(**fields: Any) -> dict[str, Any]:
    return {"f:spec": fields}


# -- the fieldsV1 walk ----------------------------------------------------------------------------------


def test_nested_maps_own_exactly_their_leaves() -> None:
    helm = entry("helm", spec(**{"f:resources": {"f:cpu": {"f:quota": {}, "f:limit": {}}}}))
    assert owner((helm,), ("spec", "resources", "cpu", "quota")) is helm
    assert owner((helm,), ("spec", "resources", "gpu", "quota")) is None
    assert owner((helm,), ("spec", "parentQueue")) is None


def test_a_field_nobody_owns_has_no_owner() -> None:
    assert owner((), ("spec", "resources")) is None
    assert owner((entry("empty", {}),), ("spec",)) is None


def test_the_field_itself_dot_owns_the_whole_over_managers_of_parts() -> None:
    whole = entry("creator", spec(**{"f:resources": {".": {}, "f:cpu": {"f:quota": {}}}}), time="2026-01-01T00:00:00Z")
    part = entry("tuner", spec(**{"f:resources": {"f:gpu": {"f:quota": {}}}}), time="2026-12-01T00:00:00Z")
    assert owner((part, whole), ("spec", "resources")) is whole
    assert owner((part,), ("spec", "resources")) is part  # only below it: still the best answer there is


def test_list_items_by_key_are_matched_against_the_live_list() -> None:
    live = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}
    b_only = entry("kubectl-edit", spec(**{"f:containers": {'k:{"name":"b"}': {".": {}, "f:image": {}}}}))
    assert owner((b_only,), ("spec", "containers", 1, "image"), live) is b_only
    assert owner((b_only,), ("spec", "containers", "1", "image"), live) is b_only  # dotted paths spell it "1"
    assert owner((b_only,), ("spec", "containers", 0, "image"), live) is None


def test_set_members_by_value_and_atomic_lists_as_a_whole() -> None:
    live = {"spec": {"finalizers": ["a", "b"], "args": ["--x", "--y"]}}
    sets = entry("operator", spec(**{"f:finalizers": {'v:"b"': {}}}))
    atomic = entry("helm", spec(**{"f:args": {}}))
    assert owner((sets, atomic), ("spec", "finalizers", 1), live) is sets
    assert owner((sets, atomic), ("spec", "finalizers", 0), live) is None
    assert owner((sets, atomic), ("spec", "args", "1"), live) is atomic


def test_of_several_managers_of_one_field_the_last_writer_is_named() -> None:
    fields = spec(**{"f:parentQueue": {}})
    first, last = (
        entry("argocd-controller", fields, operation="Apply"),
        entry("kai-gitops", fields, time=EDIT_TIME, operation="Apply"),
    )
    assert owner((last, first), ("spec", "parentQueue")) is last
    assert owner((first, last), ("spec", "parentQueue")) is last


def test_a_status_manager_owns_status_not_spec() -> None:
    status = entry("kai-operator", {"f:status": {"f:conditions": {}}}, subresource="status")
    helm = entry("helm", spec(**{"f:parentQueue": {}}))
    assert owner((status, helm), ("spec", "parentQueue")) is helm
    found = owner((status, helm), ("status", "conditions"))
    assert found is status
    line = attribution_line(
        Attribution("status.conditions", found.manager, found.operation, found.subresource, found.time)
    )
    assert line == "status.conditions, last set by kai-operator (Update, subresource status) 2026-11-02 09:00 UTC"


def test_the_line_names_the_change_the_manager_and_the_helm_release() -> None:
    edit = Attribution("cpu.quota", "kubectl-edit", "Update", "", EDIT_TIME)
    assert attribution_line(edit, {"cpu.quota": 0.0}, {"cpu.quota": -1.0}) == (
        "cpu.quota 0 → -1, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC"
    )
    helm = Attribution(
        "gpu.quota",
        "helm",
        "Update",
        None,
        HELM_TIME,
        ReleaseRevision("kai-scheduler", "kai-scheduler", 3, "deployed", "2026-11-02T10:00:00+01:00"),
    )
    assert attribution_line(helm) == (
        "gpu.quota, last set by helm (Update) 2026-11-02 09:00 UTC — Helm release kai-scheduler/kai-scheduler "
        "revision 3 (deployed, deployed 2026-11-02 09:00 UTC)"
    )
    assert attribution_line(Attribution("memory.limit")) == "memory.limit: no field manager owns it"


# -- what the reader keeps ------------------------------------------------------------------------------


def managed(manager: str, fields: dict[str, Any], time: str = HELM_TIME, operation: str = "Update") -> dict[str, Any]:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


def test_checked_objects_keep_managed_fields_redacted_and_pods_drop_them() -> None:
    kai_config = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {
            "name": "kai-config",
            "managedFields": [
                managed(f"deployer --token={SECRET}", {"f:spec": {"f:args": {f'v:"--token={SECRET}"': {}}}})
            ],
        },
    }
    kept = slim.kai_object(copy.deepcopy(kai_config))
    text = json.dumps(kept)
    assert SECRET not in text and kept["metadata"]["managedFields"][0]["time"] == HELM_TIME
    assert "f:args" in text
    pod = {"metadata": {"name": "p", "namespace": "n", "managedFields": [managed("kubelet", {"f:status": {}})]}}
    assert "managedFields" not in slim.slim_pod(pod)["metadata"]


def test_nodes_keep_only_the_entries_that_own_labels_cut_to_them() -> None:
    node = {
        "metadata": {
            "name": "gpu-1",
            "labels": {"a": "b"},
            "managedFields": [
                managed("kubelet", {"f:metadata": {"f:annotations": {"f:x": {}}}, "f:status": {"f:images": {}}}),
                managed(
                    "kubectl-label",
                    {"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {"f:taints": {}}},
                    time=LABEL_TIME,
                ),
            ],
        }
    }
    kept = slim.slim_node(node)["metadata"]["managedFields"]
    assert [(e["manager"], e["fieldsV1"]) for e in kept] == [
        ("kubectl-label", {"f:metadata": {"f:labels": {"f:a": {}}}})
    ]


# -- end to end: a snapshot with managedFields, every output ----------------------------------------------------

QUEUE_HELM = {
    "f:metadata": {"f:annotations": {".": {}, "f:meta.helm.sh/release-name": {}}},
    "f:spec": {
        "f:parentQueue": {},
        "f:resources": {
            ".": {},
            **{
                f"f:{r}": {".": {}, "f:quota": {}, "f:limit": {}, "f:overQuotaWeight": {}}
                for r in ("cpu", "gpu", "memory")
            },
        },
    },
}
HELM_RELEASE = {"meta.helm.sh/release-name": "kai-scheduler", "meta.helm.sh/release-namespace": "kai-scheduler"}


def drifted_lab(tmp_path: Path) -> tuple[Path, Path]:
    """The lab's default-queue with cpu.quota edited by hand (kubectl edit) and gpu.quota as Helm's revision 3
    left it (revision 4, later, did not touch the Queue); a node labelled "True" by kubectl label."""
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    parent = queue("default-parent-queue")
    child = queue("default-queue", parent="default-parent-queue")
    child["spec"]["resources"]["cpu"]["quota"] = 0
    child["spec"]["resources"]["gpu"]["quota"] = 4
    qhelm = copy.deepcopy(QUEUE_HELM)
    del qhelm["f:spec"]["f:resources"]["f:cpu"]["f:quota"]
    child["metadata"].update(
        annotations=dict(HELM_RELEASE),
        managedFields=[
            managed("helm", qhelm),
            managed("kubectl-edit", {"f:spec": {"f:resources": {"f:cpu": {"f:quota": {}}}}}, time=EDIT_TIME),
        ],
    )
    payload = release_payload(revision=3, status="superseded")
    payload["info"]["last_deployed"] = "2026-11-02T08:59:58.123456789Z"
    later = release_payload(revision=4)
    later["info"]["last_deployed"] = "2026-11-20T10:00:00.5+01:00"
    nodes = [
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "labels": {"nvca.nvcf.nvidia.io/schedule": "True"},
                "managedFields": [
                    managed(
                        manager, {"f:metadata": {"f:labels": {"f:nvca.nvcf.nvidia.io/schedule": {}}}}, time=LABEL_TIME
                    )
                ],
            },
        }
        for name, manager in (("gpu-1", "kubectl-label"), ("gpu-2", "node-labeller"))
    ]
    snap = snapshot_file(
        tmp_path,
        [
            *kai_crds(),
            parent,
            child,
            canonical_shard(),
            *nodes,
            *(slim.release_summary(encode_release_secret(p)) for p in (later, payload)),
        ],
    )
    return repo, snap


def diff_args(repo: Path, snap: Path, fmt: str) -> list[Any]:
    return ["diff", "--repo", repo, "--cluster", "lab", "--snapshot", snap, "-o", fmt]


def test_json_names_the_manager_of_each_drifted_field_and_the_helm_release(tmp_path: Path) -> None:
    repo, snap = drifted_lab(tmp_path)
    code, out, err = run_cli(diff_args(repo, snap, "json"))
    assert code == 2, err
    findings = json.loads(out)["findings"]
    drift = next(f for f in findings if f["rule"] == "KAI-D-002")
    by_field = {a["field"]: a for a in drift["attribution"]}
    assert set(by_field) == {"cpu.quota", "gpu.quota"}
    assert by_field["cpu.quota"] == {
        "field": "cpu.quota",
        "manager": "kubectl-edit",
        "operation": "Update",
        "subresource": None,
        "time": EDIT_TIME,
    }
    assert by_field["gpu.quota"]["manager"] == "helm"
    assert by_field["gpu.quota"]["helmRelease"] == {
        "name": "kai-scheduler",
        "namespace": "kai-scheduler",
        "revision": 3,
        "status": "superseded",
        "lastDeployed": "2026-11-02T08:59:58.123456789Z",
    }
    label = next(f for f in findings if f["rule"] == "NVCA-S-012" and f["subject"]["name"] == "gpu-1")
    assert label["attribution"] == [
        {
            "field": "node/gpu-1 label nvca.nvcf.nvidia.io/schedule",
            "manager": "kubectl-label",
            "operation": "Update",
            "subresource": None,
            "time": LABEL_TIME,
        }
    ]  # its node's label only (NVCA-S-012 is per node)
    quiet = [f for f in findings if f["rule"] not in ("KAI-D-002", "NVCA-S-012")]
    assert all("attribution" not in f for f in quiet)


def test_text_shows_who_last_set_each_change_on_the_findings_lines(tmp_path: Path) -> None:
    repo, snap = drifted_lab(tmp_path)
    code, out, err = run_cli(diff_args(repo, snap, "text"))
    assert code == 2, err
    # The change lines keep their column (the key padded as without attribution), who set it after them.
    assert "cpu.quota              0 → -1, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC" in out
    assert (
        "gpu.quota              4 → -1, last set by helm (Update) 2026-11-02 09:00 UTC — Helm release "
        "kai-scheduler/kai-scheduler revision 3 (superseded, deployed 2026-11-02 08:59 UTC)"
    ) in out
    assert (
        "node/gpu-1 label nvca.nvcf.nvidia.io/schedule, last set by kubectl-label (Update) 2026-11-29 08:30 UTC"
    ) in out


def test_markdown_shows_the_attribution_in_the_finding_details(tmp_path: Path) -> None:
    repo, snap = drifted_lab(tmp_path)
    code, out, err = run_cli(diff_args(repo, snap, "markdown"))
    assert code == 2, err
    assert "\n- cpu.quota 0 → -1, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC\n" in out
    assert "Helm release kai-scheduler/kai-scheduler revision 3" in out
    assert "\n- node/gpu-1 label nvca.nvcf.nvidia.io/schedule, last set by kubectl-label (Update)" in out


def test_a_manager_name_that_holds_a_credential_is_redacted_everywhere(tmp_path: Path) -> None:
    repo, snap = drifted_lab(tmp_path)
    snap.write_text(snap.read_text().replace("kubectl-edit", f"Bearer {SECRET}"))
    for fmt, shown in (
        ("json", '"manager": "Bearer <redacted>"'),
        ("text", "last set by Bearer <redacted>"),
        ("markdown", "last set by Bearer &lt;redacted&gt;"),
    ):
        code, out, err = run_cli(diff_args(repo, snap, fmt))
        assert code == 2 and SECRET not in out and shown in out, (fmt, err)


def hostile_lab(tmp_path: Path) -> tuple[Path, Path]:
    """The lab with a credential in every attribution field a snapshot carries: the kubectl-edit entry's operation,
    subresource and time, the Helm release's status and lastDeployed."""
    import yaml

    repo, snap = drifted_lab(tmp_path)
    document = yaml.safe_load(snap.read_text())
    for item in document["items"]:
        for managed_entry in item.get("metadata", {}).get("managedFields", []):
            if managed_entry["manager"] == "kubectl-edit":
                managed_entry.update(
                    operation=f"token={SECRET}", subresource=f"Bearer {SECRET}", time=f"2026-11-30T14:02:11Z {SECRET}"
                )
        if item.get("kind") == "HelmReleaseSummary":
            item.update(status=f"password: {SECRET}", lastDeployed=f"x {SECRET}")
    snap.write_text(yaml.safe_dump(document))
    return repo, snap


def test_attribution_fields_of_a_hostile_snapshot_keep_only_their_shape(tmp_path: Path) -> None:
    repo, snap = hostile_lab(tmp_path)
    code, out, err = run_cli(diff_args(repo, snap, "json"))
    assert code == 2 and SECRET not in out, err
    drift = next(f for f in json.loads(out)["findings"] if f["rule"] == "KAI-D-002")
    by_field = {a["field"]: a for a in drift["attribution"]}
    assert by_field["cpu.quota"] == {
        "field": "cpu.quota",
        "manager": "kubectl-edit",
        "operation": None,
        "subresource": None,
        "time": None,
    }
    assert by_field["gpu.quota"]["helmRelease"] == {
        "name": "kai-scheduler",
        "namespace": "kai-scheduler",
        "revision": 4,
        "status": None,
        "lastDeployed": None,
    }
    # (no deploy time left to place the write: the newest revision, as for a release with no times)
    for fmt in ("text", "markdown"):
        code, out, err = run_cli(diff_args(repo, snap, fmt))
        assert code == 2 and SECRET not in out, (fmt, err)
        assert "cpu.quota 0 → -1, last set by kubectl-edit\n" in out.replace("              ", " "), fmt
        assert "Helm release kai-scheduler/kai-scheduler revision 4\n" in out, fmt


def test_a_report_with_free_text_in_the_attribution_is_redacted_in_the_policy_report() -> None:
    """A saved report (`--previous-report`, a report read back) is a file too: what it says is judged again."""
    release = ReleaseRevision("kai-scheduler", "kai-scheduler", 3, f"password: {SECRET}", f"x {SECRET}")
    attribution = (
        Attribution(
            "cpu.quota", "kubectl-edit", f"token={SECRET}", f"Bearer {SECRET}", f"when --token={SECRET}", release
        ),
    )
    finding = Finding(
        "KAI-D-002",
        Kind.DRIFT,
        Severity.ERROR,
        "Queue default-queue differs from Git",
        "lab",
        subject=ObjectRef("scheduling.run.ai/v2", "Queue", "default-queue"),
        live={"cpu.quota": 0.0},
        desired={"cpu.quota": -1.0},
        attribution=attribution,
    )
    body = build_report(
        CLUSTER_POLICY_REPORT, Scope(None, [finding]), ReportSettings("lab"), datetime(2026, 12, 1, tzinfo=UTC)
    )
    assert SECRET not in json.dumps(body) and "last set by kubectl-edit" in json.dumps(body, ensure_ascii=False)
    assert SECRET not in json.dumps(finding.to_dict())


def test_policy_report_results_carry_the_attribution_as_a_string_property() -> None:
    attribution = (
        Attribution("cpu.quota", "kubectl-edit", "Update", "", EDIT_TIME),
        Attribution("gpu.quota", f"token={SECRET}", "Apply", None, HELM_TIME),
    )
    finding = Finding(
        "KAI-D-002",
        Kind.DRIFT,
        Severity.ERROR,
        "Queue default-queue differs from Git",
        "lab",
        subject=ObjectRef("scheduling.run.ai/v2", "Queue", "default-queue"),
        live={"cpu.quota": 0.0, "gpu.quota": 4.0},
        desired={"cpu.quota": -1.0, "gpu.quota": -1.0},
        attribution=attribution,
    )
    body = build_report(
        CLUSTER_POLICY_REPORT, Scope(None, [finding]), ReportSettings("lab"), datetime(2026, 12, 1, tzinfo=UTC)
    )
    props = body["results"][0]["properties"]
    assert all(isinstance(v, str) for v in props.values())
    assert props["attribution"].startswith(
        "cpu.quota 0 → -1, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC; gpu.quota 4 → -1, last set by "
    )
    assert SECRET not in props["attribution"]


def test_a_report_read_back_keeps_its_attribution(tmp_path: Path) -> None:
    repo, snap = drifted_lab(tmp_path)
    saved = tmp_path / "report.json"
    code, _, err = run_cli([*diff_args(repo, snap, f"json={saved}")])
    assert code == 2, err
    from reconciler.report.reader import load_report

    drift = next(f for f in load_report(str(saved)).clusters[0].findings if f.rule_id == "KAI-D-002")
    assert drift.attribution[0] == Attribution("cpu.quota", "kubectl-edit", "Update", None, EDIT_TIME)
    assert drift.attribution[1].helm_release == ReleaseRevision(
        "kai-scheduler", "kai-scheduler", 3, "superseded", "2026-11-02T08:59:58.123456789Z"
    )


@pytest.mark.parametrize("fmt", ["yaml"])
def test_a_snapshot_without_managed_fields_attributes_nothing(tmp_path: Path, fmt: str) -> None:
    repo, snap = drifted_lab(tmp_path)
    text = snap.read_text()
    import yaml

    document = yaml.safe_load(text)
    for item in document["items"]:
        item.get("metadata", {}).pop("managedFields", None)
    snap.write_text(yaml.safe_dump(document))
    code, out, err = run_cli(diff_args(repo, snap, "json"))
    assert code == 2, err
    assert all("attribution" not in f for f in json.loads(out)["findings"])


# -- the live read: what it keeps of managedFields and of other charts' releases -------------------------------


def test_the_live_read_keeps_queue_and_node_label_managers_and_the_release_owning_a_queue(tmp_path: Path) -> None:
    from reconciler.sources.cluster import read_live
    from tests.support.cluster_source import Recorder, client_for, prod_items, serve
    from tests.support.kubeserver import KubeTestServer

    team = queue("team-a", parent="default-parent-queue")
    team["metadata"].update(
        annotations={"meta.helm.sh/release-name": "team-queues", "meta.helm.sh/release-namespace": "teams"},
        managedFields=[managed("helm", QUEUE_HELM)],
    )
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": "gpu-9",
            "labels": {"x": "y"},
            "managedFields": [
                managed("kubelet", {"f:status": {"f:capacity": {}}}),
                managed("kubectl-label", {"f:metadata": {"f:labels": {"f:x": {}}}}, time=LABEL_TIME),
            ],
        },
    }
    owning = release_payload("team-queues", "teams", revision=2, chart="team-queues", config={"password": SECRET})
    unrelated = release_payload("gpu-operator", "gpu-operator", chart="gpu-operator")
    with KubeTestServer() as server:
        serve(server, prod_items())
        server.add_many([team, node, encode_release_secret(owning), encode_release_secret(unrelated)])
        sink = Recorder()
        read_live(client_for(server), sink)
    queue_item = next(i for i in sink.kinds("Queue") if i["metadata"]["name"] == "team-a")
    assert [e["manager"] for e in queue_item["metadata"]["managedFields"]] == ["helm"]
    node_item = next(i for i in sink.kinds("Node") if i["metadata"]["name"] == "gpu-9")
    assert [e["manager"] for e in node_item["metadata"]["managedFields"]] == ["kubectl-label"]
    releases = {s["metadata"]["name"]: s for s in sink.kinds("HelmReleaseSummary")}
    assert "gpu-operator" not in releases  # another chart's release that owns nothing checked
    assert releases["team-queues"]["revision"] == 2 and releases["team-queues"]["config"] == {}
    assert SECRET not in json.dumps(sink.items)


def test_kai_config_and_shard_fields_are_attributed_by_their_spec_paths() -> None:
    from reconciler.checks.attribution import attribute
    from tests.support.helpers import live_state

    config = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {
            "name": "kai-config",
            "managedFields": [
                managed("kai-config-deployer", {"f:spec": {"f:admission": {"f:gpuSharing": {}}}}),
                managed("kubectl-patch", {"f:spec": {"f:admission": {"f:gpuSharing": {}}}}, time=EDIT_TIME),
            ],
        },
        "spec": {"admission": {"gpuSharing": True}},
    }
    shard = canonical_shard()
    shard["metadata"]["managedFields"] = [managed("helm", {"f:spec": {"f:placementStrategy": {"f:gpu": {}}}})]
    live = live_state([*kai_crds(), config, shard])
    config_drift = Finding(
        "KAI-D-005",
        Kind.DRIFT,
        Severity.ERROR,
        "kai-config differs",
        "lab",
        subject=ObjectRef("kai.scheduler/v1", "Config", "kai-config"),
        changes=(DriftedField(("spec", "admission", "gpuSharing"), True, False, "admission.gpuSharing"),),
    )
    shard_drift = Finding(
        "KAI-D-003",
        Kind.DRIFT,
        Severity.ERROR,
        "shard differs",
        "lab",
        subject=ObjectRef("kai.scheduler/v1", "SchedulingShard", "default"),
        changes=(
            DriftedField(("spec", "placementStrategy", "gpu"), "spread", "binpack", "placementStrategy.gpu"),
            DriftedField(("spec", "minRuntime"), None, {}, "minRuntime"),
        ),
    )
    attributed = attribute([config_drift, shard_drift], live, None)
    assert attributed[0].attribution == (
        Attribution("admission.gpuSharing", "kubectl-patch", "Update", None, EDIT_TIME),
    )
    assert attributed[1].attribution == (
        Attribution("placementStrategy.gpu", "helm", "Update", None, HELM_TIME),
        Attribution("minRuntime"),
    )


@pytest.mark.parametrize(
    ("written", "revision"),
    [("2026-11-02T09:00:00Z", 1), ("2026-11-20T09:00:01Z", 2), ("2026-11-02T08:00:00Z", 2), (None, 2)],
)
def test_a_helm_owned_field_names_the_revision_deployed_at_or_before_its_write(
    written: str | None, revision: int
) -> None:
    """Helm stamps a revision, then writes; managedFields times are whole seconds. Before the first revision or
    without a time, the newest is named."""
    from reconciler.checks.attribution import attribute
    from tests.support.helpers import live_state

    team = queue("team-a")
    team["metadata"].update(
        annotations={"meta.helm.sh/release-name": "team", "meta.helm.sh/release-namespace": "t"},
        managedFields=[{**managed("helm", QUEUE_HELM), "time": written}],
    )
    first, second = (
        release_payload("team", "t", 1, "superseded", chart="team"),
        release_payload("team", "t", 2, chart="team"),
    )
    first["info"]["last_deployed"] = "2026-11-02T09:00:00.9Z"  # the same second as the write
    second["info"]["last_deployed"] = "2026-11-20T10:00:00.2+01:00"
    live = live_state([*kai_crds(), team, *(slim.release_summary(encode_release_secret(p)) for p in (first, second))])
    drift = Finding(
        "KAI-D-002",
        Kind.DRIFT,
        Severity.ERROR,
        "Queue team-a differs",
        "lab",
        subject=ObjectRef("scheduling.run.ai/v2", "Queue", "team-a"),
        changes=(DriftedField(("spec", "resources", "gpu", "quota"), -1, 2, "gpu.quota"),),
    )
    [attributed] = attribute([drift], live, None)
    release = attributed.attribution[0].helm_release
    assert release is not None and (release.name, release.namespace, release.revision) == ("team", "t", revision)
