"""Self-heal left on, on the real API server, for 30 cycles (CI-sized): the trap chart's real Helm release, a KAI
Resource Management double that owns default-queue's gpu quota (real server-side apply, every cycle), a KAI operator
double that owns kai-config's admission.gpuSharing (the same), an unlisted controller that writes back what
kai-gitops writes (a fight), and a person's `kubectl patch` every sixth cycle; each cycle then runs the CronJob's
self-heal command (`reconcile --apply --lease-namespace=kai-gitops`, with the audit log it keeps across runs).

It shows: every hand edit undone within one cycle, no write to a field another controller owns, no field written
twice by kai-gitops except to undo a hand edit, the fight caught after one write, no node label written, and as
many kai-gitops Events as applied audit lines. The counts are printed as one JSON line (pytest -s)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import kubernetes

from tests.real.kai_cluster import CHILD, PARENT, KaiCluster
from tests.real.test_ownership import KRM_APPLY, server_side_apply

CYCLES = 30
HAND_EDIT_EVERY = 6
OPERATOR_APPLY = """\
apiVersion: kai.scheduler/v1
kind: Config
metadata:
  name: kai-config
spec:
  admission:
    gpuSharing: true
"""
GPU_QUOTA, GPU_SHARING = ("spec", "resources", "gpu", "quota"), ("spec", "admission", "gpuSharing")
FOUGHT, HAND = ("spec", "resources", "memory", "quota"), ("spec", "resources", "cpu", "limit")


def applied(audit: list[dict[str, Any]]) -> list[tuple[str, str, tuple[str, ...]]]:
    return [(line["object"]["kind"], line["object"]["name"], tuple(f["path"])) for line in audit
            if line["result"] == "applied" for f in line["fields"]]


def test_thirty_self_heal_cycles_undo_hand_edits_and_never_fight(cluster: KaiCluster) -> None:
    cluster.install_trapped()
    audit_file = cluster.tmp / "audit.jsonl"
    hand_edits = undone = 0
    last: dict[str, Any] = {}
    for cycle in range(1, CYCLES + 1):
        for manager, manifest in (("project-controller", KRM_APPLY), ("kai-operator", OPERATOR_APPLY)):
            done = server_side_apply(cluster, manager, manifest, "--force-conflicts")
            assert done.returncode == 0, done.stderr
        cluster.kubectl("patch", "queues.scheduling.run.ai", PARENT, "--type", "merge", "--field-manager",
                        "queue-syncer", "-p", '{"spec": {"resources": {"memory": {"quota": 3}}}}')
        edited = cycle % HAND_EDIT_EVERY == 0
        if edited:
            cluster.kubectl("patch", "queues.scheduling.run.ai", PARENT, "--type", "merge", "-p",
                            '{"spec": {"resources": {"cpu": {"limit": 7}}}}')
            hand_edits += 1
        result = cluster.run("reconcile", "--apply", "--lease-namespace=kai-gitops", "--audit-log", audit_file,
                             "-o", "json", "--fail-on=error")
        assert result.code in (0, 2), result
        last = json.loads(result.out)
        if edited:
            assert cluster.triples(PARENT)["cpu"]["limit"] == -1, f"cycle {cycle}: the hand edit stands"
            undone += 1

    audit = [json.loads(line) for line in audit_file.read_text().splitlines()]
    writes = Counter(applied(audit))
    assert writes[("Queue", CHILD, GPU_QUOTA)] == 0 and writes[("Config", "kai-config", GPU_SHARING)] == 0
    assert writes[("Queue", PARENT, HAND)] == hand_edits                 # once per hand edit, never more
    assert writes[("Queue", PARENT, FOUGHT)] == 1                         # the fight is fed once, then caught
    assert all(n == 1 for key, n in writes.items() if key[2] != HAND), writes
    assert not [w for w in writes if w[0] == "Node"]
    fights = [f for f in last["findings"] if f["rule"] == "KAI-D-009"]
    assert [(f["subject"]["name"], [x["manager"] for x in f["details"]["fields"]]) for f in fights] == [
        (PARENT, ["queue-syncer"])]
    owned = {(f["subject"]["name"], x["manager"]) for f in last["findings"] if f["rule"] == "KAI-D-008"
             for x in f["details"]["fields"]}
    assert owned == {(CHILD, "project-controller"), ("kai-config", "kai-operator")}
    assert cluster.triples(CHILD)["gpu"]["quota"] == 4
    events = [e for e in kubernetes.client.EventsV1Api(cluster.client).list_event_for_all_namespaces().items
              if e.reporting_controller == "kai-gitops"]
    changes = [line for line in audit if line["result"] == "applied"]
    assert len(events) == len(changes)
    print(json.dumps({"cycles": CYCLES, "hand_edits": hand_edits, "hand_edits_undone_next_cycle": undone,
                      "writes": len(changes), "fields_written": sum(writes.values()),
                      "writes_to_fields_other_controllers_own": 0, "fields_written_twice_not_after_a_hand_edit": 0,
                      "fights": len(fights), "fight_writes_before_caught": writes[("Queue", PARENT, FOUGHT)],
                      "label_writes": 0, "events": len(events)}))
