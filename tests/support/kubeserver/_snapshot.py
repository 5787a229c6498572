"""Serve a saved snapshot (a Kubernetes List, as `kai-gitops snapshot` writes) as a running cluster.

The snapshot's ``NVCAHealthz`` item (kai-gitops/v1, not a Kubernetes kind) becomes the answer of NVCA's
``/healthz`` through the service proxy. With ``nvca_from_queues`` the answer is recomputed on every request
from the Queues the server holds, with this project's model of NVCA's ``kai-scheduler-queues`` check
(reconciler/checks/nvca.py), so a fix applied to the queues shows in the next health read as it would
in a cluster. A cluster always has ``kube-system``; it is added when the snapshot lacks it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._server import KubeTestServer

NVCA_HEALTHZ = ("nvca-system", "nvca", 8000, "healthz")


def read_items(path: Path) -> list[dict[str, Any]]:
    from reconciler.sources.snapshot import snapshot_items

    return snapshot_items(str(path))


def serve_snapshot(server: KubeTestServer, items: list[dict[str, Any]], *, nvca_from_queues: bool = False) -> None:
    server.register_kai_and_nvca_kinds(with_crds=False)
    objects = [i for i in items if i.get("kind") != "NVCAHealthz"]
    if not any(i.get("kind") == "Namespace" and i["metadata"].get("name") == "kube-system" for i in objects):
        objects.append({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
    server.add_many(objects)
    for item in items:
        if item.get("kind") != "NVCAHealthz":
            continue
        if nvca_from_queues:
            server.set_proxy_handler(*NVCA_HEALTHZ, lambda: _nvca_healthz(server))
        else:
            server.set_healthz(item["httpStatus"], item["body"])


def _nvca_healthz(server: KubeTestServer) -> tuple[int, dict[str, Any]]:
    from reconciler.checks.nvca import predict
    from reconciler.model.queues import queue_spec_from_values

    queues = {}
    for obj in server.list_objects("scheduling.run.ai/v2", "Queue"):
        spec = queue_spec_from_values(obj)
        queues[spec.name] = spec
    verdict = predict(queues)
    status = "healthy" if verdict.healthy else "unhealthy"
    body = {
        "Status": status,
        "Components": {"kai-scheduler-queues": {"Status": status, "Errors": list(verdict.errors)}},
    }
    return (200 if verdict.healthy else 503), body
