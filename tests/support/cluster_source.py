"""Shared helpers of tests/cluster/test_cluster_source.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import orjson
from click.testing import CliRunner

from reconciler.model.live import LiveState
from reconciler.sources.cluster import ClusterClient, ReadSettings
from tests.support.kubeserver import KubeTestServer

ROOT = Path(__file__).resolve().parents[2]

Obj = dict[str, Any]

# Tiny timeouts and backoff: the fault matrix must run in seconds, not minutes.
FAST = ReadSettings(
    attempts=5,
    retry_budget_s=5.0,
    backoff_base_s=0.005,
    backoff_cap_s=0.02,
    connect_timeout_s=1.0,
    read_timeout_s=0.3,
    healthz_timeout_s=0.3,
    page_limit=2,
    secret_page_limit=2,
    workers=4,
)

FAST_ENV = {
    "KAI_GITOPS_KUBE_ATTEMPTS": "5",
    "KAI_GITOPS_KUBE_RETRY_BUDGET_S": "5",
    "KAI_GITOPS_KUBE_BACKOFF_BASE_S": "0.005",
    "KAI_GITOPS_KUBE_BACKOFF_CAP_S": "0.02",
    "KAI_GITOPS_KUBE_READ_TIMEOUT_S": "0.3",
    "KAI_GITOPS_KUBE_HEALTHZ_TIMEOUT_S": "0.3",
    "KAI_GITOPS_KUBE_PAGE_LIMIT": "2",
}


def _demo() -> ModuleType:
    spec = importlib.util.spec_from_file_location("kai_demo_build", ROOT / "repo-templates" / "demo" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DEMO = _demo()


def prod_items() -> list[Obj]:
    """The demo's add-on cluster: quota-0 queues, 503 healthz, a second KAI release, a non-Helm Secret."""
    return DEMO.prod_addon_snapshot()


def lab_items() -> list[Obj]:
    """The demo's standalone cluster: healthy, canonical queues plus `research`."""
    return DEMO.lab_standalone_snapshot()


def serve(server: KubeTestServer, items: list[Obj], *, kai_installed: bool = True) -> None:
    """Load a demo snapshot into the server; the NVCAHealthz item becomes the proxy's canned answer."""
    if kai_installed:
        server.register_kai_and_nvca_kinds(with_crds=False)
    else:
        server.register_kind("nvcf.nvidia.io", "v1", "NVCFBackend", "nvcfbackends", namespaced=True)
        custom = ("scheduling.run.ai/", "kai.scheduler/")
        items = [
            i
            for i in items
            if not i["apiVersion"].startswith(custom)
            and not (i["kind"] == "CustomResourceDefinition" and "nvcf" not in i["metadata"]["name"])
        ]
    for item in items:
        if item["kind"] == "NVCAHealthz":
            server.set_healthz(item["httpStatus"], item["body"])
    objects = [i for i in items if i["kind"] != "NVCAHealthz"]
    if not any(i["kind"] == "Namespace" and i["metadata"]["name"] == "kube-system" for i in objects):
        # a cluster always has it: `kai-gitops snapshot` reads its UID, the cluster's identity
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
    server.add_many(objects)


def write_kubeconfig(path: Path, servers: dict[str, str], current: str | None = None) -> Path:
    clusters = [{"name": name, "cluster": {"server": url}} for name, url in servers.items()]
    contexts = [{"name": name, "context": {"cluster": name, "user": "tester"}} for name in servers]
    config: Obj = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": clusters,
        "contexts": contexts,
        "users": [{"name": "tester", "user": {"token": "test-token"}}],
    }
    if current:
        config["current-context"] = current
    path.write_bytes(orjson.dumps(config))  # JSON is YAML: the client reads it as a kubeconfig
    return path


class Recorder:
    """An ObjectSink that keeps what it was fed, to check order and reductions."""

    def __init__(self) -> None:
        self.items: list[Obj] = []

    def add(self, obj: Obj) -> None:
        self.items.append(obj)

    def kinds(self, kind: str) -> list[Obj]:
        return [i for i in self.items if i["kind"] == kind]


def client_for(server: KubeTestServer, settings: ReadSettings = FAST) -> ClusterClient:
    from kubernetes import client

    return ClusterClient(client.Configuration(host=server.url), settings, label="context test")


def read_state(server: KubeTestServer, settings: ReadSettings = FAST) -> LiveState:
    from reconciler.sources.cluster import read_cluster

    return read_cluster(client_for(server, settings))


def run_cli(args: list[str], env: dict[str, str] | None = None) -> Any:
    from reconciler.cli import main

    return CliRunner().invoke(main, args, env={**FAST_ENV, **(env or {})}, catch_exceptions=False)
