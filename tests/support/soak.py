"""The self-heal soak scenario on the real API server, shared by tests/real/test_soak.py (30 cycles, asserted) and
bench/soak.py (as many cycles as asked, timed, beside the naive way's count).

Each cycle: a KAI Resource Management double (`project-controller`) server-side applies default-queue's gpu quota,
a KAI operator double (`kai-operator`) kai-config's admission.gpuSharing (both with --force-conflicts, as
controllers do), an unlisted controller (`queue-syncer`) writes back default-parent-queue's memory quota (a fight),
a person's `kubectl patch` of default-parent-queue's cpu limit every `hand_edit_every`th cycle; then the CronJob's
self-heal command (`reconcile --apply --lease-namespace=kai-gitops`, with the audit log it keeps across runs).

The naive way is counted, not run (it would change what the next cycle sees): a plain apply of Git's values every
cycle writes every field that differs from Git, so each cycle it writes what kai-gitops planned plus every field
another manager holds (the cycle's KAI-D-008 and KAI-D-009 fields), and the other managers write those back before
the next cycle: each such write after a field's first is an oscillation.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.kai_cluster import CHILD, PARENT, KaiCluster
from tests.support.real_ownership import KRM_APPLY, server_side_apply

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
HELD_RULES = ("KAI-D-008", "KAI-D-009")
Write = tuple[str, str, tuple[str, ...]]


@dataclass
class Soak:
    cycles: int = 0
    hand_edits: int = 0
    undone: int = 0  # hand edits found undone right after their cycle's run
    last: dict[str, Any] = field(default_factory=dict)  # the last cycle's report
    audit: list[dict[str, Any]] = field(default_factory=list)
    run_seconds: list[float] = field(default_factory=list)  # each cycle's `reconcile --apply`
    cycle_seconds: list[float] = field(default_factory=list)  # each whole cycle, the doubles' writes included
    naive_writes: Counter[Write] = field(default_factory=Counter)
    naive_to_others: Counter[Write] = field(default_factory=Counter)
    planned: Counter[Write] = field(default_factory=Counter)  # kai-gitops's plans, all cycles

    def writes(self) -> Counter[Write]:
        """kai-gitops's field writes, from its audit log's `applied` lines."""
        return Counter(
            (line["object"]["kind"], line["object"]["name"], tuple(f["path"]))
            for line in self.audit
            if line["result"] == "applied"
            for f in line["fields"]
        )

    def fights(self) -> list[dict[str, Any]]:
        return [f for f in self.last.get("findings", []) if f["rule"] == "KAI-D-009"]

    def counts(self) -> dict[str, Any]:
        writes = self.writes()
        others = {
            key
            for key in writes
            if any(
                key[:2] == (f["subject"]["kind"], f["subject"]["name"]) and list(key[2]) == x["path"]
                for f in self.last["findings"]
                if f["rule"] in HELD_RULES
                for x in f["details"]["fields"]
            )
        }
        return {
            "cycles": self.cycles,
            "hand_edits": self.hand_edits,
            "hand_edits_undone_next_cycle": self.undone,
            "writes": sum(1 for line in self.audit if line["result"] == "applied"),
            "fields_written": sum(writes.values()),
            "writes_by_owner": _by_owner(writes, others),
            "fields_written_twice_not_after_a_hand_edit": sum(
                n - 1 for key, n in writes.items() if key[2] != HAND and n > 1
            ),
            "fights": len(self.fights()),
            "fight_writes_before_caught": writes[("Queue", PARENT, FOUGHT)],
            "label_writes": sum(n for key, n in writes.items() if key[0] == "Node"),
        }

    def naive(self) -> dict[str, Any]:
        to_others = sum(self.naive_to_others.values())
        return {
            "field_writes": sum(self.naive_writes.values()),
            "writes_to_fields_other_managers_own": to_others,
            "oscillations": to_others - len(self.naive_to_others),
        }


def _by_owner(writes: Counter[Write], others: set[Write]) -> dict[str, int]:
    """Whose field each kai-gitops write went to: a hand edit's, the fought one's (before it was caught), the rest
    fields nobody else holds (Helm's install-only default queues, Git's own)."""
    owners: Counter[str] = Counter()
    for key, n in writes.items():
        owners[
            "person (hand edit undone)"
            if key[2] == HAND
            else "another manager (the fight, before caught)"
            if key in others
            else "Git's own"
        ] += n
    return dict(owners)


def _held(report: dict[str, Any]) -> list[Write]:
    return [
        (f["subject"]["kind"], f["subject"]["name"], tuple(x["path"]))
        for f in report["findings"]
        if f["rule"] in HELD_RULES
        for x in f["details"]["fields"]
    ]


def _planned(report: dict[str, Any]) -> list[Write]:
    return [
        (c["object"]["kind"], c["object"]["name"], tuple(f["path"]))
        for c in report["plan"]["changes"]
        for f in c["fields"]
    ]


def run_soak(cluster: KaiCluster, cycles: int, *, hand_edit_every: int = HAND_EDIT_EVERY) -> Soak:
    """`cycles` self-heal cycles on `cluster` (its trapped KAI installed here); asserts only that each run ran."""
    cluster.install_trapped()
    audit_file: Path = cluster.tmp / "audit.jsonl"
    soak = Soak(cycles=cycles)
    for cycle in range(1, cycles + 1):
        started = time.perf_counter()
        for manager, manifest in (("project-controller", KRM_APPLY), ("kai-operator", OPERATOR_APPLY)):
            done = server_side_apply(cluster, manager, manifest, "--force-conflicts")
            assert done.returncode == 0, done.stderr
        cluster.kubectl(
            "patch",
            "queues.scheduling.run.ai",
            PARENT,
            "--type",
            "merge",
            "--field-manager",
            "queue-syncer",
            "-p",
            '{"spec": {"resources": {"memory": {"quota": 3}}}}',
        )
        edited = cycle % hand_edit_every == 0
        if edited:
            cluster.kubectl(
                "patch",
                "queues.scheduling.run.ai",
                PARENT,
                "--type",
                "merge",
                "-p",
                '{"spec": {"resources": {"cpu": {"limit": 7}}}}',
            )
            soak.hand_edits += 1
        run_started = time.perf_counter()
        result = cluster.run(
            "reconcile",
            "--apply",
            "--lease-namespace=kai-gitops",
            "--audit-log",
            audit_file,
            "-o",
            "json",
            "--fail-on=error",
        )
        soak.run_seconds.append(time.perf_counter() - run_started)
        assert result.code in (0, 2), result
        soak.last = json.loads(result.out)
        held, planned = _held(soak.last), _planned(soak.last)
        soak.naive_writes.update([*planned, *held])
        soak.naive_to_others.update(held)
        if edited and cluster.triples(PARENT)["cpu"]["limit"] == -1:
            soak.undone += 1
        soak.cycle_seconds.append(time.perf_counter() - started)
        soak.planned.update(planned)
    soak.audit = [json.loads(line) for line in audit_file.read_text().splitlines()]
    # A field planned before it was known to be held (the fight's first write, before any history) was another
    # manager's then too: the naive way's write of it counts as one to another manager's field.
    soak.naive_to_others.update({key: n for key, n in soak.planned.items() if key in set(_held(soak.last))})
    return soak


__all__ = ["CHILD", "FOUGHT", "GPU_QUOTA", "GPU_SHARING", "HAND", "PARENT", "Soak", "run_soak"]
