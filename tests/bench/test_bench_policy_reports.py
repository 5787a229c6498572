"""bench/policy_reports.py runs end to end (quick mode) and its write counts hold; no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_policy_reports_bench_quick_prints_json_last_with_the_write_counts() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "policy_reports.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    objects = result["naive"]["runs"][0]["writes"]
    assert [r["writes"] for r in result["naive"]["runs"]] == [objects, 2 * objects, 2 * objects]
    assert [r["writes"] for r in result["ours"]["runs"]] == [objects, 0, 3]  # 1% changed: three namespaces
    assert all(r["deletes"] == 0 for r in result["ours"]["runs"])
