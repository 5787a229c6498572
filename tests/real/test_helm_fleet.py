"""The chart's fleet mode (a hub checking many clusters as a Kubernetes Indexed Job) on the real API server.

`helm template` of mode fleet is sent to the real kube-apiserver as a server-side dry-run with strict field
validation: the server must accept every object and keep the Indexed Job's fields (completionMode,
backoffLimitPerIndex). Then each index's command -- the script the chart mounts, run by `sh` as the container
runs it -- is run with JOB_COMPLETION_INDEX set as the Job controller sets it, against the demo's clusters (both
served by one real API server, each through a kubeconfig of its own, as the chart mounts them from Secrets):
each index checks exactly the clusters `check --shard I/N` gives shard I, writes its shard report, and the last
one folds them with `report merge` into the fleet's report, which names every cluster.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import ROOT, load_demo_builder, make_bare_remote, timeless
from tests.real.demo_cluster import populate
from tests.support.envtest import EnvTest, running_server
from tests.support.tools import require_tool
from tests.test_helm_chart import CHART

DEMO = load_demo_builder()
NAMESPACE = RELEASE = "kai-gitops"
CLUSTERS = {"prod-addon": "prod", "lab-standalone": "lab"}   # name in kai-gitops.yaml -> its kubeContext
SHARDS = 2
Obj = dict[str, Any]
COLLECTIONS = {"ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
               "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
               "PersistentVolumeClaim": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
               "CronJob": "/apis/batch/v1/namespaces/{ns}/cronjobs"}


def render(*values: str) -> list[Obj]:
    done = subprocess.run([str(require_tool("helm")), "template", RELEASE, str(CHART), "--namespace", NAMESPACE,
                           "--set", "mode=fleet", "--set", "image.repository=kai-gitops",
                           "--set", f"fleet.shards={SHARDS}", "--set", f"fleet.clusters={{{','.join(CLUSTERS)}}}",
                           *values], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def one(objects: list[Obj], kind: str) -> Obj:
    [found] = [o for o in objects if o["kind"] == kind]
    return found


@pytest.fixture(scope="module")
def server() -> Iterator[EnvTest]:
    yield from running_server(("helm",))


@pytest.mark.parametrize("values", [(), ("--set", "fleet.reportTo={github}", "--set", "fleet.shards=20")],
                         ids=["default", "drift-issues-20-shards"])
def test_the_fleet_manifests_pass_the_servers_strict_dry_run(server: EnvTest, values: tuple[str, ...]) -> None:
    objects = render(*values)
    # settings and the script; no CronJob or role for the hub's own cluster, which it does not check
    assert sorted(o["kind"] for o in objects) == sorted([*COLLECTIONS, "ConfigMap"])
    server.create_namespace(NAMESPACE, exist_ok=True)
    accepted = {}
    for obj in objects:
        path = COLLECTIONS[obj["kind"]].format(ns=NAMESPACE) + "?dryRun=All&fieldValidation=Strict"
        accepted[obj["kind"]] = server.rest.call("POST", path, obj, ok=(200, 201))
    job = accepted["CronJob"]["spec"]["jobTemplate"]["spec"]
    shards = 20 if values else SHARDS
    assert (job["completionMode"], job["completions"], job["parallelism"], job["backoffLimitPerIndex"]) == (
        "Indexed", shards, shards, 1)
    assert server.rest.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/cronjobs")["items"] == []   # a dry run


def test_each_index_checks_its_shard_and_the_last_merges_the_fleet(server: EnvTest, tmp_path: Path) -> None:
    server.reset()
    populate(server, DEMO.prod_addon_snapshot())
    objects = render()
    script = next(o for o in objects if o["kind"] == "ConfigMap" and "index.sh" in o["data"])["data"]["index.sh"]
    container = one(objects, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["/bin/sh", "/etc/kai-gitops/fleet/index.sh"]

    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    kubeconfigs, reports, bin_dir = tmp_path / "kubeconfigs", tmp_path / "reports", tmp_path / "bin"
    for cluster, context in CLUSTERS.items():   # the projected Secrets: one file per cluster, named after it
        server.write_kubeconfig(kubeconfigs / cluster, context=context)
    bin_dir.mkdir()
    (bin_dir / "kai-gitops").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reconciler "$@"\n')
    (bin_dir / "kai-gitops").chmod(0o755)
    env = {value["name"]: value["value"] for value in container["env"] if "value" in value}
    env |= {"PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8",
            "KAI_GITOPS_REPO_URL": f"file://{make_bare_remote(tmp_path, repo)}", "KAI_GITOPS_REF": "HEAD",
            "KAI_GITOPS_GIT_TOKEN": "unused-for-a-file-remote", "KAI_GITOPS_FLEET_RUN": "kai-gitops-fleet-29000000",
            "KAI_GITOPS_FLEET_KUBECONFIGS": str(kubeconfigs), "KAI_GITOPS_FLEET_REPORTS": str(reports),
            "KAI_GITOPS_CACHE": str(tmp_path / "cache"), "HOME": str(tmp_path), "TMPDIR": str(tmp_path)}
    assert env["KAI_GITOPS_FLEET_CLUSTERS"] == " ".join(CLUSTERS) and env["KAI_GITOPS_FLEET_SHARDS"] == str(SHARDS)
    run_dir = reports / env["KAI_GITOPS_FLEET_RUN"]

    for index in range(SHARDS):   # as the Job controller starts the pods: JOB_COMPLETION_INDEX from 0
        done = subprocess.run(["/bin/sh", "-c", script], env={**env, "JOB_COMPLETION_INDEX": str(index)},
                              capture_output=True, text=True, timeout=600, cwd=tmp_path, check=False)
        assert done.returncode == 0, done.stderr[-3000:]
        checked = sorted(p.stem for p in (run_dir / f"shard-{index + 1}").glob("*.json"))
        assert checked == pr_check_shard(repo, index + 1), index
        assert (run_dir / "fleet.json").exists() == (index == SHARDS - 1)   # only the last index merges

    fleet = json.loads((run_dir / "fleet.json").read_text())
    assert sorted(c["cluster"] for c in fleet["clusters"]) == sorted(CLUSTERS)
    assert all(c["live"] is not None for c in fleet["clusters"])   # each read its cluster, not Git alone
    shards = sorted(str(p) for p in run_dir.glob("shard-*.json"))
    merged = subprocess.run([sys.executable, "-m", "reconciler", "report", "merge", *shards, "-o", "json"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert merged.returncode in (0, 2), merged.stderr
    assert timeless(json.loads(merged.stdout)) == timeless(fleet)
    assert "| prod-addon |" in (run_dir / "fleet.md").read_text()
    matrix = (run_dir / "fleet-matrix.md").read_text().splitlines()   # the fleet summary: cluster × rule
    assert [line.split("|")[1].strip() for line in matrix[2:]] == [c["cluster"] for c in fleet["clusters"]]


def pr_check_shard(repo: Path, index: int) -> list[str]:
    """The clusters the PR check's `check --shard INDEX/N` checks."""
    done = subprocess.run([sys.executable, "-m", "reconciler", "check", "--shard", f"{index}/{SHARDS}", "-o", "json"],
                          capture_output=True, text=True, cwd=repo, timeout=300, check=False,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode in (0, 2), done.stderr
    return sorted(c["cluster"] for c in json.loads(done.stdout)["clusters"])
