"""bench/fleet_waves.py runs (--quick: 50 clusters) and prints its JSON last, with the naive way beside it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_fleet_waves_bench_prints_json_last_with_the_naive_way() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "fleet_waves.py"), "--quick"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
        cwd=ROOT,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["clusters"] == 50 and len(result["scenarios"]) >= 9
    assert all(s["order_violations"] == 0 for s in result["scenarios"])
    bad = next(s for s in result["scenarios"] if s["scenario"] == "bad change")
    assert bad["applied_in_waves"] == [1] and bad["held"] == 49
    naive_bad = next(n for n in result["naive"] if "bad" in n["scenario"])
    assert naive_bad["applied"] == naive_bad["unhealthy_after_apply"] == 50
