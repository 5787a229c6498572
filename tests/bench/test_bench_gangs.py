"""bench/live_read.py --gangs runs end to end: PodGroups add only their own paged list to the read (no timing
asserted; the JSON carries the figures)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gangs_bench_quick_reads_pod_groups_without_reading_pods_again() -> None:
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "live_read.py"), "--gangs", "--quick", "--runs", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["without"]["pod_groups"] == 0 and result["with"]["pod_groups"] > 4000
    assert result["with"]["read_counts"]["pod_groups"] == result["with"]["pod_groups"]
    assert list(result["added_requests"]) == ["/apis/scheduling.run.ai/v2alpha2/podgroups"]
    assert result["pod_and_event_requests_unchanged"] is True
    # one stuck gang per Pending NVCF pod (every 97th), explained once each
    assert result["with"]["gang_findings"] == {"KAI-T-001": 10, "KAI-T-002": 10}
