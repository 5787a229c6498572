"""Benchmark: applying node-label changes with bounded concurrency vs the official client's sequential loop.

    python bench/apply.py [--quick] [--workers 16] [--throttled 10]
    python bench/apply.py --server real [--nodes 5000] [--changes 2000] [--kubectl-sample 200]

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

`--server real`: etcd + kube-apiserver (tests/support/envtest, `make tools`) with --nodes Nodes, --changes of
them in the pool, created through the API (bench/real_cluster.py; reported, not timed). No delay or 429 is
injected. The same three runs, plus, with kubectl:

* kubectl_loop     -- `kubectl label node NAME key=true`, one process per change, for --kubectl-sample
                      changes; its time is extrapolated to all of them (stated in the JSON);
* kubectl_selector -- one `kubectl label nodes -l pool=nvcf key=true` for the whole pool.

Before each run the label is taken off every node again; after it the API server's audit log (Node PATCHes
and updates only) is read for the same exactly-once check, with who wrote (the user agents), and the
reconcile run's Event warnings are reported.
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
sys.path.insert(0, str(ROOT / "bench"))

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
        items.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": f"node-{i:05d}", "labels": labels},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]},
            }
        )
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
    from reconciler.reconcile.allowed_writes import check_write
    from reconciler.reconcile.apply import ClusterWriter, Pending, WriteSettings, apply_changes
    from reconciler.sources.cluster.session import ClusterSession

    session = ClusterSession.open(kubeconfig, None, guard=check_write)  # as a run opens it (cli/live.py)
    writer = ClusterWriter(session, settings=WriteSettings(workers=workers))
    plan = read_plan(plan_file)
    # One paged list (not timed): the resourceVersions the planner's live read would have seen.
    versions = {name: node["metadata"]["resourceVersion"] for name, node in writer.list_nodes().items()}
    pending = [Pending(c, versions[c.ref.name]) for c in plan.changes]
    started = time.monotonic()
    results = apply_changes(writer, pending, lambda _result: None)
    elapsed = time.monotonic() - started
    print(json.dumps({"applied": sum(1 for r in results if r.result == "applied"), "s": elapsed}))


def child_kubectl_loop(kubeconfig: str, names_file: str, sample: int) -> None:
    """What an operator's shell loop does: one `kubectl label node` process per change."""
    names = json.loads(Path(names_file).read_text())[:sample]
    started = time.monotonic()
    for name in names:
        subprocess.run(
            ["kubectl", "--kubeconfig", kubeconfig, "label", "node", name, f"{LABEL}=true"],
            check=True,
            capture_output=True,
        )
    print(json.dumps({"applied": len(names), "s": time.monotonic() - started}))


def child_kubectl_selector(kubeconfig: str, selector: str) -> None:
    """One kubectl for the whole pool: it patches the selected nodes one after the other."""
    started = time.monotonic()
    done = subprocess.run(
        ["kubectl", "--kubeconfig", kubeconfig, "label", "nodes", "-l", selector, f"{LABEL}=true"],
        check=True,
        capture_output=True,
        text=True,
    )
    print(json.dumps({"applied": len(done.stdout.splitlines()), "s": time.monotonic() - started}))


# -- the benchmark -----------------------------------------------------------------------------------


def _run(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, dict[str, Any], str]:
    started = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False)
    wall = time.monotonic() - started
    if proc.returncode not in (0, 2):
        raise SystemExit(f"{cmd[1:3]} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    try:
        return wall, json.loads(proc.stdout), proc.stderr  # the CLI's indented report
    except json.JSONDecodeError:
        return wall, json.loads(proc.stdout.splitlines()[-1]), proc.stderr


def _arm(server: Any, Fault: Any, throttled: int, changes: int) -> None:
    server.clear_faults()
    step = max(1, changes // (throttled + 1))
    for k in range(throttled):  # spread over the run; each fires once, then the delay applies again
        server.inject_fault(Fault(r"^/api/v1/nodes/", method="PATCH", status=429, retry_after=1, after=step * (k + 1)))
    server.inject_fault(Fault(r".", delay_s=DELAY_S, times=-1))


def _verify(server: Any, targets: set[str], since: int) -> dict[str, int]:
    """Successful real (not dry-run) PATCHes per node in this run; every target exactly once, nobody else."""
    writes = Counter(
        r.path.rsplit("/", 1)[1]
        for r in server.requests[since:]
        if r.method == "PATCH"
        and r.path.startswith("/api/v1/nodes/")
        and r.status == 200
        and r.query.get("dryRun") != "All"
    )
    throttled = sum(1 for r in server.requests[since:] if r.status == 429)
    wrong = {n: c for n, c in writes.items() if n not in targets or c != 1}
    missing = targets - set(writes)
    labelled = {
        n["metadata"]["name"]
        for n in server.list_objects("v1", "Node")
        if (n["metadata"].get("labels") or {}).get(LABEL) == "true"
    }
    if wrong or missing or labelled != targets:
        raise SystemExit(
            f"not exactly once: wrong={list(wrong.items())[:5]} missing={sorted(missing)[:5]} "
            f"labelled={len(labelled)} of {len(targets)}"
        )
    return {"patched_once": len(writes), "throttled_429": throttled}


def _repo(tmp: Path) -> Path:
    from tests.support.helpers import make_repo  # the tests' Git helper builds the desired repo

    config = (
        "apiVersion: kai-gitops/v1\nclusters:\n  - name: bench\n    kubeContext: bench\n    mode: addon\n"
        "    kaiChartVersion: v0.16.7\n    environmentFile: env.yaml\n    sharedCluster:\n"
        "      intent: shared\n      nodeSelector: {pool: nvcf}\n"
    )
    path, _ = make_repo(tmp, {"kai-gitops.yaml": config, "env.yaml": "addons:\n  kaiScheduler:\n    enabled: true\n"})
    return path


def _make_plan(tmp: Path, kubeconfig: Path, targets: set[str]) -> tuple[list[str], Path, Path]:
    """`reconcile --plan-out` against the cluster; returns the reconcile command, the plan and its node names."""
    from reconciler.plans.saved import read_plan

    repo = _repo(tmp)
    cli = [
        str(Path(sys.executable).parent / "kai-gitops"),
        "reconcile",
        "--repo",
        str(repo),
        "--kubeconfig",
        str(kubeconfig),
    ]
    plan_file = tmp / "plan.json"
    made = subprocess.run(
        [*cli, "--plan-out", str(plan_file), "-o", "json"], capture_output=True, text=True, check=False
    )
    if made.returncode != 2 or not plan_file.exists():
        raise SystemExit(f"making the plan failed ({made.returncode}): {made.stderr[-2000:]}")
    plan = read_plan(str(plan_file))
    assert len(plan.changes) == len(targets), len(plan.changes)
    names_file = tmp / "names.json"
    names_file.write_text(json.dumps(sorted(c.ref.name for c in plan.changes)))
    return cli, plan_file, names_file


def _commands(
    cli: list[str], kubeconfig: Path, plan_file: Path, names_file: Path, tmp: Path, workers: int, changes: int
) -> dict[str, list[str]]:
    me = [sys.executable, str(Path(__file__).resolve())]
    return {
        "naive": [*me, "--child", "naive", str(kubeconfig), str(names_file)],
        "ours": [*me, "--child", "ours", str(kubeconfig), str(plan_file), str(workers)],
        "reconcile": [
            *cli,
            "--plan",
            str(plan_file),
            "--apply",
            "--max-changes",
            str(changes),
            "--audit-log",
            str(tmp / "audit.jsonl"),
            "-o",
            "json",
        ],
    }


def _figures(runs: dict[str, tuple[float, dict[str, Any], dict[str, Any]]], changes: int) -> dict[str, Any]:
    naive_s, ours_s, reconcile_s = runs["naive"][0], runs["ours"][0], runs["reconcile"][0]
    return {
        "naive_s": round(naive_s, 3),
        "naive_changes_per_s": round(changes / naive_s, 1),
        "ours_s": round(ours_s, 3),
        "ours_changes_per_s": round(changes / ours_s, 1),
        "speedup": round(naive_s / ours_s, 2),
        "goal_speedup": GOAL,
        "goal_met": naive_s / ours_s >= GOAL,
        "reconcile_apply_end_to_end_s": round(reconcile_s, 3),
        "reconcile_speedup_vs_naive": round(naive_s / reconcile_s, 2),
        "exactly_once": {k: v[2] for k, v in runs.items()},
    }


NOTE = (
    "ours/naive time only the writes (one PATCH per change); reconcile is the whole guarded CLI run: "
    "a paged re-read of the nodes, then 3 requests per change (dry-run, write, Event), plus the Git "
    "and policy work and two live reads of the cluster (before and after)."
)


def stand_in_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    from tests.support.helpers import default_queues
    from tests.support.kubeserver import Fault, KubeTestServer
    from tests.support.kubeserver.__main__ import write_kubeconfig

    total, changes = (300, 100) if args.quick else (5000, 2000)
    throttled = args.throttled if args.throttled is not None else (2 if args.quick else 10)
    items = nodes(total, changes)
    targets = {n["metadata"]["name"] for n in items if "pool" in n["metadata"]["labels"]}
    result: dict[str, Any] = {
        "nodes": total,
        "changes": len(targets),
        "workers": args.workers,
        "delay_ms_per_request": DELAY_S * 1000,
        "throttled_per_run": throttled,
    }
    with tempfile.TemporaryDirectory(prefix="kai-bench-apply-") as tmp_name, KubeTestServer() as server:
        tmp = Path(tmp_name)
        server.register_kai_and_nvca_kinds()
        server.add({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}})
        server.add_many([*items, *default_queues()])  # healthy queues: the plan is the label changes only
        kubeconfig = tmp / "kubeconfig"
        write_kubeconfig(kubeconfig, "bench", server.url)
        cli, plan_file, names_file = _make_plan(tmp, kubeconfig, targets)
        runs: dict[str, tuple[float, dict[str, Any], dict[str, Any]]] = {}
        for label, cmd in _commands(cli, kubeconfig, plan_file, names_file, tmp, args.workers, len(targets)).items():
            server.clear_faults()
            server.add_many(items)  # every run starts from the unlabelled pool, same resourceVersions
            since = len(server.requests)
            _arm(server, Fault, throttled, len(targets))
            wall, out, _ = _run(cmd, {"KAI_GITOPS_KUBE_WORKERS": str(args.workers)})
            server.clear_faults()
            checked = _verify(server, targets, since)
            runs[label] = (out.get("s", wall), out, checked)
            print(f"  {label}: {runs[label][0]:.2f} s, {checked}", file=sys.stderr)
    return result | _figures(runs, len(targets)) | {"note": NOTE}


# -- the real API server ------------------------------------------------------------------------------

# Only Node writes are audited, with who sent them and the answer: enough to count each run's writes.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
  - level: Metadata
    verbs: [patch, update]
    resources: [{group: "", resources: [nodes]}]
  - level: None
"""
REAL_NOTE = (
    "etcd and kube-apiserver share this machine's {cpus} core(s) with the measured child and other "
    "users' work (machine_before/after.loadavg_1_5_15); no delay or 429 is injected: every request "
    "is a real round trip. Writes are counted from the API server's audit log (successful, not dry-run "
    "Node PATCHes per run). kubectl_loop runs `kubectl label node` once per change for a sample of the "
    "changes and is extrapolated to all of them; kubectl_selector is one `kubectl label nodes -l` for the "
    "whole pool. cpu_s: per run the CPU of the measured process (its kubectl children included) and "
    "of etcd + kube-apiserver meanwhile, steadier than wall times under load; they cover whole "
    "processes: ours also lists the nodes once for their resourceVersions, the kubectl loop starts a "
    "kubectl per change. On loopback a write costs the server CPU, not a network round trip, so "
    "concurrency gains what the machine's cores leave; the stand-in mode models the round trip. " + NOTE
)


def real_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    import real_cluster

    from tests.support import tools
    from tests.support.envtest import EnvTest
    from tests.support.helpers import default_queues

    tools.activate()  # kubectl for the kubectl runs
    tools.tool_path("kubectl")
    items = nodes(args.nodes, args.changes)
    targets = {n["metadata"]["name"] for n in items if "pool" in n["metadata"]["labels"]}
    sample = min(args.kubectl_sample, len(targets))
    result: dict[str, Any] = {
        "server": "real",
        "date": time.strftime("%Y-%m-%d"),
        "nodes": args.nodes,
        "changes": len(targets),
        "workers": args.workers,
        "machine_before": real_cluster.machine(),
    }
    with tempfile.TemporaryDirectory(prefix="kai-bench-apply-real-") as tmp_name:
        tmp = Path(tmp_name)
        audit = tmp / "apiserver-audit.jsonl"
        (tmp / "audit-policy.yaml").write_text(AUDIT_POLICY)
        with EnvTest(
            extra_apiserver_args=[f"--audit-policy-file={tmp / 'audit-policy.yaml'}", f"--audit-log-path={audit}"]
        ) as cluster:
            result["kube_apiserver"] = cluster.rest.get("/version")["gitVersion"]
            cluster.create_namespace("kai-gitops")  # the Lease's
            result["seeding"] = real_cluster.seed(cluster, [*items, *default_queues()], workers=args.seed_workers)
            print(f"seeded in {result['seeding']['seconds']} s", file=sys.stderr)
            kubeconfig = cluster.write_kubeconfig(tmp / "kubeconfig", context="bench")
            cli, plan_file, names_file = _make_plan(tmp, kubeconfig, targets)
            sampled = set(json.loads(names_file.read_text())[:sample])
            commands = {
                name: (cmd, targets)
                for name, cmd in _commands(
                    cli, kubeconfig, plan_file, names_file, tmp, args.workers, len(targets)
                ).items()
            }
            me = [sys.executable, str(Path(__file__).resolve())]
            commands["kubectl_loop"] = (
                [*me, "--child", "kubectl-loop", str(kubeconfig), str(names_file), str(sample)],
                sampled,
            )
            commands["kubectl_selector"] = ([*me, "--child", "kubectl-selector", str(kubeconfig), "pool=nvcf"], targets)
            server = real_cluster.ServerCpu(cluster)
            runs: dict[str, tuple[float, dict[str, Any], dict[str, Any]]] = {}
            cpu: dict[str, dict[str, float]] = {}
            for label, (cmd, expected) in commands.items():
                _unlabel_all(cluster, workers=args.seed_workers)
                since = audit.stat().st_size
                client_before, server_before = real_cluster.children_cpu_s(), server.seconds()
                wall, out, _ = _run(cmd, {"KAI_GITOPS_KUBE_WORKERS": str(args.workers)})
                cpu[label] = {
                    "client": round(real_cluster.children_cpu_s() - client_before, 2),
                    "server": round(server.seconds() - server_before, 2),
                }
                checked = _verify_audit(cluster, audit, since, expected)
                if label == "reconcile":  # an Event the real server refused is a warning, not a failure
                    checked["apply_warnings"] = (out.get("apply") or {}).get("warnings")
                runs[label] = (out.get("s", wall), out, checked)
                print(f"  {label}: {runs[label][0]:.2f} s, {checked}", file=sys.stderr)
    loop_s = runs["kubectl_loop"][0]
    result |= _figures(runs, len(targets))
    result["kubectl_loop"] = {
        "sample": sample,
        "sample_s": round(loop_s, 3),
        "extrapolated_s": round(loop_s * len(targets) / sample, 1),
        "changes_per_s": round(sample / loop_s, 1),
        "extrapolated": sample < len(targets),
    }
    result["kubectl_selector_s"] = round(runs["kubectl_selector"][0], 3)
    result["cpu_s"] = cpu
    result["speedup_vs_kubectl_loop"] = round(result["kubectl_loop"]["extrapolated_s"] / result["ours_s"], 2)
    result["speedup_vs_kubectl_selector"] = round(result["kubectl_selector_s"] / result["ours_s"], 2)
    result["machine_after"] = real_cluster.machine()
    result["note"] = REAL_NOTE.format(cpus=os.cpu_count())
    return result


def _unlabel_all(cluster: Any, *, workers: int) -> None:
    """Back to the unlabelled pool before each run (not timed): the label off every node that has it."""
    from concurrent.futures import ThreadPoolExecutor

    labelled = cluster.rest.get(f"/api/v1/nodes?labelSelector={LABEL}")["items"]
    body = {"metadata": {"labels": {LABEL: None}}}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(
            pool.map(
                lambda n: cluster.rest.call(
                    "PATCH", f"/api/v1/nodes/{n['metadata']['name']}", body, content_type="application/merge-patch+json"
                ),
                labelled,
            )
        )


def _verify_audit(cluster: Any, audit: Path, since: int, expected: set[str]) -> dict[str, Any]:
    """From the audit log: successful, not dry-run Node PATCHes in this run; every expected node exactly once,
    nobody else; and the label on exactly the expected nodes now."""
    writes: Counter[str] = Counter()
    throttled, agents = 0, set()
    with audit.open("rb") as log:
        log.seek(since)
        for line in log:
            event = json.loads(line)
            code = (event.get("responseStatus") or {}).get("code", 0)
            if event.get("verb") != "patch" or "dryRun=All" in event.get("requestURI", ""):
                continue
            throttled += code == 429
            if 200 <= code < 300:
                writes[event["objectRef"]["name"]] += 1
                agents.add(event.get("userAgent", "").split(" ")[0])
    wrong = {n: c for n, c in writes.items() if n not in expected or c != 1}
    missing = expected - set(writes)
    labelled = {n["metadata"]["name"] for n in cluster.rest.get(f"/api/v1/nodes?labelSelector={LABEL}%3Dtrue")["items"]}
    if wrong or missing or labelled != expected:
        raise SystemExit(
            f"not exactly once: wrong={list(wrong.items())[:5]} missing={sorted(missing)[:5]} "
            f"labelled={len(labelled)} of {len(expected)}"
        )
    return {"patched_once": len(writes), "throttled_429": throttled, "writers": sorted(agents)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--server",
        choices=("stand-in", "real"),
        default="stand-in",
        help="the project's stand-in API server (default) or etcd + kube-apiserver",
    )
    parser.add_argument("--quick", action="store_true", help="stand-in: 300 nodes, 100 changes (a smoke run)")
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--throttled", type=int, default=None, help="stand-in: 429s per run (default 10, quick 2)")
    parser.add_argument("--nodes", type=int, default=5000, help="real: Nodes to create")
    parser.add_argument("--changes", type=int, default=2000, help="real: label changes (nodes in the pool)")
    parser.add_argument(
        "--kubectl-sample",
        type=int,
        default=200,
        help="real: changes the kubectl loop makes (its time is extrapolated to all)",
    )
    parser.add_argument("--seed-workers", type=int, default=8, help="real: concurrent requests while seeding")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        mode, *rest = args.child
        {
            "naive": lambda: child_naive(*rest),
            "ours": lambda: child_ours(rest[0], rest[1], int(rest[2])),
            "kubectl-loop": lambda: child_kubectl_loop(rest[0], rest[1], int(rest[2])),
            "kubectl-selector": lambda: child_kubectl_selector(*rest),
        }[mode]()
        return
    if args.server == "real" and (args.quick or args.throttled is not None):
        parser.error("--quick and --throttled are stand-in options; size the real run with --nodes/--changes")
    result = real_benchmark(args) if args.server == "real" else stand_in_benchmark(args)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
