"""The benchmarks' real-server modes run end to end at a tiny size: valid JSON last, matching object counts,
each change written exactly once (no timing asserted; the figures come from full-size runs, see
docs/development.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.tools import require_tool

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _tools() -> None:
    for name in ("etcd", "kube-apiserver", "kubectl"):
        require_tool(name)


def bench(script: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), "--server", "real", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_live_read_real_mode_reads_the_same_objects_as_the_client_and_kubectl() -> None:
    result = bench("live_read.py", "--nodes", "12", "--pods", "30", "--runs", "1")
    assert result["expected_counts"] == {"nodes": 12, "pods": 38}  # 30 NVCF pods and KAI's 8
    assert result["counts_match"] is True
    for reader in ("read", "models", "kubectl"):
        assert result["measurements"][reader]["counts"] == result["expected_counts"], reader
    assert result["measurements"]["diff"]["exit"] == 2  # the demo repo's findings
    assert result["seeding"]["counts"]["Pod"] == 38 and result["machine_before"]["cpus"] >= 1


def test_live_read_seeded_through_the_store_serves_every_pod_and_ours_reads_only_its_own() -> None:
    """`--seed store`: the Pods but one written into etcd, served by the API server like those it made."""
    result = bench(
        "live_read.py", "--seed", "store", "--nodes", "12", "--pods", "30", "--other-pods", "40", "--runs", "1"
    )
    seeding = result["seeding"]
    assert (seeding["pods_via"], seeding["counts"]["Pod"], seeding["pods_through_store"]) == ("store", 78, 77)
    assert seeding["store_transactions"] >= 1
    assert result["expected_counts"] == {"nodes": 12, "pods": 78}
    assert result["expected_counts_ours"] == {"nodes": 12, "pods": 38}  # not the teams' 40
    assert result["counts_match"] is True and result["killed_past_cap"] == []
    assert result["measurements"]["read"]["counts"] == result["expected_counts_ours"]
    for reader in ("models", "kubectl"):
        assert result["measurements"][reader]["counts"] == result["expected_counts"], reader


def test_apply_real_mode_writes_each_change_once_for_every_way() -> None:
    result = bench("apply.py", "--nodes", "30", "--changes", "6", "--kubectl-sample", "2")
    assert (result["nodes"], result["changes"]) == (30, 6)
    once = result["exactly_once"]
    for run in ("naive", "ours", "reconcile", "kubectl_selector"):
        assert once[run]["patched_once"] == 6 and once[run]["throttled_429"] == 0, run
    assert once["kubectl_loop"]["patched_once"] == 2
    assert (result["kubectl_loop"]["sample"], result["kubectl_loop"]["extrapolated"]) == (2, True)
    assert [w.split("/")[0] for w in once["ours"]["writers"]] == ["kai-gitops"]
    assert once["reconcile"]["apply_warnings"] == []  # every Event recorded
