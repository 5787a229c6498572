"""One problem, one entry: findings that share a subject and a fix are grouped; machine formats link them."""

from __future__ import annotations

import json
from dataclasses import replace

from reconciler.findings.finding import Action, Fix
from reconciler.findings.problems import group_problems, problem_id
from reconciler.outputs import render
from tests.support.outputs_shared import sample_findings, sample_report


def test_stale_queue_reported_by_three_rules_is_one_problem() -> None:
    findings = sample_findings()
    problems = group_problems(findings)
    queue = problems[0]
    assert queue.rule_ids == ["KAI-D-002", "KAI-Q-011", "NVCA-H-002"]
    assert queue.is_drift and queue.lead.rule_id == "KAI-D-002"
    assert len(problems) == len(findings) - 2


def test_same_object_with_a_different_fix_is_another_problem() -> None:
    drift, limited = sample_findings()[:2]
    other = replace(limited, rule_id="X-1", fix=Fix(Action.NONE, "read the logs", command="kubectl logs x"))
    assert problem_id(other) != problem_id(limited) == problem_id(drift)


def test_same_fix_in_another_cluster_or_waived_is_another_problem() -> None:
    limited = sample_findings()[1]
    assert problem_id(replace(limited, cluster="other")) != problem_id(limited)
    assert problem_id(replace(limited, waived_by="w")) != problem_id(limited)


def test_problem_id_is_stable_across_line_moves() -> None:
    drift = sample_findings()[0]
    moved = replace(drift, location=replace(drift.location, line=90))
    assert problem_id(moved) == problem_id(drift)


def test_json_links_every_result_of_a_problem_and_counts_problems() -> None:
    report = json.loads(render(sample_report(), "json"))
    prod = report["clusters"][0]
    ids = {f["rule"]: f["problem"] for f in prod["findings"]}
    assert ids["KAI-D-002"] == ids["KAI-Q-011"] == ids["NVCA-H-002"] != ids["NVCA-S-012"]
    assert prod["summary"]["problems"] == 2 and prod["summary"]["findings"] == 4
    assert report["summary"]["problems"] == 4 and report["summary"]["findings"] == 6


def test_text_lists_a_problem_once_with_every_rule() -> None:
    text = render(sample_report(), "text")
    assert text.count("Queue/default-parent-queue KAI-D-002") == 1
    assert "also KAI-Q-011: Queue default-parent-queue is limited" in text
    assert "also NVCA-H-002: CPU resource violation" in text
    assert (
        "2 problems (4 findings). Plan: 0 to create, 1 to change, 0 for the operator. Violations: 2 error(s), "
        "1 warning(s), 0 info."
    ) in text
    assert "All clusters: 3 checked, 4 problems (6 findings): 3 error(s), 1 warning(s), 1 info, 1 waived." in text


def test_text_and_github_keep_a_second_finding_of_the_lead_rule() -> None:
    """A queue's limit above its parent's beside its quota above its parent's: one rule, one fix, two findings.
    JSON, SARIF and Markdown had both; text and GitHub annotations dropped the second."""
    report = sample_report()
    prod = report.clusters[0]
    label = next(f for f in prod.findings if f.rule_id == "NVCA-S-012")
    second = replace(label, message="node gpu-node-2 has the label twice")
    report.clusters[0] = replace(prod, findings=[*prod.findings, second])
    assert len({f["problem"] for f in json.loads(render(report, "json"))["clusters"][0]["findings"]}) == 2
    for fmt in ("text", "github"):
        out = render(report, fmt).replace("Also", "also")
        assert "node gpu-node-2 has nvca.nvcf.nvidia.io/schedule=" in out, fmt
        assert "also NVCA-S-012: node gpu-node-2 has the label twice" in out, fmt
