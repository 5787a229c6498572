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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.demo_cluster import populate
from tests.support.deploy_helm_chart import CHART
from tests.support.envtest import EnvTest, running_server
from tests.support.helpers import ROOT, load_demo_builder, make_bare_remote, timeless
from tests.support.tools import require_tool

DEMO = load_demo_builder()
NAMESPACE = RELEASE = "kai-gitops"
CLUSTERS = {"prod-addon": "prod", "lab-standalone": "lab"}  # name in kai-gitops.yaml -> its kubeContext
SHARDS = 2
Obj = dict[str, Any]
COLLECTIONS = {
    "ServiceAccount": "/api/v1/namespaces/{ns}/serviceaccounts",
    "ConfigMap": "/api/v1/namespaces/{ns}/configmaps",
    "PersistentVolumeClaim": "/api/v1/namespaces/{ns}/persistentvolumeclaims",
    "CronJob": "/apis/batch/v1/namespaces/{ns}/cronjobs",
}


def render(*values: str) -> list[Obj]:
    done = subprocess.run(
        [
            str(require_tool("helm")),
            "template",
            RELEASE,
            str(CHART),
            "--namespace",
            NAMESPACE,
            "--set",
            "mode=fleet",
            "--set",
            "image.repository=kai-gitops",
            "--set",
            f"fleet.shards={SHARDS}",
            "--set",
            f"fleet.clusters={{{','.join(CLUSTERS)}}}",
            *values,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return [o for o in yaml.safe_load_all(done.stdout) if o]


def one(objects: list[Obj], kind: str) -> Obj:
    [found] = [o for o in objects if o["kind"] == kind]
    return found


@pytest.fixture(scope="module")
def server() -> Iterator[EnvTest]:
    yield from running_server(("helm",))


@pytest.mark.parametrize(
    "values",
    [(), ("--set", "fleet.reportTo={github}", "--set", "fleet.shards=20")],
    ids=["default", "drift-issues-20-shards"],
)
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
        "Indexed",
        shards,
        shards,
        1,
    )
    # each kubeconfig Secret optional, as the server keeps it: a missing one must not hold every index's pod
    pod = accepted["CronJob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    [kubeconfigs] = [v for v in pod["volumes"] if v["name"] == "kubeconfigs"]
    assert [s["secret"]["optional"] for s in kubeconfigs["projected"]["sources"]] == [True] * len(CLUSTERS)
    assert server.rest.get(f"/apis/batch/v1/namespaces/{NAMESPACE}/cronjobs")["items"] == []  # a dry run


@dataclass
class Hub:
    """The hub's pods as the Job controller runs them, on this machine: the chart's script by `sh`, the container's
    environment, the kubeconfig Secrets as files, the reports claim as a folder."""

    script: str
    env: dict[str, str]
    repo: Path
    reports: Path
    bin_dir: Path

    @property
    def run_dir(self) -> Path:
        return self.reports / self.env["KAI_GITOPS_FLEET_RUN"]

    def run(self, index: int, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["/bin/sh", "-c", self.script],
            env={**self.env, "JOB_COMPLETION_INDEX": str(index), **env},
            capture_output=True,
            text=True,
            timeout=600,
            cwd=self.repo.parent,
            check=False,
        )

    def commits_checked(self) -> set[str]:
        return {json.loads(p.read_text())["git"]["commit"] for p in self.run_dir.glob("shard-*/*.json")}


@pytest.fixture
def hub(server: EnvTest, tmp_path: Path) -> Hub:
    server.reset()
    populate(server, DEMO.prod_addon_snapshot())
    objects = render()
    script = next(o for o in objects if o["kind"] == "ConfigMap" and "index.sh" in o["data"])["data"]["index.sh"]
    container = one(objects, "CronJob")["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"] == ["/bin/sh", "/etc/kai-gitops/fleet/index.sh"]

    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    kubeconfigs, reports, bin_dir = tmp_path / "kubeconfigs", tmp_path / "reports", tmp_path / "bin"
    for cluster, context in CLUSTERS.items():  # the projected Secrets: one file per cluster, named after it
        server.write_kubeconfig(kubeconfigs / cluster, context=context)
    bin_dir.mkdir()
    (bin_dir / "kai-gitops").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m reconciler "$@"\n')
    (bin_dir / "kai-gitops").chmod(0o755)
    env = {value["name"]: value["value"] for value in container["env"] if "value" in value}
    env |= {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "PYTHONPATH": str(ROOT),
        "LANG": "C.UTF-8",
        "KAI_GITOPS_REPO_URL": f"file://{make_bare_remote(tmp_path, repo)}",
        "KAI_GITOPS_REF": "HEAD",
        "KAI_GITOPS_GIT_TOKEN": "unused-for-a-file-remote",
        "KAI_GITOPS_FLEET_RUN": "kai-gitops-fleet-29000000",
        "KAI_GITOPS_FLEET_KUBECONFIGS": str(kubeconfigs),
        "KAI_GITOPS_FLEET_REPORTS": str(reports),
        "KAI_GITOPS_CACHE": str(tmp_path / "cache"),
        "HOME": str(tmp_path),
        "TMPDIR": str(tmp_path),
    }
    assert env["KAI_GITOPS_FLEET_CLUSTERS"] == " ".join(CLUSTERS) and env["KAI_GITOPS_FLEET_SHARDS"] == str(SHARDS)
    assert (env["KAI_GITOPS_FLEET_CRONJOB"], env["KAI_GITOPS_FLEET_KEEP_RUNS"]) == ("kai-gitops-fleet", "3")
    return Hub(script, env, repo, reports, bin_dir)


def test_each_index_checks_its_shard_and_the_last_merges_the_fleet(hub: Hub) -> None:
    run_dir = hub.run_dir
    for index in range(SHARDS):  # as the Job controller starts the pods: JOB_COMPLETION_INDEX from 0
        done = hub.run(index)
        assert done.returncode == 0, done.stderr[-3000:]
        checked = sorted(p.stem for p in (run_dir / f"shard-{index + 1}").glob("*.json"))
        assert checked == pr_check_shard(hub.repo, index + 1), index
        assert (run_dir / "fleet.json").exists() == (index == SHARDS - 1)  # only the last index merges

    fleet = json.loads((run_dir / "fleet.json").read_text())
    assert sorted(c["cluster"] for c in fleet["clusters"]) == sorted(CLUSTERS)
    assert all(c["live"] is not None for c in fleet["clusters"])  # each read its cluster, not Git alone
    shards = sorted(str(p) for p in run_dir.glob("shard-*.json"))
    merged = subprocess.run(
        [sys.executable, "-m", "reconciler", "report", "merge", *shards, "-o", "json"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    assert merged.returncode in (0, 2), merged.stderr
    assert timeless(json.loads(merged.stdout)) == timeless(fleet)
    assert "| prod-addon |" in (run_dir / "fleet.md").read_text()
    matrix = (run_dir / "fleet-matrix.md").read_text().splitlines()  # the fleet summary: cluster × rule
    assert [line.split("|")[1].strip() for line in matrix[2:]] == [c["cluster"] for c in fleet["clusters"]]
    assert (run_dir / "merged").exists()


def test_a_commit_pushed_between_two_indexes_is_not_checked_by_either(hub: Hub) -> None:
    """The run's ref is resolved once, by the first index: a push after it leaves every cluster of the run at one
    commit, so the fleet merge (which refuses reports of two commits) succeeds."""
    before = git(hub.repo, "rev-parse", "HEAD")
    assert hub.run(0).returncode == 0
    git(hub.repo, "commit", "--allow-empty", "-m", "landed while the hub ran")
    git(hub.repo, "push", "origin", "HEAD")
    after = git(hub.repo, "rev-parse", "HEAD")
    assert after != before and git(hub.repo, "ls-remote", "origin", "HEAD").startswith(after)

    done = hub.run(1)
    assert done.returncode == 0, done.stderr[-3000:]
    assert hub.commits_checked() == {before}
    assert (hub.run_dir / "commit").read_text().strip() == before
    fleet = json.loads((hub.run_dir / "fleet.json").read_text())
    assert {c["git"]["commit"] for c in fleet["clusters"]} == {before} and len(fleet["clusters"]) == len(CLUSTERS)


def test_a_failed_fleet_merge_is_merged_again_by_the_retry(hub: Hub) -> None:
    """The merging index fails once in the fleet merge: it exits 1 (the Job controller retries it), the tick is
    not marked merged, another index leaves the merge to it, and its retry merges without checking its clusters
    again."""
    calls = hub.bin_dir / "calls"
    (hub.bin_dir / "kai-gitops").write_text(
        f'#!/bin/sh\necho "$*" >> "{calls}"\n'
        f'case "$*" in *fleet.json*) if [ ! -e "{hub.bin_dir}/failed" ]; then touch "{hub.bin_dir}/failed"; '
        f'echo "kai-gitops: error: disk full" >&2; exit 1; fi ;; esac\n'
        f'exec "{sys.executable}" -m reconciler "$@"\n'
    )
    assert hub.run(0).returncode == 0
    failed = hub.run(1)
    assert failed.returncode == 1 and not (hub.run_dir / "fleet-matrix.md").exists()
    assert not (hub.run_dir / "merged").exists()
    assert "fleet: the fleet merge failed (exit 1)" in failed.stderr
    assert hub.run(0).returncode == 0 and not (hub.run_dir / "merged").exists()  # index 1 is the merger
    reconciles = calls.read_text().count("reconcile ")

    retried = hub.run(1)
    assert retried.returncode == 0, retried.stderr[-3000:]
    assert (hub.run_dir / "merged").exists() and "| prod-addon |" in (hub.run_dir / "fleet-matrix.md").read_text()
    assert calls.read_text().count("reconcile ") == reconciles  # its clusters were done: only the merge again
    assert hub.run(1).returncode == 0  # a later retry finds it merged


def test_index_0_keeps_the_newest_runs_and_deletes_only_older_job_folders(hub: Hub, tmp_path: Path) -> None:
    older = [f"kai-gitops-fleet-{minute}" for minute in (28999700, 28999760, 28999880, 28999940)]
    for name in older:
        (hub.reports / name / "shard-1").mkdir(parents=True)
        (hub.reports / name / "shard-1" / "prod-addon.json").write_text("{}")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.json").write_text("{}")
    (hub.reports / "kai-gitops-fleet-28999820").symlink_to(outside)  # a link is never followed nor deleted
    (hub.reports / older[0] / "link").symlink_to(outside)  # nor one inside a deleted folder
    for name in ("kai-gitops-fleet-manual", "other-fleet-28999000", "kai-gitops-fleet-28999000.bak"):
        (hub.reports / name).mkdir()  # not a name the CronJob gives its Jobs

    assert hub.run(1).returncode == 0
    assert all((hub.reports / name).exists() for name in older)  # only index 0 prunes
    assert hub.run(0).returncode == 0
    kept = sorted(p.name for p in hub.reports.iterdir())
    assert kept == sorted(
        [
            "kai-gitops-fleet-28999880",
            "kai-gitops-fleet-28999940",
            hub.run_dir.name,
            "kai-gitops-fleet-28999820",
            "kai-gitops-fleet-manual",
            "other-fleet-28999000",
            "kai-gitops-fleet-28999000.bak",
        ]
    )
    assert (outside / "keep.json").exists() and (hub.run_dir / "merged").exists()


def test_a_missing_kubeconfig_fails_that_clusters_run_and_the_index_checks_the_others(hub: Hub) -> None:
    """The chart mounts each kubeconfig Secret as optional, so a missing one is a missing file: that cluster's
    run fails (the index exits 1 for a retry), the pod's other clusters are still checked."""
    missing = Path(hub.env["KAI_GITOPS_FLEET_KUBECONFIGS"]) / "prod-addon"
    missing.unlink()
    done = hub.run(0, KAI_GITOPS_FLEET_SHARDS="1")  # one index: both clusters
    assert done.returncode == 1
    assert "fleet: prod-addon: run failed (exit 1)" in done.stderr
    assert f"kubeconfig file not found: {missing} (--kubeconfig)" in done.stderr  # its run's error, in the log
    assert "Traceback" not in done.stderr
    assert sorted(p.name for p in (hub.run_dir / "shard-1").iterdir()) == ["lab-standalone.json"]
    assert not (hub.run_dir / "done-1").exists()


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@example.com",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@example.com",
        },
    )
    return done.stdout.strip()


def pr_check_shard(repo: Path, index: int) -> list[str]:
    """The clusters the PR check's `check --shard INDEX/N` checks."""
    done = subprocess.run(
        [sys.executable, "-m", "reconciler", "check", "--shard", f"{index}/{SHARDS}", "-o", "json"],
        capture_output=True,
        text=True,
        cwd=repo,
        timeout=300,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode in (0, 2), done.stderr
    return sorted(c["cluster"] for c in json.loads(done.stdout)["clusters"])
