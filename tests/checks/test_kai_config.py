"""The desired kai-config of every modelled chart version.

Expected renders come from the mapping table of tests/fixtures/kai/values-to-config.md (read from the
KAI chart templates at each tag) and from the NVCF stack's golden render, never from the model itself:
each row of the table sets one value and says, per chart version, whether the Config carries it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.model.kai_config import COLUMNS, ValueSource, render_kai_config
from reconciler.model.values import chart_defaults, deep_merge
from tests.support.helpers import FIXTURES, LOCAL_ENV, addon_config, desired_for, standalone_config

TABLE = (FIXTURES / "kai" / "values-to-config.md").read_text()
GOLDEN = FIXTURES / "nvcf" / "golden" / "kai-config-manifest-configmap.yaml"


def _mapping_rows() -> dict[str, list[str]]:
    """values-key cell -> the eleven version cells, from the "Values → Config mapping" table."""
    section = TABLE.split("## Values → Config mapping", 1)[1].split("Footnotes:", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 14 and not cells[0].startswith(("values key", "---")):
            rows[cells[0]] = cells[2:13]
    return rows


ROWS = _mapping_rows()
# The table's column headers, in order, are the modelled versions.
assert re.search(r"\| 9 \| 10 \| 12a \| 12b \| 13 \| 14 \| 15 \| 16 \| 16.9 \| 17 \| 17.1 \|", TABLE)

# One recipe per table row: the value set (a values path and a sample), and the Config field that carries
# it (a dotted spec path) with the value expected there when carried.
Recipe = tuple[str, Any, str, Any]
RECIPES: dict[str, list[Recipe]] = {
    "`global.namespaceLabelSelector`": [
        ("global.namespaceLabelSelector", {"team": "a"}, "global.namespaceLabelSelector", {"team": "a"})
    ],
    "`global.podLabelSelector`": [("global.podLabelSelector", {"app": "x"}, "global.podLabelSelector", {"app": "x"})],
    "`global.affinity` / `.tolerations` / `.securityContext`": [
        (
            "global.tolerations",
            [{"key": "gpu", "operator": "Exists"}],
            "global.tolerations",
            [{"key": "gpu", "operator": "Exists"}],
        ),
        ("global.securityContext", {"runAsUser": 4242}, "global.securityContext", {"runAsUser": 4242}),
    ],
    "`global.requireDefaultPodAntiAffinityTerm`": [
        ("global.requireDefaultPodAntiAffinityTerm", True, "global.requireDefaultPodAntiAffinityTerm", True)
    ],
    "`global.nodeSelector`": [("global.nodeSelector", {"pool": "gpu"}, "global.nodeSelector", {"pool": "gpu"})],
    "`global.imagePullSecrets[].name`": [
        ("global.imagePullSecrets", [{"name": "regcred"}], "global.additionalImagePullSecrets", ["regcred"])
    ],
    "`operator.replicaCount`": [("operator.replicaCount", 3, "global.replicaCount", 3)],
    "`global.vpa`": [("global.vpa.enabled", True, "global.vpa.enabled", True)],
    "`global.jsonLog`": [("global.jsonLog", True, "global.jsonLog", True)],
    "`global.priorityClassName`": [("global.priorityClassName", "kai-high", "global.priorityClassName", "kai-high")],
    "`podgrouper.queueLabelKey`": [
        ("podgrouper.queueLabelKey", "team.example/queue", "global.queueLabelKey", "team.example/queue")
    ],
    "`global.queueLabelKey`": [
        ("global.queueLabelKey", "team.example/queue", "global.queueLabelKey", "team.example/queue")
    ],
    "`global.nodePoolLabelKey`": [
        ("global.nodePoolLabelKey", "pool.example/name", "global.nodePoolLabelKey", "pool.example/name")
    ],
    "`global.registry`": [
        ("global.registry", "registry.example/kai", "queueController.service.image.repository", "registry.example/kai")
    ],
    "`<comp>.image.name`": [
        ("queuecontroller.image.name", "qc-image", "queueController.service.image.name", "qc-image")
    ],
    "`<comp>.image.tag` → `global.tag` → chart appVersion (+`-fips` if `global.fips`)": [
        ("queuecontroller.image.tag", "v9.9.9", "queueController.service.image.tag", "v9.9.9")
    ],
    "`<comp>.image.pullPolicy` → `global.imagePullPolicy`": [
        ("queuecontroller.image.pullPolicy", "Always", "queueController.service.image.pullPolicy", "Always")
    ],
    "`podgroupcontroller/queuecontroller/admission/nodescaleadjuster.resources`": [
        (
            "queuecontroller.resources",
            {"limits": {"cpu": "3"}},
            "queueController.service.resources",
            {"limits": {"cpu": "3"}},
        )
    ],
    "`binder.resources`, `scheduler.resources`": [
        ("binder.resources", {"limits": {"cpu": "3"}}, "binder.service.resources", {"limits": {"cpu": "3"}})
    ],
    "`podgrouper.image/resources/affinity`": [
        ("podgrouper.resources", {"limits": {"cpu": "3"}}, "podGrouper.service.resources", {"limits": {"cpu": "3"}})
    ],
    "`<comp>.affinity` (non-podgrouper)": [
        ("queuecontroller.affinity", {"nodeAffinity": {}}, "queueController.service.affinity", {"nodeAffinity": {}})
    ],
    "`binder/podgrouper/podgroupcontroller/queuecontroller/admission/scheduler.enabled`": [
        ("queuecontroller.enabled", False, "queueController.service.enabled", False)
    ],
    "`global.clusterAutoscaling`": [("global.clusterAutoscaling", True, "nodeScaleAdjuster.service.enabled", True)],
    "`nodescaleadjuster.scalingPodNamespace` / `.scalingPodImage.*`": [
        ("nodescaleadjuster.scalingPodNamespace", "scale-ns", "nodeScaleAdjuster.args.nodeScaleNamespace", "scale-ns")
    ],
    "`global.gpuSharing`": [("global.gpuSharing", True, "admission.gpuSharing", True)],
    "`global.blockNvidiaVisibleDevices`": [
        ("global.blockNvidiaVisibleDevices", True, "admission.blockNvidiaVisibleDevices", True)
    ],
    "`admission.ports.{webhookPort,probePort,metricsPort}`": [
        ("admission.ports.webhookPort", 9555, "admission.webhook.targetPort", 9555)
    ],
    "`admission.gpuPodRuntimeClassName`": [
        ("admission.gpuPodRuntimeClassName", "rc-pod", "admission.gpuPodRuntimeClassName", "rc-pod")
    ],
    "`admission.gpuFractionRuntimeClassName`": [
        ("admission.gpuFractionRuntimeClassName", "rc-frac", "admission.gpuFractionRuntimeClassName", "rc-frac")
    ],
    "`admission.podDisruptionBudget.{enabled,maxUnavailable}`": [
        ("admission.podDisruptionBudget.maxUnavailable", 2, "admission.service.podDisruptionBudget.maxUnavailable", 2)
    ],
    "`podgrouper.podDisruptionBudget`, `scheduler.podDisruptionBudget`": [
        (
            "podgrouper.podDisruptionBudget",
            {"enabled": True, "maxUnavailable": 2},
            "podGrouper.service.podDisruptionBudget.maxUnavailable",
            2,
        )
    ],
    "`podgrouper.genericKartaFallback`": [
        ("podgrouper.genericKartaFallback", False, "podGrouper.args.genericKartaFallback", False)
    ],
    "`binder.ports.metricsPort`": [("binder.ports.metricsPort", 9191, "binder.metricsPort", 9191)],
    "`binder.runtimeClassName`, `binder.resourceReservationPodResources`": [
        ("binder.runtimeClassName", "rr-class", "binder.resourceReservation.runtimeClassName", "rr-class")
    ],
    "`binder.resourceReservationImage.name` / `.tag,.pullPolicy`": [
        ("binder.resourceReservationImage.name", "rr-image", "binder.resourceReservation.image.name", "rr-image")
    ],
    "`global.resourceReservation.{namespace,serviceAccount,appLabel}`": [
        ("global.resourceReservation.serviceAccount", "rr-sa", "binder.resourceReservation.serviceAccountName", "rr-sa")
    ],
    "`binder.cdiEnabled` (only if the key exists)": [("binder.cdiEnabled", True, "binder.cdiEnabled", True)],
    "`binder.plugins`": [
        ("binder.plugins", {"gpusharing": {"enabled": False}}, "binder.plugins.gpusharing.enabled", False)
    ],
    "`scheduler.ports.metricsPort`": [("scheduler.ports.metricsPort", 9292, "scheduler.schedulerService.port", 9292)],
    "`prometheus.enabled`, `.externalPrometheusUrl`": [("prometheus.enabled", True, "prometheus.enabled", True)],
    "`numaPlacementExporter.{enabled,image,resources,affinity,nodeSelector,tolerations,pollInterval,"
    "driftResyncInterval}`": [
        ("numaPlacementExporter.pollInterval", "45s", "numaPlacementExporter.pollInterval", "45s")
    ],
    "`numaPlacementExporter.{podResourcesHostPath,podResourcesSocket,sysfsHostPath}`": [
        (
            "numaPlacementExporter.podResourcesSocket",
            "/run/pr.sock",
            "numaPlacementExporter.podResourcesSocket",
            "/run/pr.sock",
        )
    ],
}
# Rows with no values key: the template's own constants, checked below.
CONSTANT_ROWS = {"(release namespace)", "—"}


def test_every_row_of_the_table_has_a_recipe() -> None:
    assert set(ROWS) - CONSTANT_ROWS == set(RECIPES)


def _carried(row: list[str], column: int) -> bool:
    cell = row[column]
    if cell.startswith("same as "):
        return _carried(row, COLUMNS.index(_column_version(cell.removeprefix("same as "))))
    if cell == "same":
        return _carried(row, column - 1)
    if "only if" in cell and "key absent" in cell:
        return False  # the chart's own defaults hold that key in every version that has it
    return cell.startswith("✓") or cell == "name only"


def _column_version(label: str) -> str:
    labels = ("9", "10", "12a", "12b", "13", "14", "15", "16", "16.9", "17", "17.1")
    return COLUMNS[labels.index(label)]


def _set(values: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    *parents, last = dotted.split(".")
    node = values
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return values


def _at(spec: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(spec, dict) or part not in spec:
            return "<absent>"
        spec = spec[part]
    return spec


def _render(version: str, user: dict[str, Any]) -> dict[str, Any]:
    values = deep_merge(chart_defaults(version), user)
    where = ValueSource("kai_values", user, ("config", ("clusters", 0, "kaiChartVersion")))
    return render_kai_config(version, values, where, version).spec()


CASES = [(key, recipe, version) for key, recipes in RECIPES.items() for recipe in recipes for version in COLUMNS]


@pytest.mark.parametrize(("row", "recipe", "version"), CASES, ids=[f"{r[0]}->{r[2]}@{v}" for _, r, v in CASES])
def test_each_value_reaches_kai_config_exactly_where_the_table_says(row: str, recipe: Recipe, version: str) -> None:
    values_path, sample, config_path, expected = recipe
    spec = _render(version, _set({}, values_path, sample))
    if _carried(ROWS[row], COLUMNS.index(version)):
        assert _at(spec, config_path) == expected
    else:
        assert _at(spec, config_path) != expected


@pytest.mark.parametrize("version", COLUMNS)
def test_the_templates_constants(version: str) -> None:
    spec = _render(version, {})
    assert spec["namespace"] == "kai-scheduler"
    assert spec["admission"]["queueLabelSelector"] is False  # H in every column
    assert spec["admission"]["webhook"]["port"] == 443
    if version == "v0.9.20":  # footnotes 2, 3, 5: hard-coded keys and the chart version as the tag
        assert spec["global"]["queueLabelKey"] == "kai.scheduler/queue"
        assert spec["global"]["nodePoolLabelKey"] == "kai.scheduler/nodepool"
        assert spec["global"]["schedulerName"] == "kai-scheduler"
        assert (
            _render(version, {"global": {"tag": "v1.2.3"}})["queueController"]["service"]["image"]["tag"] == "v0.9.20"
        )
    else:
        assert "schedulerName" not in spec["global"]


def test_the_released_registry_replaces_the_repositorys_placeholder() -> None:
    # footnote 4: the released chart carries ghcr.io/kai-scheduler/kai-scheduler
    spec = _render("v0.16.8", {})
    assert spec["binder"]["service"]["image"]["repository"] == "ghcr.io/kai-scheduler/kai-scheduler"


def test_fips_appends_to_every_resolved_tag() -> None:
    spec = _render("v0.16.8", {"global": {"fips": True, "tag": "v0.16.8"}})
    assert spec["scheduler"]["service"]["image"]["tag"] == "v0.16.8-fips"


@pytest.mark.parametrize(
    ("version", "user", "suffixed"),
    [
        ("v0.16.9", {"fips": True}, True),  # v0.16.9 keeps the boolean (kai-resource-management PR #68)
        ("v0.16.9", {"fipsMode": "on"}, False),  # ... and has no fipsMode
        ("v0.17.1", {"fipsMode": "on"}, True),  # footnote 9: renamed on the v0.17 branch (#2011)
        ("v0.17.1", {"fipsMode": "off"}, False),
        ("v0.17.1", {"fips": True}, False),  # the old key is dropped with no fallback
    ],
)
def test_fips_mode_by_version(version: str, user: dict[str, Any], suffixed: bool) -> None:
    spec = _render(version, {"global": {**user, "tag": "v9.9.9"}})
    assert spec["scheduler"]["service"]["image"]["tag"] == ("v9.9.9-fips" if suffixed else "v9.9.9")


def test_addon_desired_is_the_stacks_golden_render(tmp_path: Path) -> None:
    """What the nvcf-compute-plane stack forwards for its local environment, rendered by chart v0.16.7."""
    desired = desired_for(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": LOCAL_ENV})
    golden = YAML(typ="safe", pure=True).load(GOLDEN.read_text())
    expected = YAML(typ="safe", pure=True).load(golden["data"]["kai-config.yaml"])["spec"]
    assert desired.kai_config.spec() == expected


def test_addon_resources_point_at_the_environment_line(tmp_path: Path) -> None:
    env = LOCAL_ENV.replace(
        "  kaiScheduler:\n    enabled: true\n",
        "  kaiScheduler:\n    enabled: true\n    scheduler:\n      resources:\n        limits:\n          cpu: 3000m\n",
    )
    desired = desired_for(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})
    resources = desired.kai_config.fields["scheduler.service.resources"]
    assert resources.value["limits"] == {"cpu": "3000m", "memory": "6Gi"}
    where = desired.locate(resources.doc, resources.source)
    assert where.file == "env.yaml" and env.splitlines()[where.line - 1].strip() == "resources:"


def test_each_field_is_located_at_the_value_that_produced_it(tmp_path: Path) -> None:
    values = "global:\n  gpuSharing: true\n"
    desired = desired_for(
        tmp_path, {"kai-gitops.yaml": standalone_config(version="v0.16.8"), "kai-values.yaml": values}
    )
    gpu = desired.kai_config.fields["admission.gpuSharing"]
    assert (gpu.value, gpu.from_values) == (True, True)
    assert str(desired.locate(gpu.doc, gpu.source)).startswith("kai-values.yaml:2:")
    # a chart default points at the chart pin in kai-gitops.yaml
    port = desired.kai_config.fields["binder.metricsPort"]
    assert not port.from_values
    assert desired.locate(port.doc, port.source).file == "kai-gitops.yaml"


def test_operator_defaults_for_absent_fields(tmp_path: Path) -> None:
    desired = desired_for(
        tmp_path,
        {"kai-gitops.yaml": standalone_config(version="v0.14.7"), "kai-values.yaml": "operator:\n  replicaCount: 2\n"},
    )
    config = desired.kai_config
    assert "global.queueLabelKey" not in config.fields  # v0.14.7 never renders it (KAI#1655)
    assert config.operator_default("global.queueLabelKey") == "kai.scheduler/queue"
    assert config.operator_default("global.nodePoolLabelKey") == "kai.scheduler/node-pool"
    assert config.operator_default("scheduler.replicas") == 2  # global.replicaCount
    assert config.operator_default("nodeScaleAdjuster.service.enabled") is False


@pytest.mark.parametrize(
    ("version", "values", "elsewhere"),
    [
        ("v0.17.0", "kaiConfigDeployer:\n  enabled: false\n", True),
        ("v0.16.8", "kaiConfigDeployer:\n  enabled: false\n", True),
        ("v0.17.0", "kaiConfigDeployer:\n  enabled: false\nkaiConfig:\n  render: true\n", False),
        ("v0.17.0", "{}\n", False),
    ],
)
def test_kai_config_managed_outside_the_chart(tmp_path: Path, version: str, values: str, elsewhere: bool) -> None:
    desired = desired_for(tmp_path, {"kai-gitops.yaml": standalone_config(version=version), "kai-values.yaml": values})
    assert desired.kai_config_elsewhere is elsewhere
    assert (desired.kai_config is None) is elsewhere
    assert desired.kai_config_in_release is ("render: true" in values)  # E3 render mode: Helm must own it


def test_a_config_kept_in_git_is_the_desired_one(tmp_path: Path) -> None:
    manifest = (
        "apiVersion: kai.scheduler/v1\nkind: Config\nmetadata:\n  name: kai-config\n"
        "spec:\n  admission:\n    gpuSharing: true\n"
    )
    config = standalone_config(version="v0.17.0") + "    kaiManifestFiles: [kai/config.yaml]\n"
    desired = desired_for(
        tmp_path,
        {
            "kai-gitops.yaml": config,
            "kai-values.yaml": "kaiConfigDeployer:\n  enabled: false\n",
            "kai/config.yaml": manifest,
        },
    )
    assert desired.kai_config.managed_in_git
    field = desired.kai_config.fields["admission.gpuSharing"]
    assert str(desired.locate(field.doc, field.source)).startswith("kai/config.yaml:7:")
