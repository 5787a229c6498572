"""Filling a real API server (tests/support/envtest) with benchmark objects, fast, and the machine's state.

    seeded = seed(cluster, synthetic.objects(scale))    # {"counts": {...}, "seconds": ..., "requests": ...}

Creates go over a few kept-alive HTTPS connections at once with the admin client certificate (the harness's
RestClient: one connection per thread). A real server keeps what a controller would set apart from the
object: a Pod is created Pending whatever its manifest says, so its status (phase, conditions, node IPs)
goes through the /status subresource afterwards, as the kubelet's would; the same for custom objects whose
CRD has a status subresource. Namespaces are made with their `default` ServiceAccount (Pods need it)
before anything is created in them. Server-set metadata (uid, creationTimestamp, resourceVersion) is left
to the server.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

Obj = dict[str, Any]
MERGE_PATCH = "application/merge-patch+json"
BATCH = 2000  # objects in flight per batch: bounds the generated dicts held at once
SERVER_SET = ("uid", "creationTimestamp", "resourceVersion", "generation", "managedFields")

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


def seed(cluster: Any, objects: Iterable[Obj], *, workers: int = 8) -> dict[str, Any]:
    """Create `objects` in `cluster` (an EnvTest); their order is kept between batches, not inside one."""
    started = time.monotonic()
    counts: dict[str, int] = {}
    namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"}
    requests = 0
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="seed") as pool:
        for batch in _batched(objects):
            for obj in batch:
                counts[obj["kind"]] = counts.get(obj["kind"], 0) + 1
                requests += _ensure_namespace(cluster, obj, namespaces)
            requests += sum(pool.map(lambda obj: _create(cluster.rest, obj), batch))
    seconds = time.monotonic() - started
    return {
        "counts": counts,
        "seconds": round(seconds, 1),
        "requests": requests,
        "requests_per_s": round(requests / seconds, 1) if seconds else None,
        "workers": workers,
    }


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
