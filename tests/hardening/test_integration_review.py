"""Review of the merged 'safe to leave on' and hardening work: where two of its parts met.

- a field another controller owns and that is security-sensitive is the controller's (KAI-D-008), not a person's
  `kubectl patch` (KAI-S-001), which would start the fight the first avoids;
- the command a person copies from a plan quotes Git's values (a `'` in a value stayed a shell escape);
- a snapshot whose documents name two clusters is refused (the first one's name was taken);
- `--live-snapshot` reads the file once (it was read twice, and the second read's cluster was never checked);
- the tool's own audit log is read to a bound (the newest 64 MiB), never followed through a link;
- a writer's paged list stops on a repeated continue token (it looped forever).
"""

from __future__ import annotations

import copy
import json
import shlex
import subprocess
from pathlib import Path

import pytest

from reconciler.core.errors import UserError
from reconciler.core.resources import CONFIG
from reconciler.plans.plan import FieldChange
from reconciler.reconcile import audit
from reconciler.reconcile.planner import _left_to_a_person
from reconciler.sources import snapshot
from tests.support.checks_ownership import LATER, managed
from tests.support.reconcile_kai_config import GOLDEN
from tests.support.reconcile_support import DEMO, demo_cluster


def test_an_owned_sensitive_field_is_the_controllers_not_a_persons_patch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KAI_GITOPS_LEASE_DURATION_S", "2")
    spec = copy.deepcopy(GOLDEN)
    spec["admission"]["service"]["image"]["repository"] = "evil.example/kai"
    fields = {"f:spec": {"f:admission": {"f:service": {"f:image": {"f:repository": {}}}}}}
    config = {
        "apiVersion": "kai.scheduler/v1",
        "kind": "Config",
        "metadata": {
            "name": "kai-config",
            "managedFields": [managed("kai-config-deployer", fields, time=LATER, operation="Apply")],
        },
        "spec": spec,
    }
    items = [*[i for i in DEMO.prod_addon_snapshot() if i["kind"] != "Config"], config]
    for cluster in demo_cluster(tmp_path, items):
        _, report, _ = cluster.reconcile_json()
        rules = {f["rule"] for f in report["findings"]}
        assert "KAI-D-008" in rules
        operator = report["plan"]["operator"]
        assert not any(item["rule"] == "KAI-S-001" for item in operator), operator
        assert not any("image.repository" in (item.get("command") or "") for item in operator), operator
        assert not any("image" in json.dumps(c) and c["ref"]["kind"] == "Config" for c in report["plan"]["changes"])


def test_a_persons_patch_command_keeps_a_quote_in_a_value_a_value(tmp_path: Path) -> None:
    evil = "ns'$(touch " + str(tmp_path / "pwned") + ")'"
    item = _left_to_a_person(
        CONFIG.ref("kai-config"), [FieldChange(("spec", "nodeScaleAdjuster", "args", "nodeScaleNamespace"), "x", evil)]
    )
    assert item.command is not None
    words = shlex.split(item.command)
    assert words[:3] == ["kubectl", "patch", "configs.kai.scheduler"] and json.loads(words[-1])
    subprocess.run(["bash", "-c", item.command.replace("kubectl", "true", 1)], check=True, timeout=30)
    assert not (tmp_path / "pwned").exists()


def _list(uid: str, queues: int) -> str:
    items = "".join(
        f"- apiVersion: scheduling.run.ai/v2\n  kind: Queue\n  metadata: {{name: q{i}}}\n"
        f"  spec: {{resources: {{gpu: {{quota: 1}}}}}}\n"
        for i in range(queues)
    )
    return f"apiVersion: v1\nkind: List\nmetadata:\n  annotations:\n    {snapshot.CLUSTER_UID_ANNOTATION}: {uid}\n" + (
        f"items:\n{items}" if items else "items: []\n"
    )


@pytest.mark.parametrize("queues", [1, 2500], ids=["whole", "streamed"])
def test_a_snapshot_of_two_clusters_is_refused(tmp_path: Path, queues: int) -> None:
    path = tmp_path / "two.yaml"
    path.write_text(_list("aaaa-1111", 0) + "---\n" + _list("bbbb-2222", queues))
    assert queues == 1 or path.stat().st_size > snapshot.STREAM_ABOVE_BYTES
    with pytest.raises(UserError, match="name two clusters"):
        snapshot.read_snapshot_queues(str(path))


def test_the_live_snapshot_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "one.yaml"
    path.write_text(_list("aaaa-1111", 3))
    reads: list[str] = []
    each = snapshot._each_item
    monkeypatch.setattr(snapshot, "_each_item", lambda p, consume: reads.append(p) or each(p, consume))
    queues, _ = snapshot.read_live_snapshot(str(path))
    assert reads == [str(path)] and queues.cluster_uid == "aaaa-1111" and len(queues.queues) == 3


def _applied(name: str) -> bytes:
    return (
        json.dumps(
            {
                "result": "applied",
                "time": "2026-12-01T10:00:00Z",
                "cluster": "lab",
                "object": {"kind": "Queue", "name": name},
                "fields": [{"path": ["spec", "resources", "gpu", "quota"]}],
            }
        ).encode()
        + b"\n"
    )


def test_the_own_audit_log_is_read_to_its_newest_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit, "OWN_WRITES_TAIL", 4096)
    log = tmp_path / "audit.jsonl"
    log.write_bytes(_applied("old") * 200 + b"x" * (2 * 1024 * 1024) + b"\n" + _applied("new") * 3)
    names = {w.name for w in audit.read_own_writes(str(log))}
    assert names == {"new"}
    link = tmp_path / "link.jsonl"
    link.symlink_to(log)
    assert audit.read_own_writes(str(link)) == ()


def test_a_writers_list_stops_on_a_repeated_continue_token() -> None:
    from reconciler.sources.cluster.client import ApiError, ClusterClient

    class Looping(ClusterClient):
        def __init__(self) -> None:  # no server: only the paging loop is exercised
            from reconciler.sources.cluster.client import ReadSettings

            self.settings = ReadSettings()

        def json(
            self,
            method: str,
            path: str,
            body: object = None,
            *,
            content_type: str | None = None,
            query: dict[str, str] | None = None,
        ) -> dict[str, object]:
            return {"items": [{"metadata": {"name": "n"}}], "metadata": {"continue": "same"}}

    with pytest.raises(ApiError, match="repeated a continue token"):
        Looping().items("/api/v1/nodes", {"limit": "500"})
