"""GitLab Code Quality: checked against the documented field list and value sets."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from reconciler.outputs import render
from reconciler.report.report import ClusterReport, Report
from tests.support.outputs_shared import HOSTILE, sample_findings, sample_report

# docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format: required fields and their types.
REQUIRED = {"description": str, "check_name": str, "fingerprint": str, "severity": str, "location": dict}
SEVERITIES = {"info", "minor", "major", "critical", "blocker"}


def issues(report: Report | None = None) -> list[dict[str, Any]]:
    return json.loads(render(report or sample_report(), "gitlab"))


def test_every_issue_has_the_documented_fields() -> None:
    found = issues()
    assert isinstance(found, list) and found
    for issue in found:
        for key, kind in REQUIRED.items():
            assert isinstance(issue[key], kind), (key, issue)
        assert issue["severity"] in SEVERITIES
        assert isinstance(issue["location"]["path"], str) and not issue["location"]["path"].startswith("/")
        assert isinstance(issue["location"]["lines"]["begin"], int) and issue["location"]["lines"]["begin"] >= 1


def test_fingerprints_are_unique_and_stable_across_line_moves() -> None:
    first = issues()
    assert len({i["fingerprint"] for i in first}) == len(first)
    prod = sample_report()
    moved = [
        replace(f, location=replace(f.location, line=f.location.line + 7)) if f.location else f
        for f in prod.clusters[0].findings
    ]
    prod.clusters[0].findings = moved
    assert [i["fingerprint"] for i in issues(prod)] == [i["fingerprint"] for i in first]


def test_duplicate_fingerprints_get_distinct_stable_ones() -> None:
    f = sample_findings()[3]
    twice = Report("check", [ClusterReport("prod-addon", findings=[f, replace(f, message="other")])])
    prints = [i["fingerprint"] for i in issues(twice)]
    assert len(set(prints)) == 2 and prints == [i["fingerprint"] for i in issues(twice)]


def test_severity_mapping_and_waived_left_out() -> None:
    by_rule = {i["check_name"]: i for i in issues()}
    assert by_rule["KAI-D-002"]["severity"] == "critical"
    assert by_rule["NVCA-S-012"]["severity"] == "minor"
    assert by_rule["KAI-W-003"]["severity"] == "info"
    assert "KAI-V-001" not in by_rule


def test_live_only_finding_is_on_the_cluster_entry_and_problems_are_linked() -> None:
    by_rule = {i["check_name"]: i for i in issues()}
    assert by_rule["KAI-Q-011"]["location"] == {"path": "kai-gitops.yaml", "lines": {"begin": 3, "end": 10}}
    assert by_rule["KAI-Q-011"]["problem"] == by_rule["KAI-D-002"]["problem"]
    assert by_rule["KAI-D-002"]["location"] == {"path": "environments/prod.yaml", "lines": {"begin": 26}}


def test_hostile_text_is_json_data() -> None:
    gate = next(i for i in issues() if i["check_name"] == "NVCA-G-005")
    assert HOSTILE in gate["description"]
