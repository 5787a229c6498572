"""Shared set-up for the reconcile tests: the demo repo and the demo cluster served by the test API server."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.helpers import load_demo_builder, run_cli
from tests.support.kubeserver import KubeTestServer
from tests.support.kubeserver.__main__ import write_kubeconfig
from tests.support.kubeserver._snapshot import serve_snapshot

DEMO = load_demo_builder()
QUEUES = "/apis/scheduling.run.ai/v2/queues"
NODES = "/api/v1/nodes"


@dataclass
class Demo:
    server: KubeTestServer
    repo: Path
    kubeconfig: Path
    tmp: Path

    def args(self, *extra: Any) -> list[str]:
        return [
            "reconcile",
            "--repo",
            str(self.repo),
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            str(self.kubeconfig),
            *[str(e) for e in extra],
        ]

    def reconcile(self, *extra: Any) -> tuple[int, str, str]:
        return run_cli(self.args(*extra))

    def reconcile_json(self, *extra: Any) -> tuple[int, dict[str, Any], str]:
        code, out, err = self.reconcile("-o", "json", *extra)
        assert out, err
        return code, json.loads(out), err

    def queue(self, name: str) -> dict[str, Any]:
        found = self.server.get_object("scheduling.run.ai/v2", "Queue", name)
        assert found is not None
        return found

    def node_label(self, name: str) -> str | None:
        found = self.server.get_object("v1", "Node", name)
        assert found is not None
        return (found["metadata"].get("labels") or {}).get("nvca.nvcf.nvidia.io/schedule")

    def writes(self) -> list[Any]:
        return [r for r in self.server.requests if r.method not in ("GET",)]


def prod_without_kai_config_drift() -> list[dict[str, Any]]:
    """The demo's prod cluster with kai-config as Git renders it. The apply guard-rail tests pin the order of
    the Queue and Node writes; the kai-config patch (written alongside the node labels) has tests of its own
    (test_reconcile_kai_config.py) and the demo's fix loop shows it."""
    items = DEMO.prod_addon_snapshot()
    config = next(i for i in items if i["kind"] == "Config")
    config["spec"]["admission"]["gpuSharing"] = False
    return items


def demo_cluster(tmp_path: Path, items: Sequence[dict[str, Any]] | None = None) -> Iterator[Demo]:
    repo = tmp_path / "repo"
    DEMO.build_repo(repo)
    with KubeTestServer() as server:
        serve_snapshot(
            server, list(items if items is not None else prod_without_kai_config_drift()), nvca_from_queues=True
        )
        kubeconfig = tmp_path / "kubeconfig"
        write_kubeconfig(kubeconfig, "prod", server.url)
        yield Demo(server, repo, kubeconfig, tmp_path)
