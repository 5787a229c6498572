"""Self-heal left on, on the real API server, for 30 cycles (CI-sized): the trap chart's real Helm release, a KAI
Resource Management double that owns default-queue's gpu quota (real server-side apply, every cycle), a KAI operator
double that owns kai-config's admission.gpuSharing (the same), an unlisted controller that writes back what
kai-gitops writes (a fight), and a person's `kubectl patch` every sixth cycle; each cycle then runs the CronJob's
self-heal command (`reconcile --apply --lease-namespace=kai-gitops`, with the audit log it keeps across runs).

It shows: every hand edit undone within one cycle, no write to a field another controller owns, no field written
twice by kai-gitops except to undo a hand edit, the fight caught after one write, no node label written, and as
many kai-gitops Events as applied audit lines. The counts are printed as one JSON line (pytest -s). The scenario is
tests/support/soak.py, which bench/soak.py runs for longer, timed, beside the naive way."""

from __future__ import annotations

import json

import kubernetes

from tests.support.kai_cluster import KaiCluster
from tests.support.soak import CHILD, FOUGHT, GPU_QUOTA, GPU_SHARING, HAND, PARENT, run_soak

CYCLES = 30


def test_thirty_self_heal_cycles_undo_hand_edits_and_never_fight(cluster: KaiCluster) -> None:
    soak = run_soak(cluster, CYCLES)
    assert soak.undone == soak.hand_edits > 0, "a hand edit stood after its cycle"
    writes = soak.writes()
    assert writes[("Queue", CHILD, GPU_QUOTA)] == 0 and writes[("Config", "kai-config", GPU_SHARING)] == 0
    assert writes[("Queue", PARENT, HAND)] == soak.hand_edits  # once per hand edit, never more
    assert writes[("Queue", PARENT, FOUGHT)] == 1  # the fight is fed once, then caught
    assert all(n == 1 for key, n in writes.items() if key[2] != HAND), writes
    assert not [w for w in writes if w[0] == "Node"]
    last = soak.last
    assert [(f["subject"]["name"], [x["manager"] for x in f["details"]["fields"]]) for f in soak.fights()] == [
        (PARENT, ["queue-syncer"])
    ]
    owned = {
        (f["subject"]["name"], x["manager"])
        for f in last["findings"]
        if f["rule"] == "KAI-D-008"
        for x in f["details"]["fields"]
    }
    assert owned == {(CHILD, "project-controller"), ("kai-config", "kai-operator")}
    assert cluster.triples(CHILD)["gpu"]["quota"] == 4
    events = [
        e
        for e in kubernetes.client.EventsV1Api(cluster.client).list_event_for_all_namespaces().items
        if e.reporting_controller == "kai-gitops"
    ]
    changes = [line for line in soak.audit if line["result"] == "applied"]
    assert len(events) == len(changes)
    counts = soak.counts()
    assert counts["fields_written_twice_not_after_a_hand_edit"] == 0 and counts["label_writes"] == 0
    print(json.dumps({**counts, "events": len(events)}))
