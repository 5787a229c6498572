"""The benchmark runs and ends with one JSON line (quick mode, so the suite stays fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_bench_quick_prints_json_last() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "policy_eval.py"), "--quick", "--runs", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert {"queues", "nodes", "rules", "regorus_ms", "regopy_ms"} <= set(result)
    assert result["rules"] >= 45 and result["regorus_ms"] > 0
    assert result["regopy_ms"] is not None or result["regopy_error"]
