"""The real-cluster harness itself: TLS and client certificates, RBAC, TokenRequest, CRDs, the reset between
tests, the ``python -m tests.support.envtest`` contract, and kubectl against it."""

from __future__ import annotations

import base64
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kubernetes
import pytest

from tests.support.envtest import EnvTest, EnvTestError
from tests.support.envtest._pki import generate
from tests.support.tools import REPO, _build_module, require_tool

QUEUES = ("scheduling.run.ai", "v2", "queues")


def core(client) -> kubernetes.client.CoreV1Api:
    return kubernetes.client.CoreV1Api(client)


def who_am_i(client) -> dict:
    review = kubernetes.client.AuthenticationV1Api(client).create_self_subject_review(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    )
    return review.status.user_info.to_dict()


def test_admin_client_certificate_over_tls_with_the_official_client(envtest: EnvTest, admin_client) -> None:
    assert envtest.url.startswith("https://127.0.0.1:")
    user = who_am_i(admin_client)
    assert user["username"] == "kai-gitops-envtest-admin"
    assert "system:masters" in user["groups"]
    kube_system = core(admin_client).read_namespace("kube-system")
    assert kube_system.metadata.uid == envtest.kube_system_uid  # the identity the product binds plans to
    names = {ns.metadata.name for ns in core(admin_client).list_namespace().items}
    assert names == {"default", "kube-system", "kube-public", "kube-node-lease"}


def test_the_server_certificate_is_checked_and_anonymous_requests_are_not_admin(
    envtest: EnvTest, tmp_path: Path
) -> None:
    other_ca = generate(tmp_path / "other").ca_cert
    configuration = kubernetes.client.Configuration(host=envtest.url)
    configuration.ssl_ca_cert = str(other_ca)
    configuration.retries = False
    with (
        kubernetes.client.ApiClient(configuration) as client,
        pytest.raises(kubernetes.client.ApiException) as untrusted,
    ):
        core(client).list_namespace()
    assert untrusted.value.status == 0
    assert "CERTIFICATE_VERIFY_FAILED" in untrusted.value.reason
    configuration = kubernetes.client.Configuration(host=envtest.url)
    configuration.ssl_ca_cert = str(envtest.pki.ca_cert)
    with kubernetes.client.ApiClient(configuration) as client, pytest.raises(kubernetes.client.ApiException) as denied:
        core(client).list_namespace()
    assert denied.value.status == 403
    assert "system:anonymous" in json.loads(denied.value.body)["message"]


def test_a_service_account_token_without_grants_gets_403_until_a_role_grants_it(envtest: EnvTest, admin_client) -> None:
    token = envtest.service_account_token("team-a", "reader")
    with envtest.api_client(token=token) as client:
        assert who_am_i(client)["username"] == "system:serviceaccount:team-a:reader"
        for call in (
            lambda: core(client).list_namespace(),
            lambda: core(client).list_namespaced_pod("team-a"),
            lambda: core(client).read_namespace("kube-system"),
        ):
            with pytest.raises(kubernetes.client.ApiException) as denied:
                call()
            assert denied.value.status == 403
        rbac = kubernetes.client.RbacAuthorizationV1Api(admin_client)
        rbac.create_namespaced_role(
            "team-a",
            {"metadata": {"name": "pods"}, "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]},
        )
        rbac.create_namespaced_role_binding(
            "team-a",
            {
                "metadata": {"name": "reader-pods"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pods"},
                "subjects": [{"kind": "ServiceAccount", "name": "reader", "namespace": "team-a"}],
            },
        )
        deadline = time.monotonic() + 10  # the RBAC authorizer reads through an informer: near-immediate
        while True:
            try:
                assert core(client).list_namespaced_pod("team-a").items == []
                break
            except kubernetes.client.ApiException as error:
                if error.status != 403 or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        with pytest.raises(kubernetes.client.ApiException) as denied:
            core(client).list_namespaced_pod("default")
        assert denied.value.status == 403


def test_token_request_issues_a_bound_token_the_server_authenticates(envtest: EnvTest, admin_client) -> None:
    token = envtest.service_account_token("team-b", "bot", audiences=["kai-gitops"], expiration_seconds=600)
    payload = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == "system:serviceaccount:team-b:bot"
    assert claims["aud"] == ["kai-gitops"]
    assert claims["iss"] == "https://kubernetes.default.svc.cluster.local"
    assert 550 <= claims["exp"] - claims["iat"] <= 650
    review = kubernetes.client.AuthenticationV1Api(admin_client).create_token_review(
        {"spec": {"token": token, "audiences": ["kai-gitops"]}}
    )
    assert review.status.authenticated
    assert review.status.user.username == "system:serviceaccount:team-b:bot"
    default = envtest.service_account_token("team-b", "bot")  # the API server's own audience
    with envtest.api_client(token=default) as client:
        assert who_am_i(client)["username"] == "system:serviceaccount:team-b:bot"


def test_token_kubeconfig(envtest: EnvTest, admin_client, tmp_path: Path) -> None:
    token = envtest.service_account_token("team-c", "ops")
    path = envtest.write_kubeconfig(tmp_path / "ops.kubeconfig", token=token)
    client = kubernetes.config.new_client_from_config(config_file=str(path))
    with client:
        assert who_am_i(client)["username"] == "system:serviceaccount:team-c:ops"


def test_the_products_crds_are_served_and_a_queue_round_trips_with_schema_checks(
    envtest: EnvTest, admin_client
) -> None:
    kinds = {(r.group, r.plural) for r in envtest.discover()}
    assert {
        ("scheduling.run.ai", "queues"),
        ("scheduling.run.ai", "podgroups"),
        ("kai.scheduler", "topologies"),
        ("kai.scheduler", "schedulingshards"),
        ("kai.scheduler", "configs"),
        ("nvcf.nvidia.io", "nvcfbackends"),
        ("wgpolicyk8s.io", "policyreports"),
        ("wgpolicyk8s.io", "clusterpolicyreports"),
        ("openreports.io", "reports"),
        ("openreports.io", "clusterreports"),
    } <= kinds
    custom = kubernetes.client.CustomObjectsApi(admin_client)
    queue = {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": "research", "labels": {"team": "a"}},
        "spec": {
            "priority": 200,
            "unknownField": "pruned",
            "resources": {"gpu": {"quota": 8, "limit": -1, "overQuotaWeight": 1}},
        },
    }
    created = custom.create_cluster_custom_object(*QUEUES, queue)
    read = custom.get_cluster_custom_object(*QUEUES, "research")
    assert read["metadata"]["uid"] == created["metadata"]["uid"]
    assert read["spec"]["priority"] == 200
    assert read["spec"]["resources"]["gpu"]["quota"] == 8
    assert "unknownField" not in read["spec"]  # structural schema: unknown fields pruned, as on a cluster
    with pytest.raises(kubernetes.client.ApiException) as invalid:
        custom.create_cluster_custom_object(*QUEUES, dict(queue, metadata={"name": "bad"}, spec={"priority": "high"}))
    assert invalid.value.status == 422
    patched = custom.patch_cluster_custom_object(*QUEUES, "research", {"spec": {"priority": 50}})
    assert patched["spec"]["priority"] == 50
    assert int(patched["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])


def test_reset_removes_what_a_test_created_and_restores_the_crds(envtest_session: EnvTest, admin_client) -> None:
    cluster = envtest_session
    api = core(admin_client)
    cluster.create_namespace("leftovers")
    api.create_node({"metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.present": "true"}}})
    api.create_namespaced_pod(
        "leftovers",
        {
            "metadata": {"name": "p", "finalizers": ["example.com/hold"]},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": "busybox"}]},
        },
    )
    api.create_namespaced_config_map("default", {"metadata": {"name": "note"}})
    custom = kubernetes.client.CustomObjectsApi(admin_client)
    custom.create_cluster_custom_object(
        *QUEUES,
        {
            "apiVersion": "scheduling.run.ai/v2",
            "kind": "Queue",
            "metadata": {"name": "q", "finalizers": ["example.com/hold"]},
        },
    )
    custom.create_namespaced_custom_object(
        "wgpolicyk8s.io",
        "v1alpha2",
        "leftovers",
        "policyreports",
        {"apiVersion": "wgpolicyk8s.io/v1alpha2", "kind": "PolicyReport", "metadata": {"name": "r"}},
    )
    kubernetes.client.RbacAuthorizationV1Api(admin_client).create_cluster_role(
        {"metadata": {"name": "extra"}, "rules": []}
    )
    extensions = kubernetes.client.ApiextensionsV1Api(admin_client)
    extensions.delete_custom_resource_definition("configs.kai.scheduler")
    api.delete_namespace("leftovers")  # no namespace controller: it would stay Terminating
    report = cluster.reset()
    assert {
        "nodes/gpu-1",
        "pods/leftovers/p",
        "configmaps/default/note",
        "queues/q",
        "clusterroles/extra",
        "policyreports/leftovers/r",
        "namespaces/leftovers",
    } <= set(report.deleted)
    assert report.restored_crds == ["configs.kai.scheduler"]
    assert {ns.metadata.name for ns in api.list_namespace().items} == {
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
    }
    assert api.list_node().items == []
    assert custom.list_cluster_custom_object(*QUEUES)["items"] == []
    assert extensions.read_custom_resource_definition("configs.kai.scheduler").status.conditions
    assert api.read_namespace("kube-system").metadata.uid == cluster.kube_system_uid
    cluster.create_namespace("leftovers")  # the name is free again
    again = cluster.reset()
    assert again.deleted == [
        "configmaps/leftovers/kube-root-ca.crt",
        "serviceaccounts/leftovers/default",
        "namespaces/leftovers",
    ]
    assert cluster.reset().deleted == []


def test_a_server_that_cannot_start_says_why_and_leaves_nothing_behind() -> None:
    require_tool("kube-apiserver")
    require_tool("etcd")
    cluster = EnvTest(extra_apiserver_args=["--authorization-mode=NoSuchMode"])
    with pytest.raises(EnvTestError) as failed:
        cluster.start()
    assert "kube-apiserver exited" in str(failed.value)
    assert "NoSuchMode" in str(failed.value)  # the tail of its log
    assert cluster.data_dir is not None and not cluster.data_dir.exists()


def _data_dirs_of(pid: int) -> list[Path]:
    found = []
    for directory in Path(tempfile.gettempdir()).glob("kai-gitops-envtest-*"):
        try:
            if (directory / "owner.pid").read_text() == str(pid):
                found.append(directory)
        except OSError:
            continue
    return found


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_standalone_contract(tmp_path: Path, stop_signal: signal.Signals) -> None:
    require_tool("kube-apiserver")
    require_tool("etcd")
    kubeconfig = tmp_path / "envtest.kubeconfig"
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.support.envtest", "--kubeconfig-out", str(kubeconfig)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, PYTHONUNBUFFERED="1"),
    )
    try:
        ready, _, _ = select.select([process.stdout], [], [], 120)
        assert ready, "no ready line within 120 s"
        line = process.stdout.readline()
        match = re.fullmatch(r"ready (https://127\.0\.0\.1:(\d+))\n", line)
        assert match, line
        url, port = match.group(1), int(match.group(2))
        (data_dir,) = _data_dirs_of(process.pid)
        client = kubernetes.config.new_client_from_config(config_file=str(kubeconfig))
        with client:
            assert client.configuration.host == url
            assert who_am_i(client)["username"] == "kai-gitops-envtest-admin"
            assert core(client).read_namespace("kube-system").metadata.uid
            assert "queues" in {
                r.name
                for r in kubernetes.client.CustomObjectsApi(client)
                .get_api_resources("scheduling.run.ai", "v2")
                .resources
            }
        process.send_signal(stop_signal)
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 0, err
    assert out == ""  # the ready line was the only line on stdout
    assert not data_dir.exists()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=2):
        pass


def test_kubectl_get_namespaces(envtest: EnvTest) -> None:
    kubectl = require_tool("kubectl")
    out = subprocess.run(
        [str(kubectl), "--kubeconfig", str(envtest.kubeconfig), "get", "ns", "-o", "name"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert set(out.stdout.split()) == {
        "namespace/default",
        "namespace/kube-system",
        "namespace/kube-public",
        "namespace/kube-node-lease",
    }
    version = subprocess.run(
        [str(kubectl), "--kubeconfig", str(envtest.kubeconfig), "version", "-o", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert version.returncode == 0, version.stderr
    versions = json.loads(version.stdout)
    (pin,) = [tool.version for tool in _build_module().discover() if tool.name == "kubernetes"]
    assert versions["serverVersion"]["gitVersion"] == versions["clientVersion"]["gitVersion"] == pin  # go.mod's
