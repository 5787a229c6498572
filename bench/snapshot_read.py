"""Benchmark: reading a YAML snapshot (`--snapshot FILE`), the old way and ours, side by side in the same run.

Two snapshots, generated once (bench/synthetic.py's objects, written by kai-gitops's own SnapshotWriter):

    "18mb"        pods and nodes as `kubectl get pods,nodes -A -o yaml` keeps them (whole objects), 18 MB
    "150k-pods"   150,000 pods and 15,000 nodes as `kai-gitops snapshot` writes them (reduced to what the checks
                  read), with the queues, KAI's objects and Events

Each read runs in a child process of its own, under an address-space limit (--limit-gb, default 4) so that the
old way cannot take the shared machine's memory: a read past the limit is reported as such, with its time until
then. "old" is the read before streaming: the whole file composed by the YAML reader with every value's position
(yamlio.document.load_documents), then every item handed to the builder; "ours" is read_snapshot. Both must find
the same pods, nodes and queues. Prints one JSON object as its last line: per snapshot, its size, items, and per
way the read's seconds and peak RSS (MB), or that it ran past the limit.

    python bench/snapshot_read.py [--quick] [--limit-gb N] [--only 18mb|150k-pods]
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

MB = 1_000_000
CACHE = Path("/tmp/kai-gitops-snapshot-bench")


def _kubectl_objects(target_bytes: int) -> Iterator[dict[str, Any]]:
    """Whole pods and nodes, a node for every ten pods, until about `target_bytes` of YAML."""
    import random

    import synthetic

    rng = random.Random(7)
    yield from synthetic.queues(synthetic.Scale(queues=50))
    written, i = 0, 0
    while written < target_bytes:
        if i % 10 == 0:
            item = synthetic.node(rng, i // 10, scheduled=i % 20 == 0)
            yield item
            written += 3_900  # measured YAML bytes of one node
        nvcf = i % 3 == 0
        yield synthetic.pod(
            rng,
            f"fn-{i:06d}",
            "nvcf-backend" if nvcf else f"team-{i % 40:03d}",
            nvcf=nvcf,
            scheduler="kai-scheduler",
            pending=i % 97 == 0,
            node=f"node-{i // 10:05d}",
        )
        written += 5_300  # measured YAML bytes of one pod
        i += 1


def _reduced_objects(pods: int) -> Iterator[dict[str, Any]]:
    """A cluster of `pods` pods as `kai-gitops snapshot` writes it: each object reduced by the cluster reader's
    own reducer for its kind."""
    import random

    import synthetic

    from reconciler.sources.cluster import slim

    scale = synthetic.Scale(nodes=pods // 10, pods=pods, nvcf_pods=pods // 5, queues=1000, events=3000)
    rng = random.Random(7)
    yield from synthetic.platform_objects(scale)
    yield from synthetic.queues(scale)
    for i in range(scale.nodes):
        yield slim.slim_node(synthetic.node(rng, i, scheduled=i % 10 == 0))
    for pod in synthetic.pods(scale, rng):
        yield slim.slim_pod(pod)
    yield from synthetic.pending_events(scale)


def generate(name: str, size: float) -> Path:
    """The snapshot `name` of `size` (MB for "18mb", pods for "150k-pods"), written once into CACHE."""
    from datetime import UTC, datetime

    from reconciler.sources.snapshot_writer import SnapshotWriter

    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"{name}-{size:g}.yaml"
    if path.exists():
        return path
    objects = _kubectl_objects(int(size * MB)) if name == "18mb" else _reduced_objects(int(size))
    with SnapshotWriter(str(path), taken_at=datetime(2026, 12, 1, tzinfo=UTC)) as writer:
        for obj in objects:
            writer.add(obj)
        writer.commit()
    return path


def _old_read(path: str) -> Any:
    """The read before streaming, kept here only (sources/snapshot.py's `_load` and `_yaml_items` as they were):
    the whole file composed with every value's position, the taken-at annotation located (which indexes where
    every value ends), then every item handed to the builder."""
    from reconciler.model.live import LiveStateBuilder
    from reconciler.sources.snapshot import SNAPSHOT_MAX_BYTES, SNAPSHOT_MAX_NODES, TAKEN_AT_ANNOTATION
    from reconciler.yamlio.document import decode_text, load_documents

    builder = LiveStateBuilder(f"snapshot {path}")
    items: list[Any] = []
    for doc in load_documents(
        decode_text(Path(path).read_bytes(), path, max_bytes=SNAPSHOT_MAX_BYTES), path, max_nodes=SNAPSHOT_MAX_NODES
    ):
        assert isinstance(doc.data, dict)
        items.extend(doc.data.get("items") or [])
        str(doc.locate(("metadata", "annotations", TAKEN_AT_ANNOTATION)))
    for item in items:
        builder.add(item)
    return builder.finish()


class _PastTimeout(Exception):
    pass


def _stop(_signal: int, _frame: object) -> None:
    raise _PastTimeout


def read_one(way: str, path: str, limit_gb: float, timeout: float) -> None:
    """In the child: one read under the address-space limit and the timeout, then its time, peak RSS and what it
    found (or which limit it ran past), as JSON."""
    limit = int(limit_gb * 1024**3)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    signal.signal(signal.SIGALRM, _stop)
    signal.alarm(int(timeout))
    from reconciler.sources.snapshot import read_snapshot

    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu_before = before.ru_utime + before.ru_stime
    started = time.perf_counter()
    try:
        state = _old_read(path) if way == "old" else read_snapshot(path)
        found: dict[str, Any] = {
            "pods": len(state.nvcf_pods) + len(state.kai_pods),
            "nodes": state.nodes_total,
            "queues": len(state.queues),
        }
    except MemoryError:
        found = {"past_limit_gb": limit_gb}
    except _PastTimeout:
        found = {"past_timeout_s": timeout}
    seconds = time.perf_counter() - started
    usage = resource.getrusage(resource.RUSAGE_SELF)  # ru_maxrss: kilobytes on Linux
    cpu = usage.ru_utime + usage.ru_stime - cpu_before  # the machine is shared: CPU time says more than wall time
    print(
        json.dumps(
            {
                "seconds": round(seconds, 2),
                "cpu_s": round(cpu, 2),
                "peak_rss_mb": round(usage.ru_maxrss / 1024),
                **found,
            }
        )
    )


def measured(way: str, path: Path, limit_gb: float, timeout: float) -> dict[str, Any]:
    try:
        out = subprocess.run(
            [
                sys.executable,
                __file__,
                "--read",
                way,
                str(path),
                "--limit-gb",
                str(limit_gb),
                "--timeout",
                str(timeout),
            ],
            capture_output=True,
            text=True,
            timeout=timeout + 60,
        )
    except subprocess.TimeoutExpired:  # the child's own alarm did not stop it (stuck in C)
        return {"past_timeout_s": timeout, "killed": True}
    if out.returncode != 0:
        return {"failed": out.stderr.strip().splitlines()[-1:]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2 MB and 15,000 pods instead of 18 MB and 150,000")
    parser.add_argument("--mb", type=float, default=None, help="size of the first snapshot in MB")
    parser.add_argument("--pods", type=int, default=None, help="pods of the second snapshot")
    parser.add_argument("--limit-gb", type=float, default=4.0, help="address-space limit of each read")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds before a read is stopped")
    parser.add_argument("--only", choices=("18mb", "150k-pods"), default=None)
    parser.add_argument("--ways", default="old,ours", help="which reads, comma-separated")
    parser.add_argument("--read", nargs=2, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.read is not None:
        read_one(args.read[0], args.read[1], args.limit_gb, args.timeout)
        return
    rows: dict[str, Any] = {"limit_gb": args.limit_gb}
    for name in ("18mb", "150k-pods"):
        if args.only not in (None, name):
            continue
        size = (
            (args.mb or (2 if args.quick else 18))
            if name == "18mb"
            else (args.pods or (15_000 if args.quick else 150_000))
        )
        path = generate(name, size)
        row: dict[str, Any] = {"file_mb": round(path.stat().st_size / MB, 1), "generated": size}
        for way in args.ways.split(","):
            row[way] = measured(way, path, args.limit_gb, args.timeout)
            print(f"{name} {way}: {row[way]}", file=sys.stderr)
        rows[name] = row
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
