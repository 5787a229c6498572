"""jsonl: the JSON report on one line, for container logs (the CronJob's stdout)."""

from __future__ import annotations

import json
from pathlib import Path

from reconciler.outputs import render
from reconciler.report.report import Report
from tests.support.reconcile_support import demo_cluster


def test_one_line_with_the_same_content_as_json(report: Report) -> None:
    text = render(report, "jsonl")
    assert text.endswith("\n") and text.count("\n") == 1
    assert json.loads(text) == json.loads(render(report, "json"))


def test_reconcile_jsonl_carries_the_plan_on_one_line(tmp_path: Path) -> None:
    for demo in demo_cluster(tmp_path):
        code, out, err = demo.reconcile("-o", "jsonl")
        assert code == 2, err
        assert out.count("\n") == 1
        assert json.loads(out)["plan"]["changes"]
