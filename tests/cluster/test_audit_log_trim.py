"""--audit-log-max-bytes: a kept audit log is bounded, and keeps what controller-fight detection reads (each field's
last `applied` write), so the self-heal CronJob's log on its claim neither grows without end nor forgets a write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.reconcile.audit import AuditLog, read_own_writes
from tests.support.reconcile_support import demo_cluster

QUEUE = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "namespace": None}
CPU, GPU = ["spec", "resources", "cpu", "quota"], ["spec", "resources", "gpu", "quota"]


def line(name: str, *paths: list[str], result: str = "applied", minute: int = 0, cluster: str = "lab") -> str:
    return (
        json.dumps(
            {
                "time": f"2026-11-30T10:{minute:02d}:00.000000Z",
                "planId": "p",
                "cluster": cluster,
                "server": "https://x",
                "holder": "h",
                "object": {**QUEUE, "name": name},
                "operation": "update",
                "fields": [{"path": p, "before": 0, "after": -1} for p in paths],
                "result": result,
                "error": None,
                "resourceVersion": "7",
                "previousManagers": [],
                "rules": ["KAI-D-002"],
            }
        )
        + "\n"
    )


def history() -> str:
    """Sixty runs: the same two fields of queue a written over and over, one of b written once, long ago."""
    old = [line("b", GPU, minute=0), line("a", CPU, GPU, result="started", minute=0)]
    runs = [line("a", CPU, GPU, minute=m) + line("a", CPU, result="failed", minute=m) for m in range(1, 59)]
    return "".join([*old, *runs, line("a", CPU, minute=59), '{"time": "cut by a crash'])


def latest(path: Path) -> dict[tuple[str, str, tuple[str, ...]], str]:
    found: dict[tuple[str, str, tuple[str, ...]], str] = {}
    for write in read_own_writes(str(path)):
        key = (write.cluster, write.name, write.path)
        found[key] = max(found.get(key, ""), write.time.isoformat())
    return found


def audit(path: Path, max_bytes: int) -> AuditLog:
    return AuditLog(str(path), plan_id="p", cluster="lab", server="https://x", holder="h", max_bytes=max_bytes)


def test_past_the_cap_only_each_fields_last_write_is_kept_and_fight_detection_reads_the_same(tmp_path: Path) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(history())
    log.chmod(0o640)
    before = latest(log)
    kept = audit(log, 1000)
    kept.trim()
    kept.close()
    lines = log.read_text().splitlines()
    assert latest(log) == before  # every field's last write, at its time
    assert [(json.loads(x)["object"]["name"], json.loads(x)["time"][14:16]) for x in lines] == [
        ("b", "00"),
        ("a", "58"),
        ("a", "59"),
    ]  # a's gpu last written at :58, its cpu at :59
    assert log.stat().st_mode & 0o777 == 0o640


@pytest.mark.parametrize("max_bytes", [0, 10**9])
def test_a_log_under_its_cap_or_without_one_is_left_as_it_is(tmp_path: Path, max_bytes: int) -> None:
    log = tmp_path / "audit.jsonl"
    log.write_text(history())
    kept = audit(log, max_bytes)
    kept.trim()
    kept.close()
    assert log.read_text() == history()


def test_reconcile_apply_trims_the_log_before_its_own_lines_and_appends_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    log = tmp_path / "audit.jsonl"
    log.write_text(history().replace('"cluster": "lab"', '"cluster": "prod-addon"'))
    for demo in demo_cluster(tmp_path):
        code, report, err = demo.reconcile_json("--apply", "--audit-log", log, "--audit-log-max-bytes", 1000)
        assert code == 2 and report["apply"]["ok"], err  # the demo's findings remain
    entries = [json.loads(x) for x in log.read_text().splitlines()]
    old = [e for e in entries if e["planId"] == "p"]
    assert [(e["object"]["name"], e["time"][14:16]) for e in old] == [("b", "00"), ("a", "58"), ("a", "59")]
    ours = [e for e in entries if e["planId"] != "p"]
    assert entries[:3] == old and ours and {"started", "applied"} <= {e["result"] for e in ours}
