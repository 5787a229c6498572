"""Intent, not assumption, on the real API server (docs/reconcile.md#what-a-plan-holds-back): with no shared-cluster
intent in Git no node label is written, and with Git's pin ahead of the live KAI release (chart v0.14.7, its
Config CRD installed) no version-dependent kai-config field is written: the upgrade is Helm's.

Both failed before the change: the first plan removed nvca.nvcf.nvidia.io/schedule=true from the labelled node
(the model defaulted the intent to dedicated), the second patched kai-config with the v0.16.8 render's image
tags and fields the v0.14.7 Config CRD prunes.
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import yaml

from tests.support.helpers import FIXTURES, commit_files, held_fields
from tests.support.kai_cluster import KaiCluster, repo_config

SCHEDULE = "nvca.nvcf.nvidia.io/schedule"
CONFIG_CRD = "configs.kai.scheduler"
# The Config CRD's spec properties KAI added after v0.14.7 (v0.15.3: binder.plugins, global.jsonLog; v0.16.8:
# numaPlacementExporter, the admission runtime-class and NVIDIA_VISIBLE_DEVICES fields, the operands'
# podDisruptionBudget, the reservation pods' security contexts; v0.17.0: global.priorityClassName,
# podGrouper.args.genericKartaFallback). Removing them from the v0.17.0 fixture gives v0.14.7's property tree
# (tests/fixtures/SOURCES.md, "Derived in the tests").
ADDED_AFTER_V0_14_7 = (
    "admission.blockNvidiaVisibleDevices",
    "admission.gpuFractionRuntimeClassName",
    "binder.plugins",
    "binder.resourceReservation.reservationContainerSecurityContext",
    "binder.resourceReservation.reservationPodSecurityContext",
    "global.jsonLog",
    "global.priorityClassName",
    "numaPlacementExporter",
    "podGrouper.args.genericKartaFallback",
    *(
        f"{block}.service.podDisruptionBudget"
        for block in (
            "admission",
            "binder",
            "nodeScaleAdjuster",
            "podGroupController",
            "podGrouper",
            "queueController",
            "scheduler",
        )
    ),
)


def test_no_declared_intent_writes_no_node_label(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    cluster.add_node("lab-gpu-1", {SCHEDULE: "true"})
    undeclared = repo_config().replace("    sharedCluster:\n      intent: dedicated\n", "")
    assert "sharedCluster" not in undeclared
    commit_files(cluster.repo, {"kai-gitops.yaml": undeclared}, "no shared-cluster intent")

    planned = cluster.run("reconcile", "-o", "json")
    report = json.loads(planned.out)
    assert [c for c in report["plan"]["changes"] if c["object"]["kind"] == "Node"] == [], planned
    [intent] = [f for f in report["findings"] if f["rule"] == "NVCA-S-003"]
    assert "sharedCluster: {intent: dedicated}" in intent["message"]

    applied = cluster.run("reconcile", "--apply")
    assert applied.code in (0, 2), applied
    assert cluster.core.read_node("lab-gpu-1").metadata.labels[SCHEDULE] == "true"


def older_config_crd() -> dict[str, Any]:
    crd = yaml.safe_load((FIXTURES / "kai" / "kai.scheduler_configs.yaml").read_text())
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    for dotted in ADDED_AFTER_V0_14_7:
        *parents, last = dotted.split(".")
        node = spec
        for part in parents:
            node = node["properties"][part]
        del node["properties"][last]
    return crd


def install_older_config_crd(cluster: KaiCluster) -> None:
    """Replace the session's v0.17.0 Config CRD by v0.14.7's (the reset puts the fixture's back), and wait until
    the server prunes a field v0.14.7 does not serve."""
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CONFIG_CRD}"
    rest = cluster.envtest.rest
    assert rest is not None
    live = rest.get(path)
    older = older_config_crd()
    live["spec"]["versions"][0]["schema"] = older["spec"]["versions"][0]["schema"]
    rest.call("PUT", path, live)
    probe = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {"name": "probe"},
        "spec": {"global": {"jsonLog": True}},
    }
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        created = rest.call("POST", "/apis/kai.scheduler/v1/configs?dryRun=All", copy.deepcopy(probe), ok=(201,))
        if "jsonLog" not in (created.get("spec") or {}).get("global", {}):
            return
        time.sleep(0.2)
    raise AssertionError("the API server still serves global.jsonLog after installing v0.14.7's Config CRD")


def test_a_pin_ahead_of_the_live_chart_writes_no_version_dependent_field(cluster: KaiCluster) -> None:
    install_older_config_crd(cluster)
    cluster.install_trapped()  # chart v0.14.7, kai-config as its deployer applied it
    cluster.custom.patch_cluster_custom_object(
        "kai.scheduler", "v1", "configs", "kai-config", {"spec": {"admission": {"gpuSharing": True}}}
    )  # a hand edit
    ahead = repo_config().replace("kaiChartVersion: v0.14.7", "kaiChartVersion: v0.16.8")
    commit_files(cluster.repo, {"kai-gitops.yaml": ahead}, "pin KAI v0.16.8 before the upgrade runs")

    planned = cluster.run("reconcile", "-o", "json")
    report = json.loads(planned.out)
    [drift] = [f for f in report["findings"] if f["rule"] == "KAI-D-005"]
    assert "binder.service.image.tag" in drift["desired"]  # diff loses nothing
    assert "KAI-R-012" in {f["rule"] for f in report["findings"]}
    [change] = [c for c in report["plan"]["changes"] if c["object"]["kind"] == "Config"]
    assert [(f["path"], f["after"]) for f in change["fields"]] == [(["spec", "admission", "gpuSharing"], False)]
    [held] = [o for o in report["plan"]["operator"] if (o["subject"] or {}).get("kind") == "Config"]
    groups = held_fields(held["description"])
    waits = "waits for the upgrade to v0.16.8 (KAI-R-012)"
    assert "spec.binder.service.image.tag" in groups[f"an image of the chart version: {waits}"]
    assert "spec.admission.blockNvidiaVisibleDevices" in groups[f"KAI v0.14.7's chart renders no such field: {waits}"]
    assert held["command"] is None

    applied = cluster.run("reconcile", "--apply", "--max-changes", "20")
    assert "Apply complete:" in applied.out and " 0 failed" in applied.out, applied
    stored = cluster.custom.get_cluster_custom_object("kai.scheduler", "v1", "configs", "kai-config")["spec"]
    assert stored["admission"]["gpuSharing"] is False
    assert stored["binder"]["service"]["image"]["tag"] == "v0.14.7"  # Helm moves the images, not kai-gitops
    again = json.loads(cluster.run("reconcile", "-o", "json").out)
    assert [c for c in again["plan"]["changes"] if c["object"]["kind"] == "Config"] == []  # nothing oscillates


def test_the_derived_crd_prunes_only_what_v0_14_7_does_not_serve(cluster: KaiCluster) -> None:
    """What the derivation removed is exactly what the server now prunes; a v0.14.7 field is kept."""
    install_older_config_crd(cluster)
    rest = cluster.envtest.rest
    assert rest is not None
    body = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {"name": "probe"},
        "spec": {
            "global": {"jsonLog": True, "vpa": {"enabled": True}},
            "admission": {"gpuSharing": True, "blockNvidiaVisibleDevices": True},
        },
    }
    created = rest.call("POST", "/apis/kai.scheduler/v1/configs?dryRun=All", body, ok=(201,))
    assert created["spec"] == {"global": {"vpa": {"enabled": True}}, "admission": {"gpuSharing": True}}
