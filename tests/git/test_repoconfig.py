"""kai-gitops.yaml: the shipped template, the JSON Schema, and one-line validation errors."""

from __future__ import annotations

import json
import re

import pytest
from jsonschema import Draft202012Validator

from reconciler.core.errors import UserError
from reconciler.sources.repoconfig import DEFAULT_STACK_KAI_VERSION, inline_refs, parse_repo_config, schema
from tests.support.helpers import DATA, TEMPLATE

BASE = """\
apiVersion: kai-gitops/v1
clusters:
  - name: prod
    mode: addon
    kaiChartVersion: v0.16.7
    environmentFile: environments/prod.yaml
"""


def error_of(text: str, file: str = "kai-gitops.yaml") -> UserError:
    with pytest.raises(UserError) as info:
        parse_repo_config(text.encode(), file)
    assert "\n" not in info.value.line()
    return info.value


# -- the template and the schema ------------------------------------------------------------------------


def test_template_config_parses() -> None:
    config = parse_repo_config((TEMPLATE / "kai-gitops.yaml").read_bytes())
    assert [c.name for c in config.clusters] == ["prod-addon", "lab-standalone"]
    prod, lab = config.clusters
    assert (prod.mode, prod.kai_chart_version, prod.kube_context) == ("addon", "v0.16.7", "prod")
    assert prod.environment_file == "environments/prod.yaml"
    assert prod.shared_cluster.intent == "dedicated"
    assert prod.index == 0
    assert (lab.mode, lab.kai_chart_version, lab.index) == ("standalone", "v0.14.7", 1)
    assert lab.kai_values_file == "clusters/lab/kai-values.yaml"
    assert lab.nvca_values_file == "clusters/lab/nvca-operator-values.yaml"
    assert lab.shared_cluster.intent == "shared"
    assert lab.shared_cluster.nodes == ("lab-gpu-1", "lab-gpu-2")
    assert lab.queue_files == ("clusters/lab/queues.yaml",)
    assert config.waivers_file == "kai-gitops-waivers.yaml"


def test_template_files_referenced_by_the_config_exist() -> None:
    config = parse_repo_config((TEMPLATE / "kai-gitops.yaml").read_bytes())
    for cluster in config.clusters:
        for path in (cluster.environment_file, cluster.kai_values_file, cluster.nvca_values_file, *cluster.queue_files):
            if path:
                assert (TEMPLATE / path).is_file(), path
    assert (TEMPLATE / (config.waivers_file or "")).is_file()


def test_shipped_schema_equals_template_schema_byte_for_byte() -> None:
    assert (DATA / "kai-gitops.schema.json").read_bytes() == (TEMPLATE / "kai-gitops.schema.json").read_bytes()


def test_schema_function_returns_the_shipped_file() -> None:
    assert schema() == json.loads((DATA / "kai-gitops.schema.json").read_text())
    assert schema()["properties"]["apiVersion"] == {
        "const": "kai-gitops/v1",
        "description": "Version of this file's schema.",
    }


def test_template_points_editors_at_the_schema() -> None:
    first = (TEMPLATE / "kai-gitops.yaml").read_text().splitlines()[0]
    assert first == "# yaml-language-server: $schema=./kai-gitops.schema.json"


# -- values and defaults --------------------------------------------------------------------------------


def test_defaults() -> None:
    cluster = parse_repo_config(BASE.encode()).clusters[0]
    assert cluster.stack_kai_version == DEFAULT_STACK_KAI_VERSION == "v0.16.7"
    assert cluster.shared_cluster.intent == "undeclared" and not cluster.shared_cluster.declared  # no assumed intent
    assert cluster.shared_cluster.nodes == ()
    assert cluster.shared_cluster.node_selector is None
    assert cluster.queue_files == ()
    assert cluster.kube_context is None
    assert cluster.stack_base_file is None


def test_versions_without_v_are_normalised() -> None:
    text = BASE.replace("kaiChartVersion: v0.16.7", "kaiChartVersion: 0.16.7\n    stackKaiVersion: '0.16.8'")
    cluster = parse_repo_config(text.encode()).clusters[0]
    assert cluster.kai_chart_version == "v0.16.7"
    assert cluster.stack_kai_version == "v0.16.8"


def test_policies_and_node_selector() -> None:
    text = BASE + (
        "    sharedCluster:\n      intent: shared\n      nodeSelector: {pool: nvcf}\n"
        "policies:\n  dirs: [policies/extra]\n  data: [policies/data.yaml]\nwaiversFile: w.yaml\n"
    )
    config = parse_repo_config(text.encode())
    assert config.policy_dirs == ("policies/extra",)
    assert config.policy_data == ("policies/data.yaml",)
    assert config.waivers_file == "w.yaml"
    assert config.clusters[0].shared_cluster.node_selector == {"pool": "nvcf"}


def test_standalone_with_environment_file_is_allowed() -> None:
    text = BASE.replace("mode: addon", "mode: standalone") + "    kaiValuesFile: kai-values.yaml\n"
    cluster = parse_repo_config(text.encode()).clusters[0]
    assert (cluster.mode, cluster.kai_values_file, cluster.environment_file) == (
        "standalone",
        "kai-values.yaml",
        "environments/prod.yaml",
    )


# -- errors -----------------------------------------------------------------------------------------------


def test_unknown_key_names_file_line_and_key() -> None:
    err = error_of(BASE + "    kaiValuesFlie: typo.yaml\n")
    line = err.line()
    assert re.match(r"kai-gitops\.yaml:\d+:\d+: ", line), line
    assert "'kaiValuesFlie'" in line
    assert "kaiValuesFile" in line  # the allowed keys are listed, so the typo is obvious


def test_unknown_key_points_at_the_key_line() -> None:
    err = error_of(BASE + "    kaiValuesFlie: typo.yaml\n")
    assert err.where == "kai-gitops.yaml:7:5"


def test_unknown_top_level_key() -> None:
    err = error_of(BASE + "clusterz: []\n")
    assert "'clusterz'" in err.message
    assert (err.where or "").startswith("kai-gitops.yaml:")


def test_wrong_type_names_line_and_path() -> None:
    err = error_of(BASE.replace("kaiChartVersion: v0.16.7", "kaiChartVersion: 16"))
    assert err.where == "kai-gitops.yaml:5:5"
    assert "clusters.0.kaiChartVersion" in err.message
    assert "string" in err.message


def test_helm_boolean_where_a_string_is_expected() -> None:
    err = error_of(BASE + "    kubeContext: yes\n")
    assert err.where == "kai-gitops.yaml:7:5"
    assert "kubeContext" in err.message


def test_addon_requires_environment_file() -> None:
    err = error_of(BASE.replace("    environmentFile: environments/prod.yaml\n", ""))
    assert err.where == "kai-gitops.yaml:3:5"
    assert "'environmentFile' is a required property" in err.message


def test_standalone_requires_kai_values_file() -> None:
    err = error_of(BASE.replace("mode: addon", "mode: standalone"))
    assert err.where == "kai-gitops.yaml:3:5"
    assert "'kaiValuesFile' is a required property" in err.message


def test_required_key_of_second_cluster_points_at_it() -> None:
    text = BASE + "  - name: lab\n    mode: standalone\n    kaiChartVersion: v0.14.7\n"
    err = error_of(text)
    assert err.where == "kai-gitops.yaml:7:5"
    assert "clusters.1" in err.message


def test_bad_mode_enum() -> None:
    err = error_of(BASE.replace("mode: addon", "mode: helmfile"))
    assert err.where == "kai-gitops.yaml:4:5"
    assert "'helmfile'" in err.message
    assert "addon" in err.message and "standalone" in err.message


def test_bad_api_version() -> None:
    err = error_of(BASE.replace("kai-gitops/v1", "kai-gitops/v2"))
    assert err.where == "kai-gitops.yaml:1:1"
    assert "'kai-gitops/v2'" in err.message


def test_duplicate_cluster_names_point_at_the_second() -> None:
    text = BASE + "  - name: prod\n    mode: addon\n    kaiChartVersion: v0.16.7\n    environmentFile: e.yaml\n"
    err = error_of(text)
    assert err.where == "kai-gitops.yaml:7:5"
    assert "'prod'" in err.message
    assert "twice" in err.message


def test_duplicate_yaml_key_in_config() -> None:
    err = error_of(BASE + "    mode: standalone\n")
    assert err.where == "kai-gitops.yaml:7"
    assert 'duplicate key "mode"' in err.message
    assert err.message.endswith("at lines 4 and 7")


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("apiVersion: kai-gitops/v1\nclusters: []\n", "non-empty"),
        ("- just\n- a list\n", "object"),
        (BASE.replace("environments/prod.yaml", "../prod.yaml"), "environmentFile"),
        (BASE.replace("environments/prod.yaml", "/etc/prod.yaml"), "environmentFile"),
        (BASE.replace("name: prod", "name: Prod_1"), "name"),
        (BASE.replace("v0.16.7", "latest"), "kaiChartVersion"),
        (BASE + "    sharedCluster: {intent: sometimes}\n", "intent"),
        (BASE + "    sharedCluster: {nodes: [a]}\n", "'intent' is a required property"),
        (BASE + "    sharedCluster: {intent: shared, nodes: [a, a]}\n", "nodes"),
        (BASE + "    queueFiles: queues.yaml\n", "queueFiles"),
        ("apiVersion: kai-gitops/v1\n", "'clusters' is a required property"),
    ],
)
def test_schema_violations_are_one_line_errors_with_location(text: str, fragment: str) -> None:
    err = error_of(text)
    assert re.fullmatch(r"kai-gitops\.yaml:\d+:\d+", err.where or ""), err.where
    assert fragment in err.message


def test_empty_config_file() -> None:
    assert error_of("# nothing here\n").line() == "kai-gitops.yaml:1: file is empty"


def test_malformed_config_yaml() -> None:
    err = error_of("apiVersion: kai-gitops/v1\nclusters:\n  - name: [prod\n")
    assert re.fullmatch(r"kai-gitops\.yaml:\d+:\d+", err.where or "")


# -- select ---------------------------------------------------------------------------------------------------


def test_select() -> None:
    config = parse_repo_config((TEMPLATE / "kai-gitops.yaml").read_bytes())
    assert [c.name for c in config.select(None)] == ["prod-addon", "lab-standalone"]
    assert [c.name for c in config.select("lab-standalone")] == ["lab-standalone"]


def test_select_unknown_cluster_lists_known_ones() -> None:
    config = parse_repo_config((TEMPLATE / "kai-gitops.yaml").read_bytes())
    with pytest.raises(UserError) as info:
        config.select("staging")
    assert info.value.line() == (
        "kai-gitops.yaml: no cluster named 'staging' (known clusters: prod-addon, lab-standalone)"
    )


def test_file_paths_are_named_as_git_names_them() -> None:
    """`./x.yaml` reached SARIF URIs, annotations and Code Quality as `./x.yaml`: GitHub attaches an
    annotation to no file of the PR then, and the PR's changed lines (`x.yaml`) never matched it."""
    text = BASE.replace("environments/prod.yaml", "./environments//prod.yaml") + (
        "    kaiValuesFile: ./clusters/prod/kai.yaml\n    queueFiles: [./queues/a.yaml, queues/./b.yaml]\n"
    )
    (prod,) = parse_repo_config(text.encode()).clusters
    assert prod.environment_file == "environments/prod.yaml" and prod.kai_values_file == "clusters/prod/kai.yaml"
    assert prod.queue_files == ("queues/a.yaml", "queues/b.yaml")


def test_waivers_and_policy_paths_are_named_as_git_names_them() -> None:
    """The waivers file's own findings (KAI-W-001/002) carry its path into SARIF and annotations too."""
    text = BASE + (
        "waiversFile: ./ops//waivers.yaml\npolicies:\n  dirs: [./policies/]\n  data: [./data/./limits.json]\n"
    )
    config = parse_repo_config(text.encode())
    assert (config.waivers_file, config.policy_dirs, config.policy_data) == (
        "ops/waivers.yaml",
        ("policies",),
        ("data/limits.json",),
    )


INVALID_ENTRIES = [
    {"name": "a", "mode": "standalone"},  # required kaiChartVersion
    {"name": "a", "mode": "addon", "kaiChartVersion": "not-a-version"},  # version pattern
    {"name": "a", "mode": "standalone", "kaiChartVersion": "v0.10.0", "kaiValuesFile": "../x.yaml"},
    {"name": "a", "mode": "standalone", "kaiChartVersion": "v0.10.0", "queueFiles": ["/abs.yaml", 3]},
    {"name": "a", "mode": "standalone", "kaiChartVersion": "v0.10.0", "kaiValueFile": "x.yaml"},
    {"name": 3, "mode": "sideways", "kaiChartVersion": 1},
]


@pytest.mark.parametrize("entry", INVALID_ENTRIES)
def test_the_inlined_schema_finds_the_errors_the_referencing_one_finds(entry: dict[str, object]) -> None:
    """_validate checks against inline_refs(schema()): the same errors, found without resolving references."""
    config = {"clusters": [entry], "workloads": [{"name": "w", "chart": 1}], "waiversFile": 7}

    def errors(whole: dict[str, object]) -> list[tuple[object, ...]]:
        found = Draft202012Validator(whole).iter_errors(config)
        return sorted((tuple(map(str, e.absolute_path)), e.validator, e.message) for e in found)

    assert errors(schema())
    assert errors(inline_refs(schema())) == errors(schema())
    assert "$ref" not in json.dumps(inline_refs(schema())["properties"])
