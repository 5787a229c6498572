"""`reconcile --apply` with everything real: the API server's validation of Events, its server-side dry-run
and admission, its 409 on a resourceVersion precondition, managedFields as it records them, and a SIGTERM
while many writes are in flight. The cluster is the seed's trap (tests/real/kai_cluster.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kubernetes
import pytest

from tests.real.kai_cluster import CHILD, PARENT, KaiCluster
from tests.support.envtest import EnvTest

SCHEDULE = "nvca.nvcf.nvidia.io/schedule"
QUOTAS = {f"{r}.quota" for r in ("cpu", "gpu", "memory")}


@pytest.fixture
def cluster(envtest: EnvTest, tmp_path: Path) -> Iterator[KaiCluster]:
    made = KaiCluster(envtest, tmp_path)
    try:
        made.install_trapped()
        yield made
    finally:
        made.close()



def audit_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []



def owned(entry: dict[str, Any], prefix: tuple[str, ...]) -> set[str]:
    """The leaf fields under `prefix` a managedFields entry owns, dotted (f:cpu/f:quota -> cpu.quota)."""
    node: Any = entry.get("fieldsV1") or {}
    for key in prefix:
        node = node.get(f"f:{key}") or {}
    leaves: set[str] = set()

    def walk(tree: dict[str, Any], path: tuple[str, ...]) -> None:
        for key, sub in tree.items():
            if key == ".":
                continue
            here = (*path, key.removeprefix("f:"))
            if sub:
                walk(sub, here)
            else:
                leaves.add(".".join(here))

    walk(node, ())
    return leaves



def ours(events: list[Any]) -> list[Any]:
    """kai-gitops' Events (the API server's own controllers write some in `default` too)."""
    return [e for e in events if e.reporting_controller == "kai-gitops"]



def managers(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["manager"]: e for e in obj["metadata"]["managedFields"]}



def test_events_pass_the_servers_validation_and_kubectl_describe_shows_them(cluster: KaiCluster) -> None:
    result = cluster.run("reconcile", "--apply")
    assert "Apply complete: 2 applied" in result.out and "warning:" not in result.out, result
    events = ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items)
    assert sorted(e.regarding.name for e in events) == sorted([CHILD, PARENT])
    for event in events:
        queue = cluster.queue(event.regarding.name)
        assert (event.reason, event.type, event.action) == ("QueueUpdated", "Normal", "Update")
        assert (event.reporting_controller, event.regarding.kind) == ("kai-gitops", "Queue")
        assert event.regarding.uid == queue["metadata"]["uid"]
        assert "spec.resources.cpu.quota 0 → -1" in event.note and "taken over from helm" in event.note
    described = cluster.kubectl("describe", "queue", CHILD)
    events_block = described.split("Events:", 1)[1]
    assert "QueueUpdated" in events_block and "kai-gitops" in events_block, described
    listed = cluster.kubectl("get", "events", "-n", "default", "--field-selector", f"involvedObject.name={PARENT}")
    assert "QueueUpdated" in listed



def test_events_on_nodes_with_the_longest_names_pass_the_servers_validation(envtest: EnvTest, tmp_path: Path) -> None:
    # The API server keeps 58 characters of a generateName: a 253-character name (the most a Node may have)
    # and a name whose 58th character is a dot must both give a generateName it accepts.
    longest = ".".join(["n" * 63] * 3 + ["n" * 61])
    dotted = "g" * 57 + ".rack-7"
    cluster = KaiCluster(envtest, tmp_path, shared_selector={"nvidia.com/gpu.present": "true"})
    try:
        cluster.install_trapped()
        for name in (longest, dotted):
            cluster.add_node(name, {"nvidia.com/gpu.present": "true"})
        result = cluster.run("reconcile", "--apply")
        assert "Apply complete: 4 applied" in result.out and "warning:" not in result.out, result
        events = ours(kubernetes.client.EventsV1Api(cluster.client).list_namespaced_event("default").items)
        assert sorted(e.regarding.name for e in events if e.regarding.kind == "Node") == sorted([longest, dotted])
        assert all(e.reason == "NodeLabelChanged" for e in events if e.regarding.kind == "Node")
        node = json.loads(cluster.kubectl("get", "node", dotted, "-o", "json", "--show-managed-fields"))
        assert owned(managers(node)["kai-gitops"], ()) == {f"metadata.labels.{SCHEDULE}"}   # all it owns
    finally:
        cluster.close()
