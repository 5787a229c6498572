"""Names from Git and from saved reports held to Kubernetes' rules (core/names.py): a name the API server would
refuse is a one-line error at its file:line in kai-gitops.yaml, a queue file or the KAI values, and `report
merge` refuses a report carrying one, naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.helpers import assert_one_line_error, commit_files, load_demo_builder, run_cli

DEMO = load_demo_builder()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("demo") / "repo"
    DEMO.build_repo(target)
    return target


# -- names from Git ---------------------------------------------------------------------------------------------


def edited_demo(tmp_path: Path, path: str, change: Any) -> Path:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    document = yaml.safe_load((repo / path).read_text())
    change(document)
    commit_files(repo, {path: yaml.safe_dump(document, sort_keys=False)})
    return repo


def first_cluster(change: Any) -> Any:
    return lambda config: change(config["clusters"][0])


@pytest.mark.parametrize(
    ("change", "needles"),
    [
        # Python's `$` matched before a final newline: the schema's pattern let this one through
        (first_cluster(lambda c: c.update(name="prod-addon\n")), ["clusters.0.name", "'prod-addon\\n' does not match"]),
        (first_cluster(lambda c: c.update(name="a" * 64)), ["clusters.0.name", "is too long"]),
        (
            first_cluster(lambda c: c.update(sharedCluster={"intent": "shared", "nodes": ["gpu node\n1"]})),
            ["node name 'gpu node\\n1' is not a DNS-1123 subdomain"],
        ),
        (
            first_cluster(lambda c: c.update(sharedCluster={"intent": "shared", "nodeSelector": {"pool\n": "gpu"}})),
            ["node label key 'pool\\n' is not a label key"],
        ),
        (
            first_cluster(lambda c: c.update(sharedCluster={"intent": "shared", "nodeSelector": {"pool": "a b"}})),
            ["node label value 'a b' is not a label value"],
        ),
    ],
    ids=["cluster-newline", "cluster-too-long", "node", "label-key", "label-value"],
)
def test_names_in_kai_gitops_yaml_kubernetes_would_refuse_are_file_line_errors(
    tmp_path: Path, change: Any, needles: list[str]
) -> None:
    repo = edited_demo(tmp_path, "kai-gitops.yaml", change)
    assert_one_line_error(*run_cli(["check", "--repo", repo]), "kai-gitops.yaml:", *needles)


def queue_file(repo: Path) -> str:
    config = yaml.safe_load((repo / "kai-gitops.yaml").read_text())
    return next(f for c in config["clusters"] for f in c.get("queueFiles", ()))


@pytest.mark.parametrize(("field", "value"), [("name", "Research Team"), ("parentQueue", "root\n::error::x")])
def test_queue_names_kubernetes_would_refuse_are_file_line_errors(tmp_path: Path, field: str, value: str) -> None:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    path = queue_file(repo)
    queue, *others = yaml.safe_load_all((repo / path).read_text())  # the demo PR appends two sub-queues
    (queue["metadata"] if field == "name" else queue.setdefault("spec", {}))[field] = value
    commit_files(repo, {path: yaml.safe_dump_all([queue, *others], sort_keys=False)})
    dotted = "metadata.name" if field == "name" else "spec.parentQueue"
    assert_one_line_error(
        *run_cli(["check", "--repo", repo]), f"{path}:", f"Queue name {dotted} {value!r}", "is not a DNS-1123 subdomain"
    )


def test_default_queue_name_in_values_kubernetes_would_refuse_is_a_file_line_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    config = yaml.safe_load((repo / "kai-gitops.yaml").read_text())
    path = next(c["kaiValuesFile"] for c in config["clusters"] if c.get("kaiValuesFile"))
    values = yaml.safe_load((repo / path).read_text())
    values.setdefault("defaultQueue", {})["childName"] = "Default_Queue"
    commit_files(repo, {path: yaml.safe_dump(values, sort_keys=False)})
    assert_one_line_error(
        *run_cli(["check", "--repo", repo]),
        f"{path}:",
        "Queue name defaultQueue.childName 'Default_Queue' is not a DNS-1123 subdomain",
    )


# -- names in merged reports ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def report_file(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("reports") / "check.json"
    code, stdout, _ = run_cli(["check", "--repo", demo, "-o", "json"])
    assert code == 2
    path.write_text(stdout)
    return path


def edited_report(source: Path, change: Any) -> Path:
    report = json.loads(source.read_text())
    change(report)
    out = source.with_name("edited.json")
    out.write_text(json.dumps(report))
    return out


def subject_namespace(report: dict[str, Any]) -> None:
    report["clusters"][0]["findings"][0]["subject"] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "p",
        "namespace": "kube-system\n::error::x",
    }


def subject_name(report: dict[str, Any]) -> None:
    report["clusters"][0]["findings"][0]["subject"] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "name": "p\x1b]0;x\x07",
        "namespace": None,
    }


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (
            lambda r: r["clusters"][0].update(cluster="prod\n::error::x"),
            "cluster name 'prod\\n::error::x' is not a DNS-1123 label",
        ),
        (
            lambda r: r["clusters"][0]["findings"][0].update(cluster="Prod"),
            "cluster name of a finding 'Prod' is not a DNS-1123 label",
        ),
        (subject_namespace, "subject namespace of a finding 'kube-system\\n::error::x'"),
        (subject_name, "subject name of a finding 'p\\x1b]0;x\\x07' is not a Kubernetes object name"),
    ],
    ids=["cluster", "finding-cluster", "subject-namespace", "subject-name"],
)
def test_report_merge_refuses_names_kubernetes_would_refuse(report_file: Path, change: Any, needle: str) -> None:
    edited = edited_report(report_file, change)
    assert_one_line_error(*run_cli(["report", "merge", edited]), str(edited), needle)
