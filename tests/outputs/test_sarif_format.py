"""SARIF 2.1.0: valid against the OASIS schema, and shaped the way GitHub code scanning reads it."""

from __future__ import annotations

import json
from typing import Any

from reconciler.outputs import render
from reconciler.report.report import Report
from tests.support.outputs_sarif_format import validator
from tests.support.outputs_shared import HOSTILE, sample_report


def sarif(report: Report | None = None) -> dict[str, Any]:
    return json.loads(render(report or sample_report(), "sarif"))


def results(doc: dict[str, Any], run: str) -> dict[str, dict[str, Any]]:
    chosen = next(r for r in doc["runs"] if r["automationDetails"]["id"] == f"kai-gitops/check/{run}/")
    return {r["ruleId"]: r for r in chosen["results"]}


def test_valid_against_the_sarif_schema() -> None:
    doc = sarif()
    errors = sorted(validator().iter_errors(doc), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    assert doc["version"] == "2.1.0"


def test_one_run_per_cluster_with_its_own_category() -> None:
    ids = [run["automationDetails"]["id"] for run in sarif()["runs"]]
    assert ids == [
        "kai-gitops/check/(repository)/",
        "kai-gitops/check/prod-addon/",
        "kai-gitops/check/lab-standalone/",
        "kai-gitops/check/edge-clean/",
    ]


def test_driver_lists_every_rule_that_ran_with_help_and_level() -> None:
    driver = sarif()["runs"][0]["tool"]["driver"]
    assert driver["name"] == "kai-gitops" and driver["semanticVersion"]
    rules = {r["id"]: r for r in driver["rules"]}
    assert {"KAI-Q-001", "KAI-D-001", "KAI-D-004", "KAI-W-003", "NVCA-S-012"} <= set(rules)  # incl. silent ones
    q = rules["KAI-Q-001"]
    assert q["shortDescription"]["text"] == "KAI-Q-001 title"
    assert q["fullDescription"]["text"] == "why KAI-Q-001 matters"
    assert "how to fix KAI-Q-001" in q["help"]["text"] and "**Remedy:** how to fix KAI-Q-001" in q["help"]["markdown"]
    assert q["defaultConfiguration"]["level"] == "error"
    assert rules["KAI-V-001"]["defaultConfiguration"]["level"] == "warning"
    assert "queues" in q["properties"]["tags"]


def test_results_point_at_the_whole_yaml_value_repo_relative() -> None:
    doc = sarif()
    drift = results(doc, "prod-addon")["KAI-D-002"]
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    assert rules[drift["ruleIndex"]]["id"] == "KAI-D-002"
    assert drift["level"] == "error"
    physical = drift["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "environments/prod.yaml"
    assert physical["region"] == {"startLine": 26, "startColumn": 5, "endLine": 26, "endColumn": 18}


def test_live_only_finding_sits_on_the_clusters_entry_in_the_config() -> None:
    limited = results(sarif(), "prod-addon")["KAI-Q-011"]
    physical = limited["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "kai-gitops.yaml"
    assert physical["region"]["startLine"] == 3
    assert (
        limited["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == "prod-addon/Queue/default-parent-queue"
    )
    assert "not in a file" in limited["message"]["text"]


def test_fingerprints_and_problem_links() -> None:
    prod = results(sarif(), "prod-addon")
    assert len({r["partialFingerprints"]["kaiGitops/v1"] for r in prod.values()}) == len(prod)
    problems = {rid: r["properties"]["problem"] for rid, r in prod.items()}
    assert problems["KAI-D-002"] == problems["KAI-Q-011"] == problems["NVCA-H-002"] != problems["NVCA-S-012"]


def test_waived_finding_is_a_suppressed_result() -> None:
    lab = results(sarif(), "lab-standalone")
    why = "lab experiment (owner: team-lab, expires 2099-12-31)"
    assert lab["KAI-V-001"]["suppressions"] == [{"kind": "external", "status": "accepted", "justification": why}]
    assert "suppressions" not in lab["NVCA-G-005"]


def test_hostile_text_is_only_data() -> None:
    hostile = results(sarif(), "lab-standalone")["NVCA-G-005"]
    assert HOSTILE in hostile["message"]["text"]  # JSON escapes it; SARIF viewers render message.text as text


def test_file_level_finding_has_no_invented_region() -> None:
    change = results(sarif(), "(repository)")["KAI-W-003"]
    assert change["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "policy/x.rego", "uriBaseId": "%SRCROOT%"}
    }


def test_a_fleet_beyond_githubs_run_limit_is_one_run_naming_each_cluster() -> None:
    from dataclasses import replace

    from reconciler.outputs.sarif_format import MAX_RUNS
    from reconciler.report.report import ClusterReport

    base = sample_report()
    finding = base.clusters[1].findings[0]
    clusters = [ClusterReport(f"c{i:02}", findings=[replace(finding, cluster=f"c{i:02}")]) for i in range(MAX_RUNS)]
    doc = sarif(Report("check", clusters, repository=base.repository))
    assert not list(validator().iter_errors(doc))
    (run,) = doc["runs"]
    assert run["automationDetails"]["id"] == "kai-gitops/check/"
    assert len(run["results"]) == MAX_RUNS + 1
    assert {r["properties"]["cluster"] for r in run["results"]} == {f"c{i:02}" for i in range(MAX_RUNS)} | {
        "(repository)"
    }
    assert len(sarif(Report("check", clusters[: MAX_RUNS - 1], repository=base.repository))["runs"]) == MAX_RUNS


def test_a_cluster_named_repository_does_not_share_the_repository_runs_category() -> None:
    """Two runs of one tool and category in one file: GitHub rejects the upload (or one run hides the other)."""
    from dataclasses import replace

    base = sample_report()
    base.clusters[0] = replace(base.clusters[0], cluster="repository")
    ids = [run["automationDetails"]["id"] for run in sarif(base)["runs"]]
    assert len(ids) == len(set(ids)) == 4


def test_a_run_keeps_at_most_githubs_result_limit_most_severe_first(monkeypatch: Any) -> None:
    from dataclasses import replace

    from reconciler.findings.finding import Severity
    from reconciler.outputs import sarif_format
    from reconciler.report.report import ClusterReport

    assert sarif_format.MAX_RESULTS == 25_000  # GitHub rejects a run with more
    monkeypatch.setattr(sarif_format, "MAX_RESULTS", 5)
    template = sample_report().clusters[1].findings[0]
    findings = [
        replace(
            template,
            message=f"m{i}",
            severity=severity,
            location=replace(template.location, line=i),
            waived_by="ok" if i == 0 else None,
        )
        for i, severity in enumerate([Severity.ERROR] * 3 + [Severity.INFO] * 3 + [Severity.WARNING] * 3)
    ]
    doc = sarif(Report("check", [ClusterReport("c1", findings=findings)]))
    assert not list(validator().iter_errors(doc))
    (run,) = doc["runs"]
    assert [r["level"] for r in run["results"]] == ["error", "error", "warning", "warning", "warning"]
    (note,) = run["invocations"][0]["toolExecutionNotifications"]
    assert note["message"]["text"].startswith("4 results left out, waived and least severe first")


def test_artifact_uri_is_a_percent_encoded_relative_reference() -> None:
    """A path with a space, '#' or '%' must not turn into a fragment or a bogus escape in the URI."""
    from dataclasses import replace
    from urllib.parse import unquote

    base = sample_report()
    finding = base.clusters[1].findings[0]
    odd = replace(finding.location, file="clusters/lab one/#2 100%.yaml")
    base.clusters[1].findings[0] = replace(finding, location=odd)
    uri = results(sarif(base), "lab-standalone")[finding.rule_id]["locations"][0]["physicalLocation"][
        "artifactLocation"
    ]["uri"]
    assert uri == "clusters/lab%20one/%232%20100%25.yaml" and unquote(uri) == odd.file
    assert not uri.startswith(("/", "./"))


def test_help_markdown_of_a_rule_known_only_by_its_findings_is_escaped() -> None:
    report = sample_report()
    for cluster in report.clusters:
        cluster.rules = []  # as for a user policy's rule or a merged report: described by the findings
    rules = {r["id"]: r for r in sarif(report)["runs"][0]["tool"]["driver"]["rules"]}
    markdown = rules["NVCA-G-005"]["help"]["markdown"]
    assert "Gate names are spelled right" in markdown
    for raw in ("<img", "[link](http://x)", "@admin", "`tick`", "\n::error::", "evil|"):
        assert raw not in markdown, (raw, markdown)
    assert "&lt;img" in markdown and "\n\n**Remedy:** " in markdown
