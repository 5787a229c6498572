"""Shared helpers of tests/policy/test_rules.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.policy_shared import example

NOT_INSTALLED = (
    "KAI Scheduler is not installed but the KAIScheduler feature flag is enabled. Either install KAI "
    "Scheduler (see https://github.com/NVIDIA/KAI-Scheduler) or disable the KAIScheduler feature flag"
)

Facts = dict[str, Any]


def standalone(change: Callable[[Facts], None] | None = None) -> Facts:
    facts = example("facts-static-standalone.json")
    if change:
        change(facts)
    return facts


def addon(change: Callable[[Facts], None]) -> Facts:
    facts = example("facts-static-addon.json")
    change(facts)
    return facts


def live(change: Callable[[Facts], None] | None = None) -> Facts:
    facts = example("facts-live.json")
    if change:
        change(facts)
    return facts


def healthy(change: Callable[[Facts], None]) -> Facts:
    facts = example("facts-live-healthy.json")
    change(facts)
    return facts


def both_modes(f: Facts) -> None:
    f["desired"]["addons"]["kaiScheduler"] = True
    f["desired"]["addons_doc"] = "env"


def no_kai_addon(extra: str) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["desired"]["addons"].update(
            {
                "kaiScheduler": False,
                extra: True,
                "groveOperator": extra != "dynamoOperator" and f["desired"]["addons"]["groveOperator"],
            }
        )

    return change


def gates(user: list[str], enabled: list[str], disabled: list[str]) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["desired"]["gates"].update({"user": user, "effective": user, "enabled": enabled, "disabled": disabled})

    return change


def set_live(**values: Any) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["live"].update(values)

    return change


def no_crd(f: Facts) -> None:
    f["live"].update(
        {
            "queue_kind_served": False,
            "queues": [],
            "nvca_prediction": {"status": "unhealthy", "errors": [NOT_INSTALLED]},
        }
    )
    f["live"]["crds"]["queues.scheduling.run.ai"] = False


def shared(nodes: list[str]) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["desired"]["shared_cluster"] = {"intent": "shared", "nodes": nodes, "selector": None}

    return change


def labelled(*names: str) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["live"]["nodes"]["schedule_true"] = list(names)
        f["live"]["nodes"]["schedule_label"] = [{"name": n, "value": "true"} for n in names]

    return change


def chain(*changes: Callable[[Facts], None]) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        for c in changes:
            c(f)

    return change


def release(**values: Any) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["live"]["releases"][0].update(values)

    return change


def workloads(change: Callable[[list[Facts], Facts], None]) -> Facts:
    """The example cluster running the gang patterns done right (policies/examples/facts-static-workloads.json),
    its objects (StatefulSet gang and Service, PodCliqueSet, DynamoGraphDeployment) and offer bent by `change`."""
    facts = example("facts-static-workloads.json")
    section = facts["desired"]["workloads"]
    change(section["objects"], section["context"])
    return facts


def workload_object(objects: list[Facts], kind: str) -> Facts:
    return next(o for o in objects if o["kind"] == kind)


def on_template(objects: list[Facts], _offer: Facts) -> None:
    sts = workload_object(objects, "StatefulSet")
    sts["spec"]["template"]["metadata"]["annotations"] = sts["metadata"].pop("annotations")


def with_podgroup(spec: Facts, annotations: Facts | None = None) -> Callable[[list[Facts], Facts], None]:
    def change(objects: list[Facts], _offer: Facts) -> None:
        sts = workload_object(objects, "StatefulSet")
        sts["spec"]["template"]["metadata"]["annotations"] = annotations or {}
        objects.append(
            {
                **sts,
                "apiVersion": "scheduling.run.ai/v2alpha2",
                "kind": "PodGroup",
                "name": "gang",
                "gvk": "scheduling.run.ai/v2alpha2.PodGroup",
                "spec": spec,
            }
        )

    return change


def bend(kind: str, path: tuple[str, ...], value: Any) -> Callable[[list[Facts], Facts], None]:
    def change(objects: list[Facts], _offer: Facts) -> None:
        node = workload_object(objects, kind)
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value

    return change


def default_queue_parent(f: Facts) -> None:
    f["live"]["queues"][1]["parent"] = "team-root"


def hop(name: str, items: list[str] | None) -> Callable[[Facts], None]:
    def change(f: Facts) -> None:
        f["live"]["gate_hops"][name] = items

    return change


def git_queues(*queues: tuple[str, str | None, float]) -> Callable[[Facts], None]:
    """desired.queues as the Python facts builder writes them: (name, parent, gpu quota), the rest unlimited."""

    def change(f: Facts) -> None:
        f["desired"]["queues"] = [
            queue_facts(name, parent, gpu)
            | {
                "doc": "queues:0",
                "origin": "queue-file",
                "paths": {"parent": ["spec", "parentQueue"], "gpu.quota": ["spec", "resources", "gpu", "quota"]},
            }
            for name, parent, gpu in queues
        ]

    return change


def queue_facts(name: str, parent: str | None, gpu: float) -> Facts:
    unlimited = {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
    return {
        "name": name,
        "parent": parent,
        "has_resources": True,
        "resources": {
            "cpu": unlimited,
            "gpu": {"quota": gpu, "limit": -1.0, "overQuotaWeight": 1.0},
            "memory": unlimited,
        },
    }


def running_team_queue(f: Facts) -> None:
    """team-a holds 6 GPUs live under a quota of 8; Git cuts the quota to 2."""
    git_queues(("team-a", "default-parent-queue", 2))(f)
    f["live"]["queues"].append(
        queue_facts("team-a", "default-parent-queue", 8)
        | {
            "allocated": {"cpu": 0.0, "gpu": 6.0, "memory": 0.0},
            "allocated_non_preemptible": {"cpu": 0.0, "gpu": 0.0, "memory": 0.0},
        }
    )


TRIGGERS: dict[str, Facts] = {
    "KAI-V-001": standalone(),
    "KAI-V-002": standalone(),
    "KAI-V-003": standalone(),
    "KAI-V-004": standalone(),
    "KAI-Q-001": standalone(),
    "KAI-Q-002": standalone(),
    "KAI-R-001": standalone(lambda f: f["desired"].update({"kai_chart_pin": "v0.18.1", "defaults_version": "v0.17.0"})),
    "NVCA-G-001": standalone(),
    "NVCA-G-004": standalone(),
    "NVCA-G-005": standalone(),
    "NVCA-G-006": standalone(),
    "NVCA-S-001": standalone(),
    "KAI-M-001": standalone(both_modes),
    "KAI-M-002": addon(no_kai_addon("topologyAwareScheduling")),
    "KAI-M-003": addon(no_kai_addon("groveOperator")),
    "KAI-M-004": addon(lambda f: f["desired"]["addons"].update({"groveOperator": False})),
    "KAI-R-002": addon(lambda f: f["desired"].update({"kai_chart_pin": "v0.14.0"})),
    "KAI-M-005": addon(
        lambda f: f["desired"]["addons"].update(
            {"kaiScheduler": False, "groveOperator": False, "dynamoOperator": False}
        )
    ),
    "KAI-R-003": standalone(
        lambda f: f["desired"].update({"kai_chart_pin": "v0.13.4", "kai_chart": {"era": "E1", "sections": []}})
    ),
    "KAI-V-012": standalone(
        lambda f: f["desired"].update(
            {
                "kai_chart": {"era": "E3", "sections": ["kaiConfig"]},
                "kai_values_effective": {"kaiConfig": {"render": True}, "kaiConfigDeployer": {"enabled": True}},
            }
        )
    ),
    "KAI-V-013": standalone(
        lambda f: f["desired"]["kai_values_effective"].update({"defaultShard": {"enabled": False}})
    ),
    "KAI-V-014": standalone(
        lambda f: f["desired"].update(
            {"kai_manifests": [{"kind": "Config", "name": "lab-config", "doc": "kai_manifests:0:0"}]}
        )
    ),
    "NVCA-G-002": standalone(gates(["-KAIScheduler"], [], ["KAIScheduler"])),
    "NVCA-G-003": standalone(
        chain(lambda f: f["desired"].update({"standalone_kai": False}), gates(["KAIScheduler"], ["KAIScheduler"], []))
    ),
    "NVCA-G-007": standalone(gates(["LogPosting", "-LogPosting"], [], ["LogPosting"])),
    "NVCA-S-002": addon(shared([])),
    "KAI-Q-011": live(),
    "KAI-R-012": live(),
    "NVCA-G-012": live(),
    "NVCA-H-002": live(),
    "NVCA-H-006": live(),
    "NVCA-P-001": live(),
    "NVCA-P-002": live(),
    "NVCA-P-003": live(),
    "NVCA-S-012": live(),
    "NVCA-S-014": live(),
    "NVCA-H-001": healthy(no_crd),
    "NVCA-H-003": live(lambda f: f["live"]["healthz"].update({"status": "healthy", "errors": []})),
    "NVCA-H-004": live(set_live(healthz={"reachable": False, "http_status": None, "status": None, "errors": []})),
    "NVCA-H-005": healthy(set_live(backend={"count": 2, "name": None, "namespace": None, "agent_status": None})),
    "KAI-R-010": healthy(lambda f: f["live"]["releases"].append({**f["live"]["releases"][0], "namespace": "kai"})),
    "KAI-R-011": healthy(release(name="kai")),
    "KAI-R-013": healthy(release(latest_revision=4, latest_status="pending-upgrade")),
    "KAI-R-015": live(),
    "KAI-R-016": healthy(
        set_live(release_search={"all_namespaces": False, "namespaces": ["kai-scheduler"], "reason": "HTTP 403"})
    ),
    "KAI-R-014": healthy(lambda f: f["live"]["crds"].update({"podgroups.scheduling.run.ai": False})),
    "KAI-C-001": healthy(lambda f: f["live"]["kai_pods"][0].update({"ready": False})),
    "KAI-Q-010": healthy(default_queue_parent),
    "KAI-Q-012": healthy(lambda f: f["live"]["queues"][1].update({"has_resources": False})),
    "KAI-Q-013": healthy(lambda f: f["live"]["nvcf_pods"]["queues_used"].append("ghost")),
    "NVCA-G-010": healthy(hop("configmap", ["SelfHosted"])),
    "NVCA-G-011": healthy(hop("spec", ["SelfHosted"])),
    "NVCA-G-013": healthy(chain(hop("overrides", ["SelfHosted"]), hop("status", ["SelfHosted"]))),
    "NVCA-G-014": healthy(hop("status", ["SelfHosted", "-KAIScheduler"])),
    "NVCA-S-010": healthy(labelled("n1")),
    "NVCA-S-011": healthy(shared(["n1", "n2"])),
    "NVCA-S-013": healthy(chain(shared(["n1"]), labelled("n1", "n5"))),
    "KAI-Q-020": healthy(running_team_queue),
    "KAI-Q-021": standalone(git_queues(("research", None, 8), ("nlp", "research", 6), ("vision", "research", 6))),
    "KAI-Q-022": standalone(git_queues(("research", None, 8), ("vision", "research", 12))),
    "KAI-Q-023": standalone(git_queues(("a", "b", 1), ("b", "a", 1))),
    "KAI-Q-024": standalone(git_queues(("vision", "reserch", 1))),
    "NVCF-F-001": workloads(lambda _objects, offer: offer.update({"allowed_types": []})),
    "NVCF-F-002": workloads(on_template),
    "NVCF-F-003": workloads(lambda _objects, offer: offer.update({"topology_aware": False})),
    "NVCF-F-004": workloads(
        lambda objects, _offer: workload_object(objects, "StatefulSet").update(
            {"kind": "Deployment", "gvk": "apps/v1.Deployment"}
        )
    ),
    "NVCF-F-005": workloads(bend("StatefulSet", ("spec", "podManagementPolicy"), "OrderedReady")),
    "NVCF-F-006": workloads(bend("StatefulSet", ("metadata", "annotations", "kai.scheduler/topology"), "mnnvl")),
    "NVCF-F-007": workloads(with_podgroup({"queue": "team-a", "minMember": 2})),
    "NVCF-F-008": workloads(
        bend("PodCliqueSet", ("spec", "template", "topologyConstraint", "topologyName"), "nvcf-mnnvl-topology")
    ),
    "NVCF-F-009": workloads(bend("PodCliqueSet", ("spec", "template", "cliques", 1, "spec", "minAvailable"), 9)),
    "NVCF-F-010": workloads(bend("DynamoGraphDeployment", ("spec", "topologyConstraint", "topologyProfile"), "x")),
    "NVCF-F-011": workloads(
        lambda objects, _offer: objects.append(
            {
                **workload_object(objects, "Service"),
                "apiVersion": "kai.scheduler/v1alpha1",
                "kind": "Topology",
                "gvk": "kai.scheduler/v1alpha1.Topology",
                "spec": {"levels": []},
            }
        )
    ),
    "NVCF-F-012": workloads(with_podgroup({"queue": "default-queue", "minMember": 2}, {"pod-group-name": "gang"})),
}
