"""bench/apply.py runs end to end and checks its own exactly-once counts (quick mode; no timing asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_apply_bench_quick_prints_json_last_and_applies_each_change_once() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "apply.py"), "--quick", "--throttled", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["changes"] == 100 and result["nodes"] == 300
    for run in ("naive", "ours", "reconcile"):
        assert result["exactly_once"][run] == {"patched_once": 100, "throttled_429": 1}
    assert result["naive_s"] > 0 and result["ours_s"] > 0 and "speedup" in result
