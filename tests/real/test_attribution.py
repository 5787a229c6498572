"""Attribution on the real API server: the managedFields it records for the real `kubectl edit`, `kubectl label`
and `helm upgrade` name who last set each drifted field, live and from a snapshot (docs/policies.md#who-changed-it)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.support.helpers import run_cli
from tests.support.kai_cluster import CHILD, KaiCluster
from tests.support.real_attribution import TEAM_CHART
from tests.support.tools import require_tool

SCHEDULE = "nvca.nvcf.nvidia.io/schedule"
# What `kubectl edit` runs as $EDITOR: rewrites default-queue's gpu limit in the file kubectl hands it.
EDITOR_SCRIPT = """\
import sys
import yaml
path = sys.argv[-1]
with open(path) as f:
    queue = yaml.safe_load(f)
queue["spec"]["resources"]["gpu"]["limit"] = 8
with open(path, "w") as f:
    yaml.safe_dump(queue, f)
"""


def editor(tmp: Path) -> str:
    script = tmp / "edit-queue"
    script.write_text(f"#!{sys.executable}\n{EDITOR_SCRIPT}")
    script.chmod(0o755)
    return str(script)


def findings(cluster: KaiCluster, *extra: Any) -> list[dict[str, Any]]:
    result = cluster.run("diff", "-o", "json", *extra)
    assert result.code == 2, result
    return list(json.loads(result.out)["findings"])


def attribution(found: list[dict[str, Any]], rule: str, subject: str | None = None) -> dict[str, dict[str, Any]]:
    finding = next(f for f in found if f["rule"] == rule and (subject is None or f["subject"]["name"] == subject))
    return {a["field"]: a for a in finding["attribution"]}


def recent(stamp: str | None, since: float) -> bool:
    """Written by the server during this test (managedFields times are whole seconds)."""
    return stamp is not None and since - 1 <= datetime.fromisoformat(stamp).timestamp() <= time.time() + 1


def test_kubectl_edit_and_kubectl_label_are_named_with_their_times(cluster: KaiCluster, tmp_path: Path) -> None:
    cluster.install_trapped()  # the default queues from `helm install`, at quota 0 (the trap)
    since = time.time()
    env = {k: v for k, v in os.environ.items() if k != "KUBE_EDITOR"}  # kubectl would prefer it to EDITOR
    done = subprocess.run(
        [
            str(require_tool("kubectl")),
            "--kubeconfig",
            str(cluster.kubeconfig),
            "edit",
            f"queues.scheduling.run.ai/{CHILD}",
        ],
        env={**env, "EDITOR": editor(tmp_path)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "edited" in done.stdout, done.stderr
    assert cluster.triples(CHILD)["gpu"]["limit"] == 8
    # This API server records an Update's manager on a built-in object only once the object has managedFields
    # (a POST leaves none here, unlike a kubelet's registration in a real cluster): the node comes by apply.
    node = tmp_path / "node.yaml"
    node.write_text('apiVersion: v1\nkind: Node\nmetadata:\n  name: lab-gpu-1\n  labels:\n    gpu: "true"\n')
    cluster.kubectl("apply", "--server-side", "--field-manager", "node-registration", "-f", str(node))
    cluster.kubectl("label", "node", "lab-gpu-1", f"{SCHEDULE}=true")

    snapshot = tmp_path / "snap.yaml"
    code, _, err = run_cli(["snapshot", "--kubeconfig", cluster.kubeconfig, "-o", f"yaml={snapshot}"])
    assert code == 0, err
    code, out, err = run_cli(["diff", "--repo", cluster.repo, "--cluster", "lab", "--snapshot", snapshot, "-o", "json"])
    assert code == 2, err
    for found in (findings(cluster), json.loads(out)["findings"]):  # the snapshot tells the same story
        queue = attribution(found, "KAI-D-002", CHILD)
        assert queue["gpu.limit"]["manager"] == "kubectl-edit" and queue["gpu.limit"]["operation"] == "Update"
        assert recent(queue["gpu.limit"]["time"], since)
        assert queue["cpu.quota"]["manager"] == "helm"  # the chart's install set it, nobody since
        assert queue["cpu.quota"]["helmRelease"]["name"] == "kai-scheduler"
        field = f"node/lab-gpu-1 label {SCHEDULE}"
        label = attribution(found, "NVCA-S-010")
        assert label == {
            field: {
                "field": field,
                "manager": "kubectl-label",
                "operation": "Update",
                "subresource": None,
                "time": label[field]["time"],
            }
        }
        assert recent(label[field]["time"], since)
    text = cluster.run("diff").out
    assert "gpu.limit              8 → -1, last set by kubectl-edit (Update) " in text
    assert f"node/lab-gpu-1 label {SCHEDULE}, last set by kubectl-label (Update) " in text


def test_a_queue_changed_by_helm_upgrade_names_the_release_revision(cluster: KaiCluster, tmp_path: Path) -> None:
    chart = tmp_path / "team-queues"
    for name, text in TEAM_CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    cluster.helm("install", "team", str(chart), "--namespace", "teams", "--create-namespace")
    time.sleep(1.1)  # managedFields times are whole seconds: the upgrade's write lands in a later one
    cluster.helm("upgrade", "team", str(chart), "--namespace", "teams", "--set", "cpuQuota=2")

    queue = attribution(findings(cluster), "KAI-D-002", CHILD)
    assert set(queue) == {"cpu.quota"}
    cpu = queue["cpu.quota"]
    assert (cpu["manager"], cpu["operation"], cpu["subresource"]) == ("helm", "Update", None)
    release = cpu["helmRelease"]
    assert {k: release[k] for k in ("name", "namespace", "revision", "status")} == {
        "name": "team",
        "namespace": "teams",
        "revision": 2,
        "status": "deployed",
    }
    assert release["lastDeployed"] and cpu["time"]
    text = cluster.run("diff").out
    assert "cpu.quota              2 → -1, last set by helm (Update) " in text
    assert "Helm release teams/team revision 2 (deployed" in text
