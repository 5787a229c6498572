"""Gangs and topology-aware placement, live: KAI PodGroups, KAI Topologies, Grove ClusterTopologyBindings, and
what the nvcf-compute-plane stack renders for them from Git (docs/policies.md#gangs-and-topology).

A PodGroup (`scheduling.run.ai/v2alpha2`) holds a gang; the scheduler writes `status.schedulingConditions[]`
of type `UnschedulableOnNodePool` per node pool it could not place the gang on, each with structured
`reasons[]{reason, message}` (v0.13+) and the deprecated `reason`/`message`. Pods join a gang through the
`pod-group-name` annotation the pod-grouper writes (external groups: the pod's own).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources

from reconciler.core.jsonvalue import JSONObject, JSONValue, list_at, mapping_at
from reconciler.core.redact import redact_free_text

POD_GROUP_KEY = "pod-group-name"  # annotation (and, on some versions, label) naming the pod's PodGroup
UNSCHEDULABLE = "UnschedulableOnNodePool"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
DRA_CRDS = ("computedomains.resource.nvidia.com",)  # the NVIDIA GPU DRA driver's (IMEX domains for MNNVL)
BINDING_SUFFIX = "-binding"  # the stack names a Topology's Grove binding <topology>-binding
KAI_SCHEDULER_NAME = "kai-scheduler"


@dataclass(frozen=True)
class Unschedulable:
    """One `UnschedulableOnNodePool` condition: the node pool and why, as the scheduler said it (redacted)."""

    node_pool: str
    reasons: tuple[tuple[str, str], ...]  # (reason, message), the structured ones first
    since: str = ""

    def said(self) -> str:
        return "; ".join(f"{r}: {m}" if m else r for r, m in self.reasons) or "no reason given"


@dataclass(frozen=True)
class PodGroupSummary:
    namespace: str
    name: str
    queue: str
    min_member: int | None
    topology: str = ""
    required_level: str = ""
    unschedulable: tuple[Unschedulable, ...] = ()


@dataclass(frozen=True)
class TopologySummary:
    name: str
    levels: tuple[str, ...]  # node label keys, widest first


@dataclass(frozen=True)
class BindingSummary:
    """A Grove ClusterTopologyBinding: its domains and which scheduler topology it stands for."""

    name: str
    levels: tuple[tuple[str, str], ...]  # (domain, node label key), broadest first
    references: tuple[tuple[str, str], ...]  # (schedulerName, topologyReference)
    drift: str = ""  # what Grove reports out of sync: SchedulerTopologyDrift True, statuses with inSync false


@dataclass
class GangState:
    """What the live read holds about gangs; empty when the kinds are not served."""

    pod_groups: dict[tuple[str, str], PodGroupSummary] = field(default_factory=dict)
    topologies: dict[str, TopologySummary] = field(default_factory=dict)
    bindings: dict[str, BindingSummary] = field(default_factory=dict)


def pod_group_summary(obj: Mapping[str, JSONValue]) -> PodGroupSummary:
    meta, spec = mapping_at(obj, "metadata"), mapping_at(obj, "spec")
    constraint = mapping_at(spec, "topologyConstraint")
    conditions = tuple(
        _unschedulable(c)
        for c in list_at(mapping_at(obj, "status"), "schedulingConditions")
        if isinstance(c, dict) and c.get("type") == UNSCHEDULABLE and c.get("status") != "False"
    )
    minimum = spec.get("minMember")
    return PodGroupSummary(
        str(meta.get("namespace", "")),
        str(meta.get("name", "")),
        str(spec.get("queue") or ""),
        minimum if isinstance(minimum, int) and not isinstance(minimum, bool) else None,
        str(constraint.get("topology") or ""),
        str(constraint.get("requiredTopologyLevel") or ""),
        conditions,
    )


def _unschedulable(condition: Mapping[str, JSONValue]) -> Unschedulable:
    reasons = [
        (str(r.get("reason") or ""), redact_free_text(str(r.get("message") or "")))
        for r in list_at(condition, "reasons")
        if isinstance(r, dict)
    ]
    if not reasons and (condition.get("reason") or condition.get("message")):
        reasons = [(str(condition.get("reason") or ""), redact_free_text(str(condition.get("message") or "")))]
    return Unschedulable(
        str(condition.get("nodePool") or "default"), tuple(reasons), str(condition.get("lastTransitionTime") or "")
    )


def topology_summary(obj: Mapping[str, JSONValue]) -> TopologySummary:
    levels = tuple(
        str(level.get("nodeLabel", ""))
        for level in list_at(mapping_at(obj, "spec"), "levels")
        if isinstance(level, dict)
    )
    return TopologySummary(str(mapping_at(obj, "metadata").get("name", "")), levels)


def binding_summary(obj: Mapping[str, JSONValue]) -> BindingSummary:
    spec, status = mapping_at(obj, "spec"), mapping_at(obj, "status")
    levels = tuple(
        (str(level.get("domain", "")), str(level.get("key", "")))
        for level in list_at(spec, "levels")
        if isinstance(level, dict)
    )
    references = tuple(
        (str(b.get("schedulerName", "")), str(b.get("topologyReference", "")))
        for b in list_at(spec, "schedulerTopologyBindings")
        if isinstance(b, dict)
    )
    drift = [
        redact_free_text(f"{c.get('reason', '')}: {c.get('message', '')}".strip(": "))
        for c in list_at(status, "conditions")
        if isinstance(c, dict) and c.get("type") == "SchedulerTopologyDrift" and c.get("status") == "True"
    ]
    drift += [
        redact_free_text(
            f"{s.get('schedulerName', '')} topology {s.get('topologyReference', '')} not in sync"
            + (f": {s['message']}" if s.get("message") else "")
        )
        for s in list_at(status, "schedulerTopologyStatuses")
        if isinstance(s, dict) and s.get("inSync") is False
    ]
    return BindingSummary(str(mapping_at(obj, "metadata").get("name", "")), levels, references, "; ".join(drift))


# -- what the stack renders ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpectedTopology:
    """A Topology the stack installs (addons.topologyAwareScheduling.topologies[]), and the Grove binding it
    installs for it when Grove is on too (nvcf-cluster-topology chart)."""

    topology: TopologySummary
    binding: BindingSummary | None


def expected_topologies(env: Mapping[str, JSONValue] | None, addons: Mapping[str, bool]) -> list[ExpectedTopology]:
    """The stack installs Topologies only with both topologyAwareScheduling and kaiScheduler on, and the Grove
    bindings only with Grove on as well."""
    if not (addons.get("topologyAwareScheduling") and addons.get("kaiScheduler")):
        return []
    listed = list_at(mapping_at(mapping_at(env or {}, "addons"), "topologyAwareScheduling"), "topologies")
    entries = [t for t in listed if isinstance(t, dict)] or _stack_default_topologies()
    expected = []
    for entry in entries:
        topology = topology_summary({"metadata": {"name": entry.get("name")}, "spec": entry})
        binding = (
            BindingSummary(
                topology.name + BINDING_SUFFIX,
                tuple((domain_of(key), key) for key in topology.levels),
                ((KAI_SCHEDULER_NAME, topology.name),),
            )
            if addons.get("groveOperator")
            else None
        )
        expected.append(ExpectedTopology(topology, binding))
    return expected


def domain_of(label_key: str) -> str:
    """The stack's Grove domain for a node label: its last path segment without dots (gpu.clique -> gpuclique)."""
    return label_key.rsplit("/", 1)[-1].replace(".", "")


@functools.cache
def _stack_default_topologies() -> list[JSONObject]:
    from reconciler.yamlio.document import load_document

    text = resources.files("reconciler").joinpath("data/stack/base.yaml").read_text()
    data = load_document(text, "stack/base.yaml", shared=True).data
    listed = list_at(
        mapping_at(mapping_at(data if isinstance(data, dict) else {}, "addons"), "topologyAwareScheduling"),
        "topologies",
    )
    return [t for t in listed if isinstance(t, dict)]
