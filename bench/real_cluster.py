"""Filling a real API server (tests/support/envtest) with benchmark objects, fast, and the machine's state.

    seeded = seed(cluster, synthetic.objects(scale))    # {"counts": {...}, "seconds": ..., "requests": ...}

Creates go over a few kept-alive HTTPS connections at once with the admin client certificate (the harness's
RestClient: one connection per thread). A real server keeps what a controller would set apart from the
object: a Pod is created Pending whatever its manifest says, so its status (phase, conditions, node IPs)
goes through the /status subresource afterwards, as the kubelet's would; the same for custom objects whose
CRD has a status subresource. Namespaces are made with their `default` ServiceAccount (Pods need it)
before anything is created in them. Server-set metadata (uid, creationTimestamp, resourceVersion) is left
to the server.

With `pods_via="store"` Pods skip the API: a Pod takes two requests and the API server admits ~90 a second
on these 2 cores, so 150,000 Pods took ~55 minutes. The first Pod is still made through the API (create,
then /status), and read back; every other one is written into etcd as JSON with its status and the server
metadata the first one got (a new uid, the same managedFields), in transactions of up to 128 puts through
etcd's JSON gateway. The API server's storage codec reads JSON beside its own protobuf (decoding it costs more,
which matters only for a list that falls back to etcd), applies its defaults on the way out, and learns of the
writes through its watch on etcd like of any other; `seed` waits
until a list through the API counts every Pod and the Pods' watch cache has caught up with the last write.
(Until it has, a list with a label selector falls back to etcd and decodes every Pod of the namespace: a
`!icms-request-id` page in a namespace of 150,000 labelled Pods hit the API server's 60 s timeout.) What the
store route skips is admission of those Pods (none that the product's read depends on: the same generator
made the Pod that went through it).
"""

from __future__ import annotations

import base64
import os
import resource
import time
import uuid
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import orjson
import urllib3

Obj = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
BATCH = 2000  # objects in flight per batch: bounds the generated dicts held at once
SERVER_SET = ("uid", "creationTimestamp", "resourceVersion", "generation", "managedFields")
STORE_PREFIX = "/registry"  # kube-apiserver's default --etcd-prefix
STORE_TXN_OPS = 128  # etcd's default --max-txn-ops
STORE_TXN_BYTES = 1_000_000  # under etcd's default --max-request-bytes (1.5 MiB), base64 included

# (apiVersion, kind) -> (collection path under /api or /apis, namespaced, status through /status)
KINDS: dict[tuple[str, str], tuple[str, bool, bool]] = {
    ("v1", "Namespace"): ("/api/v1/namespaces", False, False),
    ("v1", "Node"): ("/api/v1/nodes", False, False),  # a Node keeps the status it is created with
    ("v1", "Pod"): ("/api/v1/pods", True, True),
    ("v1", "Event"): ("/api/v1/events", True, False),
    ("v1", "Secret"): ("/api/v1/secrets", True, False),
    ("v1", "ConfigMap"): ("/api/v1/configmaps", True, False),
    ("scheduling.run.ai/v2", "Queue"): ("/apis/scheduling.run.ai/v2/queues", False, True),
    ("kai.scheduler/v1", "SchedulingShard"): ("/apis/kai.scheduler/v1/schedulingshards", False, True),
    ("nvcf.nvidia.io/v1", "NVCFBackend"): ("/apis/nvcf.nvidia.io/v1/nvcfbackends", True, True),
}


def collection(obj: Obj) -> str:
    base, namespaced, _ = KINDS[obj["apiVersion"], obj["kind"]]
    if not namespaced:
        return base
    prefix, plural = base.rsplit("/", 1)
    return f"{prefix}/namespaces/{obj['metadata']['namespace']}/{plural}"


def seed(cluster: Any, objects: Iterable[Obj], *, workers: int = 8, pods_via: str = "api") -> dict[str, Any]:
    """Create `objects` in `cluster` (an EnvTest); their order is kept between batches, not inside one. Pods
    through the API, or (`pods_via="store"`) all but the first straight into etcd (module docstring)."""
    started = time.monotonic()
    counts: dict[str, int] = {}
    namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"}
    requests = 0
    store = PodStore(cluster) if pods_via == "store" else None
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="seed") as pool:
        for batch in _batched(objects):
            for obj in batch:
                counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
                requests += _ensure_namespace(cluster, obj, namespaces)
            if store is not None and store.template is None:
                requests += store.learn(next((obj for obj in batch if obj["kind"] == "Pod"), None))
            through_api = [obj for obj in batch if store is None or obj["kind"] != "Pod"]
            requests += sum(pool.map(lambda obj: _create(cluster.rest, obj), through_api))
            if store is not None:
                store.write([obj for obj in batch if store.takes(obj)], pool)
    if store is not None:
        requests += store.wait_served(counts.get("Pod", 0))
    seconds = time.monotonic() - started
    return {
        "counts": counts,
        "seconds": round(seconds, 1),
        "requests": requests,
        "requests_per_s": round(requests / seconds, 1) if seconds else None,
        "workers": workers,
        "pods_via": pods_via,
        **(store.figures() if store is not None else {}),
    }


class PodStore:
    """Pods written into the API server's etcd, each with the server metadata of one the API made."""

    def __init__(self, cluster: Any) -> None:
        self.cluster = cluster
        self.http = urllib3.PoolManager(maxsize=8)
        self.template: Obj | None = None  # the API-made Pod's metadata the stored ones copy
        self.first: tuple[str, str] | None = None
        self.stored = self.transactions = self.revision = 0

    def learn(self, pod: Obj | None) -> int:
        """Create `pod` through the API and keep the metadata the server gave it; the requests made."""
        if pod is None:
            return 0
        made = _create(self.cluster.rest, pod)
        namespace, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        served = self.cluster.rest.get(f"/api/v1/namespaces/{namespace}/pods/{name}")
        self.template, self.first = served["metadata"], (namespace, name)
        return made + 1

    def takes(self, obj: Obj) -> bool:
        return obj["kind"] == "Pod" and (obj["metadata"]["namespace"], obj["metadata"]["name"]) != self.first

    def write(self, pods: list[Obj], pool: ThreadPoolExecutor) -> None:
        transactions = list(self._transactions(pods))
        for done, revision in pool.map(self._put, transactions):
            self.stored += done
            self.revision = max(self.revision, revision)
        self.transactions += len(transactions)

    def _transactions(self, pods: list[Obj]) -> Iterator[list[dict[str, Any]]]:
        ops: list[dict[str, Any]] = []
        size = 0
        for pod in pods:
            op = {"requestPut": {"key": _b64(self._key(pod).encode()), "value": _b64(orjson.dumps(self._stored(pod)))}}
            op_size = len(op["requestPut"]["key"]) + len(op["requestPut"]["value"])
            if ops and (len(ops) >= STORE_TXN_OPS or size + op_size > STORE_TXN_BYTES):
                yield ops
                ops, size = [], 0
            ops.append(op)
            size += op_size
        if ops:
            yield ops

    def _stored(self, pod: Obj) -> Obj:
        assert self.template is not None
        meta = {k: v for k, v in pod["metadata"].items() if k not in SERVER_SET}
        server_set = {k: self.template[k] for k in ("creationTimestamp", "managedFields") if k in self.template}
        return {**pod, "metadata": {**meta, **server_set, "uid": str(uuid.uuid4())}}

    @staticmethod
    def _key(pod: Obj) -> str:
        return f"{STORE_PREFIX}/pods/{pod['metadata']['namespace']}/{pod['metadata']['name']}"

    def _put(self, ops: list[dict[str, Any]]) -> tuple[int, int]:
        """Write one transaction; the Pods written and etcd's revision after it."""
        reply = self.http.request("POST", f"{self.cluster.etcd_url}/v3/kv/txn", body=orjson.dumps({"success": ops}))
        answer = orjson.loads(reply.data) if reply.status == 200 else {}
        if not answer.get("succeeded"):
            raise RuntimeError(f"etcd refused a transaction of {len(ops)} Pods: {reply.status} {reply.data[:300]!r}")
        return len(ops), int(answer["header"]["revision"])

    def wait_served(self, pods: int, timeout: float = 900.0) -> int:
        """Poll until a one-item list counts `pods` Pods and the Pods' watch cache has seen the last write; the
        requests made."""
        deadline, requests = time.monotonic() + timeout, 0
        while True:
            page = self.cluster.rest.get("/api/v1/pods?limit=1")
            cached = self._cache_revision()
            requests += 2
            served = len(page["items"]) + int(page["metadata"].get("remainingItemCount") or 0)
            if served == pods and cached >= self.revision:
                return requests
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the API server serves {served} of the {pods} Pods seeded; its watch cache is at revision "
                    f"{cached} of {self.revision}"
                )
            time.sleep(1)

    def _cache_revision(self) -> int:
        """The revision the API server's Pod watch cache has reached (its /metrics), 0 before it has one."""
        metrics = self.cluster.rest.call("GET", "/metrics", accept="text/plain")
        for line in str(metrics).splitlines():
            if line.startswith('apiserver_watch_cache_resource_version{group="",resource="pods"}'):
                return int(float(line.rsplit(" ", 1)[1]))
        return 0

    def figures(self) -> dict[str, int]:
        return {"pods_through_store": self.stored, "store_transactions": self.transactions}


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _ensure_namespace(cluster: Any, obj: Obj, made: set[str]) -> int:
    """Namespaces one at a time, before their contents; a Namespace object's labels land even when something
    in it came first."""
    if obj["kind"] == "Namespace":
        name, labels = obj["metadata"]["name"], obj["metadata"].get("labels")
        if name not in made:
            cluster.create_namespace(name, labels=labels, exist_ok=True)
            made.add(name)
            return 3
        if labels:
            cluster.rest.call(
                "PATCH", f"/api/v1/namespaces/{name}", {"metadata": {"labels": labels}}, content_type=MERGE_PATCH
            )
            return 1
        return 0
    name = obj["metadata"].get("namespace")
    if name and name not in made:
        cluster.create_namespace(name, exist_ok=True)
        made.add(name)
        return 3
    return 0


def _create(rest: Any, obj: Obj) -> int:
    if obj["kind"] == "Namespace":
        return 0  # made by _ensure_namespace
    _, _, status_subresource = KINDS[obj["apiVersion"], obj["kind"]]
    meta = {k: v for k, v in obj["metadata"].items() if k not in SERVER_SET}
    body = {**{k: v for k, v in obj.items() if k != "status" or not status_subresource}, "metadata": meta}
    path = collection(obj)
    rest.call("POST", path, body, ok=(201,))
    if status_subresource and obj.get("status"):
        rest.call(
            "PATCH", f"{path}/{meta['name']}/status", {"status": obj["status"]}, content_type=MERGE_PATCH, ok=(200,)
        )
        return 2
    return 1


def _batched(objects: Iterable[Obj]) -> Iterator[list[Obj]]:
    batch: list[Obj] = []
    for obj in objects:
        batch.append(obj)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


class ServerCpu:
    """CPU seconds etcd and kube-apiserver have used so far: what serving a measurement cost the server,
    a figure the other users' load on the machine does not inflate the way it does wall times."""

    def __init__(self, cluster: Any) -> None:
        marker = str(cluster.data_dir)  # both are started with paths under it on their command lines
        self.stat_files = [stat for stat in Path("/proc").glob("[0-9]*/stat") if _cmdline_has(stat.parent, marker)]
        if len(self.stat_files) != 2:
            raise RuntimeError(f"expected etcd and kube-apiserver under {marker}, found {len(self.stat_files)}")

    def seconds(self) -> float:
        total = 0
        for stat in self.stat_files:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
        return total / os.sysconf("SC_CLK_TCK")


def _cmdline_has(process: Path, marker: str) -> bool:
    try:
        return marker in (process / "cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


def children_cpu_s() -> float:
    """User + system CPU of every child process waited for so far (their own waited-for children included)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def machine() -> dict[str, Any]:
    """What the figures ran on: cores, and the load average other users put on them meanwhile."""
    return {"cpus": os.cpu_count(), "loadavg_1_5_15": [round(x, 2) for x in os.getloadavg()]}
