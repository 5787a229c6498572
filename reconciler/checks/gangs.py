"""Stuck gangs and topology prerequisites, live (docs/policies.md#gangs-and-topology).

KAI-T-001 a PodGroup the scheduler could not place (`UnschedulableOnNodePool`) while members are Pending,
explained: which members, what they ask for, on which node pools, why. KAI-T-002 the Pending members of a gang
with their scheduling events, one finding per gang. KAI-T-003 Pending pods whose `pod-group-name` names no
PodGroup. With topology-aware scheduling on (Git's addons.topologyAwareScheduling, or a live Topology, or a
PodGroup that names one): KAI-T-004 the Topology as the stack renders it, KAI-T-005 Grove's
ClusterTopologyBinding as the stack renders it and in sync, KAI-T-006 nodes carrying every level's label,
KAI-T-007 the GPU DRA driver's CRDs.

A condition left on a PodGroup whose pods are all bound is stale (KAI before v0.17.0 left them behind), so
KAI-T-001 needs a Pending member.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Callable, Iterable

from reconciler.core.names import dns_label, dns_subdomain, label_key
from reconciler.core.refs import Location
from reconciler.core.resources import CLUSTER_TOPOLOGY_BINDING, CUSTOM_RESOURCE_DEFINITION, POD_GROUP, TOPOLOGY
from reconciler.findings.builtin_rules import (
    BINDING_NOT_AS_RENDERED,
    DRA_DRIVER_MISSING,
    GANG_GROUP_MISSING,
    GANG_PENDING,
    GANG_UNSCHEDULABLE,
    LEVEL_LABEL_MISSING,
    TOPOLOGY_NOT_AS_RENDERED,
)
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.model.desired import DesiredCluster
from reconciler.model.gangs import (
    CLIQUE_LABEL,
    DRA_CRDS,
    BindingSummary,
    ExpectedTopology,
    PodGroupSummary,
    TopologySummary,
    expected_topologies,
)
from reconciler.model.live import LiveState, PodSummary

MAX_NAMED = 3  # members named in a message; the rest are counted
# What the operator does about each structured reason the scheduler gives (KAI v0.17.0 reasons[].reason)
REASON_FIXES = {
    "QueueDoesNotExist": "create the Queue the PodGroup names (or fix spec.queue; a queue whose parent is missing "
    "counts as missing)",
    "OverLimit": "raise the queue's limit, or wait for its other workloads to finish",
    "NonPreemptibleOverQuota": "raise the queue's quota, or make the workload preemptible",
    "PreemptionDelayNotElapsed": "wait: the gang may evict others only after its preemption delay",
}
DEFAULT_FIX = "free or add capacity in the named node pools, or shrink the gang"
Gang = tuple[str, str]


def gang_findings(live: LiveState, desired: DesiredCluster | None, cluster: str) -> list[Finding]:
    anchor = desired.locate("config", ("clusters", desired.config.index)) if desired is not None else None
    members = _members(live)
    findings = _unschedulable_groups(live, members, cluster, anchor)
    findings += _pending_gangs(live, members, cluster, anchor)
    findings += _missing_groups(live, members, cluster, anchor)
    findings += topology_findings(live, desired, cluster)
    return findings


def _members(live: LiveState) -> dict[Gang, list[PodSummary]]:
    gangs: dict[Gang, list[PodSummary]] = {}
    for pod in (*live.nvcf_pods, *live.kai_pods):
        if pod.gang:
            gangs.setdefault((pod.namespace, pod.gang), []).append(pod)
    return gangs


def _command(*words: str | tuple[str, Callable[[str], str | None]]) -> str | None:
    """A command for a person to paste into a shell. A word read from the cluster comes as (value, the name rule
    of what it names): it is quoted, and a value its kind would refuse (a pod annotation is free text:
    `pg; curl … | sh`) gives no command at all."""
    said = []
    for word in words:
        if isinstance(word, tuple):
            value, rule = word
            if rule(value) is not None:
                return None
            said.append(shlex.quote(value))
        else:
            said.append(word)
    return " ".join(said)


def _name(value: str) -> str:
    """A name from the cluster as a message shows it: escaped and quoted when no object could bear it."""
    return value if dns_subdomain(value) is None else repr(value)


def _gang_command(namespace: str, name: str) -> str | None:
    return _command(
        "kubectl -n",
        (namespace, dns_label),
        "get podgroups.scheduling.run.ai",
        (name, dns_subdomain),
        "-o yaml; kubectl -n",
        (namespace, dns_label),
        "get events --field-selector involvedObject.kind=Pod --sort-by=.lastTimestamp",
    )


def _pending(pods: Iterable[PodSummary]) -> list[PodSummary]:
    return sorted((p for p in pods if p.phase == "Pending"), key=lambda p: p.name)


def _named(pods: list[PodSummary]) -> str:
    names = ", ".join(p.name for p in pods[:MAX_NAMED])
    return names + (f" and {len(pods) - MAX_NAMED} more" if len(pods) > MAX_NAMED else "")


def _asks(pods: list[PodSummary]) -> str:
    """What the Pending members ask for, each distinct request once with how many ask it."""
    counted = Counter(", ".join(f"{r}={q}" for r, q in p.requests) or "no requests" for p in pods)
    return "; ".join(f"{n} x {{{ask}}}" if n > 1 else f"{{{ask}}}" for ask, n in counted.items())


def _unschedulable_groups(
    live: LiveState, members: dict[Gang, list[PodSummary]], cluster: str, anchor: Location | None
) -> list[Finding]:
    findings = []
    for key, group in sorted(live.gangs.pod_groups.items()):
        pending = _pending(members.get(key, []))
        if not group.unschedulable or not pending:
            continue  # placed, or a stale condition of a gang whose pods are bound
        pools = ", ".join(sorted({c.node_pool for c in group.unschedulable}))
        why = "; ".join(f"node pool {c.node_pool}: {c.said()}" for c in group.unschedulable)
        reasons = [r for c in group.unschedulable for r, _ in c.reasons]
        fixes = list(dict.fromkeys(REASON_FIXES.get(r, DEFAULT_FIX) for r in reasons)) or [DEFAULT_FIX]
        total = len(members.get(key, []))
        findings.append(
            GANG_UNSCHEDULABLE.finding(
                Kind.VIOLATION,
                f"PodGroup {group.namespace}/{group.name} (queue {group.queue or '<none>'}, minMember "
                f"{_shown(group.min_member)}) cannot be placed on node pool(s) {pools}: {why}. "
                f"Pending: {len(pending)} of {total} members ({_named(pending)}), asking "
                f"{_asks(pending)}. Fix: {'; '.join(fixes)}",
                cluster,
                subject=POD_GROUP.ref(group.name, group.namespace),
                location=anchor,
                extra={
                    "nodePools": sorted({c.node_pool for c in group.unschedulable}),
                    "reasons": reasons,
                    "pending": [p.name for p in pending],
                    "members": total,
                },
                fix=Fix(Action.NONE, "; ".join(fixes), command=_gang_command(group.namespace, group.name)),
            )
        )
    return findings


def _pending_gangs(
    live: LiveState, members: dict[Gang, list[PodSummary]], cluster: str, anchor: Location | None
) -> list[Finding]:
    """One finding per gang whose Pending members have scheduling events: each distinct message once."""
    findings = []
    for (namespace, name), pods in sorted(members.items()):
        pending = _pending(pods)
        said = Counter(m for p in pending if (m := live.unschedulable.get((p.namespace, p.name))))
        if not said:
            continue
        events = "; ".join(f"{n} pod(s): {message}" if n > 1 else message for message, n in said.most_common())
        findings.append(
            GANG_PENDING.finding(
                Kind.VIOLATION,
                f"gang {namespace}/{_name(name)}: {len(pending)} of {len(pods)} members Pending "
                f"({_named(pending)}); the scheduler says: {events}",
                cluster,
                subject=POD_GROUP.ref(name, namespace),
                location=anchor,
                extra={"pending": [p.name for p in pending], "members": len(pods), "events": dict(said)},
                fix=Fix(
                    Action.NONE,
                    "read the events and the PodGroup's scheduling conditions",
                    command=_gang_command(namespace, name),
                ),
            )
        )
    return findings


def _missing_groups(
    live: LiveState, members: dict[Gang, list[PodSummary]], cluster: str, anchor: Location | None
) -> list[Finding]:
    if POD_GROUP.crd_name not in live.crds:
        return []  # the kind is not served: nothing to name (doctor's CRD check says so)
    findings = []
    for (namespace, name), pods in sorted(members.items()):
        pending = _pending(pods)
        if not pending or (namespace, name) in live.gangs.pod_groups:
            continue
        findings.append(
            GANG_GROUP_MISSING.finding(
                Kind.VIOLATION,
                f"{len(pending)} Pending pod(s) in {namespace} ({_named(pending)}) name PodGroup "
                f"{_name(name)} in their pod-group-name, and it does not exist: the scheduler never "
                "places them",
                cluster,
                subject=POD_GROUP.ref(name, namespace),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "create the PodGroup (an external group needs kai.scheduler/skip-podgrouper on the "
                    "pod or its owner), or remove the annotation so the pod-grouper makes one",
                    command=_command(
                        "kubectl -n",
                        (namespace, dns_label),
                        "get podgroups.scheduling.run.ai; "
                        "kubectl -n kai-scheduler logs deployment/pod-grouper --tail=50",
                    ),
                ),
            )
        )
    return findings


# -- topology prerequisites -----------------------------------------------------------------------------------


def topology_findings(live: LiveState, desired: DesiredCluster | None, cluster: str) -> list[Finding]:
    expected = (
        expected_topologies(
            desired.docs["env"].mapping() if desired and "env" in desired.docs else None, desired.addons
        )
        if desired is not None
        else []
    )
    wanted = _referenced(live)
    if not (expected or live.gangs.topologies or wanted):
        return []  # topology-aware scheduling is off
    anchor = (
        desired.locate("env", ("addons", "topologyAwareScheduling", "enabled"))
        if expected and desired is not None
        else None
    )
    findings = [*_expected_findings(live, expected, cluster, anchor)]
    findings += _referenced_findings(live, wanted, {e.topology.name for e in expected}, cluster)
    findings += _drifted_bindings(live, cluster)
    in_play = {t.name: t for t in live.gangs.topologies.values()} | {e.topology.name: e.topology for e in expected}
    findings += _label_findings(live, list(in_play.values()), cluster, anchor)
    findings += _dra_findings(live, cluster, anchor)
    return findings


def _referenced(live: LiveState) -> dict[str, list[PodGroupSummary]]:
    wanted: dict[str, list[PodGroupSummary]] = {}
    for group in live.gangs.pod_groups.values():
        if group.topology:
            wanted.setdefault(group.topology, []).append(group)
    return wanted


def _expected_findings(
    live: LiveState, expected: list[ExpectedTopology], cluster: str, anchor: Location | None
) -> Iterable[Finding]:
    for entry in expected:
        problem = _topology_problem(live.gangs.topologies.get(entry.topology.name), entry.topology)
        if problem:
            yield _topology_finding(entry.topology.name, problem, cluster, anchor, entry.topology)
        if entry.binding is not None:
            problem = _binding_problem(live, entry.binding)
            if problem:
                yield _binding_finding(entry.binding.name, problem, cluster, anchor)


def _topology_problem(live: TopologySummary | None, want: TopologySummary) -> str:
    if live is None:
        return "does not exist"
    if live.levels != want.levels:
        return f"has levels {list(live.levels)}, the stack renders {list(want.levels)}"
    return ""


def _topology_finding(
    name: str, problem: str, cluster: str, anchor: Location | None, want: TopologySummary | None
) -> Finding:
    if want is not None:
        how = (
            "sync the stack's nvcf-kai-topology release (helmfile apply); the levels of a Topology are immutable, "
            "so delete it first when they differ"
        )
    else:
        how = "create the Topology, or correct the topology the workload names"
    return TOPOLOGY_NOT_AS_RENDERED.finding(
        Kind.VIOLATION,
        f'Topology {_name(name)} {problem}: workloads that name it stay Pending ("Requested '
        f'topology {_name(name)} does not exist" when it is missing)',
        cluster,
        subject=TOPOLOGY.ref(name),
        location=anchor,
        fix=Fix(
            Action.NONE, how, command=_command("kubectl get topologies.kai.scheduler", (name, dns_subdomain), "-o yaml")
        ),
    )


def _binding_problem(live: LiveState, want: BindingSummary) -> str:
    if CLUSTER_TOPOLOGY_BINDING.crd_name not in live.crds:
        return (
            f"cannot exist: CRD {CLUSTER_TOPOLOGY_BINDING.crd_name} is not installed (is the Grove operator installed?)"
        )
    have = live.gangs.bindings.get(want.name)
    if have is None:
        return "does not exist"
    problems = []
    if have.levels != want.levels:
        problems.append(f"levels {_pairs(have.levels)}, the stack renders {_pairs(want.levels)}")
    if not set(want.references) <= set(have.references):
        problems.append(
            f"schedulerTopologyBindings {_pairs(have.references)}, the stack renders {_pairs(want.references)}"
        )
    return "has " + " and ".join(problems) if problems else ""


def _pairs(pairs: tuple[tuple[str, str], ...]) -> str:
    return "[" + ", ".join(f"{a}={b}" for a, b in pairs) + "]"


def _binding_finding(name: str, problem: str, cluster: str, anchor: Location | None) -> Finding:
    return BINDING_NOT_AS_RENDERED.finding(
        Kind.VIOLATION,
        f"ClusterTopologyBinding {_name(name)} {problem}: Grove workloads whose topologyName is "
        f"{_name(name)} are "
        'refused at admission ("ClusterTopologyBinding not found") or placed in the wrong domains',
        cluster,
        subject=CLUSTER_TOPOLOGY_BINDING.ref(name),
        location=anchor,
        fix=Fix(
            Action.NONE,
            "sync the stack's nvcf-grove-topology release (helmfile apply)",
            command=_command("kubectl get clustertopologybindings.grove.io", (name, dns_subdomain), "-o yaml"),
        ),
    )


def _referenced_findings(
    live: LiveState, wanted: dict[str, list[PodGroupSummary]], expected: set[str], cluster: str
) -> Iterable[Finding]:
    for name, groups in sorted(wanted.items()):
        if name in live.gangs.topologies or name in expected:
            continue  # present, or already reported against Git
        named = ", ".join(f"{g.namespace}/{g.name}" for g in sorted(groups, key=lambda g: (g.namespace, g.name)))
        yield _topology_finding(name, f"does not exist, and PodGroup(s) {named} name it", cluster, None, None)


def _drifted_bindings(live: LiveState, cluster: str) -> Iterable[Finding]:
    for binding in sorted(live.gangs.bindings.values(), key=lambda b: b.name):
        if binding.drift:
            yield _binding_finding(
                binding.name,
                f"is out of sync with the scheduler's topology, Grove reports ({binding.drift})",
                cluster,
                None,
            )


def _label_findings(
    live: LiveState, topologies: list[TopologySummary], cluster: str, anchor: Location | None
) -> Iterable[Finding]:
    keys = {key for t in topologies for key in t.levels}
    for key in sorted(keys):
        shown = key if label_key(key) is None else repr(key)
        if any(label.partition("=")[0] == key for labels in live.node_labels.values() for label in labels):
            continue
        using = ", ".join(sorted(t.name for t in topologies if key in t.levels))
        labeller = (
            " (the GPU operator's feature discovery labels NVLink nodes with their clique)"
            if key == CLIQUE_LABEL
            else ""
        )
        yield LEVEL_LABEL_MISSING.finding(
            Kind.VIOLATION,
            f"no node of the {live.nodes_total} read is labelled {shown}, a level of Topology "
            f"{using}{labeller}: a gang that requires that level can never be placed",
            cluster,
            location=anchor,
            fix=Fix(
                Action.NONE,
                "label the nodes (install the GPU operator with GFD on NVLink clusters), or drop "
                "the level from the topology",
                command=_command("kubectl get nodes -L", (key, label_key)),
            ),
        )


def _dra_findings(live: LiveState, cluster: str, anchor: Location | None) -> Iterable[Finding]:
    for crd in DRA_CRDS:
        if crd not in live.crds:
            yield DRA_DRIVER_MISSING.finding(
                Kind.VIOLATION,
                f"CRD {crd} is not installed: the NVIDIA GPU DRA driver is missing, so multi-node "
                "NVLink (MNNVL) gangs get no compute domain",
                cluster,
                subject=CUSTOM_RESOURCE_DEFINITION.ref(crd),
                location=anchor,
                fix=Fix(
                    Action.NONE,
                    "install the NVIDIA DRA driver for GPUs (chart nvidia-dra-driver-gpu)",
                    command=f"kubectl get crd {crd}",
                ),
            )


def _shown(value: int | None) -> str:
    return "<none>" if value is None else str(value)
