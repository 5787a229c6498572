"""Benchmark: self-heal left on for many cycles on a real kube-apiserver (`make tools`), the scenario of
tests/real/test_soak.py (tests/support/soak.py: the trap chart's Helm release, a KAI Resource Management double,
a KAI operator double, an unlisted controller that writes back, a person's kubectl patch every sixth cycle, and
the CronJob's `reconcile --apply` with its kept audit log), for --cycles cycles (default 200).

Prints one JSON object as the last line: kai-gitops's counts (cycles, hand edits undone, field writes by whose
field they went to, fights, label writes, fields written twice not after a hand edit: the oscillations), the
seconds per cycle and per `reconcile --apply` (median, p95, max), and beside them the naive way's counts: a plain
apply of Git's values every cycle, which writes every field that differs from Git, those other managers hold
included, and they write them back (tests/support/soak.py says how it is counted from the same run).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def seconds(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[max(0, math.ceil(0.95 * len(ordered)) - 1)]  # nearest rank
    return {
        "median": round(statistics.median(ordered), 3),
        "p95": round(p95, 3),
        "max": round(ordered[-1], 3),
        "total": round(sum(ordered), 1),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args(argv)

    import real_cluster

    from tests.support import tools
    from tests.support.envtest import EnvTest
    from tests.support.kai_cluster import KaiCluster
    from tests.support.soak import run_soak

    tools.activate()
    for name in ("etcd", "kube-apiserver", "kubectl", "helm"):
        tools.tool_path(name)  # a missing tool is an error here, not a skip
    result: dict[str, Any] = {"date": time.strftime("%Y-%m-%d"), "machine_before": real_cluster.machine()}
    with tempfile.TemporaryDirectory(prefix="kai-bench-soak-") as tmp_name, EnvTest(audit=True) as server:
        result["kube_apiserver"] = server.rest.get("/version")["gitVersion"]
        cluster = KaiCluster(server, Path(tmp_name))
        try:
            soak = run_soak(cluster, args.cycles)
        finally:
            cluster.close()
    counts = soak.counts()
    result |= {
        "kai_gitops": {
            **counts,
            "seconds_per_cycle": seconds(soak.cycle_seconds),
            "seconds_per_reconcile": seconds(soak.run_seconds),
        },
        "naive": soak.naive(),
        "machine_after": real_cluster.machine(),
    }
    return result


if __name__ == "__main__":
    print(json.dumps(main()))
