"""Benchmark: applying node-label changes with bounded concurrency vs the official client's sequential loop.

    python bench/apply.py [--quick] [--workers 16] [--throttled 10]

A KubeTestServer (tests/support/kubeserver) serves 5,000 nodes, 2,000 of them in the pool a shared-cluster
intent selects (`--quick`: 300 and 100). Every request waits 10 ms in the server (a real API server's
round trip; on loopback the test server itself is otherwise the bottleneck), and `--throttled` requests
of each run are answered 429 with `Retry-After: 1` instead (`--quick`: 2).
Each measurement is a child process:

* naive     -- a loop of the official client's CoreV1Api.patch_node(name, {labels}), retrying a 429 after
               its Retry-After, one change after the other;
* ours      -- kai-gitops's apply step (reconciler/reconcile/apply.py: merge patch per node with the freshly
               listed resourceVersion as precondition, field manager kai-gitops, `--workers` at a time,
               429s retried after Retry-After);
* reconcile -- the whole guarded `kai-gitops reconcile --apply --plan FILE` for the same 2,000 changes:
               live read, identity, Lease, a paged re-read of the nodes, server-side dry-run of every
               change, the writes, an Event per change, the audit, and the re-read.

After each run the server's request log is checked: every targeted node was patched successfully exactly
once (dry-runs aside) and carries the label, no other node was written. The last stdout line is one JSON
object.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

LABEL = "nvca.nvcf.nvidia.io/schedule"
POOL = {"pool": "nvcf"}
DELAY_S = 0.010
GOAL = 4.0


def nodes(total: int, pooled: int) -> list[dict[str, Any]]:
    items, step, chosen = [], total // pooled, 0
    for i in range(total):
        labels = {"kubernetes.io/hostname": f"node-{i:05d}", "nvidia.com/gpu.present": "true"}
        if i % step == 0 and chosen < pooled:
            labels.update(POOL)
            chosen += 1
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"name": f"node-{i:05d}", "labels": labels},
                      "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    return items


# -- child modes -------------------------------------------------------------------------------------


def child_naive(kubeconfig: str, names_file: str) -> None:
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    config.load_kube_config(config_file=kubeconfig)
    api = client.CoreV1Api()
    names = json.loads(Path(names_file).read_text())
    started = time.monotonic()
    throttled = 0
    for name in names:
        while True:
            try:
                api.patch_node(name, {"metadata": {"labels": {LABEL: "true"}}})
                break
            except ApiException as exc:
                if exc.status != 429:
                    raise
                throttled += 1
                time.sleep(float((exc.headers or {}).get("Retry-After", 1)))
    print(json.dumps({"applied": len(names), "throttled": throttled, "s": time.monotonic() - started}))


def child_ours(kubeconfig: str, plan_file: str, workers: int) -> None:
    from reconciler.plans.saved import read_plan
    from reconciler.reconcile.apply import ClusterWriter, Pending, WriteSettings, apply_changes
    from reconciler.sources.cluster.kubeconfig import load_configuration

    configuration, _ = load_configuration(kubeconfig, None)
    writer = ClusterWriter(configuration, settings=WriteSettings(workers=workers))
    plan = read_plan(plan_file)
    versions = _resource_versions(str(configuration.host))
    pending = [Pending(c, versions[c.ref.name]) for c in plan.changes]
    started = time.monotonic()
    results = apply_changes(writer, pending, lambda _result: None)
    elapsed = time.monotonic() - started
    print(json.dumps({"applied": sum(1 for r in results if r.result == "applied"), "s": elapsed}))


def _resource_versions(server: str) -> dict[str, str]:
    """One paged list (not timed): the resourceVersions the planner's live read would have seen."""
    import orjson
    import urllib3

    pool, versions, token = urllib3.PoolManager(), {}, None
    while True:
        query = "limit=500" + (f"&continue={token}" if token else "")
        page = orjson.loads(pool.request("GET", f"{server}/api/v1/nodes?{query}").data)
        versions.update({n["metadata"]["name"]: n["metadata"]["resourceVersion"] for n in page["items"]})
        token = page["metadata"].get("continue")
        if not token:
            return versions


# -- the benchmark -----------------------------------------------------------------------------------


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, dict[str, Any], str]:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{cmd[1:3]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    try:
        return wall, json.loads(proc.stdout), proc.stderr   # the CLI's indented report
    except json.JSONDecodeError:
        return wall, json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def _arm(server: Any, Fault: Any, throttled: int, changes: int) -> None:
    server.clear_faults()
    step = max(1, changes // (throttled + 1))
    for k in range(throttled):   # spread over the run; each fires once, then the delay applies again
        server.inject_fault(Fault(r"^/api/v1/nodes/", method="PATCH", status=429, retry_after=1,
                                  after=step * (k + 1)))
    server.inject_fault(Fault(r".", delay_s=DELAY_S, times=-1))


def _verify(server: Any, targets: set[str], since: int) -> dict[str, int]:
    """Successful real (not dry-run) PATCHes per node in this run; every target exactly once, nobody else."""
    writes = Counter(r.path.rsplit("/", 1)[1] for r in server.requests[since:]
                     if r.method == "PATCH" and r.path.startswith("/api/v1/nodes/") and r.status == 200
                     and r.query.get("dryRun") != "All")
    throttled = sum(1 for r in server.requests[since:] if r.status == 429)
    wrong = {n: c for n, c in writes.items() if n not in targets or c != 1}
    missing = targets - set(writes)
    labelled = {n["metadata"]["name"] for n in server.list_objects("v1", "Node")
                if (n["metadata"].get("labels") or {}).get(LABEL) == "true"}
    if wrong or missing or labelled != targets:
        raise SystemExit(f"not exactly once: wrong={list(wrong.items())[:5]} missing={sorted(missing)[:5]} "
                         f"labelled={len(labelled)} of {len(targets)}")
    return {"patched_once": len(writes), "throttled_429": throttled}


def _repo(tmp: Path) -> Path:
    from tests.helpers import make_repo  # the tests' Git helper builds the desired repo

    config = ("apiVersion: kai-gitops/v1\nclusters:\n  - name: bench\n    kubeContext: bench\n    mode: addon\n"
              "    kaiChartVersion: v0.16.7\n    environmentFile: env.yaml\n    sharedCluster:\n"
              "      intent: shared\n      nodeSelector: {pool: nvcf}\n")
    path, _ = make_repo(tmp, {"kai-gitops.yaml": config, "env.yaml": "addons:\n  kaiScheduler:\n    enabled: true\n"})
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="300 nodes, 100 changes (a smoke run)")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--throttled", type=int, default=None, help="429s per run (default 10, quick 2)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, *rest = args.child
        {"naive": lambda: child_naive(*rest), "ours": lambda: child_ours(rest[0], rest[1], int(rest[2]))}[mode]()
        return
    from reconciler.plans.saved import read_plan
    from tests.helpers import default_queues
    from tests.support.kubeserver import Fault, KubeTestServer
    from tests.support.kubeserver.__main__ import write_kubeconfig

    total, changes = (300, 100) if args.quick else (5000, 2000)
    throttled = args.throttled if args.throttled is not None else (2 if args.quick else 10)
    items = nodes(total, changes)
    targets = {n["metadata"]["name"] for n in items if "pool" in n["metadata"]["labels"]}
    me = [sys.executable, str(Path(__file__).resolve())]
    result: dict[str, Any] = {"nodes": total, "changes": len(targets), "workers": args.workers,
                              "delay_ms_per_request": DELAY_S * 1000, "throttled_per_run": throttled}
    with tempfile.TemporaryDirectory(prefix="kai-bench-apply-") as tmp_name, KubeTestServer() as server:
        tmp = Path(tmp_name)
        server.register_kai_and_nvca_kinds()
        server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
        server.add_many([*items, *default_queues()])   # healthy queues: the plan is the label changes only
        kubeconfig = tmp / "kubeconfig"
        write_kubeconfig(kubeconfig, "bench", server.url)
        repo = _repo(tmp)
        cli = [str(Path(sys.executable).parent / "kai-gitops"), "reconcile", "--repo", str(repo),
               "--kubeconfig", str(kubeconfig)]
        plan_file = tmp / "plan.json"
        made = subprocess.run([*cli, "--plan-out", str(plan_file), "-o", "json"], capture_output=True, text=True,
                              check=False)
        if made.returncode != 2 or not plan_file.exists():
            raise SystemExit(f"making the plan failed ({made.returncode}): {made.stderr[-2000:]}")
        plan = read_plan(str(plan_file))
        assert len(plan.changes) == len(targets), len(plan.changes)
        names_file = tmp / "names.json"
        names_file.write_text(json.dumps(sorted(c.ref.name for c in plan.changes)))

        runs: dict[str, tuple[float, dict[str, Any], dict[str, int]]] = {}
        for label, cmd in (("naive", [*me, "--child", "naive", str(kubeconfig), str(names_file)]),
                           ("ours", [*me, "--child", "ours", str(kubeconfig), str(plan_file), str(args.workers)]),
                           ("reconcile", [*cli, "--plan", str(plan_file), "--apply", "--max-changes",
                                          str(len(targets)), "--audit-log", str(tmp / "audit.jsonl"), "-o", "json"])):
            server.clear_faults()
            server.add_many(items)   # every run starts from the unlabelled pool, same resourceVersions
            since = len(server.requests)
            _arm(server, Fault, throttled, len(targets))
            wall, out, _ = _run(cmd, {"KAI_GITOPS_KUBE_WORKERS": str(args.workers)})
            server.clear_faults()
            checked = _verify(server, targets, since)
            runs[label] = (out.get("s", wall), out, checked)
            print(f"  {label}: {runs[label][0]:.2f} s, {checked}", file=sys.stderr)
    naive_s, ours_s, reconcile_s = runs["naive"][0], runs["ours"][0], runs["reconcile"][0]
    result.update({
        "naive_s": round(naive_s, 3), "naive_changes_per_s": round(len(targets) / naive_s, 1),
        "ours_s": round(ours_s, 3), "ours_changes_per_s": round(len(targets) / ours_s, 1),
        "speedup": round(naive_s / ours_s, 2), "goal_speedup": GOAL, "goal_met": naive_s / ours_s >= GOAL,
        "reconcile_apply_end_to_end_s": round(reconcile_s, 3),
        "reconcile_speedup_vs_naive": round(naive_s / reconcile_s, 2),
        "exactly_once": {k: v[2] for k, v in runs.items()},
        "note": ("ours/naive time only the writes (one PATCH per change); reconcile is the whole guarded CLI run: "
                 "a paged re-read of the nodes, then 3 requests per change (dry-run, write, Event), plus the Git "
                 "and policy work and two live reads of the cluster (before and after)."),
    })
    print(json.dumps(result))


if __name__ == "__main__":
    main()
