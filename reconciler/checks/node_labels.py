"""The schedule label each node should carry, from Git's intent and live labels (docs/policies.md#shared-cluster-mode).

The NVCA-S rules judge the labels and name the nodes; this computes the per-node change that settles
them, so `reconcile` can apply it: set `nvca.nvcf.nvidia.io/schedule=true` on every intended node that
lacks the exact value, remove the label from every other node that has it. With a "shared" intent whose
nodes are unknown (no list, no selector) nothing is removed: there is no intent to remove against. Without
a declared intent nothing changes at all (NVCA-S-003 says which line to add): one label turns NVCA's Shared
Cluster mode on, and removing the last one turns it off.
"""

from __future__ import annotations

from dataclasses import dataclass

from reconciler.checks.facts import selector_matches
from reconciler.findings.builtin_rules import SHARED_INTENT_UNDECLARED
from reconciler.findings.finding import Action, Finding, Fix, Kind
from reconciler.findings.policy_rules import LABEL_RULES as LABEL_RULE_OF
from reconciler.findings.policy_rules import LabelChange
from reconciler.model.config import SharedClusterIntent
from reconciler.model.desired import DesiredCluster
from reconciler.model.live import SCHEDULE_LABEL, LiveState

# Ids of the rules whose findings a label change settles (see policies/kai_gitops/rules/shared/).
LABEL_RULES = frozenset(rule.id for rule in LABEL_RULE_OF.values())


@dataclass(frozen=True, order=True)
class NodeLabelChange:
    node: str
    before: str | None  # the raw label value, None when absent
    after: str | None  # "true", or None to remove the label
    rule: str  # the rule whose finding this settles


# The line NVCA-S-003 asks for, in the cluster's entry of kai-gitops.yaml.
DEDICATED_LINE = "sharedCluster: {intent: dedicated}"
SHARED_LINE = 'sharedCluster: {intent: shared, nodeSelector: {nvidia.com/gpu.present: "true"}}'


def intent_findings(desired: DesiredCluster) -> list[Finding]:
    """NVCA-S-003: the cluster's entry declares no shared-cluster intent, so no node label is ever written."""
    if desired.shared.declared:
        return []
    entry = ("clusters", desired.config.index)
    return [
        SHARED_INTENT_UNDECLARED.finding(
            Kind.VIOLATION,
            f"cluster {desired.name} declares no shared-cluster intent, so kai-gitops changes no "
            f"{SCHEDULE_LABEL} node label: add `{DEDICATED_LINE}` to its entry when NVCF owns every "
            f"node, or `{SHARED_LINE}` (or nodes: [...]) when it shares the cluster",
            desired.name,
            location=desired.locate("config", (*entry, "name")),
            fix=Fix(
                Action.NONE, f"add `{DEDICATED_LINE}` or `{SHARED_LINE}` to the cluster's entry in kai-gitops.yaml"
            ),
        )
    ]


def label_changes(intent: SharedClusterIntent, live: LiveState) -> list[NodeLabelChange]:
    """One change per node whose label differs from the intent; nodes the cluster lacks are left out, and with
    no declared intent there is none."""
    if not intent.declared:
        return []
    intended = _intended(intent, live)
    changes: list[NodeLabelChange] = []
    for node in sorted(live.node_labels):
        before = live.schedule_labels.get(node)
        want = _wanted(node, before, intended)
        if want != before:
            changes.append(NodeLabelChange(node, before, want, _rule(before, want, intent)))
    return changes


def unresolvable_nodes(intent: SharedClusterIntent, live: LiveState) -> list[str]:
    """Intended nodes the cluster does not have: no label change can settle them (the operator must)."""
    intended = _intended(intent, live) or set()
    return sorted(intended - set(live.node_labels))


def _intended(intent: SharedClusterIntent, live: LiveState) -> set[str] | None:
    if intent.intent != "shared":
        return set()
    if not intent.nodes and not intent.node_selector:
        return None  # shared, but which nodes is not said: add nothing, remove nothing
    names = set(intent.nodes)
    if intent.node_selector:
        names |= set(selector_matches(live, intent.node_selector))
    return names


def _wanted(node: str, before: str | None, intended: set[str] | None) -> str | None:
    if intended is None:
        return before
    return "true" if node in intended else None


def _rule(before: str | None, after: str | None, intent: SharedClusterIntent) -> str:
    """The id of the rule whose finding this node's change settles."""
    return LABEL_RULE_OF[_label_change(before, after, intent)].id


def _label_change(before: str | None, after: str | None, intent: SharedClusterIntent) -> LabelChange:
    if before is not None and before != "true":
        return LabelChange.NOT_EXACTLY_TRUE
    if after == "true":
        return LabelChange.SHARED_UNLABELLED
    return LabelChange.DEDICATED_LABELLED if intent.intent != "shared" else LabelChange.SHARED_EXTRA


__all__ = ["LABEL_RULES", "SCHEDULE_LABEL", "NodeLabelChange", "intent_findings", "label_changes", "unresolvable_nodes"]
