"""Test-server extensions for reconcile: Leases and events.k8s.io Events, Fault.after, computed proxy
answers, and the standalone mode serving a snapshot."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from tests.support.helpers import DEMO_SNAPSHOTS, ROOT
from tests.support.kubeserver import Fault, KubeTestServer


@pytest.fixture
def server() -> Iterator[KubeTestServer]:
    with KubeTestServer() as srv:
        yield srv


def test_a_lease_update_with_a_stale_resource_version_is_a_conflict(server: KubeTestServer) -> None:
    api = client.CoordinationV1Api(client.ApiClient(client.Configuration(host=server.url)))
    body = {"metadata": {"name": "l"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 5}}
    created = api.create_namespaced_lease("ns", body)
    first = api.read_namespaced_lease("l", "ns")
    first.spec.holder_identity = "b"
    api.replace_namespaced_lease("l", "ns", first)
    created.spec.holder_identity = "c"  # still carries the old resourceVersion
    with pytest.raises(ApiException) as caught:
        api.replace_namespaced_lease("l", "ns", created)
    assert caught.value.status == 409
    assert api.read_namespaced_lease("l", "ns").spec.holder_identity == "b"


def test_events_k8s_io_events_are_served(server: KubeTestServer) -> None:
    # Created over raw HTTP: the official client re-renders a MicroTime without its fraction when it is zero,
    # which the real server (and so this one) refuses with a 400.
    event = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"generateName": "n1-"},
        "reason": "X",
        "note": "y",
        "eventTime": "2026-12-01T00:00:00.000000Z",
        "action": "A",
        "type": "Normal",
        "reportingController": "c",
        "reportingInstance": "i",
    }
    created = urllib3.PoolManager(retries=False).request(
        "POST",
        f"{server.url}/apis/events.k8s.io/v1/namespaces/default/events",
        body=json.dumps(event).encode(),
        headers={"Content-Type": "application/json"},
    )
    assert created.status == 201, created.data
    api = client.EventsV1Api(client.ApiClient(client.Configuration(host=server.url)))
    assert [e.reason for e in api.list_namespaced_event("default").items] == ["X"]


def test_fault_after_lets_the_first_matching_requests_through(server: KubeTestServer) -> None:
    http = urllib3.PoolManager(retries=False)
    server.inject_fault(Fault(r"^/api/v1/nodes$", status=503, after=2))
    statuses = [http.request("GET", f"{server.url}/api/v1/nodes").status for _ in range(4)]
    assert statuses == [200, 200, 503, 200]


def test_a_proxy_handler_answers_from_the_current_objects(server: KubeTestServer) -> None:
    http = urllib3.PoolManager(retries=False)
    server.set_proxy_handler(
        "nvca-system", "nvca", 8000, "healthz", lambda: (200, {"nodes": len(server.list_objects("v1", "Node"))})
    )
    url = f"{server.url}/api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz"
    assert json.loads(http.request("GET", url).data) == {"nodes": 0}
    server.add({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}})
    assert json.loads(http.request("GET", url).data) == {"nodes": 1}


def test_standalone_mode_serves_a_snapshot_until_terminated(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.support.kubeserver",
            "--snapshot",
            str(DEMO_SNAPSHOTS / "prod-addon.yaml"),
            "--kubeconfig-out",
            str(kubeconfig),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        ready = proc.stdout.readline()
        assert ready.startswith("ready http://127.0.0.1:")
        url = ready.split()[1]
        assert json.loads(kubeconfig.read_text())["clusters"][0]["cluster"]["server"] == url
        http = urllib3.PoolManager(retries=False)
        queues = json.loads(http.request("GET", f"{url}/apis/scheduling.run.ai/v2/queues").data)["items"]
        assert sorted(q["metadata"]["name"] for q in queues) == ["default-parent-queue", "default-queue"]
        assert http.request("GET", f"{url}/api/v1/namespaces/kube-system").status == 200
        healthz = http.request("GET", f"{url}/api/v1/namespaces/nvca-system/services/nvca:8000/proxy/healthz")
        assert healthz.status == 503 and "quota=0" in healthz.data.decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=10) == 0
