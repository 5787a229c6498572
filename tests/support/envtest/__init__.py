"""A real Kubernetes API server for tests: etcd and kube-apiserver, built from tools/ (``make tools``).

::

    with EnvTest() as cluster:                      # or the ``envtest`` fixture in tests/real/
        api = kubernetes.client.CoreV1Api(cluster.api_client())
        api.read_namespace("kube-system").metadata.uid == cluster.kube_system_uid
        token = cluster.service_account_token("team-a", "reader")   # TokenRequest; no RBAC grants yet
        cluster.write_kubeconfig(tmp_path / "reader.kubeconfig", token=token)
        cluster.reset()                             # back to the state right after start

What it runs: etcd (``--unsafe-no-fsync``, data in a temp dir) and kube-apiserver on free 127.0.0.1 ports;
TLS from a CA generated per run (``cryptography``; serving certificate for 127.0.0.1/localhost), client
certificates (the admin is O=system:masters), ``--authorization-mode=Node,RBAC``, service-account token
signing (TokenRequest works), the default admission plugins. The product's CRDs (tests/fixtures: KAI
Queue, PodGroup, Topology, SchedulingShard, Config; NVCFBackend; the PolicyReport/OpenReports kinds) are
installed, Established and listed in discovery before ``start()`` returns. The API server itself creates
the ``default``, ``kube-system``, ``kube-public`` and ``kube-node-lease`` namespaces; ``kube_system_uid``
is kube-system's UID (the product binds plans to it).

What it does not run: no kube-controller-manager, scheduler, kubelet or kube-proxy. So nothing reconciles:
Pods stay Pending (set ``status`` through the ``/status`` subresource), Deployments create no ReplicaSets,
there is no garbage collection of owned objects, a deleted namespace stays Terminating until ``reset()``
(which finalizes it like the namespace controller), and new namespaces get no ``default`` ServiceAccount
or ``kube-root-ca.crt`` ConfigMap unless made with ``create_namespace()``. No aggregated API servers (no
metrics.k8s.io), no webhooks unless a test serves one, no cloud provider, no CNI/Service networking (the
service proxy subresource reaches nothing).

Standalone (the contract other tooling relies on): ``python -m tests.support.envtest --kubeconfig-out FILE``
starts the same server, writes an admin kubeconfig (client certificate, CA data) to FILE, prints exactly
one line ``ready <server-url>`` on stdout, serves until SIGTERM or SIGINT, then stops etcd and
kube-apiserver and removes its data dir.
"""

from collections.abc import Iterator
from typing import Any

from tests.support.tools import require_tool

from ._pki import Pki
from ._rest import ApiError, RestClient
from ._server import DEFAULT_CRD_FILES, EnvTest, EnvTestError, ResetReport, Resource

__all__ = [
    "DEFAULT_CRD_FILES",
    "ApiError",
    "EnvTest",
    "EnvTestError",
    "Pki",
    "ResetReport",
    "Resource",
    "RestClient",
    "running_server",
]


def running_server(tools: tuple[str, ...] = (), **options: Any) -> Iterator[EnvTest]:
    """A server of its own with the audit log on (what --k8s-audit-log reads, and the authorizer's answer to
    each request), stopped when the generator is closed: the body of a fixture that needs `tools` too."""
    for name in ("etcd", "kube-apiserver", *tools):
        require_tool(name)
    server = EnvTest(audit=True, **options)
    try:
        server.start()
        yield server
    finally:
        server.stop()
