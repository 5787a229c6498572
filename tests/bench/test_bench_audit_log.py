"""bench/audit_log.py runs end to end on small logs and finds the person's write in each; no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_audit_log_bench_prints_json_last_and_finds_the_person_in_every_log() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "audit_log.py"), "--mb", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert [result[name]["found"] for name in ("sparse", "hot", "hot-gzip")] == ["alice@example.com"] * 3
    assert result["hot-gzip"]["file_mb"] < result["hot"]["file_mb"]
