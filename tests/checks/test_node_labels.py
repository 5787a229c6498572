"""The per-node label change that settles the shared-cluster rules (NVCA-S-010…013), for each intent."""

from __future__ import annotations

from reconciler.checks.node_labels import NodeLabelChange, label_changes, unresolvable_nodes
from reconciler.model.config import SharedClusterIntent
from tests.support.helpers import live_state, node, obj


def _live(*nodes: dict[str, object]) -> object:
    return live_state(nodes)


def test_dedicated_removes_the_label_from_every_node_that_has_it() -> None:
    live = _live(node("a", "true"), node("b", "True"), node("c"))
    assert label_changes(SharedClusterIntent("dedicated"), live) == [
        NodeLabelChange("a", "true", None, "NVCA-S-010"),
        NodeLabelChange("b", "True", None, "NVCA-S-012"),
    ]


def test_shared_with_nodes_labels_them_and_unlabels_the_rest() -> None:
    live = _live(node("a"), node("b", "yes"), node("c", "true"), node("d", "true"))
    intent = SharedClusterIntent("shared", ("a", "b", "c"))
    assert label_changes(intent, live) == [
        NodeLabelChange("a", None, "true", "NVCA-S-011"),
        NodeLabelChange("b", "yes", "true", "NVCA-S-012"),
        NodeLabelChange("d", "true", None, "NVCA-S-013"),
    ]


def test_shared_with_a_selector_resolves_it_against_node_labels() -> None:
    pooled = obj("v1", "Node", "p1", metadata={"labels": {"pool": "nvcf"}})
    other = obj("v1", "Node", "o1", metadata={"labels": {"pool": "batch", "nvca.nvcf.nvidia.io/schedule": "true"}})
    changes = label_changes(SharedClusterIntent("shared", (), {"pool": "nvcf"}), _live(pooled, other))
    assert changes == [
        NodeLabelChange("o1", "true", None, "NVCA-S-013"),
        NodeLabelChange("p1", None, "true", "NVCA-S-011"),
    ]


def test_shared_without_nodes_or_selector_changes_nothing() -> None:
    assert label_changes(SharedClusterIntent("shared"), _live(node("a", "true"), node("b"))) == []


def test_intended_nodes_the_cluster_lacks_are_left_to_the_operator() -> None:
    intent = SharedClusterIntent("shared", ("a", "ghost"))
    live = _live(node("a"))
    assert [c.node for c in label_changes(intent, live)] == ["a"]
    assert unresolvable_nodes(intent, live) == ["ghost"]
