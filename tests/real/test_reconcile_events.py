"""`reconcile --apply` against a real API server records an events.k8s.io Event on every node it labels.

The stand-in accepted any generateName; the real server validates it as a name prefix (a DNS subdomain
apart from one trailing '-') and refused every Event, which the apply reports as warnings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import kubernetes

from tests.helpers import default_queues, make_repo
from tests.support.envtest import EnvTest

LABEL = "nvca.nvcf.nvidia.io/schedule"
CONFIG = ("apiVersion: kai-gitops/v1\nclusters:\n  - name: events\n    kubeContext: events\n    mode: addon\n"
          "    kaiChartVersion: v0.16.7\n    environmentFile: env.yaml\n    sharedCluster:\n"
          "      intent: shared\n      nodeSelector: {pool: nvcf}\n")


def kai_gitops(*args: object) -> subprocess.CompletedProcess[str]:
    cli = Path(sys.executable).parent / "kai-gitops"
    return subprocess.run([str(cli), *map(str, args)], capture_output=True, text=True, check=False, timeout=120)


def test_an_applied_label_change_leaves_an_event_on_its_node(envtest: EnvTest, admin_client, tmp_path: Path) -> None:
    core = kubernetes.client.CoreV1Api(admin_client)
    uids = {}
    for name in ("gpu-node-a", "gpu-node-b"):
        node = core.create_node({"metadata": {"name": name, "labels": {"pool": "nvcf"}}})
        uids[name] = node.metadata.uid
    custom = kubernetes.client.CustomObjectsApi(admin_client)
    for queue in default_queues():
        custom.create_cluster_custom_object("scheduling.run.ai", "v2", "queues", queue)
    envtest.create_namespace("kai-gitops")   # the Lease's
    kubeconfig = envtest.write_kubeconfig(tmp_path / "kubeconfig", context="events")
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": CONFIG,
                                   "env.yaml": "addons:\n  kaiScheduler:\n    enabled: true\n"})
    common = ("reconcile", "--repo", repo, "--kubeconfig", kubeconfig, "-o", "json")

    planned = kai_gitops(*common, "--plan-out", tmp_path / "plan.json")
    assert planned.returncode == 2, planned.stderr
    applied = kai_gitops(*common, "--plan", tmp_path / "plan.json", "--apply", "--audit-log", tmp_path / "audit")

    assert applied.returncode == 2, applied.stderr   # the applied changes are fixed; other findings remain
    outcome = json.loads(applied.stdout)["apply"]
    assert (outcome["ok"], outcome["applied"], outcome["warnings"]) == (True, 2, [])
    assert {n.metadata.name for n in core.list_node(label_selector=f"{LABEL}=true").items} == set(uids)
    events = kubernetes.client.EventsV1Api(admin_client).list_namespaced_event("default").items
    ours = {e.regarding.name: e for e in events if e.reporting_controller == "kai-gitops"}
    assert set(ours) == set(uids)
    for name, event in ours.items():
        assert (event.reason, event.regarding.kind, event.regarding.uid) == ("NodeLabelChanged", "Node", uids[name])
        assert event.metadata.name.startswith(f"{name}.kai-gitops")
