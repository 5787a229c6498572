"""KAI Resource Management (KAI-K-001..004, KAI-D-010's fallback, Project queues under the queue rules) and the NVCA
operator values (NVCA-V-001, NVCA-G-014, KAI-R-011, NVCA-H-001): a corpus of planted mistakes, each found where
it is (the repository's own examples are checked clean in tests/checks/test_planted_corpus.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.model.krm import KrmObjects, generated_queues
from tests.support.helpers import (
    CANONICAL_KAI_VALUES,
    ROOT,
    canonical_shard,
    crd,
    kai_crds,
    make_repo,
    obj,
    pod,
    queue,
    release_secret,
    run_cli,
    snapshot_file,
    standalone_config,
)

KRM = "kai.resources/v1alpha1"
UNLIMITED = {"quota": -1, "limit": -1, "overQuotaWeight": 1}


def gpu(deserved: float, limit: float = -1, weight: float = 1) -> dict[str, Any]:
    return {"gpu": {"deserved": deserved, "limit": limit, "overQuotaWeight": weight}}


def department(name: str, *entries: dict[str, Any]) -> dict[str, Any]:
    return obj(KRM, "Department", name, spec={"queues": list(entries)})


def project(name: str, parent: str | None, *entries: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"queues": list(entries)}
    if parent:
        spec["parent"] = parent
    return obj(KRM, "Project", name, spec=spec)


def entry(nodepool: str, resources: dict[str, Any] | None = None, name: str | None = None) -> dict[str, Any]:
    given: dict[str, Any] = {"nodepool": nodepool}
    if name:
        given["name"] = name
    if resources:
        given["resources"] = resources
    return given


# The org every case starts from: engineering holds 8 H100s and 0 A100s; research and production share the H100s.
ORG = [
    department("engineering", entry("h100", gpu(8, 16), name="engineering-h100"), entry("default", gpu(0))),
    project("research", "engineering", entry("h100", gpu(3, 8, 2))),
    project("production", "engineering", entry("h100", gpu(4, 8))),
    obj(KRM, "NodePool", "h100", spec={"labelKey": "pool", "labelValue": "h100"}),
]


def dump(*docs: dict[str, Any]) -> str:
    return yaml.safe_dump_all(list(docs), sort_keys=False)


def lab(
    tmp_path: Path,
    *,
    krm: list[dict[str, Any]] | None = None,
    queues: list[dict[str, Any]] | None = None,
    shards: list[dict[str, Any]] | None = None,
) -> Path:
    files = {"kai-values.yaml": CANONICAL_KAI_VALUES}
    extra = ""
    if krm is not None:
        files["krm.yaml"] = dump(*krm)
        extra += "    krmFiles: [krm.yaml]\n"
    if shards:
        files["shards.yaml"] = dump(*shards)
        extra += "    kaiManifestFiles: [shards.yaml]\n"
    if queues:
        files["queues.yaml"] = dump(*queues)
    config = standalone_config(queue_files=["queues.yaml"] if queues else [], extra=extra)
    return make_repo(tmp_path, {"kai-gitops.yaml": config, **files})[0]


def check(repo: Path, *args: Any) -> list[dict[str, Any]]:
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json", *args])
    assert code in (0, 2), err
    return [f for c in json.loads(out)["clusters"] for f in c["findings"]]


def diff(repo: Path, snapshot: Path) -> list[dict[str, Any]]:
    code, out, err = run_cli(["diff", "--repo", repo, "--cluster", "lab", "--snapshot", snapshot, "-o", "json"])
    assert code in (0, 2), err
    return list(json.loads(out)["findings"])


def of(findings: list[dict[str, Any]], *rules: str) -> list[dict[str, Any]]:
    return [f for f in findings if f["rule"] in rules]


def at(finding: dict[str, Any]) -> tuple[str, int]:
    return finding["location"]["file"], finding["location"]["line"]


def line_of(repo: Path, file: str, text: str, nth: int = 0) -> int:
    lines = [i for i, line in enumerate((repo / file).read_text().splitlines(), 1) if text in line]
    return lines[nth]


def krm_snapshot(tmp_path: Path, *items: dict[str, Any]) -> Path:
    parent = queue("default-parent-queue", UNLIMITED)
    child = queue("default-queue", UNLIMITED, parent="default-parent-queue")
    return snapshot_file(
        tmp_path, [*kai_crds(), crd("projects.kai.resources"), parent, child, canonical_shard(), *items]
    )


# -- the model ---------------------------------------------------------------------------------------------


def test_generated_queues_follow_krm_naming_and_parenting() -> None:
    objects = KrmObjects()
    for item in [*ORG, project("solo", None, entry("default", gpu(1)))]:
        objects.add(item)
    by_name = {g.spec.name: g.spec for g in generated_queues(objects)}
    assert by_name["engineering-h100"].parent is None
    assert by_name["engineering"].parent is None  # the default node pool: <owner>
    assert by_name["research-h100"].parent == "engineering-h100"  # <owner>-<nodepool>, under its department
    assert by_name["solo"].parent is None
    research = by_name["research-h100"].triple("gpu")
    assert (research.quota, research.limit, research.over_quota_weight) == (3, 8, 2)  # deserved -> quota
    assert by_name["research-h100"].triple("cpu").quota == 0  # absent = 0, as KRM


# -- the planted corpus --------------------------------------------------------------------------------------


def test_a_git_queue_with_a_generated_name_is_k001_at_the_queue(tmp_path: Path) -> None:
    """Case 1, collision: Git keeps research-h100, which Project research generates (same parent)."""
    repo = lab(tmp_path, krm=ORG, queues=[queue("research-h100", UNLIMITED, parent="engineering-h100")])
    found = of(check(repo), "KAI-K-001", "KAI-K-002", "KAI-D-010")
    assert [f["rule"] for f in found] == ["KAI-K-001"]
    assert at(found[0]) == ("queues.yaml", line_of(repo, "queues.yaml", "name: research-h100"))
    assert "Project research spec.queues[0]" in found[0]["message"] and "takes it over" in found[0]["message"]
    assert "quota -> deserved" in found[0]["fix"]["description"]


def test_a_git_queue_krm_parents_elsewhere_is_k002(tmp_path: Path) -> None:
    """Case 2, contradicting tree: Git parents production-h100 to the default parent, KRM to engineering-h100."""
    repo = lab(tmp_path, krm=ORG, queues=[queue("production-h100", UNLIMITED, parent="default-parent-queue")])
    found = of(check(repo), "KAI-K-001", "KAI-K-002")
    assert [f["rule"] for f in found] == ["KAI-K-002"]  # one finding per queue: K-002 replaces K-001
    assert "parented to engineering-h100" in found[0]["message"]
    assert at(found[0])[0] == "queues.yaml"


def test_git_against_git_krm_is_a_violation_and_against_the_cluster_drift(tmp_path: Path) -> None:
    """A Git-only check reads nothing live: K-001/002/003 there contradict Git's own KRM objects, so they are
    violations, not 'Drift (live differs from Git)'. A Project read from the cluster makes K-001 drift."""
    shard = obj("kai.scheduler/v1", "SchedulingShard", "h100", spec={"partitionLabelValue": "h100"})
    repo = lab(
        tmp_path,
        krm=ORG,
        shards=[shard],
        queues=[
            queue("research-h100", UNLIMITED, parent="engineering-h100"),
            queue("production-h100", UNLIMITED, parent="default-parent-queue"),
        ],
    )
    found = of(check(repo), "KAI-K-001", "KAI-K-002", "KAI-K-003")
    assert sorted((f["rule"], f["kind"]) for f in found) == [
        ("KAI-K-001", "violation"),
        ("KAI-K-002", "violation"),
        ("KAI-K-003", "violation"),
    ]
    code, out, err = run_cli(["check", "--repo", repo])
    assert code == 2 and "KAI-K-002" in out and "Drift (live differs from Git)" not in out, err
    live = lab(tmp_path / "live", queues=[queue("ops", UNLIMITED)])
    snap = krm_snapshot(tmp_path, queue("ops", UNLIMITED), project("ops", None, entry("default", gpu(2))))
    [taken] = of(diff(live, snap), "KAI-K-001")
    assert taken["kind"] == "drift"


def test_a_git_queue_hung_under_a_krm_queue_is_k002(tmp_path: Path) -> None:
    """Case 3: a queue Git parents under a department's generated queue."""
    repo = lab(tmp_path, krm=ORG, queues=[queue("adhoc", UNLIMITED, parent="engineering-h100")])
    found = of(check(repo), "KAI-K-002")
    assert len(found) == 1 and "which Department engineering generates" in found[0]["message"]


def test_a_live_project_takes_over_an_unowned_git_queue(tmp_path: Path) -> None:
    """Case 4, takeover: the cluster's Project ops (default node pool) derives the name `ops` that Git keeps."""
    repo = lab(tmp_path, queues=[queue("ops", UNLIMITED)])
    snap = krm_snapshot(tmp_path, queue("ops", UNLIMITED), project("ops", None, entry("default", gpu(2))))
    found = of(diff(repo, snap), "KAI-K-001", "KAI-D-010")
    by_subject = {(f["rule"], f["subject"]["name"]) for f in found}
    assert ("KAI-K-001", "ops") in by_subject and ("KAI-D-010", "ops") not in by_subject  # never both
    assert {
        ("KAI-D-010", "default-parent-queue"),
        ("KAI-D-010", "default-queue"),
        ("KAI-D-010", "default"),
    } <= by_subject  # what no KRM object explains
    child = next(f for f in found if f["subject"]["name"] == "default-queue")
    assert at(child) == ("kai-values.yaml", line_of(repo, "kai-values.yaml", "childName"))


def test_allow_external_queues_leaves_unowned_queues_alone(tmp_path: Path) -> None:
    """Case 5: with allowExternalQueues KRM takes nothing over: neither K-001 nor KAI-D-010 for Git's queues."""
    repo = lab(tmp_path, queues=[queue("ops", UNLIMITED)])
    config = obj(KRM, "KRMConfig", "krm-config", spec={"global": {"allowExternalQueues": True}})
    snap = krm_snapshot(tmp_path, queue("ops", UNLIMITED), project("ops", None, entry("default", gpu(2))), config)
    found = of(diff(repo, snap), "KAI-K-001", "KAI-D-010")
    assert [(f["rule"], f["subject"]["name"]) for f in found] == [("KAI-D-010", "default")]


def test_the_manual_override_label_in_git_is_honoured(tmp_path: Path) -> None:
    """Case 6: the opt-out label on Git's own manifest keeps the queue Git's."""
    kept = queue("research-h100", UNLIMITED, parent="engineering-h100")
    kept["metadata"]["labels"] = {"kai.resources/resource-manual-override": "true"}
    assert of(check(lab(tmp_path, krm=ORG, queues=[kept])), "KAI-K-001", "KAI-K-002") == []


def test_a_shard_a_nodepool_owns_is_k003(tmp_path: Path) -> None:
    """Case 7, shard adopted: Git keeps shard h100, which NodePool h100 owns; on the cluster the default shard
    is adopted (KAI-D-010) even with the opt-out label, which KRM never honours there."""
    shard = obj("kai.scheduler/v1", "SchedulingShard", "h100", spec={"partitionLabelValue": "h100"})
    repo = lab(tmp_path, krm=ORG, shards=[shard])
    found = of(check(repo), "KAI-K-003")
    assert len(found) == 1 and "NodePool h100 owns" in found[0]["message"]
    assert at(found[0]) == ("shards.yaml", line_of(repo, "shards.yaml", "name: h100"))
    labelled = canonical_shard()
    labelled["metadata"]["labels"] = {"kai.scheduler/ignore-shard-for-krm": "true"}
    snap = snapshot_file(tmp_path, [*kai_crds(), crd("nodepools.kai.resources"), labelled])
    live = [f for f in of(diff(repo, snap), "KAI-K-003", "KAI-D-010") if f["subject"]["kind"] == "SchedulingShard"]
    assert {(f["rule"], f["subject"]["name"]) for f in live} == {("KAI-K-003", "h100"), ("KAI-D-010", "default")}


def test_a_project_queue_without_a_department_queue_is_k004(tmp_path: Path) -> None:
    """Case 8: research asks for A100s, which engineering has no queue for."""
    org = [*ORG[:1], project("research", "engineering", entry("h100", gpu(3)), entry("a100", gpu(2))), ORG[3]]
    repo = lab(tmp_path, krm=org)
    found = of(check(repo), "KAI-K-004")
    assert len(found) == 1 and "no queue for node pool a100" in found[0]["message"]
    assert at(found[0]) == ("krm.yaml", line_of(repo, "krm.yaml", "nodepool: a100"))


def test_project_quotas_are_judged_by_the_queue_rules_at_the_project_line(tmp_path: Path) -> None:
    """Case 9: research (6) and production (4) deserve 10 H100s under engineering's 8: KAI-Q-021, at the line of
    the department's `deserved` (KRM's name for the Queue's quota)."""
    org = [ORG[0], project("research", "engineering", entry("h100", gpu(6, 8, 2))), *ORG[2:]]
    repo = lab(tmp_path, krm=org)
    found = of(check(repo), "KAI-Q-021")
    assert len(found) == 1 and "Queue engineering-h100" in found[0]["message"]
    assert at(found[0]) == ("krm.yaml", line_of(repo, "krm.yaml", "deserved: 8"))
    # the same numbers within budget: nothing
    assert of(check(lab(tmp_path / "ok", krm=ORG)), "KAI-Q-021") == []


@pytest.mark.parametrize(
    "bad, message",
    [
        ({"gpu": {"deserved": "32Gi"}}, "a plain number"),
        ({"gpu": [1]}, "a mapping of deserved, limit, overQuotaWeight"),
    ],
)
def test_krm_numbers_must_be_plain_numbers(tmp_path: Path, bad: dict[str, Any], message: str) -> None:
    repo = lab(tmp_path, krm=[project("research", "engineering", entry("h100", bad))])
    code, _, err = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code == 1 and message in err and "krm.yaml:" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "spec, message",
    [
        ({"global": [1, 2]}, "spec.global must be a mapping, found [1, 2]"),
        (
            {"global": {"allowExternalQueues": "true"}},
            "spec.global.allowExternalQueues must be true or false, found the string 'true'",
        ),
        ({"global": {"defaultNodePoolName": 5}}, "spec.global.defaultNodePoolName must be a string, found 5"),
    ],
)
def test_krm_config_fields_are_typed_at_their_line(tmp_path: Path, spec: dict[str, Any], message: str) -> None:
    """`global: [1, 2]` was an internal TypeError; `allowExternalQueues: "true"` was read as off, silently."""
    repo = lab(tmp_path, krm=[*ORG, obj(KRM, "KRMConfig", "krm-config", spec=spec)])
    code, out, err = run_cli(["check", "--repo", repo, "-o", "json"])
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert message in err and "krm.yaml:" in err and "internal error" not in err


def test_a_live_krm_config_of_another_shape_is_read_as_far_as_it_goes(tmp_path: Path) -> None:
    """A snapshot file (not validated by a server) with `spec.global` a list and a queue entry's resources a list:
    read without a crash, the settings at their defaults."""
    from reconciler.sources.snapshot import read_live_snapshot

    bent = project("ops", None, entry("default", gpu(2)))
    bent["spec"]["queues"].append({"nodepool": "default", "resources": [1]})
    snap = krm_snapshot(tmp_path, bent, obj(KRM, "KRMConfig", "krm-config", spec={"global": [1, 2]}))
    _, state = read_live_snapshot(str(snap))
    assert state.krm.has_config and state.krm.allow_external_queues is False
    assert len(state.krm.projects["ops"].queues) == 2


def test_a_krm_file_holds_only_krm_objects(tmp_path: Path) -> None:
    repo = lab(tmp_path, krm=[queue("q", UNLIMITED)])
    code, _, err = run_cli(["check", "--repo", repo])
    assert code == 1 and "KRM files may hold only" in err and "krm.yaml:" in err


def test_krm_objects_are_read_from_a_snapshot(tmp_path: Path) -> None:
    from reconciler.sources.snapshot import read_live_snapshot

    snap = krm_snapshot(tmp_path, *ORG)
    _, state = read_live_snapshot(str(snap))
    assert set(state.krm.projects) == {"research", "production"} and set(state.krm.nodepools) == {"h100"}


def test_no_krm_anywhere_means_no_krm_finding(tmp_path: Path) -> None:
    repo = lab(tmp_path, queues=[queue("research-h100", UNLIMITED)])
    assert of(check(repo), "KAI-K-001", "KAI-K-002", "KAI-K-003", "KAI-K-004", "KAI-D-010") == []


def test_the_k_rules_are_listed_as_run(tmp_path: Path) -> None:
    code, out, err = run_cli(["check", "--repo", lab(tmp_path, krm=ORG), "-o", "sarif"])
    assert code in (0, 2), err
    rules = {r["id"] for r in json.loads(out)["runs"][0]["tool"]["driver"]["rules"]}
    assert {"KAI-K-001", "KAI-K-002", "KAI-K-003", "KAI-K-004"} <= rules


# -- NVCA operator values and gates ----------------------------------------------------------------------------

NVCA_VALUES = """selfManaged:
  featureGateValues: [SelfHosted, KAIScheduler]
agentConfig:
  mergeConfig: |-
    agent:
      byooOtelCollector:
        logSampling:
          samplingPercentage: 10
      heartbeatInterval: 30s
      logLevel: debug
    cluster:
      validationPolicy:
        name: Unrestricted
"""


def nvca_lab(tmp_path: Path, nvca_values: str) -> Path:
    config = standalone_config(nvca="nvca-values.yaml")
    return make_repo(
        tmp_path, {"kai-gitops.yaml": config, "kai-values.yaml": CANONICAL_KAI_VALUES, "nvca-values.yaml": nvca_values}
    )[0]


def test_merge_config_setting_first_class_fields_is_nvca_v001(tmp_path: Path) -> None:
    """Case 10: mergeConfig sets agent.byooOtelCollector and agent.heartbeatInterval, which the chart generates."""
    repo = nvca_lab(tmp_path, NVCA_VALUES)
    found = of(check(repo), "NVCA-V-001")
    assert len(found) == 1
    assert "agent.byooOtelCollector, agent.heartbeatInterval" in found[0]["message"]
    assert "logLevel" not in found[0]["message"]  # no first-class value: mergeConfig is the way
    assert at(found[0]) == ("nvca-values.yaml", line_of(repo, "nvca-values.yaml", "mergeConfig"))


def test_the_chart_default_merge_config_is_clean(tmp_path: Path) -> None:
    """The chart's own default (a validation policy only) and the shipped fixture raise nothing."""
    chart = (ROOT / "tests" / "fixtures" / "nvcf" / "nvca-operator-chart-values.yaml").read_text()
    assert of(check(nvca_lab(tmp_path, chart)), "NVCA-V-001") == []


def nvca_snapshot(tmp_path: Path, gates: list[str], *items: dict[str, Any]) -> Path:
    backend = obj(
        "nvcf.nvidia.io/v1",
        "NVCFBackend",
        "nvcf-backend",
        "nvca-operator",
        spec={"featureGate": {"values": gates}},
        status={"featureGate": {"values": gates}},
    )
    return snapshot_file(tmp_path, [backend, *items])


def test_kai_disabled_with_nvcf_pods_on_kai_is_nvca_g014(tmp_path: Path) -> None:
    """Case 11: NVCA rolled out -KAIScheduler while two NVCF pods are still KAI's."""
    repo = nvca_lab(tmp_path, "selfManaged:\n  featureGateValues: [SelfHosted, KAIScheduler]\n")
    pods = [pod(f"fn-{i}", "nvcf-backend", nvcf_label=True, queue_label="default-queue") for i in range(2)]
    snap = nvca_snapshot(tmp_path, ["SelfHosted", "-KAIScheduler"], *kai_crds(), *pods)
    found = of(diff(repo, snap), "NVCA-G-014")
    assert len(found) == 1 and "2 NVCF pod(s) are scheduled by KAI" in found[0]["message"]
    moved = [
        pod(f"fn-{i}", "nvcf-backend", nvcf_label=True, scheduler=None, created="2026-12-01T00:00:00Z")
        for i in range(2)
    ]
    assert (
        of(diff(repo, nvca_snapshot(tmp_path, ["SelfHosted", "-KAIScheduler"], *kai_crds(), *moved)), "NVCA-G-014")
        == []
    )


def test_a_second_kai_release_is_kai_r011(tmp_path: Path) -> None:
    """Case 12: KAI installed a second time as release kai in namespace team-a, which the add-on never adopts."""
    repo = nvca_lab(tmp_path, "selfManaged:\n  featureGateValues: [SelfHosted, KAIScheduler]\n")
    releases = [release_secret(), release_secret(name="kai", namespace="team-a")]
    found = of(diff(repo, nvca_snapshot(tmp_path, ["SelfHosted", "KAIScheduler"], *kai_crds(), *releases)), "KAI-R-011")
    assert [f["subject"]["name"] for f in found] == ["kai"]


def test_the_gate_on_without_kai_crds_is_nvca_h001(tmp_path: Path) -> None:
    """Case 13: the KAIScheduler gate is on (Git and rolled out) but the cluster serves no KAI CRD."""
    repo = nvca_lab(tmp_path, "selfManaged:\n  featureGateValues: [SelfHosted, KAIScheduler]\n")
    found = of(diff(repo, nvca_snapshot(tmp_path, ["SelfHosted", "KAIScheduler"])), "NVCA-H-001")
    assert len(found) == 1 and "KAI Scheduler is not installed" in found[0]["message"]


# no false positives on the repository's own examples: tests/checks/test_planted_corpus.py


# -- the live read ----------------------------------------------------------------------------------------------


def test_the_live_read_lists_krm_objects_only_where_served() -> None:
    """Against the stand-in API server: KRM's kinds are discovered and listed; a server
    that does not serve them is never asked."""
    from kubernetes import client

    from reconciler.sources.cluster import ClusterClient, ReadSettings, read_cluster
    from tests.support.kubeserver import KubeTestServer

    settings = ReadSettings(
        attempts=2,
        retry_budget_s=2.0,
        backoff_base_s=0.005,
        backoff_cap_s=0.02,
        connect_timeout_s=1.0,
        read_timeout_s=0.3,
        healthz_timeout_s=0.3,
        workers=2,
    )
    status = {"status": {"nodePoolsQuotaStatuses": [{"nodePoolName": "h100"}]}}
    for served in (True, False):
        with KubeTestServer() as server:
            server.register_kai_and_nvca_kinds(with_crds=True)
            server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
            if served:
                for kind, plural in (
                    ("Project", "projects"),
                    ("Department", "departments"),
                    ("NodePool", "nodepools"),
                    ("KRMConfig", "krmconfigs"),
                ):
                    server.register_kind("kai.resources", "v1alpha1", kind, plural, namespaced=False)
                server.add_many([{**item, **status} for item in ORG])
            live = read_cluster(ClusterClient(client.Configuration(host=server.url), settings, label="krm"))
            paths = {r.path for r in server.requests}
        if served:
            assert set(live.krm.projects) == {"research", "production"} and set(live.krm.nodepools) == {"h100"}
            assert "/apis/kai.resources/v1alpha1/projects" in paths
        else:
            assert not live.krm and not [p for p in paths if p.startswith("/apis/kai.resources/")]
