"""bench/soak.py runs end to end on the real API server for 2 cycles and prints its counts; no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.tools import require_tool

ROOT = Path(__file__).resolve().parents[2]


def test_soak_bench_prints_json_last_with_its_counts_and_the_naive_ways() -> None:
    for name in ("etcd", "kube-apiserver", "kubectl", "helm"):
        require_tool(name)
    out = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "soak.py"), "--cycles", "2"],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    ours, naive = result["kai_gitops"], result["naive"]
    assert ours["cycles"] == 2 and ours["hand_edits"] == 0 and ours["label_writes"] == 0
    assert ours["fields_written_twice_not_after_a_hand_edit"] == 0 and ours["fight_writes_before_caught"] == 1
    assert ours["fights"] == 1 and ours["writes_by_owner"]["another manager (the fight, before caught)"] == 1
    # each cycle the naive way writes the three fields other managers hold (two controllers, the fight)
    assert naive["writes_to_fields_other_managers_own"] == 6 and naive["oscillations"] == 3
    assert ours["seconds_per_cycle"]["median"] > 0
