"""bench/values_size.py runs end to end with a baseline tree in pairs, both trees find the same, and both YAML
readers read the file the same; no timing asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_values_bench_pairs_this_tree_with_a_baseline_and_prints_each_ratio() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "values_size.py"),
            *("--sizes", "0.02,0.04", "--baseline", str(ROOT), "--pairs", "2"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert [r["megabytes"] for r in result["runs"]] == [0.02, 0.04]
    for size in result["runs"]:
        assert size["same_findings"] is True
        assert size["check"]["exit"] == size["baseline"]["exit"] == 2
        assert len(size["pair_cpu_ratios"]) == 2 and all(r > 0 for r in size["pair_cpu_ratios"])
        assert min(size["pair_cpu_ratios"]) <= size["median_pair_ratio"] <= max(size["pair_cpu_ratios"])
        assert size["reader"]["same_reading"] is True  # the native reader read the file, as the composer does
        assert {"native_cpu_s", "composer_cpu_s", "composer_over_native"} <= set(size["reader"])
    assert result["baseline_source"] == str(ROOT) and result["pairs"] == 2
