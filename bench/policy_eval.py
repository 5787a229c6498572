"""Benchmark: every shipped rule (live scope) on a large synthetic cluster, regorus vs regopy.

Prints progress lines, then one JSON object as the last line of stdout. regopy (rego-cpp) runs in a
subprocess because it can crash the interpreter; a crash is reported, not fatal.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reconciler.checks.policy.engine import load_policy_set
from reconciler.checks.policy.pack import RULES_QUERY
from reconciler.checks.policy.regorus_engine import RegorusEngine

UNLIMITED = {"quota": -1.0, "limit": -1.0, "overQuotaWeight": 1.0}
GATES = [
    "DynamicGPUDiscovery",
    "InfraResourceOverhead",
    "EnforceHelmFunctionResourceLimits",
    "EnforceContainerFunctionResourceLimits",
    "EnforceHelmTaskResourceLimits",
    "EnforceContainerTaskResourceLimits",
    "BYOObservability",
    "KAIScheduler",
    "DynamoOperatorSupport",
]


def resources(rng: random.Random) -> dict[str, Any]:
    """About a third of team queues cap GPUs, as in a cluster shared with other teams."""
    if rng.random() < 0.33:
        gpus = float(rng.choice([4, 8, 16, 32]))
        return {
            "cpu": UNLIMITED,
            "gpu": {"quota": gpus, "limit": gpus * 2, "overQuotaWeight": 1.0},
            "memory": UNLIMITED,
        }
    return {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED}


def make_queues(n: int, rng: random.Random) -> list[dict[str, Any]]:
    queues = [
        {
            "name": "default-parent-queue",
            "parent": None,
            "has_resources": True,
            "resources": {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED},
        },
        {
            "name": "default-queue",
            "parent": "default-parent-queue",
            "has_resources": True,
            "resources": {"cpu": UNLIMITED, "gpu": UNLIMITED, "memory": UNLIMITED},
        },
    ]
    departments = [f"dept-{i:02d}" for i in range(20)]
    for d in departments:
        queues.append({"name": d, "parent": None, "has_resources": True, "resources": resources(rng)})
    for i in range(n - len(queues)):
        queues.append(
            {
                "name": f"team-{i:04d}",
                "parent": rng.choice([*departments, "default-parent-queue"]),
                "has_resources": rng.random() > 0.002,
                "resources": resources(rng),
            }
        )
    return queues


def make_nodes(n: int, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    names = [f"node-{i:05d}" for i in range(n)]
    intended = names[: n * 2 // 5]
    labelled = [x for x in intended if rng.random() > 0.02] + rng.sample(names[n // 2 :], 25)
    odd = [{"name": x, "value": rng.choice(["True", "yes", "1"])} for x in rng.sample(names[n // 2 :], 40)]
    label_entries = [{"name": x, "value": "true"} for x in labelled] + odd
    nodes = {
        "total": n,
        "schedule_label": label_entries[:500],
        "schedule_label_count": len(label_entries),
        "schedule_true": sorted(labelled),
    }
    return nodes, intended


def pods(rng: random.Random, queues: list[dict[str, Any]]) -> dict[str, Any]:
    teams = [q["name"] for q in queues[22:]]
    used = ["default-queue", *rng.sample(teams, min(300, len(teams) // 3)), "team-gone"]
    not_on_kai = [
        {
            "namespace": f"nvcf-{i:04d}",
            "name": f"fn-{i:04d}-0",
            "scheduler": "default-scheduler",
            "age_s": float(rng.randint(60, 90 * 86400)),
        }
        for i in range(200)
    ]
    missing = [{"namespace": f"nvcf-{i:04d}", "name": f"fn-{i:04d}-1"} for i in range(200)]
    pending = [
        {
            "namespace": f"nvcf-p{i:04d}",
            "name": f"fn-p{i:04d}-0",
            "scheduler": rng.choice(["kai-scheduler", "default-scheduler"]),
            "reason": "Unschedulable",
            "message": "0/5000 nodes are available: 5000 Insufficient nvidia.com/gpu.",
        }
        for i in range(200)
    ]
    return {
        "total": 10000,
        "queues_used": used,
        "not_on_kai": not_on_kai,
        "not_on_kai_count": 812,
        "missing_queue_label": missing,
        "missing_queue_label_count": 640,
        "pending": pending,
        "pending_count": 233,
    }


def build_facts(n_queues: int, n_nodes: int, seed: int = 7) -> dict[str, Any]:
    rng = random.Random(seed)
    queues = make_queues(n_queues, rng)
    nodes, intended = make_nodes(n_nodes, rng)
    spec = [g for g in GATES if g != "DynamicGPUDiscovery"]
    error = (
        "GPU resource violation for queue default-queue: expected limit=-1, quota=-1, overQuotaWeight=1, "
        "got limit=-1, quota=0, overQuotaWeight=1"
    )
    return {
        "facts_version": 1,
        "cluster": "bench",
        "scope": "live",
        "desired": {
            "mode": "addon",
            "docs": {"env": "environments/bench.yaml", "config": "kai-gitops.yaml"},
            "kai_chart_pin": "v0.16.7",
            "stack_kai_version": "v0.16.7",
            "defaults_version": "v0.16.9",
            "addons": {
                "kaiScheduler": True,
                "groveOperator": True,
                "dynamoOperator": True,
                "topologyAwareScheduling": True,
            },
            "addons_doc": "env",
            "standalone_kai": False,
            "kai_values_doc": None,
            "kai_values_user": {},
            "kai_values_effective": {},
            "gates": {
                "doc": "env",
                "path": ["global", "nvcaOperator", "selfManaged", "featureGateValues"],
                "user": ["SelfHosted"],
                "effective": ["SelfHosted", *GATES],
                "enabled": sorted(["SelfHosted", *GATES]),
                "disabled": [],
            },
            "shared_cluster": {"intent": "shared", "nodes": intended, "selector": None},
            "extra_queues": [
                {"name": q["name"], "parent": q["parent"], "doc": f"queues:{i}", "resources": q["resources"]}
                for i, q in enumerate(queues[2:])
            ],
            # every queue in Git too, so the hierarchy rules (KAI-Q-021..023) walk 1,000 queues
            "queues": [
                {**q, "doc": f"queues:{i}", "origin": "queue-file", "paths": {"parent": ["spec", "parentQueue"]}}
                for i, q in enumerate(queues)
            ],
        },
        "live": {
            "queue_kind_served": True,
            "crds": {
                "queues.scheduling.run.ai": True,
                "schedulingshards.kai.scheduler": True,
                "podgroups.scheduling.run.ai": True,
                "topologies.kai.scheduler": True,
                "nvcfbackends.nvcf.nvidia.io": True,
            },
            "queues": queues,
            "nvca_prediction": {"status": "unhealthy", "errors": [error]},
            "healthz": {"reachable": True, "http_status": 503, "status": "unhealthy", "errors": [error]},
            "releases": [
                {
                    "name": "kai-scheduler",
                    "namespace": "kai-scheduler",
                    "revision": 7,
                    "status": "deployed",
                    "chart_name": "kai-scheduler",
                    "chart_version": "v0.16.5",
                }
            ],
            "gate_hops": {
                "configmap": ["SelfHosted", *GATES],
                "spec": ["SelfHosted", *spec],
                "overrides": None,
                "status": ["SelfHosted", *spec[:-1]],
            },
            "backend": {"count": 1, "name": "nvcf-backend", "namespace": "nvca-operator", "agent_status": "Unknown"},
            "nodes": nodes,
            "nvcf_pods": pods(rng, queues),
            "kai_pods": [
                {"name": f"kai-{c}-0", "ready": c != "binder", "phase": "Running"}
                for c in ("scheduler", "binder", "podgrouper", "queuecontroller", "admission")
            ],
        },
    }


def time_regorus(facts: dict[str, Any], runs: int) -> tuple[float, int, int]:
    policy_set = load_policy_set()
    engine = RegorusEngine(policy_set)
    samples, results = [], []
    for _ in range(runs):
        start = time.perf_counter()
        results = engine.evaluate(facts)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples), len(policy_set.rules), len(results)


def regopy_worker(job_file: str) -> None:
    """Runs in a child process: rego-cpp may crash, and must not take the benchmark with it."""
    import regopy
    from regopy.interpreter import rego_query
    from regopy.output import rego_output_ok, rego_output_string

    job = json.loads(Path(job_file).read_text())
    interp = regopy.Interpreter()
    for name, text in job["modules"]:
        interp.add_module(name, text)
    interp.add_data_json(json.dumps(job["data"]))
    samples = []
    for _ in range(job["runs"]):
        start = time.perf_counter()
        interp.set_input_term(job["input"])  # set_input-style only: `with input as` can crash rego-cpp
        # The raw query: regopy's Output wrapper json-parses the answer, and rego-cpp's serialisation of
        # strings built by sprintf is not always valid JSON.
        output = rego_query(interp._impl, RULES_QUERY)
        samples.append((time.perf_counter() - start) * 1000)
    if not rego_output_ok(output):
        text = rego_output_string(output).strip()
        print(json.dumps({"error": (text.splitlines() or ["query failed"])[0][:300]}))
        return
    print(json.dumps({"ms": statistics.median(samples)}))


def time_regopy(facts: dict[str, Any], runs: int, timeout: float) -> tuple[float | None, str | None]:
    policy_set = load_policy_set()
    job = {
        "modules": [[f.name, f.text] for f in policy_set.files],
        "data": policy_set.data,
        "input": json.dumps(facts),
        "runs": runs,
    }
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump(job, fh)
    try:
        proc = subprocess.run(
            [sys.executable, __file__, "--regopy-worker", fh.name],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"regopy did not finish within {timeout:.0f}s"
    finally:
        Path(fh.name).unlink(missing_ok=True)
    return parse_worker(proc)


def parse_worker(proc: subprocess.CompletedProcess[str]) -> tuple[float | None, str | None]:
    if proc.returncode < 0:
        return None, f"regopy crashed ({signal.Signals(-proc.returncode).name})"
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return None, f"regopy failed (exit {proc.returncode}): {tail[:300]}"
    answer = json.loads(lines[-1])
    return answer.get("ms"), answer.get("error")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="small cluster, few runs")
    parser.add_argument("--runs", type=int, default=None)
    parser.add_argument("--regopy-worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.regopy_worker:
        regopy_worker(args.regopy_worker)
        return
    n_queues, n_nodes = (100, 500) if args.quick else (1000, 5000)
    runs = args.runs or (3 if args.quick else 15)
    facts = build_facts(n_queues, n_nodes)
    regorus_ms, rules, findings = time_regorus(facts, runs)
    print(f"regorus: median {regorus_ms:.1f} ms over {runs} runs, {findings} results", flush=True)
    regopy_ms, regopy_error = time_regopy(facts, max(1, runs // 3), timeout=300)
    print(f"regopy: {f'{regopy_ms:.1f} ms' if regopy_ms is not None else regopy_error}", flush=True)
    print(
        json.dumps(
            {
                "queues": n_queues,
                "nodes": n_nodes,
                "rules": rules,
                "runs": runs,
                "results": findings,
                "regorus_ms": round(regorus_ms, 1),
                "regopy_ms": None if regopy_ms is None else round(regopy_ms, 1),
                "regopy_error": regopy_error,
            }
        )
    )


if __name__ == "__main__":
    main()
