"""The demo's add-on cluster (repo-templates/demo/build.py) on the real API server, deploy/ applied with kubectl.

``populate(envtest, items)`` creates what `kai-gitops snapshot` would have read: the namespaces (with their
``default`` ServiceAccount, so Pods can be made), Queues, the SchedulingShard, the Helm release Secrets, the
DTO ConfigMap, the NVCFBackend, Nodes, Pods and Events, each ``status`` set through its ``/status``
subresource where the kind has one (the API server drops it on create). The snapshot's ``NVCAHealthz`` item
becomes a real NVCA stand-in: an HTTP server answering ``/healthz`` from the Queues the cluster holds (this
project's model of NVCA's ``kai-scheduler-queues`` check, reconciler/checks/nvca.py), reached through the API
server's service proxy. The proxy dials only Pod addresses that are not loopback, so the agent is a Pod
``nvca-system/nvca-0`` whose status names this machine's outbound address, behind Service ``nvca`` (port
8000) and its Endpoints; with no such address the Service is left out and the proxy answers 404.

``apply_deploy(envtest, directory)`` renders a kustomization with the real ``kubectl kustomize`` and applies
it as the admin with ``kubectl apply -f -``.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import socket
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import yaml

from tests.support.envtest import EnvTest, Resource
from tests.support.tools import require_tool

Obj = dict[str, Any]
KINDS = {
    ("v1", "Namespace"): Resource("", "v1", "namespaces", False),
    ("v1", "Node"): Resource("", "v1", "nodes", False),
    ("v1", "Pod"): Resource("", "v1", "pods", True),
    ("v1", "ServiceAccount"): Resource("", "v1", "serviceaccounts", True),
    ("v1", "Secret"): Resource("", "v1", "secrets", True),
    ("v1", "ConfigMap"): Resource("", "v1", "configmaps", True),
    ("v1", "Event"): Resource("", "v1", "events", True),
    ("v1", "Service"): Resource("", "v1", "services", True),
    ("v1", "Endpoints"): Resource("", "v1", "endpoints", True),
    ("scheduling.run.ai/v2", "Queue"): Resource("scheduling.run.ai", "v2", "queues", False),
    ("kai.scheduler/v1", "SchedulingShard"): Resource("kai.scheduler", "v1", "schedulingshards", False),
    ("kai.scheduler/v1", "Config"): Resource("kai.scheduler", "v1", "configs", False),
    ("nvcf.nvidia.io/v1", "NVCFBackend"): Resource("nvcf.nvidia.io", "v1", "nvcfbackends", True),
}
# Made by the harness (the product's CRDs) or turned into the real NVCA agent below.
NOT_CREATED = {"CustomResourceDefinition", "NVCAHealthz"}
QUEUES = KINDS["scheduling.run.ai/v2", "Queue"]
NVCA_NAMESPACE, NVCA_SERVICE, NVCA_PORT = "nvca-system", "nvca", 8000


def resource(item: Obj) -> Resource:
    return KINDS[item["apiVersion"], item["kind"]]


def create(envtest: EnvTest, item: Obj) -> Obj:
    """Create ``item`` as the admin; a ``status`` it carries is written through ``/status`` afterwards."""
    assert envtest.rest is not None
    kind = resource(item)
    meta = item["metadata"]
    body = {**item, "metadata": {k: v for k, v in meta.items() if k != "creationTimestamp"}}
    created = envtest.rest.call("POST", kind.path(meta.get("namespace")), body, ok=(201,))
    if "status" in item and item["kind"] != "Node":  # a Node keeps the status it was created with
        created["status"] = {**(created.get("status") or {}), **item["status"]}
        created = envtest.rest.call("PUT", kind.path(meta.get("namespace"), meta["name"]) + "/status", created)
    return created


def populate(envtest: EnvTest, items: list[Obj]) -> None:
    labels = {i["metadata"]["name"]: i["metadata"].get("labels") or {} for i in items if i["kind"] == "Namespace"}
    for namespace in sorted({NVCA_NAMESPACE, *labels, *(i["metadata"].get("namespace") for i in items)} - {None}):
        envtest.create_namespace(namespace, labels=labels.get(namespace), exist_ok=True)
    # The API server admits a Pod only once the ServiceAccount it names exists.
    for item in sorted(items, key=lambda i: i["kind"] != "ServiceAccount"):
        if item["kind"] not in NOT_CREATED and item["kind"] != "Namespace":
            create(envtest, item)


def live_queues(envtest: EnvTest) -> list[Obj]:
    assert envtest.rest is not None
    return envtest.rest.get(QUEUES.path())["items"]


def nvca_healthz(queues: list[Obj]) -> tuple[int, Obj]:
    """NVCA's /healthz answer for these Queues (its kai-scheduler-queues component)."""
    from reconciler.checks.nvca import predict
    from reconciler.model.queues import queue_spec_from_values

    specs = {spec.name: spec for spec in map(queue_spec_from_values, queues)}
    verdict = predict(specs)
    status = "healthy" if verdict.healthy else "unhealthy"
    return (200 if verdict.healthy else 503), {
        "Status": status,
        "Components": {"kai-scheduler-queues": {"Status": status, "Errors": list(verdict.errors)}},
    }


def outbound_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None when it has only loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            probe.connect(("192.0.2.1", 9))
        except OSError:
            return None
        address = probe.getsockname()[0]
    return None if address.startswith("127.") else address


@contextlib.contextmanager
def nvca_agent(envtest: EnvTest, answer: Callable[[], tuple[int, Obj]] | None = None) -> Iterator[str | None]:
    """Serve NVCA's /healthz behind Service nvca-system/nvca:8000; yields the agent's address (None: the
    machine has only loopback, which the API server does not proxy to).

    `answer` gives the status and body of each /healthz; by default the kai-gitops prediction for the live
    Queues (enough where a test needs the proxy to reach something; a test of the prediction itself passes
    an answer written apart from the product, in NVCA's words)."""
    healthz = answer or (lambda: nvca_healthz(live_queues(envtest)))
    address = outbound_address()
    if address is None:
        yield None
        return

    class Healthz(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, body = healthz() if self.path == "/healthz" else (404, {})
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer((address, 0), Healthz)
    thread = threading.Thread(target=server.serve_forever, name="nvca-agent", daemon=True)
    thread.start()
    try:
        _register_agent(envtest, address, server.server_address[1])
        yield address
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def _register_agent(envtest: EnvTest, address: str, port: int) -> None:
    envtest.create_namespace(NVCA_NAMESPACE, exist_ok=True)
    create(
        envtest,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "nvca-0", "namespace": NVCA_NAMESPACE, "labels": {"app": "nvca"}},
            "spec": {"containers": [{"name": "nvca", "image": "nvcr.io/nvidia/nvca:3.2.7"}]},
            "status": {"phase": "Running", "podIP": address, "podIPs": [{"ip": address}]},
        },
    )
    assert envtest.rest is not None
    status, _ = envtest.rest.raw("GET", f"/api/v1/namespaces/{NVCA_NAMESPACE}/services/{NVCA_SERVICE}")
    if status == 404:  # a cluster made elsewhere may have the Service already: the Endpoints decide the port
        create(
            envtest,
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {"name": NVCA_SERVICE, "namespace": NVCA_NAMESPACE},
                "spec": {"ports": [{"name": "http", "port": NVCA_PORT, "targetPort": port}]},
            },
        )
    # No endpoints controller runs: the Endpoints are written as it would write them for the selector.
    create(
        envtest,
        {
            "apiVersion": "v1",
            "kind": "Endpoints",
            "metadata": {"name": NVCA_SERVICE, "namespace": NVCA_NAMESPACE},
            "subsets": [
                {
                    "addresses": [
                        {"ip": address, "targetRef": {"kind": "Pod", "name": "nvca-0", "namespace": NVCA_NAMESPACE}}
                    ],
                    "ports": [{"name": "http", "port": port}],
                }
            ],
        },
    )


def kubectl(*args: str, stdin: str | None = None, kubeconfig: Path | None = None) -> str:
    command = [str(require_tool("kubectl")), *args]
    if kubeconfig is not None:
        command += ["--kubeconfig", str(kubeconfig)]
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def apply_deploy(envtest: EnvTest, directory: Path) -> list[Obj]:
    """``kubectl kustomize DIR | kubectl apply -f -`` as the admin; the rendered objects."""
    assert envtest.kubeconfig is not None
    rendered = kubectl("kustomize", str(directory))
    kubectl("apply", "-f", "-", stdin=rendered, kubeconfig=envtest.kubeconfig)
    return [o for o in yaml.safe_load_all(rendered) if o]
