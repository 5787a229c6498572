"""JUnit XML: parsed back with junitparser, one suite per cluster and one case per rule evaluated."""

from __future__ import annotations

from dataclasses import replace

from junitparser import Failure, JUnitXml, Skipped

from reconciler.findings.finding import Severity
from reconciler.outputs import render
from reconciler.report.report import Report
from tests.support.outputs_shared import STATIC_RULES, sample_report


def parsed(report: Report | None = None) -> JUnitXml:
    return JUnitXml.fromstring(render(report or sample_report(), "junit"))


def cases(xml: JUnitXml, suite_name: str) -> dict[str, object]:
    suite = next(s for s in xml if s.name == suite_name)
    return {case.name.split(" ")[0]: case for case in suite}


def test_a_suite_per_cluster_and_a_case_per_rule_evaluated() -> None:
    xml = parsed()
    assert [s.name for s in xml] == ["(repository)", "prod-addon", "lab-standalone", "edge-clean"]
    edge = cases(xml, "edge-clean")
    assert set(edge) == {r.id for r in STATIC_RULES}
    assert all(case.is_passed for case in edge.values())


def test_failures_carry_the_findings() -> None:
    prod = cases(parsed(), "prod-addon")
    failure = prod["KAI-D-002"].result[0]
    assert isinstance(failure, Failure)
    assert failure.type == "error"
    assert failure.message.startswith("environments/prod.yaml:26:5: Queue default-parent-queue differs")
    assert "fix: patch Queue default-parent-queue spec" in failure.text
    assert prod["KAI-Q-001"].is_passed  # evaluated, found nothing


def test_waived_rule_is_skipped_and_below_threshold_passes_with_output() -> None:
    xml = parsed()
    lab = cases(xml, "lab-standalone")
    assert isinstance(lab["KAI-V-001"].result[0], Skipped)
    assert "waived: lab experiment" in lab["KAI-V-001"].result[0].message
    repository = cases(xml, "(repository)")
    assert repository["KAI-W-003"].is_passed and "policy/x.rego" in repository["KAI-W-003"].system_out


def test_counts_add_up() -> None:
    xml = parsed()
    xml.update_statistics()
    prod = next(s for s in xml if s.name == "prod-addon")
    assert (prod.tests, prod.failures, prod.skipped) == (16, 4, 0)  # the built-in drift rules count too
    assert xml.failures == 5


def test_hostile_and_control_characters_stay_parseable() -> None:
    report = sample_report()
    lab = report.clusters[1]
    lab.findings = [replace(f, message=f.message + "\x00\x1b[31m") for f in lab.findings]
    gate = cases(parsed(report), "lab-standalone")["NVCA-G-005"].result[0]
    assert "evil|<img src=x onerror=alert(1)> **bold**" in gate.message and "::error::pwned" in gate.text
    assert "\x00" not in gate.message


def test_fail_on_error_turns_warnings_into_output() -> None:
    report = sample_report()
    report.fail_on = Severity.ERROR
    assert cases(parsed(report), "prod-addon")["NVCA-S-012"].is_passed
