"""`workloads:` in kai-gitops.yaml: the typed entries, and one-line errors naming file:line."""

from __future__ import annotations

import json

import pytest

from reconciler.core.errors import UserError
from reconciler.model.config import WorkloadConfig
from reconciler.sources.repoconfig import parse_repo_config
from tests.support.helpers import ROOT, run_cli

BASE = """\
apiVersion: kai-gitops/v1
clusters:
  - name: gpu-a
    mode: addon
    kaiChartVersion: v0.16.7
    environmentFile: env.yaml
  - name: gpu-b
    mode: addon
    kaiChartVersion: v0.16.7
    environmentFile: env.yaml
workloads:
"""


def error_of(text: str) -> UserError:
    with pytest.raises(UserError) as info:
        parse_repo_config(text.encode(), "kai-gitops.yaml")
    assert "\n" not in info.value.line()
    return info.value


def test_chart_and_manifest_entries_are_typed() -> None:
    config = parse_repo_config(
        (
            BASE
            + """\
  - name: llm
    clusters: [gpu-a, gpu-b]
    chart: ./charts//llm
    values: [charts/llm/values-prod.yaml]
  - name: batch
    clusters: [gpu-b]
    manifests: rendered/batch.yaml
"""
        ).encode()
    )
    assert config.workloads == (
        WorkloadConfig("llm", ("gpu-a", "gpu-b"), "charts/llm", ("charts/llm/values-prod.yaml",), None, 0),
        WorkloadConfig("batch", ("gpu-b",), None, (), "rendered/batch.yaml", 1),
    )
    assert [w.name for w in config.workloads_for("gpu-a")] == ["llm"]
    assert [w.name for w in config.workloads_for("gpu-b")] == ["llm", "batch"]


def test_no_workloads_is_the_default() -> None:
    assert parse_repo_config(BASE.replace("workloads:\n", "").encode()).workloads == ()


def test_unknown_cluster_names_the_entry_line() -> None:
    error = error_of(BASE + "  - name: llm\n    clusters: [gpu-a, gpu-c]\n    chart: charts/llm\n")
    assert error.where == "kai-gitops.yaml:13:23"
    assert "cluster 'gpu-c'" in error.message and "known clusters: gpu-a, gpu-b" in (error.hint or "")


def test_duplicate_workload_name_points_at_the_second() -> None:
    entry = "  - name: llm\n    clusters: [gpu-a]\n    chart: charts/llm\n"
    error = error_of(BASE + entry + entry)
    assert error.where == "kai-gitops.yaml:15:5"
    assert "'llm' is used twice" in error.message


@pytest.mark.parametrize(
    "body",
    [
        "    chart: charts/llm\n    manifests: rendered/llm.yaml\n",  # both
        "    values: [v.yaml]\n",  # neither
        "    manifests: rendered/llm.yaml\n    values: [v.yaml]\n",  # values without a chart
    ],
)
def test_exactly_one_of_chart_or_manifests(body: str) -> None:
    error = error_of(BASE + "  - name: llm\n    clusters: [gpu-a]\n" + body)
    assert error.where == "kai-gitops.yaml:12:5"
    assert "give either chart (with optional values) or manifests" in error.message
    assert error.hint == "see the JSON Schema: kai-gitops schema"


@pytest.mark.parametrize(
    ("body", "where", "key"),
    [
        ("    manifests: ./\n", "kai-gitops.yaml:14:5", "manifests"),
        ("    manifests: '.'\n", "kai-gitops.yaml:14:5", "manifests"),
        ("    chart: charts/llm\n    values: [v.yaml, ./]\n", "kai-gitops.yaml:15:22", "values"),
    ],
)
def test_a_file_entry_naming_the_repository_root_names_its_line(body: str, where: str, key: str) -> None:
    """Read as a file, the root path "" gave `file not found at ref HEAD` naming no file."""
    error = error_of(BASE + "  - name: llm\n    clusters: [gpu-a]\n" + body)
    assert (error.where, error.message) == (where, f"workload 'llm': {key} names the repository root, not a file")


def test_a_chart_at_the_repository_root_is_a_chart() -> None:
    [workload] = parse_repo_config((BASE + "  - name: llm\n    clusters: [gpu-a]\n    chart: .\n").encode()).workloads
    assert (workload.chart, workload.chart_shown, workload.chart_file("Chart.yaml")) == ("", ".", "Chart.yaml")


def test_unknown_key_in_a_workload() -> None:
    error = error_of(BASE + "  - name: llm\n    clusters: [gpu-a]\n    chart: c\n    valuesFiles: [v.yaml]\n")
    assert error.where == "kai-gitops.yaml:15:5"
    assert "'valuesFiles'" in error.message


def test_schema_command_describes_workloads() -> None:
    code, stdout, _ = run_cli(["schema"])
    assert code == 0
    workload = json.loads(stdout)["$defs"]["workload"]
    assert set(workload["properties"]) == {"name", "clusters", "chart", "values", "manifests"}
    assert json.loads(stdout)["properties"]["workloads"]["items"] == {"$ref": "#/$defs/workload"}


def test_the_example_charts_config_parses() -> None:
    config = parse_repo_config((ROOT / "repo-templates" / "function-charts" / "kai-gitops.yaml").read_bytes())
    assert {c.name for c in config.clusters} == {"gpu-mnnvl", "gpu-basic"}
    assert all(
        w.chart and (ROOT / "repo-templates" / "function-charts" / w.chart / "Chart.yaml").is_file()
        for w in config.workloads
    )
