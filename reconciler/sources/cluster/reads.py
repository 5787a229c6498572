"""The reads a reconcile needs, server-filtered and paged, fed to a sink in a fixed order.

Memory: a page is parsed (with the cyclic GC paused), each item is reduced at once (slim.py) and the page
dropped, so a 10,000-pod list never exists as 10,000 full dicts. A list feeds the sink only once it is
complete: a `410 Gone` on a continue token restarts that list, and discarding a scratch list of reduced
items is all the restart costs -- the alternative, feeding page by page, cannot take back what the
builder or the snapshot already took. The scratch holds reduced items only (about 3.5 KB per pod as Python
objects, measured by bench/live_read.py --growth).

Concurrency: independent reads run on a small thread pool (API round trips dominate on real clusters);
only the calling thread feeds the sink, in plan order, so the result does not depend on timing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from functools import partial

import orjson

from reconciler.core.collector import collector_paused
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, expect_object, list_at, mapping_at, objects_at
from reconciler.core.resources import (
    CLUSTER_TOPOLOGY_BINDING,
    CONFIG,
    CONFIG_MAP,
    CORE_EVENT,
    CUSTOM_RESOURCE_DEFINITION,
    DEPLOYMENT,
    JOB,
    KAI_AND_NVCA,
    KRM_KINDS,
    LEASE,
    NAMESPACE,
    NODE,
    NVCF_BACKEND,
    POD,
    POD_GROUP,
    QUEUE,
    SCHEDULING_SHARD,
    SECRET,
    SERVICE,
    SERVICE_ACCOUNT,
    TOPOLOGY,
    Resource,
)
from reconciler.model.gangs import DRA_CRDS
from reconciler.model.helm import KAI_CHART
from reconciler.model.kai_config import CONFIG_NAME
from reconciler.model.krm import CRDS as KRM_CRDS
from reconciler.model.live import KAI_NAMESPACE, NVCF_NAMESPACE_LABEL, NVCF_POD_LABEL
from reconciler.model.managed_fields import object_managers
from reconciler.sources.cluster import slim
from reconciler.sources.cluster.client import (
    RETRIES,
    ClusterClient,
    ListExpired,
    PageBound,
    ReadCancelled,
    ReadError,
    display,
    status_message,
)
from reconciler.sources.cluster.progress import ReadProgress

Obj = JSONObject
Slim = Callable[[Obj], Obj | None]
Read = Callable[[], list[Obj]]  # one planned read: its objects, reduced

# The custom resources whose objects the checks read, if the server serves them (discovery says).
DISCOVERED = (QUEUE, SCHEDULING_SHARD, CONFIG, NVCF_BACKEND, POD_GROUP, TOPOLOGY, CLUSTER_TOPOLOGY_BINDING, *KRM_KINDS)
# CRDs looked up by name: KAI's and NVCA's, and the topology prerequisites (Grove's binding, the GPU DRA driver's)
NAMED_CRDS = (*(r.crd_name for r in KAI_AND_NVCA), CLUSTER_TOPOLOGY_BINDING.crd_name, *DRA_CRDS, *KRM_CRDS)
DEPLOYER_JOB = "kai-config-deployer"  # E2/E3 charts apply kai-config with it
SCHEDULER_LEASE = "kai-scheduler"  # the scheduler's leader Lease: <schedulerName> (no partition value)
DTO_PATH = CONFIG_MAP.object_path("nvcfbackend-self-managed", "nvca-operator")
HEALTHZ_PATH = SERVICE.object_path("nvca:8000", "nvca-system", "proxy/healthz")
EVENT_REASONS = ("Unschedulable", "FailedScheduling")  # KAI's reason, then the default scheduler's
_MANAGED_READS = ("queues", "shards", "kai-config")  # read before the releases, which may own them


@dataclass(frozen=True)
class ListRead:
    key: str  # unique per read, e.g. "pods/ns/nvcf-backend"
    kind: str  # what progress and errors call it ("pods")
    resource: Resource
    namespace: str | None = None  # None: every namespace (or a cluster-scoped resource)
    query: dict[str, str] = field(default_factory=dict)
    limit: int = 500
    reduce: Slim = slim.as_is

    @property
    def path(self) -> str:
        return self.resource.collection_path(self.namespace)


@dataclass
class ReadOutcome:
    queue_kind_served: bool
    counts: dict[str, int]
    requests: int


# -- single reads ------------------------------------------------------------------------------------


class Reader:
    def __init__(self, client: ClusterClient, progress: ReadProgress) -> None:
        self.client = client
        self.progress = progress

    def read_list(self, spec: ListRead) -> list[Obj]:
        """The whole list, or an error: a 410 on a continue token discards the scratch and starts over."""
        started, restarts = time.monotonic(), 0
        while True:
            try:
                return self._list_once(spec, started)
            except ListExpired as exc:
                restarts += 1
                RETRIES.add()
                self.progress.count(_tally(spec.key), spec.key, 0)
                if restarts >= self.client.settings.attempts:
                    failure = (
                        f"{exc} on a continue token after {restarts} restarts of the list in "
                        f"{time.monotonic() - started:.1f} s"
                    )
                    raise self.client.error(
                        spec.kind,
                        spec.path,
                        spec.query,
                        failure,
                        status=410,
                        hint="the list expires faster than it can be paged; retry later, or "
                        "raise $KAI_GITOPS_KUBE_PAGE_LIMIT",
                    ) from None

    def _list_once(self, spec: ListRead, started: float) -> list[Obj]:
        items: list[Obj] = []
        query = {**spec.query, "limit": str(spec.limit)}
        pages = PageBound(self.client.settings, spec.limit, started)
        while True:
            token = self._page_into(items, self.client.get(spec.kind, spec.path, query).body, spec, query)
            self.progress.count(_tally(spec.key), spec.key, len(items))
            if not token:
                return items
            failure = pages.next(token)
            if failure:
                raise self.client.error(spec.kind, spec.path, query, failure, hint=_PAGE_HINT)
            query = {**query, "continue": token}

    def _page_into(self, items: list[Obj], body: bytes, spec: ListRead, query: dict[str, str]) -> str | None:
        with collector_paused():
            page = _loads(body, spec.kind, spec.path, query, self.client.label)
            for raw in list_at(page, "items"):
                reduced = spec.reduce(slim.typed(expect_object(raw, "a list item"), spec.resource))
                if reduced is not None:
                    items.append(reduced)
            token = mapping_at(page, "metadata").get("continue")
            del page  # the full page goes before the next one arrives
        return str(token) if token else None

    def releases(self) -> list[Obj]:
        """Helm release Secrets of every namespace, to find a KAI release under another name anywhere.

        Least-privilege RBAC (deploy/ by default) grants them only in kai-scheduler: on a 403 for the
        cluster-wide list, read that namespace and add a marker saying the rest was not searched, so the
        report says "not checked" (KAI-R-016) instead of the run failing or silently finding nothing.
        """
        try:
            return self.read_list(_release_read(None, "Helm release Secrets", self.client.settings.secret_page_limit))
        except ReadError as exc:
            if exc.status != 403:
                raise
            denied = exc.message
        local = _release_read(
            KAI_NAMESPACE, f"Helm release Secrets in namespace {KAI_NAMESPACE}", self.client.settings.secret_page_limit
        )
        return [*self.read_list(local), slim.release_search_item([KAI_NAMESPACE], denied)]

    def object(self, key: str, kind: str, path: str, reduce: Slim = slim.as_is) -> list[Obj]:
        """One named object; absent (404) is an answer, not an error."""
        answer = self.client.get(kind, path, accept=frozenset({404}))
        if answer.status == 404:
            return []
        reduced = reduce(_loads(answer.body, kind, path, None, self.client.label))
        self.progress.count(_tally(key), key, 1)
        return [reduced] if reduced is not None else []

    def healthz(self) -> list[Obj]:
        """NVCA answers 503 *with* its JSON body when unhealthy; an API-server Status means we never reached it."""
        settings = self.client.settings
        try:
            # Two tries at most: a hung agent is a finding to report, not worth minutes of retries.
            answer = self.client.get(
                "NVCA /healthz",
                HEALTHZ_PATH,
                accept=_ANY_STATUS_BUT_RETRIED,
                read_timeout=settings.healthz_timeout_s,
                attempts=min(2, settings.attempts),
                max_bytes_setting="healthz_max_bytes",
            )
        except ReadError as exc:
            if exc.status in (401, 403):
                raise  # our own credentials or RBAC: the user must fix that, not NVCA
            return [slim.healthz_item(exc.status, None, reachable=False, detail=exc.message)]
        body = _json_or_none(answer.body)
        if isinstance(body, dict) and body.get("kind") == "Status" and "Components" not in body:
            return [slim.healthz_item(answer.status, None, reachable=False, detail=status_message(answer.body))]
        return [slim.healthz_item(answer.status, body, reachable=True)]

    def discover(self, pool: ThreadPoolExecutor) -> set[Resource]:
        """Which of DISCOVERED the server serves: `/apis`, then each relevant group version."""
        groups = _loads(self.client.get("API groups", "/apis").body, "API groups", "/apis", None, self.client.label)
        offered = {
            (g.get("name"), v.get("version")) for g in objects_at(groups, "groups") for v in objects_at(g, "versions")
        }
        wanted = sorted({r.api_path for r in DISCOVERED if (r.group, r.version) in offered})
        served: set[Resource] = set()
        for path, plurals in zip(wanted, pool.map(self._resources, wanted), strict=True):
            served.update(r for r in DISCOVERED if r.api_path == path and r.plural in plurals)
        return served

    def _resources(self, path: str) -> set[str]:
        """The plurals a group version serves (its discovery document at `path`)."""
        answer = self.client.get("API discovery", path, accept=frozenset({404}))
        if answer.status == 404:
            return set()  # removed between the two requests: not served
        data = _loads(answer.body, "API discovery", path, None, self.client.label)
        return {str(r.get("name")) for r in objects_at(data, "resources") if "/" not in str(r.get("name"))}


_PAGE_HINT = (
    "the API server keeps answering with `continue` tokens; if the list is genuinely this long, raise "
    "$KAI_GITOPS_KUBE_LIST_MAX_OBJECTS or $KAI_GITOPS_KUBE_LIST_BUDGET_S"
)


class _AnyStatusButRetried(frozenset[int]):
    """Every status is an answer from NVCA except those our retry loop handles and our own auth failures."""

    def __contains__(self, status: object) -> bool:
        return status not in (401, 403, 429, 500, 502, 504)


_ANY_STATUS_BUT_RETRIED = _AnyStatusButRetried()


def _loads(body: bytes, kind: str, path: str, query: dict[str, str] | None, label: str) -> Obj:
    try:
        data: JSONValue = orjson.loads(body)
    except orjson.JSONDecodeError:
        raise UserError(f"reading {kind} from {label} ({display(path, query)}): the answer is not JSON") from None
    if not isinstance(data, dict):
        raise UserError(f"reading {kind} from {label} ({display(path, query)}): the answer is not a JSON object")
    return data


def _json_or_none(body: bytes) -> JSONValue:
    try:
        parsed: JSONValue = orjson.loads(body)
        return parsed
    except orjson.JSONDecodeError:
        return None


# -- the plan ----------------------------------------------------------------------------------------


_RELEASE_QUERY = {"labelSelector": "owner=helm", "fieldSelector": "type=helm.sh/release.v1"}


def _release_read(namespace: str | None, kind: str, limit: int) -> ListRead:
    return ListRead("releases", kind, SECRET, namespace, _RELEASE_QUERY, limit, slim.release_summary)


def base_reads(reader: Reader, served: set[Resource]) -> list[tuple[str, Read]]:
    """Every read that needs nothing but discovery, in feed order."""
    limit = reader.client.settings.page_limit
    plan: list[tuple[str, Read]] = []
    for name in NAMED_CRDS:
        plan.append(
            (
                f"crds/{name}",
                partial(
                    reader.object, f"crds/{name}", "CRDs", CUSTOM_RESOURCE_DEFINITION.object_path(name), slim.slim_crd
                ),
            )
        )
    if QUEUE in served:
        plan.append(_list(reader, ListRead("queues", "queues", QUEUE, limit=limit, reduce=slim.checked_object)))
    if SCHEDULING_SHARD in served:
        plan.append(
            _list(reader, ListRead("shards", "SchedulingShards", SCHEDULING_SHARD, limit=limit, reduce=slim.kai_object))
        )
    if CONFIG in served:
        plan.append(
            (
                "kai-config",
                partial(
                    reader.object, "kai-config", "Config kai-config", CONFIG.object_path(CONFIG_NAME), slim.kai_object
                ),
            )
        )
        plan.append(("kai-config-read", lambda: [slim.config_read_item()]))
        plan += operand_reads(reader)
    plan += gang_reads(reader, served)
    plan += krm_reads(reader, served)
    plan.append(("releases", reader.releases))
    if NVCF_BACKEND in served:
        plan.append(
            _list(reader, ListRead("backends", "NVCFBackends", NVCF_BACKEND, limit=limit, reduce=slim.redacted))
        )
    plan.append(("dto", lambda: reader.object("dto", "ConfigMap nvcfbackend-self-managed", DTO_PATH, slim.slim_dto)))
    plan.append(
        _list(
            reader,
            ListRead(
                "namespaces",
                "NVCF namespaces",
                NAMESPACE,
                query={"labelSelector": NVCF_NAMESPACE_LABEL},
                limit=limit,
                reduce=slim.slim_namespace,
            ),
        )
    )
    plan.append(_list(reader, ListRead("nodes", "nodes", NODE, limit=limit, reduce=slim.slim_node)))
    plan.append(
        _list(
            reader,
            ListRead(
                "pods/labelled", "pods", POD, query={"labelSelector": NVCF_POD_LABEL}, limit=limit, reduce=slim.slim_pod
            ),
        )
    )
    plan.append(_list(reader, ListRead("pods/kai", "pods", POD, KAI_NAMESPACE, limit=limit, reduce=slim.slim_kai_pod)))
    plan.append(("healthz", reader.healthz))
    return plan


def gang_reads(reader: Reader, served: set[Resource]) -> list[tuple[str, Read]]:
    """PodGroups (every namespace, reduced to queue, size, topology and scheduling conditions), KAI Topologies and
    Grove's bindings: whichever the server serves. Their members are among the pods already read."""
    limit = reader.client.settings.page_limit
    reads = (
        ListRead("podgroups", "PodGroups", POD_GROUP, limit=limit, reduce=slim.slim_pod_group),
        ListRead("topologies", "Topologies", TOPOLOGY, limit=limit, reduce=slim.as_is),
        ListRead(
            "bindings", "ClusterTopologyBindings", CLUSTER_TOPOLOGY_BINDING, limit=limit, reduce=slim.slim_binding
        ),
    )
    return [_list(reader, spec) for spec in reads if spec.resource in served]


def krm_reads(reader: Reader, served: set[Resource]) -> list[tuple[str, Read]]:
    """KAI Resource Management's Projects, Departments, NodePools and KRMConfig, when served: what it generates
    Queues and SchedulingShards from (checks/krm.py)."""
    limit = reader.client.settings.page_limit
    return [
        _list(reader, ListRead(f"krm/{kind.plural}", kind.kind + "s", kind, limit=limit, reduce=slim.slim_krm))
        for kind in KRM_KINDS
        if kind in served
    ]


def operand_reads(reader: Reader) -> list[tuple[str, Read]]:
    """What the KAI operator deployed from kai-config (A4.1 of the operator's design), and the chart's deployer
    Job: all in kai-scheduler, the Job by name (404 is an answer)."""
    limit = reader.client.settings.page_limit
    job = JOB.object_path(DEPLOYER_JOB, KAI_NAMESPACE)
    return [
        _list(
            reader,
            ListRead("deployments", "Deployments", DEPLOYMENT, KAI_NAMESPACE, limit=limit, reduce=slim.slim_deployment),
        ),
        _list(
            reader,
            ListRead(
                "serviceaccounts",
                "ServiceAccounts",
                SERVICE_ACCOUNT,
                KAI_NAMESPACE,
                limit=limit,
                reduce=slim.slim_service_account,
            ),
        ),
        ("deployer-job", partial(reader.object, "deployer-job", f"Job {DEPLOYER_JOB}", job, slim.slim_job)),
        (
            "scheduler-lease",
            partial(
                reader.object,
                "scheduler-lease",
                f"Lease {SCHEDULER_LEASE}",
                LEASE.object_path(SCHEDULER_LEASE, KAI_NAMESPACE),
                slim.slim_lease,
            ),
        ),
    ]


def namespace_pod_reads(reader: Reader, namespaces: list[Obj]) -> list[tuple[str, Read]]:
    """Pods of NVCF namespaces that the cluster-wide `icms-request-id` list did not already return."""
    limit = reader.client.settings.page_limit
    names = sorted({str(mapping_at(ns, "metadata")["name"]) for ns in namespaces})
    return [
        _list(
            reader,
            ListRead(f"pods/ns/{ns}", "pods", POD, ns, {"labelSelector": f"!{NVCF_POD_LABEL}"}, limit, slim.slim_pod),
        )
        for ns in names
    ]


def event_reads(reader: Reader) -> list[tuple[str, Read]]:
    limit = reader.client.settings.page_limit
    return [
        _list(
            reader,
            ListRead(
                f"events/{reason}",
                "scheduling events",
                CORE_EVENT,
                query={"fieldSelector": f"involvedObject.kind=Pod,reason={reason}"},
                limit=limit,
                reduce=slim.redacted_event,
            ),
        )
        for reason in EVENT_REASONS
    ]


def _tally(key: str) -> str:
    """What progress calls a read: the first part of its key (`pods/ns/x` -> pods), short enough for one line."""
    return key.split("/", 1)[0]


def _list(reader: Reader, spec: ListRead) -> tuple[str, Read]:
    return spec.key, partial(reader.read_list, spec)


# -- orchestration -----------------------------------------------------------------------------------


def read_live(client: ClusterClient, sink: slim.ObjectSink, progress: ReadProgress | None = None) -> ReadOutcome:
    """Read everything the checks need and feed `sink`; raises UserError (and feeds nothing more) on failure.

    The caller must treat the sink's content as garbage when this raises: the run stops on partial state.
    """
    progress = progress or ReadProgress(client.label, enabled=False)
    reader = Reader(client, progress)
    pool = ThreadPoolExecutor(max_workers=max(1, client.settings.workers), thread_name_prefix="kube-read")
    try:
        served = reader.discover(pool)
        futures = _submit(pool, base_reads(reader, served))
        futures += _submit(pool, namespace_pod_reads(reader, _result(futures, "namespaces", client)))
        _wait_all(futures, client)
        feeder = _Feeder(sink)
        for key, future in futures:
            if key != "healthz":
                feeder.feed(key, future.result())
        if feeder.pending_pods:
            feeder.feed_events(_run(pool, event_reads(reader), client))
        feeder.feed("healthz", _result(futures, "healthz", client))
    except BaseException:
        client.cancelled.set()  # workers stop at their next attempt or page
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return ReadOutcome(QUEUE in served, progress.counts(), client.requests)


def _submit(pool: ThreadPoolExecutor, plan: list[tuple[str, Read]]) -> list[tuple[str, Future[list[Obj]]]]:
    return [(key, pool.submit(fn)) for key, fn in plan]


def _result(futures: list[tuple[str, Future[list[Obj]]]], key: str, client: ClusterClient) -> list[Obj]:
    future = next(f for k, f in futures if k == key)
    _wait_all([(key, future)], client)
    return future.result()


def _wait_all(futures: list[tuple[str, Future[list[Obj]]]], client: ClusterClient) -> None:
    """Return when all are done; on the first failure, cancel the rest and raise that failure (not theirs)."""
    done, _ = wait([f for _, f in futures], return_when=FIRST_EXCEPTION)
    failed = [f for f in done if f.exception() is not None]
    if not failed:
        return
    client.cancelled.set()
    wait([f for _, f in futures])
    errors = [e for _, f in futures if f.done() and (e := f.exception()) is not None]
    real = [e for e in errors if not isinstance(e, ReadCancelled)]
    raise (real or errors)[0]


def _run(pool: ThreadPoolExecutor, plan: list[tuple[str, Read]], client: ClusterClient) -> list[Obj]:
    futures = _submit(pool, plan)
    _wait_all(futures, client)
    return [item for _, f in futures for item in f.result()]


class _Feeder:
    """Feeds the sink in plan order; drops a pod seen twice; keeps only events of pods that are Pending; keeps
    another chart's release only when an object fed before it (Queues, shards, kai-config) belongs to it."""

    def __init__(self, sink: slim.ObjectSink) -> None:
        self.sink = sink
        self.seen_pods: set[tuple[str, str]] = set()
        self.pending_pods: set[tuple[str, str]] = set()
        self.owning_releases: set[tuple[str, str]] = set()

    def feed(self, key: str, items: list[Obj]) -> None:
        is_pods = key.startswith("pods/")
        for item in items:
            if is_pods and not self._first_sight(item):
                continue
            if key == "releases" and not self._kept_release(item):
                continue
            release = object_managers(item).release if key in _MANAGED_READS else None
            if release is not None:
                self.owning_releases.add(release)
            self.sink.add(item)

    def _kept_release(self, summary: Obj) -> bool:
        if mapping_at(summary, "chart").get("name", KAI_CHART) == KAI_CHART:
            return True
        meta = mapping_at(summary, "metadata")
        return (str(meta.get("namespace", "")), str(meta.get("name", ""))) in self.owning_releases

    def _first_sight(self, pod: Obj) -> bool:
        meta = mapping_at(pod, "metadata")
        ident = (str(meta.get("namespace", "")), str(meta.get("name", "")))
        if ident in self.seen_pods:
            return False  # labelled between two lists, or an NVCF pod in the kai-scheduler namespace
        self.seen_pods.add(ident)
        if mapping_at(pod, "status").get("phase") == "Pending":
            self.pending_pods.add(ident)
        return True

    def feed_events(self, events: list[Obj]) -> None:
        relevant = [e for e in events if _involved(e) in self.pending_pods]
        relevant.sort(key=_event_time)  # the newest message about a pod is the one the builder keeps
        for event in relevant:
            self.sink.add(event)


def _involved(event: Obj) -> tuple[str, str]:
    involved = mapping_at(event, "involvedObject")
    return str(involved.get("namespace", "")), str(involved.get("name", ""))


def _event_time(event: Obj) -> str:
    meta = mapping_at(event, "metadata")
    return str(event.get("lastTimestamp") or event.get("eventTime") or meta.get("creationTimestamp") or "")
