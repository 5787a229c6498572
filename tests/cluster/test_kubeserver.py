"""Tests for the Kubernetes API test server, driven through the official client and raw urllib3."""

from __future__ import annotations

import errno
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import orjson
import pytest
import urllib3
from kubernetes import client, dynamic
from kubernetes.client.exceptions import ApiException

from tests.support.kubeserver import Fault, KubeTestServer, RequestRecord

QUEUE = ("scheduling.run.ai", "v2", "queues")


# --- fixtures and helpers --------------------------------------------------------------------------


@pytest.fixture
def server() -> Iterator[KubeTestServer]:
    with KubeTestServer() as srv:
        yield srv


def make_client(server: KubeTestServer, *, retries: Any = None) -> client.ApiClient:
    configuration = client.Configuration(host=server.url)
    configuration.retries = retries
    return client.ApiClient(configuration)


@pytest.fixture
def api(server: KubeTestServer) -> Iterator[client.ApiClient]:
    api_client = make_client(server)
    yield api_client
    api_client.close()


@pytest.fixture
def core(api: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api)


@pytest.fixture
def custom(server: KubeTestServer, api: client.ApiClient) -> client.CustomObjectsApi:
    server.register_kai_and_nvca_kinds()
    return client.CustomObjectsApi(api)


@pytest.fixture
def http() -> urllib3.PoolManager:
    return urllib3.PoolManager(retries=False)


def node(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}}


def pod(name: str, namespace: str = "default", **spec: Any) -> dict[str, Any]:
    status = {"phase": spec.pop("phase", "Running")}
    spec.setdefault("containers", [{"name": "main", "image": "busybox"}])  # required by the client models
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def queue(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": name}, "spec": spec}


def status_of(exc: ApiException) -> dict[str, Any]:
    body: dict[str, Any] = orjson.loads(exc.body)
    return body


def get_json(http: urllib3.PoolManager, url: str, **fields: str) -> tuple[int, dict[str, Any]]:
    response = http.request("GET", url, fields=fields or None)
    return response.status, orjson.loads(response.data)


def names(items: list[Any]) -> list[str]:
    return [item.metadata.name for item in items]


# --- discovery -------------------------------------------------------------------------------------


def test_core_discovery(api: client.ApiClient) -> None:
    assert client.CoreApi(api).get_api_versions().versions == ["v1"]
    resources = {r.name: r for r in client.CoreV1Api(api).get_api_resources().resources}
    assert resources["pods"].namespaced and resources["pods"].kind == "Pod"
    assert not resources["nodes"].namespaced
    assert resources["pods"].singular_name == "pod"
    assert {"list", "get", "patch"} <= set(resources["secrets"].verbs)
    assert "services/proxy" in resources
    groups = {g.name for g in client.ApisApi(api).get_api_versions().groups}
    assert groups == {"apiextensions.k8s.io", "coordination.k8s.io", "events.k8s.io", "apps", "batch"}


def test_custom_kind_is_not_served_until_registered(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    # no handler serves the group: a plain-text 404, as on the real server (not a Status)
    response = http.request("GET", f"{server.url}/apis/scheduling.run.ai/v2")
    assert (response.status, response.data) == (404, b"404 page not found\n")
    with pytest.raises(ApiException) as raised:
        client.CustomObjectsApi(make_client(server)).list_cluster_custom_object(*QUEUE)
    assert raised.value.status == 404 and raised.value.body == "404 page not found\n"


def test_registered_groups_and_resources(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.register_kai_and_nvca_kinds()
    _, group_list = get_json(http, f"{server.url}/apis")
    groups = {g["name"]: g for g in group_list["groups"]}
    assert set(groups) >= {"scheduling.run.ai", "kai.scheduler", "nvcf.nvidia.io", "apiextensions.k8s.io"}
    # GA beats alpha when choosing the preferred version, like the real server.
    assert groups["scheduling.run.ai"]["preferredVersion"]["version"] == "v2"
    assert [v["version"] for v in groups["scheduling.run.ai"]["versions"]] == ["v2", "v2alpha2"]
    _, resources = get_json(http, f"{server.url}/apis/scheduling.run.ai/v2alpha2")
    assert resources["groupVersion"] == "scheduling.run.ai/v2alpha2"
    assert resources["resources"] == [
        {
            "name": "podgroups",
            "singularName": "podgroup",
            "namespaced": True,
            "kind": "PodGroup",
            "verbs": resources["resources"][0]["verbs"],
        }
    ]
    crd = server.get_object("apiextensions.k8s.io/v1", "CustomResourceDefinition", "queues.scheduling.run.ai")
    assert crd is not None and crd["spec"]["scope"] == "Cluster"


def test_dynamic_client_uses_discovery(server: KubeTestServer, api: client.ApiClient) -> None:
    server.register_kai_and_nvca_kinds()
    server.add(queue("team-a", priority=10))
    queues = dynamic.DynamicClient(api).resources.get(api_version="scheduling.run.ai/v2", kind="Queue")
    assert [q.metadata.name for q in queues.get().items] == ["team-a"]


def test_unknown_resource_is_404_status(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    for path in (
        "/api/v1/widgets",
        "/api/v2/pods",
        "/api/v1/namespaces/x/nodes",
        "/apis/coordination.k8s.io/v9",
        "/apis/coordination.k8s.io/v1/widgets",
    ):
        status, body = get_json(http, server.url + path)
        assert (status, body["status"], body["reason"]) == (404, "Failure", "NotFound"), path
    # below /apis, a group nobody serves (or a custom resource group's unknown path) has no handler at all
    server.register_kai_and_nvca_kinds()
    for path in (
        "/apis/nope.example.com/v1",
        "/apis/scheduling.run.ai/v9",
        "/apis/scheduling.run.ai/v2/widgets",
        "/apis/scheduling.run.ai/v2/namespaces/x/queues",
    ):
        response = http.request("GET", server.url + path)
        assert (response.status, response.data) == (404, b"404 page not found\n"), path


def test_watch_is_refused(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    status, body = get_json(http, f"{server.url}/api/v1/pods", watch="true")
    assert (status, body["reason"]) == (405, "MethodNotAllowed")


# --- reads, selectors ------------------------------------------------------------------------------


@pytest.fixture
def labelled_nodes(server: KubeTestServer) -> None:
    server.add(node("n1", gpu="true", zone="a", count="1"))
    server.add(node("n2", gpu="false", zone="b", count="3"))
    server.add(node("n3", gpu="true", zone="c"))
    server.add(node("n4"))


@pytest.mark.usefixtures("labelled_nodes")
@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("gpu=true", ["n1", "n3"]),
        ("gpu==true", ["n1", "n3"]),
        ("gpu!=true", ["n2", "n4"]),  # != also matches nodes without the label
        ("gpu", ["n1", "n2", "n3"]),
        ("!gpu", ["n4"]),
        ("zone in (a,b)", ["n1", "n2"]),
        ("zone notin (a,b)", ["n3", "n4"]),
        ("gpu=true,zone in (c, d)", ["n3"]),
        ("count>2", ["n2"]),
        ("", ["n1", "n2", "n3", "n4"]),
    ],
)
def test_label_selectors(core: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    assert names(core.list_node(label_selector=selector).items) == expected


@pytest.mark.usefixtures("labelled_nodes")
def test_bad_label_selector_is_400(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as raised:
        core.list_node(label_selector="zone in ()")
    assert raised.value.status == 400 and status_of(raised.value)["reason"] == "BadRequest"


@pytest.fixture
def pods_and_friends(server: KubeTestServer) -> None:
    server.add(pod("a", "ns1", nodeName="n1", schedulerName="kai-scheduler"))
    server.add(pod("b", "ns1", schedulerName="default-scheduler", phase="Pending"))
    server.add(pod("c", "ns2", nodeName="n2", schedulerName="kai-scheduler", phase="Succeeded"))
    server.add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "sh.helm.release.v1.kai.v1", "namespace": "kai-system"},
            "type": "helm.sh/release.v1",
        }
    )
    server.add(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "tls", "namespace": "kai-system"},
            "type": "kubernetes.io/tls",
        }
    )
    for name, kind, reason in [("e1", "Pod", "FailedScheduling"), ("e2", "Queue", "Unschedulable")]:
        server.add(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": name, "namespace": "ns1"},
                "involvedObject": {"kind": kind, "name": "a"},
                "reason": reason,
            }
        )


@pytest.mark.usefixtures("pods_and_friends")
@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("spec.nodeName=n1", ["a"]),
        ("spec.nodeName=", ["b"]),  # unscheduled pods have an empty nodeName
        ("spec.nodeName!=n1", ["b", "c"]),
        ("spec.schedulerName==kai-scheduler", ["a", "c"]),
        ("status.phase!=Running,status.phase!=Pending", ["c"]),
        ("metadata.name=b", ["b"]),
        ("metadata.namespace=ns2", ["c"]),
    ],
)
def test_pod_field_selectors(core: client.CoreV1Api, selector: str, expected: list[str]) -> None:
    assert names(core.list_pod_for_all_namespaces(field_selector=selector).items) == expected


@pytest.mark.usefixtures("pods_and_friends")
def test_secret_and_event_field_selectors(core: client.CoreV1Api) -> None:
    helm = core.list_secret_for_all_namespaces(field_selector="type=helm.sh/release.v1")
    assert names(helm.items) == ["sh.helm.release.v1.kai.v1"]
    events = core.list_namespaced_event("ns1", field_selector="involvedObject.name=a,involvedObject.kind=Pod")
    assert names(events.items) == ["e1"]
    assert names(core.list_namespaced_event("ns1", field_selector="reason!=FailedScheduling").items) == ["e2"]


@pytest.mark.usefixtures("pods_and_friends")
def test_unsupported_field_selector_is_400(core: client.CoreV1Api, custom: client.CustomObjectsApi) -> None:
    with pytest.raises(ApiException) as raised:
        core.list_secret_for_all_namespaces(field_selector="spec.nodeName=n1")  # a Pod field, not a Secret one
    assert raised.value.status == 400
    assert status_of(raised.value)["message"] == "field label not supported: spec.nodeName"
    with pytest.raises(ApiException) as raised:
        custom.list_cluster_custom_object(*QUEUE, field_selector="spec.priority=1")
    assert raised.value.status == 400 and "is not a known field selector" in status_of(raised.value)["message"]


def test_get_has_type_but_list_items_do_not(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.add(pod("a", "ns1"))
    _, one = get_json(http, f"{server.url}/api/v1/namespaces/ns1/pods/a")
    assert (one["apiVersion"], one["kind"]) == ("v1", "Pod")
    _, listed = get_json(http, f"{server.url}/api/v1/namespaces/ns1/pods")
    assert listed["kind"] == "PodList" and listed["apiVersion"] == "v1"
    assert "kind" not in listed["items"][0] and "apiVersion" not in listed["items"][0]
    assert listed["metadata"] == {"resourceVersion": one["metadata"]["resourceVersion"]}


def test_namespaced_and_cluster_wide_lists(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add_many([pod("z", "ns-b"), pod("a", "ns-b"), pod("m", "ns-a"), pod("b", "ns-a-x")])
    assert names(core.list_namespaced_pod("ns-b").items) == ["a", "z"]
    everywhere = core.list_pod_for_all_namespaces().items
    # Key order is "<namespace>/<name>" byte order, as in etcd ("ns-a-x/" sorts before "ns-a/").
    assert [(p.metadata.namespace, p.metadata.name) for p in everywhere] == [
        ("ns-a-x", "b"),
        ("ns-a", "m"),
        ("ns-b", "a"),
        ("ns-b", "z"),
    ]


def test_raw_reads_with_preload_content_false(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add(pod("a", "ns1", nodeName="n1"))
    response = core.list_namespaced_pod("ns1", _preload_content=False)
    body = orjson.loads(response.data)
    assert body["kind"] == "PodList" and body["items"][0]["spec"]["nodeName"] == "n1"
    assert response.headers["Content-Type"] == "application/json"


def test_raw_urllib3_uses_one_keep_alive_connection(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.add(node("n1"))
    for _ in range(5):
        assert get_json(http, f"{server.url}/api/v1/nodes/n1")[0] == 200
    pool = http.connection_from_url(server.url)
    assert pool.num_connections == 1 and pool.num_requests == 5


# --- paging ----------------------------------------------------------------------------------------


def test_paging_across_three_pages(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add_many(node(f"n{i}") for i in range(7))
    first = core.list_node(limit=3)
    second = core.list_node(limit=3, _continue=first.metadata._continue)
    third = core.list_node(limit=3, _continue=second.metadata._continue)
    assert [names(p.items) for p in (first, second, third)] == [
        ["n0", "n1", "n2"],
        ["n3", "n4", "n5"],
        ["n6"],
    ]
    assert (first.metadata.remaining_item_count, second.metadata.remaining_item_count) == (4, 1)
    assert third.metadata._continue is None and third.metadata.remaining_item_count is None
    # Continued pages report the first page's resourceVersion, like the real server's snapshot.
    assert first.metadata.resource_version == third.metadata.resource_version


def test_paging_with_a_selector_fills_pages(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add_many(node(f"n{i:02d}", parity=str(i % 2)) for i in range(20))
    pages, token = [], None
    while True:
        page = core.list_node(label_selector="parity=1", limit=4, _continue=token)
        pages.append(names(page.items))
        assert page.metadata.remaining_item_count is None  # unknown when filtering
        token = page.metadata._continue
        if not token:
            break
    assert [len(p) for p in pages] == [4, 4, 2]
    assert [name for page in pages for name in page] == [f"n{i:02d}" for i in range(1, 20, 2)]


def test_large_list_pages_stay_consistent(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.add_many(pod(f"p{i:05d}", f"ns{i % 7}") for i in range(3000))
    seen, token, pages = [], "", 0
    while True:
        _, body = get_json(http, f"{server.url}/api/v1/pods", limit="250", **({"continue": token} if token else {}))
        seen += [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in body["items"]]
        pages += 1
        token = body["metadata"].get("continue", "")
        if not token:
            break
    assert pages == 12 and len(set(seen)) == 3000 and seen == sorted(seen, key=lambda k: f"{k[0]}/{k[1]}")


def test_writes_between_pages_are_visible(server: KubeTestServer, core: client.CoreV1Api) -> None:
    """Documented deviation: pages read live data (the real server would serve a snapshot)."""
    server.add_many(node(f"n{i}") for i in range(4))
    first = core.list_node(limit=2)
    server.add(node("n9"))
    rest = core.list_node(limit=10, _continue=first.metadata._continue)
    assert names(rest.items) == ["n2", "n3", "n9"]


def test_expired_continue_token_is_410() -> None:
    with KubeTestServer(page_token_ttl_s=0.05) as server:
        server.add_many(node(f"n{i}") for i in range(4))
        core = client.CoreV1Api(make_client(server))
        token = core.list_node(limit=2).metadata._continue
        time.sleep(0.1)
        with pytest.raises(ApiException) as raised:
            core.list_node(limit=2, _continue=token)
    status = status_of(raised.value)
    assert (raised.value.status, status["reason"], status["code"]) == (410, "Expired", 410)
    assert status["message"].startswith("The provided continue parameter is too old to display a consistent")


def test_expire_continue_fault_hits_only_continued_lists(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add_many(node(f"n{i}") for i in range(4))
    server.inject_fault(Fault(path_regex=r"^/api/v1/nodes$", expire_continue=True))
    token = core.list_node(limit=2).metadata._continue  # no continue parameter: unaffected
    with pytest.raises(ApiException) as raised:
        core.list_node(limit=2, _continue=token)
    assert raised.value.status == 410 and status_of(raised.value)["reason"] == "Expired"
    assert names(core.list_node(limit=2, _continue=token).items) == ["n2", "n3"]  # times=1 is used up


def test_garbage_continue_token_is_400(server: KubeTestServer, core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as raised:
        core.list_node(limit=2, _continue="not-a-token")
    assert raised.value.status == 400


# --- writes ----------------------------------------------------------------------------------------


def config_map(name: str, namespace: str = "kai-system", **data: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    }


def test_create_is_201_then_409_already_exists(server: KubeTestServer, core: client.CoreV1Api) -> None:
    created, code, _ = core.create_namespaced_config_map_with_http_info("kai-system", config_map("cfg", a="1"))
    assert code == 201
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(ApiException) as raised:
        core.create_namespaced_config_map("kai-system", config_map("cfg"))
    status = status_of(raised.value)
    assert (raised.value.status, status["reason"]) == (409, "AlreadyExists")
    assert status["message"] == 'configmaps "cfg" already exists'
    assert status["details"] == {"name": "cfg", "kind": "configmaps"}


def test_create_rejects_namespace_mismatch_and_preset_resource_version(core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as raised:
        core.create_namespaced_config_map("other", config_map("cfg"))
    assert raised.value.status == 400
    body = config_map("cfg")
    body["metadata"]["resourceVersion"] = "5"
    with pytest.raises(ApiException) as raised:
        core.create_namespaced_config_map("kai-system", body)
    assert raised.value.status == 500


def test_dry_run_never_persists(
    server: KubeTestServer, core: client.CoreV1Api, custom: client.CustomObjectsApi
) -> None:
    created = core.create_namespaced_config_map("kai-system", config_map("cfg"), dry_run="All")
    assert created.metadata.uid and not created.metadata.resource_version
    assert server.get_object("v1", "ConfigMap", "cfg", "kai-system") is None
    server.add(queue("q", priority=1))
    patched = custom.patch_cluster_custom_object(*QUEUE, "q", {"spec": {"priority": 9}}, dry_run="All")
    assert patched["spec"]["priority"] == 9
    custom.delete_cluster_custom_object(*QUEUE, "q", dry_run="All")
    stored = server.get_object("scheduling.run.ai/v2", "Queue", "q")
    assert stored is not None and stored["spec"]["priority"] == 1
    with pytest.raises(ApiException) as raised:
        core.create_namespaced_config_map("kai-system", config_map("cfg"), dry_run="Some")
    assert raised.value.status == 422


def test_merge_patch_on_custom_object(server: KubeTestServer, custom: client.CustomObjectsApi) -> None:
    before = server.add(queue("q", priority=1, parentQueue="root", resources={"gpu": {"quota": 4}}))
    after = custom.patch_cluster_custom_object(
        *QUEUE,
        "q",
        {
            "metadata": {"labels": {"team": "a"}},
            "spec": {"priority": 5, "parentQueue": None, "resources": {"gpu": {"limit": 8}}},
        },
    )
    assert after["spec"] == {"priority": 5, "resources": {"gpu": {"quota": 4, "limit": 8}}}
    assert after["metadata"]["labels"] == {"team": "a"}
    assert int(after["metadata"]["resourceVersion"]) > int(before["metadata"]["resourceVersion"])
    assert after["metadata"]["generation"] == 2
    assert after["metadata"]["uid"] == before["metadata"]["uid"]
    assert server.get_object("scheduling.run.ai/v2", "Queue", "q") == after


def test_metadata_only_patch_keeps_generation(server: KubeTestServer, custom: client.CustomObjectsApi) -> None:
    server.add(queue("q", priority=1))
    after = custom.patch_cluster_custom_object(*QUEUE, "q", {"metadata": {"annotations": {"x": "y"}}})
    assert after["metadata"]["generation"] == 1


def test_json_patch(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add(config_map("cfg", a="1", b="2"))
    ops = [
        {"op": "test", "path": "/data/a", "value": "1"},
        {"op": "replace", "path": "/data/a", "value": "10"},
        {"op": "remove", "path": "/data/b"},
        {"op": "add", "path": "/metadata/labels", "value": {"x~y/z": "1"}},
    ]
    patched = core.patch_namespaced_config_map("cfg", "kai-system", ops)
    assert patched.data == {"a": "10"} and patched.metadata.labels == {"x~y/z": "1"}
    with pytest.raises(ApiException) as raised:
        core.patch_namespaced_config_map(
            "cfg",
            "kai-system",
            [{"op": "test", "path": "/data/a", "value": "1"}, {"op": "remove", "path": "/data/a"}],
        )
    assert raised.value.status == 422
    assert server.get_object("v1", "ConfigMap", "cfg", "kai-system")["data"] == {"a": "10"}  # all-or-nothing


def test_strategic_merge_patch(server: KubeTestServer, core: client.CoreV1Api, custom: client.CustomObjectsApi) -> None:
    server.add(config_map("cfg", a="1"))
    # A dict body makes the client send strategic-merge-patch+json; built-in kinds accept it.
    assert core.patch_namespaced_config_map("cfg", "kai-system", {"data": {"b": "2"}}).data == {
        "a": "1",
        "b": "2",
    }
    server.add(queue("q", priority=1))
    with pytest.raises(ApiException) as raised:
        custom.patch_cluster_custom_object(
            *QUEUE, "q", {"spec": {"priority": 2}}, _content_type="application/strategic-merge-patch+json"
        )
    assert raised.value.status == 415 and status_of(raised.value)["reason"] == "UnsupportedMediaType"


def test_server_side_apply(server: KubeTestServer, core: client.CoreV1Api, http: urllib3.PoolManager) -> None:
    url = f"{server.url}/api/v1/namespaces/kai-system/configmaps/cfg"
    yaml_body = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg\n  namespace: kai-system\ndata:\n  a: '1'\n"
    headers = {"Content-Type": "application/apply-patch+yaml"}
    created = http.request("PATCH", url + "?fieldManager=kai-gitops&force=true", body=yaml_body, headers=headers)
    assert created.status == 201
    applied = core.patch_namespaced_config_map(
        "cfg",
        "kai-system",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg"}, "data": {"b": "2"}},
        field_manager="operator",  # a second manager, so real SSA would also keep "a"
        force=True,
        _content_type="application/apply-patch+yaml",
    )
    assert applied.data == {"a": "1", "b": "2"}
    entries = [(m.manager, m.operation, m.fields_v1) for m in applied.metadata.managed_fields]
    assert entries == [
        ("kai-gitops", "Apply", {"f:data": {"f:a": {}}}),
        ("operator", "Apply", {"f:data": {"f:b": {}}}),
    ]
    dry = http.request(
        "PATCH",
        url.replace("/cfg", "/new") + "?fieldManager=m&dryRun=All",
        body=yaml_body.replace(b"name: cfg", b"name: new"),
        headers=headers,
    )
    assert dry.status == 201 and server.get_object("v1", "ConfigMap", "new", "kai-system") is None
    missing_manager = http.request("PATCH", url, body=yaml_body, headers=headers)
    assert missing_manager.status == 422  # the real server answers 422 Invalid, not 400
    assert b"fieldManager: Required value" in missing_manager.data


def test_put_with_stale_resource_version_is_409(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add(config_map("cfg", a="1"))
    current = core.read_namespaced_config_map("cfg", "kai-system")
    current.data = {"a": "2"}
    replaced = core.replace_namespaced_config_map("cfg", "kai-system", current)
    assert replaced.data == {"a": "2"}
    current.data = {"a": "3"}  # still carries the old resourceVersion
    with pytest.raises(ApiException) as raised:
        core.replace_namespaced_config_map("cfg", "kai-system", current)
    status = status_of(raised.value)
    assert (raised.value.status, status["reason"]) == (409, "Conflict")
    assert status["message"] == (
        'Operation cannot be fulfilled on configmaps "cfg": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )


def test_patch_with_stale_resource_version_is_409(server: KubeTestServer, custom: client.CustomObjectsApi) -> None:
    rv = server.add(queue("q", priority=1))["metadata"]["resourceVersion"]
    custom.patch_cluster_custom_object(*QUEUE, "q", {"metadata": {"resourceVersion": rv}, "spec": {"priority": 2}})
    with pytest.raises(ApiException) as raised:
        custom.patch_cluster_custom_object(*QUEUE, "q", {"metadata": {"resourceVersion": rv}, "spec": {"x": 1}})
    assert raised.value.status == 409
    assert status_of(raised.value)["message"].startswith(
        'Operation cannot be fulfilled on queues.scheduling.run.ai "q": the object has been modified'
    )


def test_delete_answers_status_and_removes(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add(config_map("cfg"))
    status = core.delete_namespaced_config_map("cfg", "kai-system")
    assert status["status"] == "Success" and status["details"]["name"] == "cfg"  # delete responses are untyped
    with pytest.raises(ApiException) as raised:
        core.read_namespaced_config_map("cfg", "kai-system")
    assert raised.value.status == 404
    assert status_of(raised.value)["message"] == 'configmaps "cfg" not found'


def test_writes_keep_paging_order(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.add_many(node(f"n{i}") for i in (1, 3, 5))
    assert names(core.list_node().items) == ["n1", "n3", "n5"]  # builds the sorted key list
    core.create_node({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n2"}})
    core.delete_node("n3")
    assert names(core.list_node().items) == ["n1", "n2", "n5"]


def test_add_fills_metadata_and_returns_copies(server: KubeTestServer) -> None:
    source = node("n1")
    first = server.add(source)
    second = server.add(node("n2"))
    assert "uid" not in source["metadata"]  # the caller's dict is untouched
    assert first["metadata"]["uid"] and first["metadata"]["creationTimestamp"].endswith("Z")
    assert int(second["metadata"]["resourceVersion"]) > int(first["metadata"]["resourceVersion"])
    fetched = server.get_object("v1", "Node", "n1")
    assert fetched is not None
    fetched["metadata"]["labels"]["mutated"] = "yes"
    assert server.get_object("v1", "Node", "n1") == first
    with pytest.raises(KeyError):
        server.add(queue("q"))  # Queue is not registered


# --- service proxy ---------------------------------------------------------------------------------


def test_healthz_proxy(server: KubeTestServer, core: client.CoreV1Api) -> None:
    with pytest.raises(ApiException) as raised:
        core.connect_get_namespaced_service_proxy_with_path("nvca:8000", "nvca-system", "healthz")
    assert raised.value.status == 404  # no Service at all
    assert status_of(raised.value)["message"] == 'services "nvca" not found'
    server.add({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "nvca", "namespace": "nvca-system"}})
    with pytest.raises(ApiException) as raised:
        core.connect_get_namespaced_service_proxy_with_path("nvca:8000", "nvca-system", "healthz")
    assert raised.value.status == 503  # a Service whose pods are not ready
    assert status_of(raised.value)["message"] == 'no endpoints available for service "nvca"'
    server.set_healthz(200, {"status": "ok"})
    raw = core.connect_get_namespaced_service_proxy_with_path(
        "nvca:8000", "nvca-system", "healthz", _preload_content=False
    )
    assert (raw.status, orjson.loads(raw.data)) == (200, {"status": "ok"})
    portless = core.connect_get_namespaced_service_proxy_with_path(
        "nvca", "nvca-system", "healthz", _preload_content=False
    )
    assert portless.status == 200


def test_healthz_proxy_503_carries_backend_body(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.set_healthz(503, {"status": "degraded", "backends": {"nvcf": "down"}})
    with pytest.raises(ApiException) as raised:
        core.connect_get_namespaced_service_proxy_with_path("nvca:8000", "nvca-system", "healthz")
    assert raised.value.status == 503
    assert orjson.loads(raised.value.body) == {"status": "degraded", "backends": {"nvcf": "down"}}


# --- faults ----------------------------------------------------------------------------------------


def test_fault_status_with_retry_after(server: KubeTestServer) -> None:
    server.inject_fault(Fault(path_regex=r"/nodes", status=429, retry_after=2))
    core = client.CoreV1Api(make_client(server, retries=False))
    with pytest.raises(ApiException) as raised:
        core.list_node()
    status = status_of(raised.value)
    assert (raised.value.status, status["reason"], status["details"]) == (
        429,
        "TooManyRequests",
        {"retryAfterSeconds": 2},
    )
    assert raised.value.headers["Retry-After"] == "2"
    assert core.list_node().items == []  # times=1 is used up


def test_default_client_retries_through_a_single_429(server: KubeTestServer, core: client.CoreV1Api) -> None:
    """urllib3's default Retry honours Retry-After on 429/503, so one fault is invisible to callers."""
    server.inject_fault(Fault(path_regex=r"^/api/v1/nodes$", status=429, retry_after=0))
    assert core.list_node().items == []
    assert [r.status for r in server.requests] == [429, 200]


def test_fault_times_and_method_filter(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.add(node("n1"))
    server.inject_fault(Fault(path_regex=r"/nodes/n1$", method="GET", status=500, times=2))
    server.inject_fault(Fault(path_regex=r"/nodes", method="POST", status=503))
    statuses = [get_json(http, f"{server.url}/api/v1/nodes/n1")[0] for _ in range(3)]
    assert statuses == [500, 500, 200]
    assert server.requests[-1] == RequestRecord("GET", "/api/v1/nodes/n1", {}, 200)


def test_fault_forever_until_cleared(server: KubeTestServer, http: urllib3.PoolManager) -> None:
    server.inject_fault(Fault(path_regex=r"/nodes", status=503, times=-1))
    assert [get_json(http, f"{server.url}/api/v1/nodes")[0] for _ in range(4)] == [503] * 4
    server.clear_faults()
    assert get_json(http, f"{server.url}/api/v1/nodes")[0] == 200


def test_delay_fault_triggers_client_timeout(server: KubeTestServer) -> None:
    server.inject_fault(Fault(path_regex=r"/nodes", delay_s=2.0))
    core = client.CoreV1Api(make_client(server, retries=False))
    started = time.monotonic()
    with pytest.raises(urllib3.exceptions.ReadTimeoutError):
        core.list_node(_request_timeout=0.2)
    assert time.monotonic() - started < 1.5
    assert core.list_node(_request_timeout=2).items == []


def test_reset_fault_is_a_connection_error(server: KubeTestServer) -> None:
    server.inject_fault(Fault(path_regex=r"/nodes", reset=True))
    core = client.CoreV1Api(make_client(server, retries=False))
    with pytest.raises(urllib3.exceptions.ProtocolError) as raised:
        core.list_node()
    # errno distinguishes a real RST from http.client's RemoteDisconnected (a FIN, also a ConnectionResetError).
    assert isinstance(raised.value.args[1], ConnectionResetError)
    assert raised.value.args[1].errno == errno.ECONNRESET
    assert server.requests[-1].status == 0
    assert core.list_node().items == []


def test_default_client_gives_up_after_repeated_resets(server: KubeTestServer, core: client.CoreV1Api) -> None:
    server.inject_fault(Fault(path_regex=r"/nodes", reset=True, times=-1))
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        core.list_node()
    assert [r.status for r in server.requests] == [0, 0, 0, 0]  # 1 try + urllib3's 3 retries


# --- custom objects and concurrency ----------------------------------------------------------------


def test_custom_object_lists(server: KubeTestServer, custom: client.CustomObjectsApi) -> None:
    server.add_many(queue(f"q{i}") | {"metadata": {"name": f"q{i}", "labels": {"tier": str(i % 2)}}} for i in range(5))
    first = custom.list_cluster_custom_object(*QUEUE, label_selector="tier=0", limit=2)
    assert [q["metadata"]["name"] for q in first["items"]] == ["q0", "q2"]
    rest = custom.list_cluster_custom_object(
        *QUEUE, label_selector="tier=0", limit=2, _continue=first["metadata"]["continue"]
    )
    assert [q["metadata"]["name"] for q in rest["items"]] == ["q4"] and "continue" not in rest["metadata"]
    for namespace in ("team-b", "team-a"):
        server.add(
            {
                "apiVersion": "scheduling.run.ai/v2alpha2",
                "kind": "PodGroup",
                "metadata": {"name": "pg", "namespace": namespace},
            }
        )
    podgroups = ("scheduling.run.ai", "v2alpha2")
    assert len(custom.list_namespaced_custom_object(*podgroups, "team-a", "podgroups")["items"]) == 1
    everywhere = custom.list_cluster_custom_object(*podgroups, "podgroups")["items"]
    assert [pg["metadata"]["namespace"] for pg in everywhere] == ["team-a", "team-b"]


def test_concurrent_clients(server: KubeTestServer) -> None:
    server.add_many(node(f"n{i}") for i in range(50))
    core = client.CoreV1Api(make_client(server))

    def count() -> int:
        return len(core.list_node(limit=20).items)

    with ThreadPoolExecutor(max_workers=8) as pool:
        assert list(pool.map(lambda _: count(), range(32))) == [20] * 32
