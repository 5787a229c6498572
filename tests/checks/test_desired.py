"""The desired model: files from Git → expected queues, shard, values and feature gates
(docs/configuration.md#how-desired-state-is-interpreted)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from reconciler.core.errors import UserError
from reconciler.model.gates import STACK_DEFAULT_GATES, SignedGates, split_gate_string, stack_effective_gates
from reconciler.model.queues import Triple
from reconciler.model.values import (
    as_number,
    chart_defaults,
    deep_merge,
    defaults_version_for,
    parse_version,
    shipped_chart_versions,
)
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    FIXTURES,
    LOCAL_ENV,
    TEMPLATE,
    addon_config,
    desired_for,
    make_repo,
    run_cli,
    standalone_config,
)

CHART_FIXTURES = FIXTURES / "kai" / "chart-values"
ALL_VERSIONS = sorted((p.stem for p in CHART_FIXTURES.glob("v*.yaml")), key=lambda v: parse_version(v) or (0,))
UNLIMITED_T = Triple(-1.0, -1.0, 1.0)
CHART_DEFAULT_T = Triple(0.0, -1.0, 1.0)
PARENT_ONLY_VALUES = """\
defaultQueue:
  parentResources:
    cpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    gpu: {quota: -1, limit: -1, overQuotaWeight: 1}
    memory: {quota: -1, limit: -1, overQuotaWeight: 1}
"""


def safe_load(text: str) -> Any:
    return YAML(typ="safe", pure=True).load(text)


def standalone(
    tmp_path: Path,
    values: str,
    *,
    version: str = "v0.14.7",
    nvca: str | None = None,
    extra_files: dict[str, str] | None = None,
    queue_files: tuple[str, ...] = (),
) -> Any:
    files = {
        "kai-gitops.yaml": standalone_config(
            version=version, nvca="nvca.yaml" if nvca is not None else None, queue_files=queue_files
        ),
        "kai-values.yaml": values,
    }
    if nvca is not None:
        files["nvca.yaml"] = nvca
    files.update(extra_files or {})
    return desired_for(tmp_path, files)


def addon(
    tmp_path: Path, env: str, *, version: str = "v0.16.7", extra: str = "", extra_files: dict[str, str] | None = None
) -> Any:
    files = {"kai-gitops.yaml": addon_config(version=version, extra=extra), "env.yaml": env}
    files.update(extra_files or {})
    return desired_for(tmp_path, files)


def queues_by_name(desired: Any) -> dict[str, Any]:
    return {q.spec.name: q for q in desired.queues}


def golden_capabilities() -> list[str]:
    docs = list(
        YAML(typ="safe", pure=True).load_all(
            (FIXTURES / "nvcf" / "golden" / "nvcfbackend-self-managed-configmap.yaml").read_text()
        )
    )
    configmap = next(d for d in docs if d)
    return list(safe_load(configmap["data"]["cluster-dto.yaml"])["capabilities"])


# -- both modes ----------------------------------------------------------------------------------------------


def test_standalone_mode_with_the_guide_values(tmp_path: Path) -> None:
    desired = standalone(tmp_path, CANONICAL_KAI_VALUES)
    assert desired.name == "lab"
    assert desired.kai_values_doc == "kai_values"
    assert desired.kai_values_user == safe_load(CANONICAL_KAI_VALUES)
    assert desired.defaults_version == "v0.14.7"
    queues = queues_by_name(desired)
    assert list(queues) == ["default-parent-queue", "default-queue"]
    parent, child = queues["default-parent-queue"], queues["default-queue"]
    assert parent.spec.parent is None
    assert child.spec.parent == "default-parent-queue"
    assert all(q.origin == "default-queue" for q in queues.values())
    for q in (parent, child):
        assert q.spec.resources == {"cpu": UNLIMITED_T, "gpu": UNLIMITED_T, "memory": UNLIMITED_T}
    assert desired.gates is None  # no NVCA values, no env file
    assert desired.addons == {
        "kaiScheduler": False,
        "groveOperator": False,
        "dynamoOperator": False,
        "topologyAwareScheduling": False,
    }


def test_standalone_queue_paths_point_at_the_values(tmp_path: Path) -> None:
    desired = standalone(tmp_path, CANONICAL_KAI_VALUES)
    child = queues_by_name(desired)["default-queue"]
    loc = desired.locate(child.doc, child.paths["gpu.overQuotaWeight"])
    assert loc.file == "kai-values.yaml"
    text = CANONICAL_KAI_VALUES.splitlines()
    # childResources.gpu.overQuotaWeight is the second-to-last overQuotaWeight line of the guide's values
    expected_line = [i for i, line in enumerate(text, 1) if "overQuotaWeight" in line][-2]
    assert loc.line == expected_line
    assert desired.locate(child.doc, child.paths["parent"]).line == next(
        i for i, line in enumerate(text, 1) if "parentName:" in line
    )


def test_addon_mode_uses_canonical_values_and_env(tmp_path: Path) -> None:
    env = (TEMPLATE / "environments" / "prod.yaml").read_text()
    desired = addon(tmp_path, env)
    assert desired.kai_values_doc is None
    assert desired.kai_values_user == safe_load(CANONICAL_KAI_VALUES)
    assert desired.defaults_version == "v0.16.9"  # pin v0.16.7 → newest shipped of the same minor
    assert desired.addons["kaiScheduler"] is True
    queues = queues_by_name(desired)
    assert queues["default-queue"].spec.resources["cpu"] == UNLIMITED_T
    loc = desired.locate(queues["default-queue"].doc, queues["default-queue"].paths["cpu.quota"])
    assert (loc.file, loc.path) == ("env.yaml", ("addons", "kaiScheduler", "enabled"))
    assert loc.line == env.splitlines().index("  kaiScheduler:") + 2
    assert desired.gates is not None
    assert desired.gates.user == ["SelfHosted", "LogPosting"]
    assert desired.gates.effective == [
        "SelfHosted",
        "LogPosting",
        *STACK_DEFAULT_GATES,
        "BYOObservability",
        "KAIScheduler",
    ]


def test_addon_env_is_merged_over_the_stack_base(tmp_path: Path) -> None:
    env = """\
global:
  nvcaOperator:
    selfManaged:
      natsURL: nats://mine:4222
      featureGateValues: ["SelfHosted"]
addons:
  kaiScheduler:
    enabled: true
  topologyAwareScheduling:
    topologies:
      - name: only-mine
observability: null
"""
    merged = addon(tmp_path, env).docs["env"].data
    self_managed = merged["global"]["nvcaOperator"]["selfManaged"]
    assert self_managed["natsURL"] == "nats://mine:4222"  # env wins
    assert self_managed["nvcaVersion"] == "3.2.7"  # base keys survive
    assert merged["global"]["nvcaOperator"]["imageTag"] == "3.2.7"
    assert self_managed["featureGateValues"] == ["SelfHosted"]
    assert merged["addons"]["topologyAwareScheduling"]["topologies"] == [{"name": "only-mine"}]  # lists replace
    assert merged["addons"]["topologyAwareScheduling"]["enabled"] is False
    assert merged["addons"]["dynamoOperator"] == {"enabled": False}
    assert "observability" not in merged  # null deletes


def test_vendored_stack_base_file_replaces_the_bundled_one(tmp_path: Path) -> None:
    base = "addons:\n  kaiScheduler:\n    enabled: true\nobservability:\n  profile: minimal\n"
    desired = addon(
        tmp_path, "global: {}\n", extra="    stackBaseFile: stack/base.yaml\n", extra_files={"stack/base.yaml": base}
    )
    assert desired.addons["kaiScheduler"] is True
    assert desired.gates is not None
    assert "BYOObservability" not in desired.gates.effective
    assert "KAIScheduler" in desired.gates.effective


def test_deep_merge_semantics_and_no_mutation() -> None:
    base = {"a": {"b": 1, "c": [1, 2], "d": {"e": 1}}, "keep": True}
    over = {"a": {"b": 2, "c": [3], "d": None}, "new": {"x": 1}}
    merged = deep_merge(base, over)
    assert merged == {"a": {"b": 2, "c": [3]}, "keep": True, "new": {"x": 1}}
    assert base == {"a": {"b": 1, "c": [1, 2], "d": {"e": 1}}, "keep": True}
    assert over == {"a": {"b": 2, "c": [3], "d": None}, "new": {"x": 1}}
    merged["new"]["x"] = 9
    assert over["new"]["x"] == 1
    assert deep_merge({"a": {"b": 1}}, {"a": "scalar"}) == {"a": "scalar"}
    assert deep_merge({"a": 1}, {"a": {"b": 1}}) == {"a": {"b": 1}}


# -- chart defaults ⊕ user values, for every shipped chart version ---------------------------------------------


def test_every_fixture_chart_version_is_shipped() -> None:
    assert list(shipped_chart_versions()) == ALL_VERSIONS
    assert ALL_VERSIONS[0] == "v0.9.20" and ALL_VERSIONS[-1] == "v0.17.1"
    assert len(ALL_VERSIONS) == 11


@pytest.mark.parametrize("version", ALL_VERSIONS)
def test_chart_defaults_equal_the_upstream_values_file(version: str) -> None:
    assert chart_defaults(version) == safe_load((CHART_FIXTURES / f"{version}.yaml").read_text())


@pytest.mark.parametrize("version", [v for v in ALL_VERSIONS if v != "v0.9.20"])
def test_omitted_child_resources_take_chart_default_quota_zero(tmp_path: Path, version: str) -> None:
    upstream = safe_load((CHART_FIXTURES / f"{version}.yaml").read_text())["defaultQueue"]
    desired = standalone(tmp_path, PARENT_ONLY_VALUES, version=version)
    assert desired.defaults_version == version
    queues = queues_by_name(desired)
    for res in ("cpu", "gpu", "memory"):
        chart = upstream["childResources"][res]
        assert queues["default-queue"].spec.resources[res] == Triple(
            float(chart["quota"]), float(chart["limit"]), float(chart["overQuotaWeight"])
        )
        assert queues["default-queue"].spec.resources[res] == CHART_DEFAULT_T  # quota 0, limit -1, weight 1
        assert queues["default-parent-queue"].spec.resources[res] == UNLIMITED_T  # the user's values win
    assert queues["default-queue"].spec.parent == upstream["parentName"] == "default-parent-queue"


@pytest.mark.parametrize("version", [v for v in ALL_VERSIONS if v != "v0.9.20"])
def test_partial_triple_is_completed_from_chart_defaults(tmp_path: Path, version: str) -> None:
    values = "defaultQueue:\n  childResources:\n    gpu:\n      quota: 4\n"
    queues = queues_by_name(standalone(tmp_path, values, version=version))
    assert queues["default-queue"].spec.resources["gpu"] == Triple(4.0, -1.0, 1.0)
    assert queues["default-queue"].spec.resources["cpu"] == CHART_DEFAULT_T
    assert queues["default-parent-queue"].spec.resources["gpu"] == CHART_DEFAULT_T


def test_v0_9_chart_without_default_queue_block_expects_no_invented_queues(tmp_path: Path) -> None:
    values = "scheduler:\n  placementStrategy: binpack\n"
    desired = standalone(tmp_path, values, version="v0.9.20")
    assert "defaultQueue" not in desired.kai_values_effective
    assert [q for q in desired.queues if q.origin == "default-queue"] == []


@pytest.mark.parametrize(
    "pin, expected",
    [
        ("v0.16.8", "v0.16.8"),  # exact
        ("0.16.8", "v0.16.8"),  # exact, without the v
        ("v0.17.0", "v0.17.0"),
        ("v0.16.9", "v0.16.9"),
        ("v0.17.1", "v0.17.1"),
        ("v0.9.20", "v0.9.20"),
        ("v0.16.7", "v0.16.9"),  # same minor: newest shipped
        ("v0.12.14", "v0.12.23"),
        ("v0.12.1", "v0.12.23"),
        ("v0.9.3", "v0.9.20"),
        ("v0.11.2", "v0.10.5"),  # no same minor: newest older
        ("v0.17.2", "v0.17.1"),
        ("v0.18.1", "v0.17.1"),
        ("v1.0.0", "v0.17.1"),
        ("v0.8.0", "v0.9.20"),  # older than everything shipped: the oldest
        ("not-a-version", "v0.17.1"),
    ],
)
def test_defaults_version_for(pin: str, expected: str) -> None:
    assert defaults_version_for(pin) == expected


def test_create_default_queue_false_means_no_default_queues(tmp_path: Path) -> None:
    desired = standalone(tmp_path, "defaultQueue:\n  createDefaultQueue: false\n")
    assert desired.queues == []


def test_create_default_queue_helm_no_means_false(tmp_path: Path) -> None:
    desired = standalone(tmp_path, "defaultQueue:\n  createDefaultQueue: no\n")
    assert desired.queues == []


def test_renamed_parent_and_child(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace("parentName: default-parent-queue", "parentName: nvcf-parent").replace(
        "childName: default-queue", "childName: nvcf"
    )
    queues = queues_by_name(standalone(tmp_path, values))
    assert list(queues) == ["nvcf-parent", "nvcf"]
    assert queues["nvcf"].spec.parent == "nvcf-parent"
    assert queues["nvcf-parent"].spec.parent is None


# -- shard --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "version, expected",
    [
        ("v0.9.20", False),
        ("v0.9.99", False),
        ("v0.10.0", True),
        ("v0.10.5", True),
        ("v0.14.7", True),
        ("v0.16.8", True),
        ("v0.17.0", True),
    ],
)
def test_shard_expected_only_from_v0_10(tmp_path: Path, version: str, expected: bool) -> None:
    desired = standalone(tmp_path, CANONICAL_KAI_VALUES, version=version)
    assert (desired.shard is not None) is expected


def test_shard_spec_from_values(tmp_path: Path) -> None:
    desired = standalone(tmp_path, CANONICAL_KAI_VALUES)
    assert desired.shard is not None
    assert desired.shard.spec == {
        "placementStrategy": {"gpu": "binpack", "cpu": "binpack"},
        "plugins": {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}},
        "actions": {"preempt": {"enabled": False}, "consolidation": {"enabled": False}},
    }
    assert (desired.shard.doc, desired.shard.path) == ("kai_values", ("scheduler",))


def test_shard_placement_strategy_is_copied_to_gpu_and_cpu(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES.replace("placementStrategy: binpack", "placementStrategy: spread")
    shard = standalone(tmp_path, values).shard
    assert shard is not None
    assert shard.spec["placementStrategy"] == {"gpu": "spread", "cpu": "spread"}


def test_shard_disabled_by_default_shard_enabled_false(tmp_path: Path) -> None:
    values = CANONICAL_KAI_VALUES + "\ndefaultShard:\n  enabled: false\n"
    assert standalone(tmp_path, values, version="v0.16.8").shard is None
    assert standalone(tmp_path / "on", CANONICAL_KAI_VALUES, version="v0.16.8").shard is not None


def test_shard_plugin_arguments_are_stringified(tmp_path: Path) -> None:
    values = """\
scheduler:
  plugins:
    proportion:
      arguments:
        kValue: 2
        ratio: 0.5
        strict: true
        lenient: no
        name: text
      priority: 50
"""
    shard = standalone(tmp_path, values).shard
    assert shard is not None
    assert shard.spec["plugins"] == {
        "proportion": {
            "arguments": {"kValue": "2", "ratio": "0.5", "strict": "true", "lenient": "false", "name": "text"},
            "priority": 50,
        }
    }


def test_addon_shard_uses_canonical_values(tmp_path: Path) -> None:
    desired = addon(tmp_path, LOCAL_ENV)
    assert desired.shard is not None
    assert desired.shard.spec["plugins"] == {"nodeplacement": {"arguments": {"gpu": "binpack", "cpu": "spread"}}}
    assert desired.shard.doc == "env"
    assert addon(tmp_path / "old", LOCAL_ENV, version="v0.9.20").shard is None


# -- feature gates ------------------------------------------------------------------------------------------------


def test_stack_gate_defaulting_equals_the_golden_render(tmp_path: Path) -> None:
    desired = addon(tmp_path, LOCAL_ENV)
    assert desired.addons == {
        "kaiScheduler": True,
        "groveOperator": True,
        "dynamoOperator": True,
        "topologyAwareScheduling": True,
    }
    assert desired.gates is not None
    assert desired.gates.user == []
    assert desired.gates.effective == golden_capabilities()
    assert golden_capabilities() == [
        "DynamicGPUDiscovery",
        "InfraResourceOverhead",
        "EnforceHelmFunctionResourceLimits",
        "EnforceContainerFunctionResourceLimits",
        "EnforceHelmTaskResourceLimits",
        "EnforceContainerTaskResourceLimits",
        "BYOObservability",
        "KAIScheduler",
        "DynamoOperatorSupport",
    ]


def test_negated_gate_suppresses_the_default(tmp_path: Path) -> None:
    env = LOCAL_ENV + "\n  # appended\n"
    env = env.replace(
        "      natsURL: nats://nats.nats-system.svc.cluster.local:4222\n",
        "      natsURL: nats://nats.nats-system.svc.cluster.local:4222\n"
        '      featureGateValues: ["-InfraResourceOverhead", "+KAIScheduler", "SelfHosted"]\n',
    )
    gates = addon(tmp_path, env).gates
    assert gates is not None
    assert gates.effective == [
        "-InfraResourceOverhead",
        "+KAIScheduler",
        "SelfHosted",
        "DynamicGPUDiscovery",
        "EnforceHelmFunctionResourceLimits",
        "EnforceContainerFunctionResourceLimits",
        "EnforceHelmTaskResourceLimits",
        "EnforceContainerTaskResourceLimits",
        "BYOObservability",
        "DynamoOperatorSupport",
    ]
    signed = SignedGates.of(gates.effective)
    assert "InfraResourceOverhead" in signed.disabled
    assert not signed.is_enabled("InfraResourceOverhead")
    assert signed.is_enabled("KAIScheduler")


@pytest.mark.parametrize(
    "profile, byo", [("compute", True), ("all", True), ("none", False), ("minimal", False), (None, True)]
)
def test_byo_observability_only_for_compute_or_all(tmp_path: Path, profile: str | None, byo: bool) -> None:
    env = "addons:\n  kaiScheduler:\n    enabled: true\n"
    if profile is not None:
        env += f"observability:\n  profile: {profile}\n"
    gates = addon(tmp_path, env).gates
    assert gates is not None
    assert ("BYOObservability" in gates.effective) is byo


def test_kai_and_dynamo_gates_follow_the_addons() -> None:
    assert "KAIScheduler" not in stack_effective_gates(
        [], kai_addon=False, dynamo_addon=False, observability_profile=None
    )
    both = stack_effective_gates([], kai_addon=True, dynamo_addon=True, observability_profile="none")
    assert both == [*STACK_DEFAULT_GATES, "KAIScheduler", "DynamoOperatorSupport"]
    negated = stack_effective_gates(["-KAIScheduler"], kai_addon=True, dynamo_addon=False, observability_profile="all")
    assert negated == ["-KAIScheduler", *STACK_DEFAULT_GATES, "BYOObservability"]


def test_addon_disabled_means_no_kai_gate(tmp_path: Path) -> None:
    gates = addon(tmp_path, "addons:\n  kaiScheduler:\n    enabled: false\n").gates
    assert gates is not None
    assert gates.effective == [*STACK_DEFAULT_GATES, "BYOObservability"]


def test_standalone_nvca_values_without_key_default_to_chart_default(tmp_path: Path) -> None:
    gates = standalone(tmp_path, CANONICAL_KAI_VALUES, nvca="ngcConfig:\n  clusterSource: self-managed\n").gates
    assert gates is not None
    assert (gates.doc, gates.user, gates.effective) == ("nvca_values", ["DynamicGPUDiscovery"], ["DynamicGPUDiscovery"])


def test_standalone_nvca_values_are_taken_as_is(tmp_path: Path) -> None:
    nvca = (FIXTURES / "nvcf" / "standalone-nvca-operator-values.yaml").read_text()
    gates = standalone(tmp_path, CANONICAL_KAI_VALUES, nvca=nvca).gates
    assert gates is not None
    assert gates.user == gates.effective == ["DynamicGPUDiscovery", "SelfHosted", "KAIScheduler"]
    assert gates.path == ("selfManaged", "featureGateValues")


def test_standalone_nvca_empty_list_stays_empty(tmp_path: Path) -> None:
    gates = standalone(tmp_path, CANONICAL_KAI_VALUES, nvca="selfManaged:\n  featureGateValues: []\n").gates
    assert gates is not None
    assert gates.effective == []


def test_comma_string_gate_lists(tmp_path: Path) -> None:
    nvca = 'selfManaged:\n  featureGateValues: "DynamicGPUDiscovery, -KAIScheduler ,+SelfHosted,,"\n'
    gates = standalone(tmp_path, CANONICAL_KAI_VALUES, nvca=nvca).gates
    assert gates is not None
    assert gates.user == ["DynamicGPUDiscovery", "-KAIScheduler", "+SelfHosted"]
    env = "global:\n  nvcaOperator:\n    selfManaged:\n      featureGateValues: 'SelfHosted,-BYOObservability'\n"
    env_gates = addon(tmp_path / "addon", env).gates
    assert env_gates is not None
    assert env_gates.user == ["SelfHosted", "-BYOObservability"]
    assert "BYOObservability" not in env_gates.effective
    assert split_gate_string(" a , ,b,") == ["a", "b"]


def test_signed_gates_disabled_wins_and_case_matters() -> None:
    signed = SignedGates.of(["KAIScheduler", "-KAIScheduler", "+SelfHosted", " LogPosting ", "kaischeduler"])
    assert signed.disabled == frozenset({"KAIScheduler"})
    assert signed.enabled == frozenset({"SelfHosted", "LogPosting", "kaischeduler"})
    assert not signed.is_enabled("KAIScheduler")
    assert SignedGates.of(["-X", "X"]).enabled == frozenset()


# -- wrong types and bad files ----------------------------------------------------------------------------------


def expect_error(func: Any, *args: Any, **kwargs: Any) -> UserError:
    with pytest.raises(UserError) as info:
        func(*args, **kwargs)
    assert "\n" not in info.value.line()
    return info.value


def test_feature_gate_values_not_a_list(tmp_path: Path) -> None:
    env = "global:\n  nvcaOperator:\n    selfManaged:\n      featureGateValues: {KAIScheduler: true}\n"
    err = expect_error(addon, tmp_path, env)
    assert err.where == "env.yaml:4:7"
    assert "featureGateValues must be a list of gate names" in err.message


def test_feature_gate_items_not_strings(tmp_path: Path) -> None:
    err = expect_error(standalone, tmp_path, CANONICAL_KAI_VALUES, nvca="selfManaged:\n  featureGateValues: [1, yes]\n")
    assert err.where == "nvca.yaml:2:3"


@pytest.mark.parametrize("bad", ['"-1"', "unlimited", "yes", "[1]"])
def test_quota_not_a_number(tmp_path: Path, bad: str) -> None:
    values = CANONICAL_KAI_VALUES.replace(
        "  childResources:\n    cpu:\n      quota: -1", f"  childResources:\n    cpu:\n      quota: {bad}"
    )
    assert values != CANONICAL_KAI_VALUES
    err = expect_error(standalone, tmp_path, values)
    line = values.splitlines().index(f"      quota: {bad}") + 1
    assert err.where == f"kai-values.yaml:{line}:7"
    assert "defaultQueue.childResources.cpu.quota must be a number" in err.message


def test_addon_enabled_maybe(tmp_path: Path) -> None:
    err = expect_error(addon, tmp_path, "addons:\n  kaiScheduler:\n    enabled: maybe\n")
    assert err.where == "env.yaml:3:5"
    assert err.message == "addons.kaiScheduler.enabled must be true or false, found 'maybe'"


@pytest.mark.parametrize(
    "values, path, where",
    [
        ("defaultQueue:\n  createDefaultQueue: 'true'\n", "defaultQueue.createDefaultQueue", "kai-values.yaml:2:3"),
        ("defaultQueue: [a]\n", "defaultQueue must be a mapping", "kai-values.yaml:1:1"),
        ("defaultQueue:\n  parentName: 5\n", "defaultQueue.parentName", "kai-values.yaml:2:3"),
        ("scheduler:\n  placementStrategy: [binpack]\n", "scheduler.placementStrategy", "kai-values.yaml:2:3"),
        ("defaultQueue:\n  childResources: 0\n", "defaultQueue.childResources", "kai-values.yaml:2:3"),
        # each was an internal TypeError (a mapping read from a list or a string), or a quoted switch read as
        # its opposite
        ("scheduler:\n  plugins: [a]\n", "scheduler.plugins must be a mapping of plugin name", "kai-values.yaml:2:3"),
        (
            "scheduler:\n  actions: allocate\n",
            "scheduler.actions must be a mapping of action name",
            "kai-values.yaml:2:3",
        ),
        ("defaultShard: [1]\n", "defaultShard must be a mapping", "kai-values.yaml:1:1"),
        ("defaultShard:\n  enabled: 'false'\n", "defaultShard.enabled must be true or false", "kai-values.yaml:2:3"),
        ("kaiConfig: x\n", "kaiConfig must be a mapping", "kai-values.yaml:1:1"),
        ("kaiConfig:\n  render: 'true'\n", "kaiConfig.render must be true or false", "kai-values.yaml:2:3"),
        ("kaiConfigDeployer: [1]\n", "kaiConfigDeployer must be a mapping", "kai-values.yaml:1:1"),
        (
            "kaiConfigDeployer:\n  enabled: 'no'\n",
            "kaiConfigDeployer.enabled must be true or false",
            "kai-values.yaml:2:3",
        ),
    ],
)
def test_other_wrong_value_types(tmp_path: Path, values: str, path: str, where: str) -> None:
    err = expect_error(standalone, tmp_path, values, version="v0.17.1")  # a chart that reads every one of them
    assert err.where == where
    assert path in err.message


def test_a_quoted_switch_is_named_a_string() -> None:
    err = expect_error(standalone, Path(tempfile.mkdtemp()), "defaultShard:\n  enabled: 'false'\n", version="v0.17.1")
    assert err.message == "defaultShard.enabled must be true or false, found the string 'false'"


@pytest.mark.parametrize("values", ["kaiConfig: 'off'\n", "defaultShard: []\n", "defaultShard:\n  enabled: 'false'\n"])
def test_a_key_the_pinned_chart_does_not_read_is_a_finding_not_a_stop(tmp_path: Path, values: str) -> None:
    """v0.14.7 has no kaiConfig or defaultShard: KAI-V-011 says so (the key is unknown for the pin), exit 2."""
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    code, out, err = run_cli(["check", "--repo", repo])
    assert code == 2 and "KAI-V-011" in out and "must be" not in err, (out, err)


def test_a_plugins_list_is_one_line_at_its_line_not_an_internal_error(tmp_path: Path) -> None:
    values = "scheduler:\n  plugins: [a]\n"
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": values})
    for command in (["check", "--repo", repo], ["upgrade-plan", "--repo", repo, "--to", "v0.17.1"]):
        code, out, err = run_cli(command)
        assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "kai-values.yaml:2:3" in err and "scheduler.plugins must be a mapping" in err
        assert "internal error" not in err


def test_values_file_must_be_a_mapping(tmp_path: Path) -> None:
    err = expect_error(standalone, tmp_path, "- a\n- b\n")
    assert err.where == "kai-values.yaml:1"
    assert "mapping" in err.message


def test_missing_values_file_names_path_and_ref(tmp_path: Path) -> None:
    files = {"kai-gitops.yaml": standalone_config(values="clusters/x/kai-values.yaml")}
    err = expect_error(desired_for, tmp_path, files)
    assert err.where == "clusters/x/kai-values.yaml"
    assert "HEAD" in err.message


# -- queue files ------------------------------------------------------------------------------------------------


QUEUES = """\
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: research
spec:
  parentQueue: default-parent-queue
  resources:
    gpu: {quota: 8, limit: 16, overQuotaWeight: 1}
---
apiVersion: scheduling.run.ai/v2
kind: Queue
metadata:
  name: batch
spec:
  resources:
    cpu: {quota: 1000, limit: 2000, overQuotaWeight: 2}
"""


def test_queue_files_add_expected_queues(tmp_path: Path) -> None:
    desired = standalone(
        tmp_path, CANONICAL_KAI_VALUES, extra_files={"q/queues.yaml": QUEUES}, queue_files=("q/queues.yaml",)
    )
    queues = queues_by_name(desired)
    assert list(queues) == ["default-parent-queue", "default-queue", "research", "batch"]
    research, batch = queues["research"], queues["batch"]
    assert research.origin == batch.origin == "queue-file"
    assert research.spec.parent == "default-parent-queue"
    assert research.spec.resources == {"cpu": Triple(0, 0, 0), "gpu": Triple(8, 16, 1), "memory": Triple(0, 0, 0)}
    assert batch.spec.parent is None
    assert batch.spec.resources["cpu"] == Triple(1000, 2000, 2)
    loc = desired.locate(research.doc, research.paths["gpu.quota"])
    assert (loc.file, loc.line) == ("q/queues.yaml", 8)
    assert desired.locate(batch.doc, batch.paths["cpu.limit"]).line == 16


def test_queue_file_with_a_non_queue_document(tmp_path: Path) -> None:
    bad = QUEUES + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: oops\n"
    err = expect_error(standalone, tmp_path, CANONICAL_KAI_VALUES, extra_files={"q.yaml": bad}, queue_files=("q.yaml",))
    assert err.where == "q.yaml:19:1"
    assert "kind: Queue" in err.message


def test_queue_file_with_a_scalar_document(tmp_path: Path) -> None:
    err = expect_error(
        standalone, tmp_path, CANONICAL_KAI_VALUES, extra_files={"q.yaml": "just text\n"}, queue_files=("q.yaml",)
    )
    assert (err.where or "").startswith("q.yaml:")


def test_queue_without_name(tmp_path: Path) -> None:
    bad = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  labels: {}\nspec: {}\n"
    err = expect_error(standalone, tmp_path, CANONICAL_KAI_VALUES, extra_files={"q.yaml": bad}, queue_files=("q.yaml",))
    assert err.where == "q.yaml:3:1"
    assert "metadata.name" in err.message


def test_as_number() -> None:
    assert as_number(None) == 0.0
    assert as_number(-1) == -1.0
    assert as_number("2.5") == 2.5
    assert as_number(True) != as_number(True)  # NaN: a boolean is not a number
    assert as_number("abc") != as_number("abc")


def test_queue_file_with_a_wrong_api_version(tmp_path: Path) -> None:
    bad = "apiVersion: scheduling.run.ai/v1\nkind: Queue\nmetadata:\n  name: q\nspec: {}\n"
    err = expect_error(standalone, tmp_path, CANONICAL_KAI_VALUES, extra_files={"q.yaml": bad}, queue_files=("q.yaml",))
    assert err.where == "q.yaml:1:1"
    assert "scheduling.run.ai/v2" in err.message


def test_queue_defined_twice_is_refused(tmp_path: Path) -> None:
    dup = "apiVersion: scheduling.run.ai/v2\nkind: Queue\nmetadata:\n  name: default-queue\nspec: {}\n"
    err = expect_error(standalone, tmp_path, CANONICAL_KAI_VALUES, extra_files={"q.yaml": dup}, queue_files=("q.yaml",))
    assert err.where == "q.yaml:4:3"
    assert "default-queue is defined twice" in err.message
    assert "kai-values.yaml" in err.message
