"""Keep the stand-in honest: every request shape kai-gitops sends, to both the stand-in API server
(tests/support/kubeserver) and the real one (tests/support/envtest), comparing the status codes and the fields
the product reads.

Shape (method, path, query)                                          where the product sends it
-------------------------------------------------------------------  ----------------------------------------------
GET /apis                                                            sources/cluster/reads.py Reader.discover
GET /apis/{scheduling.run.ai/v2,kai.scheduler/v1,nvcf.nvidia.io/v1}  reads.py Reader._resources (404: not served)
GET /apis/{wgpolicyk8s.io/v1alpha2,openreports.io/v1alpha1}          publish/policyreport/cluster.py served_kinds
GET .../customresourcedefinitions/{name}           (200 | 404)       reads.py base_reads "crds/*" (Reader.object)
GET /apis/kai.scheduler/v1/configs/kai-config (200 | 404)            reads.py base_reads "kai-config"
GET /api/v1/namespaces/nvca-operator/configmaps/... (200 | 404)      reads.py base_reads "dto"
GET /apis/batch/v1/namespaces/kai-scheduler/jobs/kai-config-deployer reads.py operand_reads "deployer-job"
GET /api/v1/namespaces/kube-system                                   reconcile/cluster.py read_identity (the uid)
GET lists ?limit=N[&continue=T]                                      reads.py Reader._list_once, every ListRead:
    /apis/scheduling.run.ai/v2/queues, /apis/kai.scheduler/v1/schedulingshards,
    /apis/nvcf.nvidia.io/v1/nvcfbackends, /api/v1/nodes,
    /api/v1/namespaces ?labelSelector=<NVCF namespace label>, /api/v1/pods ?labelSelector=icms-request-id,
    /api/v1/namespaces/kai-scheduler/pods, /api/v1/namespaces/NS/pods ?labelSelector=!icms-request-id,
    /apis/apps/v1/namespaces/kai-scheduler/deployments, /api/v1/namespaces/kai-scheduler/serviceaccounts,
    /api/v1/secrets ?labelSelector=owner=helm&fieldSelector=type=helm.sh/release.v1 (403: the namespace's),
    /api/v1/events ?fieldSelector=involvedObject.kind=Pod,reason=R
GET /api/v1/nodes ?limit&continue                                    reconcile/apply.py ClusterWriter.list_nodes
GET /api/v1/namespaces ?limit&continue                               policyreport/cluster.py _Store.namespaces
GET /apis/G/V/PLURAL ?labelSelector=managed-by,cluster&limit=100     policyreport/cluster.py _Store.list_managed
410 on a continue token (the list restarts)                          sources/cluster/client.py ClusterClient.get
GET .../services/nvca:8000/proxy/healthz  (any status is an answer)  reads.py Reader.healthz
GET /apis/scheduling.run.ai/v2/queues/NAME (200 | 404)               apply.py ClusterWriter.get (preflight)
POST /apis/scheduling.run.ai/v2/queues ?fieldManager[&dryRun=All]    apply.py create_queue (dryrun.py, then apply)
PATCH queues/NAME, nodes/NAME merge patch + metadata.resourceVersion apply.py patch_queue, patch_node_label
PATCH configs/kai-config, schedulingshards/NAME merge patch + RV      apply.py write_change (KAI-D-005, KAI-D-003)
    (match 200, stale 409, dryRun=All 200 and nothing stored)
GET/POST/PUT /apis/coordination.k8s.io/v1/namespaces/NS/leases[/N]   reconcile/lease.py (get_lease, create, update);
    the GET also reads.py operand_reads "scheduler-lease" (kai-scheduler/kai-scheduler)
POST /apis/events.k8s.io/v1/namespaces/default/events                reconcile/events.py event_for, run.py EventSender
POST/PUT/GET policyreports, clusterpolicyreports (openreports alike) policyreport/cluster.py _Store create/replace/_get
DELETE ... with preconditions.uid (match 200, other 409, gone 404)  policyreport/cluster.py _Store.delete
403 for an identity without grants                                   everywhere: client.py _hint, lease.py _lease_hint

The stand-in has no RBAC: the 403 test runs the real server only and checks that the stand-in's injected 403
(the fast tests' only source of them) is shaped like the real one, and that its docstring says so. What else
the stand-in does not model is listed in its package docstring, which points here.
"""

from __future__ import annotations

import base64
import json
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import pytest
import urllib3

import tests.support.kubeserver as kubeserver_package
from reconciler.core.refs import ObjectRef
from reconciler.core.resources import EVENT, LEASE, NODE, QUEUE, SCHEDULING_SHARD
from reconciler.model.live import KAI_NAMESPACE, NVCF_NAMESPACE_LABEL, NVCF_POD_LABEL, SCHEDULE_LABEL
from reconciler.plans.applied import ChangeResult, WriteResult
from reconciler.plans.plan import Change, FieldChange, Operation
from reconciler.publish.policyreport.build import CLUSTER_LABEL, MANAGED_BY_LABEL, SOURCE, cluster_label_value
from reconciler.reconcile.allowed_writes import MERGE_PATCH
from reconciler.reconcile.apply import FIELD_MANAGER, USER_AGENT
from reconciler.reconcile.events import EVENT_NAMESPACE, event_for
from reconciler.reconcile.lease import micro_time
from reconciler.sources.cluster.reads import HEALTHZ_PATH
from tests.support.envtest import EnvTest
from tests.support.kubeserver import Fault, KubeTestServer
from tests.support.report_crds import OPEN, WG, register_reports

# The product's own paths and labels, so a change there changes what is compared here.
JSON = "application/json"
WRITE = {"fieldManager": FIELD_MANAGER}
DRY_RUN = {**WRITE, "dryRun": "All"}
QUEUES, NODES, HEALTHZ = QUEUE.collection_path(), NODE.collection_path(), HEALTHZ_PATH
SHARDS = SCHEDULING_SHARD.collection_path()
LEASES = LEASE.collection_path("kai-gitops")
EVENTS = EVENT.collection_path(EVENT_NAMESPACE)
POLICY_REPORTS = "/apis/wgpolicyk8s.io/v1alpha2"
MANAGED = {MANAGED_BY_LABEL: SOURCE, CLUSTER_LABEL: cluster_label_value("prod")}
SYSTEM_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any

    @property
    def reason(self) -> str | None:
        """A Status body's reason; None for an object (or for the text a server answers unknown paths with)."""
        return self.body.get("reason") if isinstance(self.body, dict) and self.body.get("kind") == "Status" else None

    @property
    def meta(self) -> dict[str, Any]:
        return (self.body.get("metadata") or {}) if isinstance(self.body, dict) else {}


class Side:
    """One API server as the product talks to it: JSON over HTTP(S), the product's User-Agent."""

    def __init__(self, name: str, url: str, pool: urllib3.PoolManager, token: str | None = None) -> None:
        self.name, self.url, self.pool, self.token = name, url, pool, token

    def call(
        self, method: str, path: str, body: Any = None, *, query: dict[str, str] | None = None, content_type: str = JSON
    ) -> Answer:
        headers = {"Accept": JSON, "User-Agent": USER_AGENT}
        if body is not None:
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        url = self.url + path + (f"?{urlencode(query)}" if query else "")
        response = self.pool.request(
            method,
            url,
            body=None if body is None else json.dumps(body).encode(),
            headers=headers,
            retries=False,
            redirect=False,
            timeout=30,
        )
        try:
            return Answer(response.status, json.loads(response.data))
        except ValueError:
            return Answer(response.status, response.data.decode(errors="replace"))

    def create(self, path: str, body: dict[str, Any], **query: str) -> dict[str, Any]:
        answer = self.call("POST", path, body, query=query or None)
        assert answer.status == 201, (self.name, path, answer)
        return answer.body

    def pages(self, path: str, query: dict[str, str]) -> list[tuple[list[str], bool]]:
        """Each page of a paged list: its items ("namespace/name") and whether it carried a continue token."""
        pages, query = [], dict(query)
        while True:
            answer = self.call("GET", path, query=query)
            assert answer.status == 200, (self.name, path, answer)
            token = answer.meta.get("continue")
            pages.append(([item_key(i) for i in answer.body["items"]], bool(token)))
            if not token:
                return pages
            query["continue"] = token


class Pair:
    def __init__(self, standin: Side, real: Side, server: KubeTestServer, envtest: EnvTest) -> None:
        self.standin, self.real, self.server, self.envtest = standin, real, server, envtest

    def both(self, method: str, path: str, body: Any = None, **kwargs: Any) -> tuple[Answer, Answer]:
        return self.standin.call(method, path, body, **kwargs), self.real.call(method, path, body, **kwargs)

    def namespace(self, name: str, labels: dict[str, str] | None = None) -> None:
        """As a cluster's controllers leave it (the real one needs its default ServiceAccount for Pods)."""
        self.envtest.create_namespace(name, labels=labels)
        self.standin.create(
            "/api/v1/namespaces",
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}},
        )

    def create(self, path: str, body: dict[str, Any], **query: str) -> tuple[dict[str, Any], dict[str, Any]]:
        return self.standin.create(path, body, **query), self.real.create(path, body, **query)


def item_key(item: dict[str, Any]) -> str:
    meta = item["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def same_answer(pair: tuple[Answer, Answer]) -> tuple[Answer, Answer]:
    """Same status; for errors the same Status reason (what the product branches on besides the code)."""
    standin, real = pair
    assert (standin.status, standin.reason) == (real.status, real.reason), (standin, real)
    return pair


def typed_items(answer: Answer) -> list[tuple[str | None, str | None]]:
    return [(i.get("apiVersion"), i.get("kind")) for i in answer.body["items"]]


@pytest.fixture
def pair(envtest: EnvTest) -> Iterator[Pair]:
    """A fresh stand-in (KAI, NVCA and report kinds; the API server's own namespaces) and the real server."""
    server = KubeTestServer().start()
    server.register_kai_and_nvca_kinds()
    register_reports(server, WG + OPEN)
    for name in SYSTEM_NAMESPACES:
        server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    pki = envtest.pki
    assert pki is not None
    admin = urllib3.PoolManager(
        cert_reqs="CERT_REQUIRED", ca_certs=str(pki.ca_cert), cert_file=str(pki.admin_cert), key_file=str(pki.admin_key)
    )
    try:
        yield Pair(
            Side("stand-in", server.url, urllib3.PoolManager()), Side("real", envtest.url, admin), server, envtest
        )
    finally:
        admin.clear()
        server.stop()


# -- discovery and single reads ----------------------------------------------------------------------


def test_discovery_of_the_groups_and_resources_the_product_asks_for(pair: Pair) -> None:
    standin, real = same_answer(pair.both("GET", "/apis"))
    for group, version in (
        ("scheduling.run.ai", "v2"),
        ("kai.scheduler", "v1"),
        ("nvcf.nvidia.io", "v1"),
        ("wgpolicyk8s.io", "v1alpha2"),
        ("openreports.io", "v1alpha1"),
    ):
        for answer in (standin, real):
            offered = {(g["name"], v["version"]) for g in answer.body["groups"] for v in g["versions"]}
            assert (group, version) in offered
        listed = same_answer(pair.both("GET", f"/apis/{group}/{version}"))
        names = [{r["name"] for r in a.body["resources"] if "/" not in r["name"]} for a in listed]  # as reads.py
        assert names[0] == names[1], (group, names)
    for path in ("/apis/nvcf.nvidia.io/v9", "/apis/nope.example/v1", "/apis/scheduling.run.ai/v2/nopes"):
        standin, real = same_answer(pair.both("GET", path))  # not served: 404, and not a Status either
        assert standin.status == 404 and standin.body == real.body, (path, standin, real)


def test_single_reads_crd_shard_configmap_and_identity(pair: Pair) -> None:
    crd = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    answers = same_answer(pair.both("GET", f"{crd}/queues.scheduling.run.ai"))
    for answer in answers:  # what slim.slim_crd keeps
        spec = answer.body["spec"]
        assert (spec["group"], spec["scope"], spec["names"]["kind"]) == ("scheduling.run.ai", "Cluster", "Queue")
        assert {"name": "v2", "served": True, "storage": True}.items() <= spec["versions"][0].items()
    same_answer(pair.both("GET", f"{crd}/nope.example.com"))
    config = "/apis/kai.scheduler/v1/configs/kai-config"
    assert same_answer(pair.both("GET", config))[0].status == 404
    pair.create(
        "/apis/kai.scheduler/v1/configs",
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "Config",
            "metadata": {"name": "kai-config"},
            "spec": {"admission": {"gpuSharing": True}},
        },
    )
    for answer in same_answer(pair.both("GET", config)):  # what slim.kai_object and KaiObject keep
        assert answer.status == 200 and answer.body["spec"] == {"admission": {"gpuSharing": True}}
        assert answer.meta["uid"] and answer.meta["generation"] == 1 and answer.meta["creationTimestamp"]
    assert (
        same_answer(pair.both("GET", "/api/v1/namespaces/nvca-operator/configmaps/nvcfbackend-self-managed"))[0].status
        == 404
    )
    for answer in same_answer(pair.both("GET", "/api/v1/namespaces/kube-system")):
        assert answer.meta["name"] == "kube-system" and answer.meta["uid"]


# -- paged lists -------------------------------------------------------------------------------------


def seed_cluster(pair: Pair) -> None:
    """Nodes, queues, an NVCF namespace with labelled and unlabelled pods, KAI pods, Helm release Secrets
    among other Secrets, and scheduling events, the same on both servers."""
    pair.namespace("nvcf-backend", {NVCF_NAMESPACE_LABEL: "GPU"})
    pair.namespace("team")
    pair.namespace(KAI_NAMESPACE)
    for name in ("default", "team-a", "team-b"):
        pair.create(
            SHARDS,
            {
                "apiVersion": "kai.scheduler/v1",
                "kind": "SchedulingShard",
                "metadata": {"name": name},
                "spec": {"partitionLabelValue": name},
            },
        )
    for i in range(5):
        labels = {"gpu": "yes" if i % 2 else "no", **({SCHEDULE_LABEL: "true"} if i == 3 else {})}
        pair.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": labels}})
        pair.create(
            QUEUES,
            {
                "apiVersion": "scheduling.run.ai/v2",
                "kind": "Queue",
                "metadata": {"name": f"q-{i}"},
                "spec": {"resources": {"cpu": {"quota": -1, "limit": -1, "overQuotaWeight": 1}}},
            },
        )
    for namespace, name, labels in (
        ("nvcf-backend", "fn-0", {NVCF_POD_LABEL: "r0"}),
        ("nvcf-backend", "fn-1", {}),
        ("nvcf-backend", "fn-2", {NVCF_POD_LABEL: "r2"}),
        ("team", "other", {NVCF_POD_LABEL: "r9"}),
        (KAI_NAMESPACE, "kai-scheduler-default-0", {}),
        (KAI_NAMESPACE, "binder-0", {}),
    ):
        pair.create(
            f"/api/v1/namespaces/{namespace}/pods",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "labels": labels},
                "spec": {
                    "schedulerName": "kai-scheduler",
                    "containers": [{"name": "main", "image": "example.invalid/x:1"}],
                },
            },
        )
    for namespace, name, labels, kind in (
        (KAI_NAMESPACE, "sh.helm.release.v1.kai-scheduler.v1", {"owner": "helm"}, "helm.sh/release.v1"),
        (KAI_NAMESPACE, "sh.helm.release.v1.kai-scheduler.v2", {"owner": "helm"}, "helm.sh/release.v1"),
        ("team", "sh.helm.release.v1.other.v1", {"owner": "helm"}, "helm.sh/release.v1"),
        ("team", "helm-like", {"owner": "helm"}, "Opaque"),
        ("team", "token", {}, "Opaque"),
    ):
        pair.create(
            f"/api/v1/namespaces/{namespace}/secrets",
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "type": kind,
                "metadata": {"name": name, "labels": labels},
                "data": {"release": base64.b64encode(b"H4sI").decode()},
            },
        )
    for i, (kind, reason) in enumerate(
        (
            ("Pod", "Unschedulable"),
            ("Pod", "FailedScheduling"),
            ("Pod", "Unschedulable"),
            ("Node", "Unschedulable"),
            ("Pod", "Scheduled"),
        )
    ):
        pair.create(
            "/api/v1/namespaces/nvcf-backend/events",
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": f"fn-{i}.event"},
                "reason": reason,
                "message": "0/5 nodes are available",
                "type": "Warning",
                "involvedObject": {"kind": kind, "name": f"fn-{i}", "namespace": "nvcf-backend"},
            },
        )


LISTS = (  # (path, query): the product's list reads, each with a page limit that makes it several pages
    (QUEUES, {"limit": "2"}),
    (SHARDS, {"limit": "2"}),
    (NODES, {"limit": "2"}),
    ("/api/v1/namespaces", {"labelSelector": NVCF_NAMESPACE_LABEL, "limit": "1"}),
    ("/api/v1/pods", {"labelSelector": NVCF_POD_LABEL, "limit": "2"}),
    (f"/api/v1/namespaces/{KAI_NAMESPACE}/pods", {"limit": "1"}),
    ("/api/v1/namespaces/nvcf-backend/pods", {"labelSelector": f"!{NVCF_POD_LABEL}", "limit": "2"}),
    ("/api/v1/secrets", {"labelSelector": "owner=helm", "fieldSelector": "type=helm.sh/release.v1", "limit": "2"}),
    (
        f"/api/v1/namespaces/{KAI_NAMESPACE}/secrets",
        {"labelSelector": "owner=helm", "fieldSelector": "type=helm.sh/release.v1", "limit": "1"},
    ),
    ("/api/v1/events", {"fieldSelector": "involvedObject.kind=Pod,reason=Unschedulable", "limit": "1"}),
    ("/api/v1/events", {"fieldSelector": "involvedObject.kind=Pod,reason=FailedScheduling", "limit": "500"}),
)


def test_paged_lists_with_label_and_field_selectors(pair: Pair) -> None:
    seed_cluster(pair)
    for path, query in LISTS:
        standin, real = pair.standin.pages(path, query), pair.real.pages(path, query)
        assert standin == real, (path, query, standin, real)
        assert sum(len(items) for items, _ in real) >= 1, (path, query)
    # the real server's namespaces include its own four; the stand-in was given the same
    assert pair.standin.pages("/api/v1/namespaces", {"limit": "2"}) == pair.real.pages(
        "/api/v1/namespaces", {"limit": "2"}
    )


def test_list_items_carry_api_version_and_kind_only_for_custom_resources(pair: Pair) -> None:
    """slim.typed adds them to every item read; both servers must agree on which lists carry them."""
    seed_cluster(pair)
    for path, expected in (
        (QUEUES, ("scheduling.run.ai/v2", "Queue")),
        (SHARDS, ("kai.scheduler/v1", "SchedulingShard")),
        (NODES, (None, None)),
    ):
        for answer in pair.both("GET", path, query={"limit": "500"}):
            assert set(typed_items(answer)) == {expected}, (path, answer.body["items"][:1])


def compact(envtest: EnvTest) -> None:
    """What kube-apiserver does every 5 minutes: drop the store's history before now. A write of a key of
    our own first, so that "now" is past any revision a token was handed out at."""

    def etcd(call: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            f"{envtest.etcd_url}/v3/kv/{call}", data=json.dumps(body).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    key, value = (base64.b64encode(text).decode() for text in (b"/kai-gitops-tests/compaction", b"now"))
    revision = etcd("put", {"key": key, "value": value})["header"]["revision"]
    etcd("compaction", {"revision": revision, "physical": True})


def test_an_expired_continue_token_is_410_expired(pair: Pair) -> None:
    """Events are listed straight from etcd (no watch cache), so a compaction expires their continue tokens.
    The stand-in's expiry (token TTL, or the expire_continue fault) must answer the same."""
    seed_cluster(pair)
    query = {"fieldSelector": "involvedObject.kind=Pod,reason=Unschedulable", "limit": "1"}
    pair.server.inject_fault(Fault(r"^/api/v1/events$", expire_continue=True))
    first = pair.both("GET", "/api/v1/events", query=query)
    tokens = [a.meta["continue"] for a in first]
    compact(pair.envtest)
    standin, real = (
        side.call("GET", "/api/v1/events", query={**query, "continue": token})
        for side, token in zip((pair.standin, pair.real), tokens, strict=True)
    )
    same_answer((standin, real))
    assert standin.status == 410 and standin.body["message"] == real.body["message"]
    # the real server offers an inconsistent continuation (the product restarts the list instead)
    for answer in (standin, real):
        rest = pair.real if answer is real else pair.standin
        remainder = rest.call("GET", "/api/v1/events", query={**query, "continue": answer.meta["continue"]})
        assert remainder.status == 200 and [item_key(i) for i in remainder.body["items"]] == [
            "nvcf-backend/fn-2.event"
        ], (rest.name, remainder)


# -- the NVCA health endpoint through the service proxy --------------------------------------------


def test_healthz_through_the_service_proxy(pair: Pair) -> None:
    """Any answer counts (reads.py Reader.healthz); a Status body means NVCA was never reached."""
    pair.namespace("nvca-system")
    standin, real = same_answer(pair.both("GET", HEALTHZ))  # no Service
    assert standin.status == 404 and standin.body["message"] == real.body["message"]
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "nvca"},
        "spec": {"ports": [{"port": 8000}], "selector": {"app": "nvca"}},
    }
    pair.create("/api/v1/namespaces/nvca-system/services", service)
    # the endpoints controller's part on a real cluster: a Service whose pods are not ready has no addresses
    pair.real.create(
        "/api/v1/namespaces/nvca-system/endpoints",
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "nvca"}, "subsets": []},
    )
    standin, real = same_answer(pair.both("GET", HEALTHZ))
    assert standin.status == 503 and standin.body["message"] == real.body["message"]


# -- the reconcile writes ----------------------------------------------------------------------------


def queue(name: str, quota: int = 0) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.run.ai/v2",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {
            "resources": {r: {"quota": quota, "limit": -1, "overQuotaWeight": 1} for r in ("cpu", "gpu", "memory")}
        },
    }


def owners(obj: dict[str, Any], *path: str) -> set[str]:
    """Managers whose fieldsV1 own `path` (as preflight.py _managers reads them, for the takeover note)."""
    found = set()
    for entry in obj["metadata"].get("managedFields") or []:
        node = entry.get("fieldsV1") or {}
        for key in path:
            node = node.get(f"f:{key}") if isinstance(node, dict) else None
        if node is not None:
            found.add(entry["manager"])
    return found


def test_queue_create_dry_run_conflicts_and_merge_patches(pair: Pair) -> None:
    path = f"{QUEUES}/team-a"
    same_answer(pair.both("GET", path))
    for answer in same_answer(pair.both("POST", QUEUES, queue("team-a"), query=DRY_RUN)):
        assert answer.status == 201 and not answer.meta.get("resourceVersion")
    assert same_answer(pair.both("GET", path))[0].status == 404  # a dry run stores nothing
    created = same_answer(pair.both("POST", QUEUES, queue("team-a"), query=WRITE))
    for answer in created:
        assert answer.meta["uid"] and answer.meta["resourceVersion"] and answer.meta["generation"] == 1
        assert owners(answer.body, "spec", "resources", "cpu", "quota") == {FIELD_MANAGER}
    assert same_answer(pair.both("POST", QUEUES, queue("team-a"), query=WRITE))[0].reason == "AlreadyExists"

    patch = {"spec": {"resources": {"cpu": {"quota": -1}}, "parentQueue": "default"}}
    for side, answer in zip((pair.standin, pair.real), created, strict=True):
        body = {**patch, "metadata": {"resourceVersion": answer.meta["resourceVersion"]}}
        dry = side.call("PATCH", path, body, query=DRY_RUN, content_type=MERGE_PATCH)
        assert dry.status == 200 and dry.body["spec"]["resources"]["cpu"]["quota"] == -1
        assert side.call("GET", path).body["spec"]["resources"]["cpu"]["quota"] == 0, side.name
        done = side.call("PATCH", path, body, query=WRITE, content_type=MERGE_PATCH)
        assert done.status == 200 and done.body["spec"]["parentQueue"] == "default", (side.name, done)
        assert done.body["spec"]["resources"]["gpu"]["quota"] == 0 and done.meta["generation"] == 2
        assert done.meta["resourceVersion"] != answer.meta["resourceVersion"]
        stale = side.call("PATCH", path, body, query=WRITE, content_type=MERGE_PATCH)
        assert (stale.status, stale.reason) == (409, "Conflict"), (side.name, stale)
    same_answer(pair.both("PATCH", f"{QUEUES}/absent", patch, query=WRITE, content_type=MERGE_PATCH))


def test_kai_config_and_shard_merge_patches(pair: Pair) -> None:
    """A mapping field replaced whole (keys only the live object had sent as null), with the RV precondition."""
    config = "/apis/kai.scheduler/v1/configs/kai-config"
    spec = {
        "admission": {"gpuSharing": True},
        "scheduler": {"service": {"resources": {"limits": {"cpu": "4000m"}, "requests": {"cpu": "50m"}}}},
    }
    created = same_answer(
        pair.both(
            "POST",
            "/apis/kai.scheduler/v1/configs",
            {"apiVersion": "kai.scheduler/v1", "kind": "Config", "metadata": {"name": "kai-config"}, "spec": spec},
            query=WRITE,
        )
    )
    patch = {
        "spec": {
            "admission": {"gpuSharing": False},
            "scheduler": {"service": {"resources": {"limits": {"cpu": "2000m", "memory": "6Gi"}, "requests": None}}},
        }
    }
    for side, answer in zip((pair.standin, pair.real), created, strict=True):
        body = {**patch, "metadata": {"resourceVersion": answer.meta["resourceVersion"]}}
        dry = side.call("PATCH", config, body, query=DRY_RUN, content_type=MERGE_PATCH)
        assert dry.status == 200 and dry.body["spec"]["admission"]["gpuSharing"] is False, (side.name, dry)
        assert side.call("GET", config).body["spec"] == spec, side.name  # the dry run stored nothing
        done = side.call("PATCH", config, body, query=WRITE, content_type=MERGE_PATCH)
        assert done.status == 200 and done.body["spec"] == {
            "admission": {"gpuSharing": False},
            "scheduler": {"service": {"resources": {"limits": {"cpu": "2000m", "memory": "6Gi"}}}},
        }, (side.name, done)
        stale = side.call("PATCH", config, body, query=WRITE, content_type=MERGE_PATCH)
        assert (stale.status, stale.reason) == (409, "Conflict"), (side.name, stale)
    shard = pair.create(
        SHARDS,
        {
            "apiVersion": "kai.scheduler/v1",
            "kind": "SchedulingShard",
            "metadata": {"name": "default"},
            "spec": {"placementStrategy": {"gpu": "spread"}},
        },
    )
    for side, answer in zip((pair.standin, pair.real), shard, strict=True):
        body = {
            "spec": {"placementStrategy": {"gpu": "binpack"}},
            "metadata": {"resourceVersion": answer["metadata"]["resourceVersion"]},
        }
        done = side.call("PATCH", f"{SHARDS}/default", body, query=WRITE, content_type=MERGE_PATCH)
        assert done.status == 200 and done.body["spec"]["placementStrategy"] == {"gpu": "binpack"}, side.name


def test_operand_reads_in_kai_scheduler(pair: Pair) -> None:
    """The Deployments list and the deployer Job's get (404 is an answer) as reads.py sends them."""
    pair.namespace(KAI_NAMESPACE)
    job = f"/apis/batch/v1/namespaces/{KAI_NAMESPACE}/jobs/kai-config-deployer"
    assert same_answer(pair.both("GET", job))[0].status == 404
    deployments = f"/apis/apps/v1/namespaces/{KAI_NAMESPACE}/deployments"
    body = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "binder"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "binder"}},
            "template": {
                "metadata": {"labels": {"app": "binder"}},
                "spec": {"containers": [{"name": "binder", "image": "example.invalid/b:1"}]},
            },
        },
    }
    pair.create(deployments, body)
    for answer in same_answer(pair.both("GET", deployments, query={"limit": "1"})):
        [item] = answer.body["items"]
        assert item["metadata"]["name"] == "binder" and item["spec"]["replicas"] == 1


def test_invalid_names_are_422(pair: Pair) -> None:
    for path, body in (
        (QUEUES, queue("Team_A")),
        (QUEUES, queue("a" * 254)),
        (NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1."}}),
    ):
        standin, real = same_answer(pair.both("POST", path, body, query=WRITE))
        assert standin.status == 422 and standin.body["message"] == real.body["message"], (standin, real)
    standin, real = same_answer(
        pair.both("POST", QUEUES, {**queue(""), "metadata": {"generateName": "q."}}, query=WRITE)
    )
    assert standin.status == 422  # the generated name differs; the complaint about the prefix does not
    assert standin.body["details"]["causes"] == real.body["details"]["causes"]


def test_node_label_merge_patch_with_resource_version(pair: Pair) -> None:
    pair.create(NODES, {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": {"gpu": "y"}}})
    for side in (pair.standin, pair.real):
        version = side.call("GET", f"{NODES}/gpu-1").meta["resourceVersion"]
        label = {"metadata": {"labels": {SCHEDULE_LABEL: "true"}, "resourceVersion": version}}
        dry = side.call("PATCH", f"{NODES}/gpu-1", label, query=DRY_RUN, content_type=MERGE_PATCH)
        assert dry.status == 200 and dry.meta["labels"][SCHEDULE_LABEL] == "true"
        assert SCHEDULE_LABEL not in side.call("GET", f"{NODES}/gpu-1").meta["labels"]
        set_ = side.call("PATCH", f"{NODES}/gpu-1", label, query=WRITE, content_type=MERGE_PATCH)
        assert set_.status == 200 and set_.meta["labels"] == {"gpu": "y", SCHEDULE_LABEL: "true"}
        assert FIELD_MANAGER in {e["manager"] for e in set_.meta["managedFields"]}
        stale = side.call(
            "PATCH",
            f"{NODES}/gpu-1",
            {"metadata": {"labels": {SCHEDULE_LABEL: None}, "resourceVersion": version}},
            query=WRITE,
            content_type=MERGE_PATCH,
        )
        assert (stale.status, stale.reason) == (409, "Conflict")
        removed = side.call(
            "PATCH",
            f"{NODES}/gpu-1",
            {"metadata": {"labels": {SCHEDULE_LABEL: None}, "resourceVersion": set_.meta["resourceVersion"]}},
            query=WRITE,
            content_type=MERGE_PATCH,
        )
        assert removed.status == 200 and removed.meta["labels"] == {"gpu": "y"}, side.name


def lease_body(name: str, holder: str = "host_1") -> dict[str, Any]:
    """As lease.py Lease._try_acquire builds it."""
    now = datetime.now(UTC)
    return {
        "apiVersion": LEASE.api_version,
        "kind": "Lease",
        "metadata": {"name": name, "namespace": "kai-gitops"},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 30,
            "acquireTime": micro_time(now),
            "renewTime": micro_time(now),
            "leaseTransitions": 0,
        },
    }


def test_lease_get_create_update_and_conflicts(pair: Pair) -> None:
    pair.namespace("kai-gitops")
    same_answer(pair.both("GET", f"{LEASES}/kai-gitops-reconcile"))
    created = same_answer(pair.both("POST", LEASES, lease_body("kai-gitops-reconcile"), query=WRITE))
    assert (
        same_answer(pair.both("POST", LEASES, lease_body("kai-gitops-reconcile"), query=WRITE))[0].reason
        == "AlreadyExists"
    )
    for side, answer in zip((pair.standin, pair.real), created, strict=True):
        renewed = dict(answer.body, spec={**answer.body["spec"], "renewTime": micro_time()})
        done = side.call("PUT", f"{LEASES}/kai-gitops-reconcile", renewed, query=WRITE)
        assert done.status == 200 and done.body["spec"]["holderIdentity"] == "host_1"
        stale = side.call("PUT", f"{LEASES}/kai-gitops-reconcile", renewed, query=WRITE)
        assert (stale.status, stale.reason) == (409, "Conflict"), side.name
    for spec in ({"renewTime": "2026-01-01T00:00:00Z"}, {"acquireTime": "yesterday"}):
        body = lease_body("bad-time")
        body["spec"].update(spec)
        standin, real = same_answer(pair.both("POST", LEASES, body, query=WRITE))
        assert standin.status == 400 and standin.body["message"] == real.body["message"], (standin, real)
    body = lease_body("bad-duration")
    body["spec"]["leaseDurationSeconds"] = 0
    standin, real = same_answer(pair.both("POST", LEASES, body, query=WRITE))
    assert standin.status == 422 and standin.body["message"] == real.body["message"]
    # a holder renewing a Lease someone deleted sends the old uid and resourceVersion: 409 (lease.py: lost)
    for side, answer in zip((pair.standin, pair.real), created, strict=True):
        assert side.call("DELETE", f"{LEASES}/kai-gitops-reconcile").status == 200
        renewed = side.call("PUT", f"{LEASES}/kai-gitops-reconcile", answer.body, query=WRITE)
        assert (renewed.status, renewed.reason) == (409, "Conflict"), (side.name, renewed)
    created_by_put = same_answer(pair.both("PUT", f"{LEASES}/fresh", lease_body("fresh"), query=WRITE))
    assert created_by_put[0].status == 201  # Leases (and Events) may be created by an update


def applied(name: str, kind: str = "Queue") -> ChangeResult:
    api = {"Queue": "scheduling.run.ai/v2", "Node": "v1"}[kind]
    path = ("spec", "resources", "cpu", "quota") if kind == "Queue" else ("metadata", "labels", SCHEDULE_LABEL)
    change = Change(ObjectRef(api, kind, name, None), Operation.UPDATE, (FieldChange(path, 0, -1),), (), "")
    return ChangeResult(change, WriteResult.APPLIED, resource_version="7", uid="0b0f6a3e-8f8e-4a57-9d58-33c3a8b4b2a1")


def test_events_as_the_product_sends_them(pair: Pair) -> None:
    for result in (applied("default-queue"), applied("gpu-node-" + "x" * 60, "Node"), applied("a" * 45 + ".tail")):
        standin, real = same_answer(
            pair.both("POST", EVENTS, event_for(result, plan_id="p1", holder="host_1"), query=WRITE)
        )
        assert standin.status == 201, (standin, real)
        for answer in (standin, real):
            assert ".kai-gitops-" in answer.meta["name"] and answer.body["regarding"]["name"] == result.change.ref.name
    valid = event_for(applied("default-queue"), plan_id="p1", holder="host_1")
    for broken in (
        {k: v for k, v in valid.items() if k not in ("eventTime", "reason", "action")},
        {**valid, "type": "Info", "note": "é" * 600},
        {**valid, "reportingInstance": "h" * 129},
        {**valid, "reportingController": ""},
    ):
        standin, real = same_answer(pair.both("POST", EVENTS, broken, query=WRITE))
        assert standin.status == 422, (standin, real)
        assert [c["field"] for c in standin.body["details"]["causes"]] == [
            c["field"] for c in real.body["details"]["causes"]
        ], (standin, real)
    standin, real = same_answer(pair.both("POST", EVENTS, {**valid, "eventTime": "2026-01-01T00:00:00Z"}, query=WRITE))
    assert standin.status == 400 and standin.body["message"] == real.body["message"]


# -- the PolicyReport writes ----------------------------------------------------------------------------


def report(kind: str, name: str, namespace: str | None = None, **labels: str) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {**MANAGED, **labels}}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "wgpolicyk8s.io/v1alpha2",
        "kind": kind,
        "metadata": meta,
        "summary": {"fail": 0},
        "results": [],
    }


def test_policy_reports_listed_created_replaced_and_deleted_with_preconditions(pair: Pair) -> None:
    pair.namespace("team")
    pair.namespace("nvcf-backend")
    for namespace in ("team", "nvcf-backend"):
        pair.create(
            f"{POLICY_REPORTS}/namespaces/{namespace}/policyreports",
            report("PolicyReport", "kai-gitops-prod", namespace),
            **WRITE,
        )
    pair.create(
        f"{POLICY_REPORTS}/namespaces/team/policyreports",
        report("PolicyReport", "someone-elses", "team", **{"app.kubernetes.io/managed-by": "kyverno"}),
    )
    pair.create(f"{POLICY_REPORTS}/clusterpolicyreports", report("ClusterPolicyReport", "kai-gitops-prod"), **WRITE)
    assert pair.standin.pages("/api/v1/namespaces", {"limit": "500"}) == pair.real.pages(
        "/api/v1/namespaces", {"limit": "500"}
    )
    selector = ",".join(f"{k}={v}" for k, v in MANAGED.items())
    for plural in ("policyreports", "clusterpolicyreports"):
        query = {"labelSelector": selector, "limit": "1"}
        assert pair.standin.pages(f"{POLICY_REPORTS}/{plural}", query) == pair.real.pages(
            f"{POLICY_REPORTS}/{plural}", query
        )

    path = f"{POLICY_REPORTS}/namespaces/team/policyreports/kai-gitops-prod"
    for side in (pair.standin, pair.real):
        old = side.call("GET", path)
        assert old.status == 200
        new = {
            **old.body,
            "summary": {"fail": 1},
            "results": [{"policy": "KAI-Q-001", "result": "fail", "source": "kai-gitops"}],
        }
        done = side.call("PUT", path, new, query=WRITE)
        assert done.status == 200 and done.body["results"] == new["results"] and done.meta["uid"] == old.meta["uid"]
        stale = side.call("PUT", path, new, query=WRITE)
        assert (stale.status, stale.reason) == (409, "Conflict"), side.name
    uids = [side.call("GET", path).meta["uid"] for side in (pair.standin, pair.real)]
    wrong = {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "0b0f6a3e-0000-0000-0000-000000000000"},
    }
    standin, real = same_answer(pair.both("DELETE", path, wrong))
    assert standin.status == 409
    assert standin.body["message"].replace(uids[0], "UID") == real.body["message"].replace(uids[1], "UID")
    for side, uid in zip((pair.standin, pair.real), uids, strict=True):
        options = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": uid}}
        gone = side.call("DELETE", path, options)
        assert gone.status == 200 and gone.body["details"]["uid"] == uid, (side.name, gone)
        assert side.call("DELETE", path, options).status == 404


def test_schema_invalid_custom_objects_are_refused_by_the_real_server_only(pair: Pair) -> None:
    """CRD schema validation and pruning are not modelled (the stand-in's docstring says so and points here):
    the fast tests validate report bodies with jsonschema instead (tests/support/report_crds.py)."""
    invalid = queue("team-b")
    invalid["spec"]["resources"]["cpu"]["quota"] = "lots"
    standin, real = pair.both("POST", QUEUES, invalid, query=WRITE)
    assert (standin.status, real.status, real.reason) == (201, 422, "Invalid")
    assert "CRD schema validation" in (kubeserver_package.__doc__ or "")


# -- 403 --------------------------------------------------------------------------------------------


def test_an_identity_without_grants_gets_403_from_the_real_server(pair: Pair) -> None:
    envtest = pair.envtest
    token = envtest.service_account_token("team-x", "nobody")
    assert envtest.pki is not None
    nobody = Side(
        "real, no grants",
        envtest.url,
        urllib3.PoolManager(cert_reqs="CERT_REQUIRED", ca_certs=str(envtest.pki.ca_cert)),
        token,
    )
    requests = (
        ("GET", "/api/v1/secrets", None, {"labelSelector": "owner=helm", "limit": "20"}),
        ("GET", f"{QUEUES}/default-queue", None, None),
        ("GET", HEALTHZ, None, None),
        ("PATCH", f"{QUEUES}/default-queue", {"spec": {}}, WRITE),
        ("POST", LEASES, lease_body("kai-gitops-reconcile"), WRITE),
        ("POST", EVENTS, event_for(applied("q"), plan_id="p", holder="h"), WRITE),
        ("GET", f"{POLICY_REPORTS}/policyreports", None, {"limit": "100"}),
    )
    injected = pair.server
    for method, path, body, query in requests:
        content_type = MERGE_PATCH if method == "PATCH" else JSON
        real = nobody.call(method, path, body, query=query, content_type=content_type)
        assert (real.status, real.reason) == (403, "Forbidden"), (path, real)
        assert real.body["code"] == 403 and real.body["message"]
        # The stand-in allows every request; its 403s are injected, and shaped like this one.
        injected.inject_fault(Fault("^" + path.replace(".", r"\.") + "$", method=method, status=403))
        standin = pair.standin.call(method, path, body, query=query, content_type=content_type)
        assert (standin.status, standin.reason, standin.body["code"]) == (403, "Forbidden", 403), (path, standin)
    assert "RBAC" in (kubeserver_package.__doc__ or "")
