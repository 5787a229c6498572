"""bench/snapshot_read.py runs end to end on small snapshots, and both ways find the same objects; no timing
asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_snapshot_bench_prints_json_last_and_both_ways_find_the_same() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "snapshot_read.py"), "--mb", "0.4", "--pods", "1500", "--limit-gb", "3"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    for name in ("18mb", "150k-pods"):
        old, ours = result[name]["old"], result[name]["ours"]
        assert {k: old[k] for k in ("pods", "nodes", "queues")} == {k: ours[k] for k in ("pods", "nodes", "queues")}
        assert ours["pods"] > 0
