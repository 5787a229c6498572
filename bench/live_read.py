"""Benchmark: `kai-gitops diff` end to end against a large synthetic cluster, vs a naive read and the floor.

    python bench/live_read.py [--quick] [--runs 3] [--naive-timeout S]
    python bench/live_read.py --growth [--quick] [--runs 3]
    python bench/live_read.py --server real [--nodes 5000] [--pods 20000] [--runs 3]
    python bench/live_read.py --gangs [--quick] [--runs 3]

A KubeTestServer (tests/support/kubeserver) serves the cluster of bench/synthetic.py: 5,000 nodes, 50,000
pods of which 10,000 are NVCF workload pods, 1,000 queues, 20 Helm release Secrets (`--quick`: 10x fewer).
Each measurement is a child process, so its wall time and peak RSS (from wait4) are its own:

* ours      -- the installed `kai-gitops diff` (Git + live read + checks + report), median of --runs;
* read      -- just the cluster reader (cluster_reader(...)(context)), median of --runs;
* naive     -- the kubernetes client's CoreV1Api().list_pod_for_all_namespaces() + list_node(): model
               objects, no paging, no selectors; killed after --naive-timeout;
* floor     -- the same pod and node lists ours reads, paged, raw urllib3 + orjson.loads and nothing else.

`--growth` (stand-in): 5,000 nodes and 1x, 2x and 4x the pods (12,500 / 25,000 / 50,000; `--quick`: 10x fewer),
the read only, in two series: the stand-in mode's mix (a fifth of them NVCF pods, the rest filtered out by
the server's label selectors) and every pod one the product reads. Whether time grew at most linearly and
memory stayed nearly flat is said in the JSON, with the ratios and the cost per 1,000 more pods read.

`--gangs` (stand-in): the read of the same cluster without and with a PodGroup for every KAI-scheduled pod (one
per pod, as KAI's pod-grouper makes them for Deployments: about 47,000 at full scale, the Pending pods' groups
with an UnschedulableOnNodePool condition): time, peak memory and requests of each, which requests the PodGroups
added (the pod and event lists must stay the same), and the gang findings of the second.

`--server real`: etcd + kube-apiserver (tests/support/envtest, `make tools`) seeded with --nodes Nodes,
--pods NVCF Pods (plus KAI's own 8) and --other-pods teams' Pods the product does not read, through the API
(bench/real_cluster.py; its time is reported, not counted; `--seed store` writes the Pods but one into etcd
instead, ~100x faster, as real_cluster.py explains), then, interleaved --runs times, each a child process:

* read      -- the product's live reader, as in the stand-in mode;
* diff      -- the installed `kai-gitops diff` end to end;
* models    -- the official client's CoreV1Api.list_node + list_pod_for_all_namespaces, paged (limit 500),
               every item deserialised to its model and kept;
* kubectl   -- `kubectl get nodes,pods -A -o json` of the same objects (its output to a file, counted after).

Each reader's counts must match what was seeded: every Node, and every Pod (the models and kubectl) or the
Pods the product reads (ours); the JSON says whether they do. Each run's API requests are counted from the API
server's audit log, by verb and resource (`api_requests`). At full scale (issue 30: 5,000 Nodes and 150,000
Pods; seeding them through the API took ~55 minutes on these 2 cores, through the store a few):
`python bench/live_read.py --server real --seed store --nodes 5000 --pods 150000 --runs 1` (every Pod read) and
`... --pods 30000 --other-pods 120000` (the usual mix: a fifth of the Pods NVCF's).

The last stdout line is one JSON object (pods, nodes, ours_s, ours_peak_mb, naive_s, naive_peak_mb, floor_s…).
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import real_cluster  # noqa: E402

TARGET_S, TARGET_MB = 10.0, 400.0
STAND_IN_NOTE = (
    "The API server is a Python thread in the benchmark process: on this machine's {cpus} CPU core(s) "
    "it competes with the measured child for CPU, so every time includes serving the JSON too."
)
NOTE = STAND_IN_NOTE + " The naive baseline lists all pods (no selector) into kubernetes client models."


@dataclass
class ChildRun:
    wall_s: float
    peak_mb: float
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool
    killed_at_mb: float | None = None  # stopped when its peak RSS passed this cap (the machine's memory is shared)
    cpu_s: float = 0.0  # the child's user + system CPU, its own children included
    server_cpu_s: float = 0.0  # --server real: etcd + kube-apiserver CPU meanwhile
    api_requests: dict[str, int] = field(default_factory=dict)  # --server real: "verb resource" -> count (audit log)


def run_child(
    cmd: list[str],
    *,
    timeout: float | None = None,
    env: dict[str, str] | None = None,
    stdout_path: Path | None = None,
    cap_mb: float | None = None,
) -> ChildRun:
    """Run `cmd`; wall time and the child's own peak RSS (VmHWM polled from /proc every 10 ms). With `cap_mb`,
    the child is killed once its peak passes that many MB (`killed_at_mb`): at 150,000 Pods the official
    client's models and kubectl would need more memory than the machine has.

    Not wait4's ru_maxrss: Linux carries the pre-exec high-water mark of the forked copy of this process
    (which holds the whole synthetic cluster) into the child's, so every child would report our size.
    With `stdout_path` the output goes to that file and is not read back (kubectl's is ~100 MB).
    """
    with open(stdout_path, "w+b") if stdout_path else tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        started, cpu_before = time.monotonic(), real_cluster.children_cpu_s()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env={**os.environ, **(env or {})})
        peak_kb = [0]
        cap_kb = int(cap_mb * 1024) if cap_mb else None
        poller = threading.Thread(target=_poll_hwm, args=(proc, peak_kb, cap_kb), daemon=True)
        poller.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.kill()
            proc.wait()
        wall = time.monotonic() - started
        poller.join()
        out.seek(0)
        err.seek(0)
        stdout = "" if stdout_path else out.read().decode(errors="replace")
        return ChildRun(
            wall,
            peak_kb[0] / 1024,
            proc.returncode,
            stdout,
            err.read().decode(errors="replace"),
            timed_out,
            killed_at_mb=cap_mb if cap_kb is not None and peak_kb[0] > cap_kb else None,
            cpu_s=real_cluster.children_cpu_s() - cpu_before,
        )


def _poll_hwm(proc: subprocess.Popen[bytes], peak_kb: list[int], cap_kb: int | None = None) -> None:
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            for line in status.read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak_kb[0] = max(peak_kb[0], int(line.split()[1]))
        except (OSError, ValueError):
            pass  # exiting: the last reading stands
        if cap_kb is not None and peak_kb[0] > cap_kb:
            proc.kill()
            return
        time.sleep(0.01)


def median_run(cmd: list[str], runs: int, label: str) -> tuple[list[ChildRun], ChildRun]:
    done = []
    for i in range(runs):
        run = run_child(cmd)
        print(
            f"  {label} run {i + 1}: {run.wall_s:.2f} s, peak {run.peak_mb:.0f} MB, exit {run.returncode}",
            file=sys.stderr,
        )
        done.append(run)
    by_time = sorted(done, key=lambda r: r.wall_s)
    return done, by_time[len(by_time) // 2]


# -- child modes -------------------------------------------------------------------------------------


def child_read(kubeconfig: str) -> None:
    from reconciler.sources.cluster import cluster_reader

    started = time.monotonic()
    live = cluster_reader(kubeconfig, None)(None)
    print(
        orjson.dumps(
            {
                "nodes": live.nodes_total,
                "pods": len(live.nvcf_pods) + len(live.kai_pods),
                "nvcf_pods": len(live.nvcf_pods),
                "kai_pods": len(live.kai_pods),
                "queues": len(live.queues),
                "releases": len(live.releases),
                "pod_groups": len(live.gangs.pod_groups),
                "read_s": time.monotonic() - started,
            }
        ).decode()
    )


def child_naive(kubeconfig: str) -> None:
    from kubernetes import client, config

    config.load_kube_config(config_file=kubeconfig)
    api = client.CoreV1Api()
    started = time.monotonic()
    pods = api.list_pod_for_all_namespaces()
    nodes = api.list_node()
    print(
        orjson.dumps(
            {"pods": len(pods.items), "nodes": len(nodes.items), "read_s": time.monotonic() - started}
        ).decode()
    )


def child_models(kubeconfig: str) -> None:
    """What a script on the official client does to see every node and pod: paged lists, each page
    deserialised into models, all of them kept."""
    from kubernetes import client, config

    config.load_kube_config(config_file=kubeconfig)
    api = client.CoreV1Api()
    started = time.monotonic()
    nodes, pods = _paged_models(api.list_node), _paged_models(api.list_pod_for_all_namespaces)
    print(orjson.dumps({"nodes": len(nodes), "pods": len(pods), "read_s": time.monotonic() - started}).decode())


def _paged_models(list_call: Any) -> list[Any]:
    items: list[Any] = []
    token = None
    while True:
        page = list_call(limit=500, **({"_continue": token} if token else {}))
        items += page.items
        token = page.metadata._continue
        if not token:
            return items


def _page_all(pool: Any, url: str, path: str, query: dict[str, str]) -> int:
    from urllib.parse import urlencode

    count, token = 0, None
    while True:
        q = {**query, "limit": "500", **({"continue": token} if token else {})}
        body = pool.request("GET", f"{url}{path}?{urlencode(q)}").data
        gc.disable()
        try:
            page = orjson.loads(body)
        finally:
            gc.enable()
        count += len(page["items"])
        token = page["metadata"].get("continue")
        del page, body
        if not token:
            return count


def child_floor(url: str, namespaces: list[str]) -> None:
    """The pod and node lists ours reads, downloaded and parsed, nothing else; plus two node strategies."""
    import urllib3

    pool = urllib3.PoolManager()
    started = time.monotonic()
    pods = _page_all(pool, url, "/api/v1/pods", {"labelSelector": "icms-request-id"})
    for ns in namespaces:
        pods += _page_all(pool, url, f"/api/v1/namespaces/{ns}/pods", {"labelSelector": "!icms-request-id"})
    pods += _page_all(pool, url, "/api/v1/namespaces/kai-scheduler/pods", {})
    nodes_started = time.monotonic()
    nodes = _page_all(pool, url, "/api/v1/nodes", {})
    finished = time.monotonic()
    # The alternative for nodes: only the labelled ones, plus the total from a 1-item page's remainingItemCount.
    labelled = _page_all(pool, url, "/api/v1/nodes", {"labelSelector": "nvca.nvcf.nvidia.io/schedule"})
    meta = orjson.loads(pool.request("GET", f"{url}/api/v1/nodes?limit=1").data)["metadata"]
    total = 1 + int(meta.get("remainingItemCount", 0))
    print(
        orjson.dumps(
            {
                "pods": pods,
                "nodes": nodes,
                "floor_s": finished - started,
                "nodes_paged_s": finished - nodes_started,
                "nodes_selector_s": time.monotonic() - finished,
                "nodes_selector_labelled": labelled,
                "nodes_selector_total": total,
            }
        ).decode()
    )


# -- the benchmark -----------------------------------------------------------------------------------


def _last_json(text: str) -> dict[str, Any]:
    lines = [line for line in text.splitlines() if line.startswith("{")]
    return orjson.loads(lines[-1]) if lines else {}


def _kubeconfig(path: Path, url: str) -> str:
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "prod",
        "clusters": [{"name": "prod", "cluster": {"server": url}}],
        "contexts": [{"name": "prod", "context": {"cluster": "prod", "user": "bench"}}],
        "users": [{"name": "bench", "user": {"token": "bench-token"}}],
    }
    path.write_bytes(orjson.dumps(config))
    return str(path)


def _build_repo(target: Path) -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("kai_demo_build", ROOT / "repo-templates" / "demo" / "build.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.build_repo(target)


def _cli() -> str:
    candidate = Path(sys.executable).parent / "kai-gitops"
    return str(candidate) if candidate.exists() else "kai-gitops"


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    import synthetic

    from tests.support.kubeserver import KubeTestServer

    scale = synthetic.Scale.quick() if args.quick else synthetic.Scale()
    result: dict[str, Any] = {"quick": bool(args.quick)}
    with KubeTestServer() as server, tempfile.TemporaryDirectory(prefix="kai-bench-") as tmp:
        started = time.monotonic()
        counts = synthetic.load(server, scale)
        print(f"loaded {counts} in {time.monotonic() - started:.1f} s", file=sys.stderr)
        result |= {
            "pods": counts["Pod"],
            "nodes": counts["Node"],
            "nvcf_pods": scale.nvcf_pods,
            "queues": counts["Queue"],
            "release_secrets": scale.releases,
        }
        kubeconfig = _kubeconfig(Path(tmp) / "kubeconfig", server.url)
        repo = Path(tmp) / "repo"
        _build_repo(repo)
        diff = [
            _cli(),
            "diff",
            "--repo",
            str(repo),
            "--cluster",
            "prod-addon",
            "--kubeconfig",
            kubeconfig,
            "-o",
            "json",
        ]
        before = len(server.requests)
        runs, ours = median_run(diff, args.runs, "ours (kai-gitops diff)")
        result |= {
            "ours_s": round(ours.wall_s, 2),
            "ours_peak_mb": round(ours.peak_mb, 1),
            "ours_runs_s": [round(r.wall_s, 2) for r in runs],
            "ours_exit": ours.returncode,
            "ours_requests": (len(server.requests) - before) // max(args.runs, 1),
        }
        if ours.returncode not in (0, 2):
            result["ours_error"] = ours.stderr.strip()[-300:]
        _, read = median_run([sys.executable, __file__, "_read", kubeconfig], args.runs, "read only")
        result |= {
            "read_s": round(read.wall_s, 2),
            "read_peak_mb": round(read.peak_mb, 1),
            "read_counts": _last_json(read.stdout),
        }
        floor_cmd = [sys.executable, __file__, "_floor", server.url, *synthetic.nvcf_namespaces(scale)]
        _, floor = median_run(floor_cmd, args.runs, "floor")
        floor_data = _last_json(floor.stdout)
        result |= {
            "floor_s": round(floor_data.get("floor_s", float("nan")), 2),
            "floor_process_s": round(floor.wall_s, 2),
            "floor_peak_mb": round(floor.peak_mb, 1),
            "nodes_paged_s": round(floor_data.get("nodes_paged_s", float("nan")), 2),
            "nodes_selector_s": round(floor_data.get("nodes_selector_s", float("nan")), 2),
        }
        naive = run_child([sys.executable, __file__, "_naive", kubeconfig], timeout=args.naive_timeout)
        print(
            f"  naive: {naive.wall_s:.2f} s, peak {naive.peak_mb:.0f} MB, exit {naive.returncode}"
            f"{' (timed out)' if naive.timed_out else ''}",
            file=sys.stderr,
        )
        result |= {
            "naive_s": round(naive.wall_s, 2),
            "naive_peak_mb": round(naive.peak_mb, 1),
            "naive_timed_out": naive.timed_out,
            "naive_exit": naive.returncode,
        }
    result["targets"] = {"ours_s": TARGET_S, "ours_peak_mb": TARGET_MB}
    result["within_targets"] = ours.returncode in (0, 2) and ours.wall_s <= TARGET_S and ours.peak_mb <= TARGET_MB
    result["bench_peak_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    result["note"] = NOTE.format(cpus=os.cpu_count())
    return result


# -- PodGroups on the stand-in --------------------------------------------------------------------------


def gangs_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Our read without and with the PodGroups: what reading them costs, and that the pod reads did not grow."""
    import synthetic

    scale = synthetic.Scale.quick() if args.quick else synthetic.Scale()
    result: dict[str, Any] = {"quick": bool(args.quick), "mode": "gangs"}
    for label, gangs in (("without", False), ("with", True)):
        with KubeTestServerFor(scale, gangs) as (server, counts, kubeconfig):
            before = len(server.requests)
            runs, read = median_run(
                [sys.executable, __file__, "_read", kubeconfig], args.runs, f"read {label} PodGroups"
            )
            requests = server.requests[before:]
            per_run = len(requests) // max(len(runs), 1)
            result[label] = {
                "pods": counts["Pod"],
                "pod_groups": counts.get("PodGroup", 0),
                "read_s": round(read.wall_s, 2),
                "read_peak_mb": round(read.peak_mb, 1),
                "requests": per_run,
                "requests_by_path": _by_path(requests, len(runs)),
                "read_counts": _last_json(read.stdout),
            }
            if gangs:
                result["with"]["gang_findings"] = _gang_findings(kubeconfig)
    without, with_ = result["without"]["requests_by_path"], result["with"]["requests_by_path"]
    result["added_requests"] = {p: n - without.get(p, 0) for p, n in with_.items() if n != without.get(p, 0)}
    result["pod_and_event_requests_unchanged"] = all(
        with_.get(p) == n for p, n in without.items() if p.endswith(("/pods", "/events"))
    )
    result["extra_read_s"] = round(result["with"]["read_s"] - result["without"]["read_s"], 2)
    result["extra_peak_mb"] = round(result["with"]["read_peak_mb"] - result["without"]["read_peak_mb"], 1)
    result["note"] = STAND_IN_NOTE.format(cpus=os.cpu_count())
    return result


class KubeTestServerFor:
    """A stand-in server loaded with the synthetic cluster, and a kubeconfig for it."""

    def __init__(self, scale: Any, gangs: bool) -> None:
        from tests.support.kubeserver import KubeTestServer

        self.scale, self.gangs = scale, gangs
        self.server = KubeTestServer()
        self.tmp = tempfile.TemporaryDirectory(prefix="kai-bench-gangs-")

    def __enter__(self) -> tuple[Any, dict[str, int], str]:
        import synthetic

        self.server.__enter__()
        started = time.monotonic()
        counts = synthetic.load(self.server, self.scale, gangs=self.gangs)
        print(f"loaded {counts} in {time.monotonic() - started:.1f} s", file=sys.stderr)
        return self.server, counts, _kubeconfig(Path(self.tmp.name) / "kubeconfig", self.server.url)

    def __exit__(self, *exc: object) -> None:
        self.server.__exit__(None, None, None)
        self.tmp.cleanup()


def _by_path(requests: list[Any], runs: int) -> dict[str, int]:
    counted: dict[str, int] = {}
    for request in requests:
        counted[request.path] = counted.get(request.path, 0) + 1
    return {path: n // max(runs, 1) for path, n in sorted(counted.items())}


def _gang_findings(kubeconfig: str) -> dict[str, int]:
    done = subprocess.run(
        [_cli(), "doctor", "--kubeconfig", kubeconfig, "-o", "json"], capture_output=True, text=True, check=False
    )
    found: dict[str, int] = {}
    for finding in orjson.loads(done.stdout or "{}").get("findings", []):
        if finding["rule"].startswith("KAI-T-"):
            found[finding["rule"]] = found.get(finding["rule"], 0) + 1
    return found


# -- growth on the stand-in -------------------------------------------------------------------------

GROWTH = (1, 2, 4)
TIME_SLACK = 1.15  # a step may cost up to 15% more than proportional (noise on a shared machine)
FLAT_MEMORY = 1.5  # peak at 4x the pods at most 1.5x the peak at 1x


def growth_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    """Our read against 1x, 2x and 4x the pods, two ways: the stand-in mode's mix (a fifth of the pods NVCF,
    the rest filtered out by the server) and every pod one the product reads (as in the real mode)."""
    import dataclasses

    import synthetic

    full = synthetic.Scale.quick() if args.quick else synthetic.Scale()
    base = dataclasses.replace(full, pods=full.pods // GROWTH[-1], nvcf_pods=full.nvcf_pods // GROWTH[-1])
    mixed = [dataclasses.replace(base, pods=base.pods * f, nvcf_pods=base.nvcf_pods * f) for f in GROWTH]
    every = [synthetic.Scale.real(base.nodes, base.pods * f) for f in GROWTH]
    before = real_cluster.machine()
    series = {"stand_in_mix": _growth_series(mixed, args.runs), "every_pod_read": _growth_series(every, args.runs)}
    return {
        "server": "stand-in",
        "date": time.strftime("%Y-%m-%d"),
        "quick": bool(args.quick),
        "nodes": base.nodes,
        "series": series,
        "machine_before": before,
        "machine_after": real_cluster.machine(),
        "note": STAND_IN_NOTE.format(cpus=os.cpu_count()),
    }


def _growth_series(scales: list[Any], runs: int) -> dict[str, Any]:
    import synthetic

    from tests.support.kubeserver import KubeTestServer

    steps: list[dict[str, Any]] = []
    for factor, scale in zip(GROWTH, scales, strict=True):
        with KubeTestServer() as server, tempfile.TemporaryDirectory(prefix="kai-bench-") as tmp:
            started = time.monotonic()
            synthetic.load(server, scale)
            print(f"{factor}x: loaded {scale.pods} pods in {time.monotonic() - started:.1f} s", file=sys.stderr)
            kubeconfig = _kubeconfig(Path(tmp) / "kubeconfig", server.url)
            done, read = median_run([sys.executable, __file__, "_read", kubeconfig], runs, f"read {factor}x")
        counts = _last_json(read.stdout)
        steps.append(
            {
                "factor": factor,
                "pods_in_cluster": scale.pods,
                "pods_read": counts.get("pods"),
                "nodes_read": counts.get("nodes"),
                "read_s": round(counts.get("read_s", float("nan")), 3),
                "process_s": round(read.wall_s, 2),
                "peak_mb": round(read.peak_mb, 1),
                "cpu_s": round(statistics.median(r.cpu_s for r in done), 2),
                "runs_s": [round(r.wall_s, 2) for r in done],
                "exit": read.returncode,
            }
        )
    return {"steps": steps, **growth_verdict(steps)}


def growth_verdict(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Ratios against the 1x step, the cost per 1,000 more pods read in each step, and whether it held."""
    first = steps[0]
    time_ratios = {f"{s['factor']}x": round(s["read_s"] / first["read_s"], 2) for s in steps[1:]}
    memory_ratios = {f"{s['factor']}x": round(s["peak_mb"] / first["peak_mb"], 2) for s in steps[1:]}

    def per_1k(key: str) -> list[float]:
        return [
            round(1000 * (b[key] - a[key]) / max(1, b["pods_read"] - a["pods_read"]), 3)
            for a, b in itertools.pairwise(steps)
        ]

    at_most_linear = all(s["read_s"] <= first["read_s"] * s["factor"] * TIME_SLACK for s in steps[1:])
    flat = steps[-1]["peak_mb"] <= first["peak_mb"] * FLAT_MEMORY
    return {
        "time_ratio_vs_1x": time_ratios,
        "peak_mb_ratio_vs_1x": memory_ratios,
        "marginal_s_per_1k_pods_read": per_1k("read_s"),
        "marginal_mb_per_1k_pods_read": per_1k("peak_mb"),
        "time_at_most_linear": at_most_linear,
        "memory_nearly_flat": flat,
        "criteria": (
            f"time: each step's read_s <= {TIME_SLACK} x factor x the 1x read_s; memory: the "
            f"{steps[-1]['factor']}x peak <= {FLAT_MEMORY} x the 1x peak"
        ),
    }


# -- the real API server ------------------------------------------------------------------------------

REAL_NOTE = (
    "etcd and kube-apiserver run on this machine's {cpus} core(s) alongside the measured child and "
    "other users' work (machine_before/after.loadavg_1_5_15): every time includes serving the "
    "lists. Without other_pods every seeded Pod is one the product reads (NVCF, and KAI's own), so all "
    "readers list the same objects; with them (teams' workloads) the product reads fewer (label selectors), "
    "the others still read everything. A reader in killed_past_cap was stopped when its peak RSS passed "
    "the baselines' memory cap (baseline_cap_mb): its time is a lower bound. read/models/kubectl times are whole "
    "processes (start-up included); "
    "read_in_process_s is the read alone. cpu_s is the measured process's CPU (kubectl's included), "
    "server_cpu_s what etcd + kube-apiserver spent meanwhile: steadier than wall times under load."
)


def real_benchmark(args: argparse.Namespace) -> dict[str, Any]:
    import synthetic

    from tests.support import tools
    from tests.support.envtest import EnvTest

    tools.activate()
    kubectl = str(tools.tool_path("kubectl"))
    scale = synthetic.Scale.real(args.nodes, args.pods, args.other_pods)
    result: dict[str, Any] = {
        "server": "real",
        "date": time.strftime("%Y-%m-%d"),
        "machine_before": real_cluster.machine(),
        "runs": args.runs,
    }
    # The audit log (level Metadata) counts each reader's API requests: what the server saw, not what a client says.
    # etcd's default 2 GiB quota is too small for 150,000 Pods stored as JSON (~6 KB each) and their history
    big_store = ["--quota-backend-bytes=8589934592"]
    with (
        EnvTest(audit=True, extra_etcd_args=big_store) as cluster,
        tempfile.TemporaryDirectory(prefix="kai-bench-real-") as tmp_name,
    ):
        tmp = Path(tmp_name)
        result["kube_apiserver"] = cluster.rest.get("/version")["gitVersion"]
        print(f"seeding {scale.nodes} nodes, {scale.pods} pods ...", file=sys.stderr)
        seeded = real_cluster.seed(cluster, synthetic.objects(scale), workers=args.seed_workers, pods_via=args.seed)
        print(f"seeded {seeded['counts']} in {seeded['seconds']} s", file=sys.stderr)
        result |= {
            "nodes": scale.nodes,
            "pods": scale.pods,
            "nvcf_pods": scale.nvcf_pods,
            "pods_read_by_ours": scale.pods - args.other_pods,
            "seeding": seeded,
        }
        kubeconfig = str(cluster.write_kubeconfig(tmp / "kubeconfig", context="prod"))
        repo = tmp / "repo"
        _build_repo(repo)
        commands = {
            "read": ([sys.executable, __file__, "_read", kubeconfig], None),
            "diff": (
                [
                    _cli(),
                    "diff",
                    "--repo",
                    str(repo),
                    "--cluster",
                    "prod-addon",
                    "--kubeconfig",
                    kubeconfig,
                    "-o",
                    "json",
                ],
                None,
            ),
            "models": ([sys.executable, __file__, "_models", kubeconfig], None),
            "kubectl": (
                [kubectl, "--kubeconfig", kubeconfig, "get", "nodes,pods", "-A", "-o", "json"],
                tmp / "kubectl.json",
            ),
        }
        server = real_cluster.ServerCpu(cluster)
        runs: dict[str, list[tuple[ChildRun, dict[str, Any]]]] = {name: [] for name in commands}
        for i in range(args.runs):  # interleaved: a burst of other users' load hits every reader alike
            for name, (cmd, stdout_path) in commands.items():
                served_before, audit_mark = server.seconds(), cluster.audit_offset()
                capped = name in ("models", "kubectl")
                run = run_child(cmd, stdout_path=stdout_path, cap_mb=args.baseline_cap_mb if capped else None)
                run.server_cpu_s = server.seconds() - served_before
                run.api_requests = _api_requests(cluster.audit_events(audit_mark))
                counts = (
                    _kubectl_counts(stdout_path) if stdout_path else {} if name == "diff" else _last_json(run.stdout)
                )
                killed = f" (killed past {run.killed_at_mb:.0f} MB)" if run.killed_at_mb else ""
                figures = f"{run.wall_s:.2f} s, peak {run.peak_mb:.0f} MB, exit {run.returncode}{killed}"
                print(
                    f"  {name} run {i + 1}: {figures}",
                    file=sys.stderr,
                )
                runs[name].append((run, counts))
    result |= real_figures(runs, scale, args.other_pods)
    result["machine_after"] = real_cluster.machine()
    result["note"] = REAL_NOTE.format(cpus=os.cpu_count())
    return result


def _api_requests(events: list[dict[str, Any]]) -> dict[str, int]:
    """The requests of one reader's run, by verb and resource, from the API server's audit events (the marker
    requests of EnvTest.audit_events and the server's own traffic left out)."""
    counted: dict[str, int] = {}
    for event in events:
        if event.get("stage") not in (None, "ResponseComplete") or "kube-apiserver" in event.get("userAgent", ""):
            continue
        ref = event.get("objectRef") or {}
        if not ref.get("resource"):  # the marker request and discovery of paths without a resource
            continue
        key = f"{event.get('verb')} {ref.get('resource')}"
        counted[key] = counted.get(key, 0) + 1
    return dict(sorted(counted.items()))


def _kubectl_counts(path: Path) -> dict[str, int]:
    try:
        items = orjson.loads(path.read_bytes()).get("items") or []
    except (OSError, orjson.JSONDecodeError):
        return {}
    kinds = [item.get("kind") for item in items]
    return {"nodes": kinds.count("Node"), "pods": kinds.count("Pod")}


def real_figures(runs: dict[str, list[tuple[ChildRun, dict[str, Any]]]], scale: Any, other_pods: int) -> dict[str, Any]:
    """Per reader the run of median wall time (its peak, exit and counts) and the median CPU figures, the
    counts each saw against the seeded ones (ours: without the `other_pods` it does not read), and ratios
    against our read."""
    expected = {"nodes": scale.nodes, "pods": scale.pods}
    expected_ours = {"nodes": scale.nodes, "pods": scale.pods - other_pods}
    figures: dict[str, Any] = {}
    for name, done in runs.items():
        run, counts = sorted(done, key=lambda pair: pair[0].wall_s)[len(done) // 2]
        entry: dict[str, Any] = {
            "s": round(run.wall_s, 2),
            "peak_mb": round(run.peak_mb, 1),
            "cpu_s": round(statistics.median(r.cpu_s for r, _ in done), 2),
            "server_cpu_s": round(statistics.median(r.server_cpu_s for r, _ in done), 2),
            "runs_s": [round(r.wall_s, 2) for r, _ in done],
            "exit": run.returncode,
            "api_requests": sum(run.api_requests.values()),
            "api_requests_by_verb_resource": run.api_requests,
        }
        if name != "diff":
            entry["counts"] = {k: counts.get(k) for k in expected}
        if "read_s" in counts:
            entry["read_in_process_s"] = round(counts["read_s"], 2)
        if run.killed_at_mb:
            entry["killed_past_mb"] = run.killed_at_mb  # its time is a lower bound, its counts are none
        elif run.returncode not in (0, 2):
            entry["error"] = run.stderr.strip()[-300:]
        figures[name] = entry
    read = figures["read"]
    return {
        "measurements": figures,
        "expected_counts": expected,
        "expected_counts_ours": expected_ours,
        "counts_match": figures["read"]["counts"] == expected_ours
        and all(figures[n]["counts"] == expected for n in ("models", "kubectl") if "killed_past_mb" not in figures[n]),
        "killed_past_cap": [n for n in ("models", "kubectl") if "killed_past_mb" in figures[n]],
        "times_vs_read": {n: round(figures[n]["s"] / read["s"], 2) for n in ("models", "kubectl")},
        "cpu_vs_read": {n: round(figures[n]["cpu_s"] / read["cpu_s"], 2) for n in ("models", "kubectl")},
        "peak_mb_vs_read": {n: round(figures[n]["peak_mb"] / read["peak_mb"], 2) for n in ("models", "kubectl")},
    }


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] in ("_read", "_naive", "_floor", "_models"):
        mode, rest = sys.argv[1], sys.argv[2:]
        {
            "_read": lambda: child_read(rest[0]),
            "_naive": lambda: child_naive(rest[0]),
            "_models": lambda: child_models(rest[0]),
            "_floor": lambda: child_floor(rest[0], rest[1:]),
        }[mode]()
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--server",
        choices=("stand-in", "real"),
        default="stand-in",
        help="the project's stand-in API server (default) or etcd + kube-apiserver",
    )
    parser.add_argument("--growth", action="store_true", help="stand-in: our read at 1x, 2x and 4x the pods")
    parser.add_argument("--gangs", action="store_true", help="stand-in: our read without and with the PodGroups")
    parser.add_argument("--quick", action="store_true", help="stand-in: a 10x smaller cluster")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (median reported)")
    parser.add_argument(
        "--naive-timeout",
        type=float,
        default=None,
        help="kill the naive baseline after this many seconds (default 60 quick, 240 full)",
    )
    parser.add_argument("--nodes", type=int, default=5000, help="real: Nodes to create")
    parser.add_argument("--pods", type=int, default=20000, help="real: NVCF Pods to create (plus KAI's 8)")
    parser.add_argument("--other-pods", type=int, default=0, help="real: teams' Pods the product does not read")
    parser.add_argument(
        "--seed",
        choices=("api", "store"),
        default="api",
        help="real: Pods through the API (default), or all but one straight into etcd (bench/real_cluster.py)",
    )
    parser.add_argument("--seed-workers", type=int, default=8, help="real: concurrent creates while seeding")
    parser.add_argument(
        "--baseline-cap-mb",
        type=float,
        default=6000.0,
        help="real: kill the models and kubectl runs past this peak RSS (their time is then a lower bound)",
    )
    args = parser.parse_args()
    if args.naive_timeout is None:
        args.naive_timeout = 60.0 if args.quick else 240.0
    if args.server == "real":
        if args.growth or args.quick:
            parser.error("--growth and --quick are stand-in modes; size the real run with --nodes/--pods")
        result = real_benchmark(args)
    else:
        result = growth_benchmark(args) if args.growth else gangs_benchmark(args) if args.gangs else benchmark(args)
    print(orjson.dumps(result).decode())


if __name__ == "__main__":
    main()
