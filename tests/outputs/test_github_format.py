"""GitHub workflow commands: parsed back with the toolkit's escaping rules; limits, order, and no injection."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from reconciler.core.refs import Location
from reconciler.findings.finding import Finding, Kind, Severity
from reconciler.outputs import render
from reconciler.outputs.github_format import MAX_PER_LEVEL, blob_link, escape_data, escape_property, job_summary
from reconciler.report.report import ClusterReport, Report
from tests.support.outputs_shared import HOSTILE, sample_report

# @actions/core's command syntax: ::name key=value,key=value::message
_COMMAND = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<message>.*)$")


def unescape_data(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return unescape_data(text.replace("%3A", ":").replace("%2C", ","))


def parse(line: str) -> tuple[str, dict[str, str], str]:
    found = _COMMAND.match(line)
    assert found, line
    props = {}
    for pair in (found["props"] or "").split(","):
        if pair:
            key, _, value = pair.partition("=")
            props[key] = unescape_property(value)
    return found["name"], props, unescape_data(found["message"])


def commands(output: str) -> list[tuple[str, dict[str, str], str]]:
    """Commands GitHub would run: stop at ::stop-commands::TOKEN until ::TOKEN::, as the runner does."""
    run, stopped = [], None
    for line in output.split("\n"):
        if stopped is not None:
            if line == f"::{stopped}::":
                stopped = None
            continue
        if line.startswith("::stop-commands::"):
            stopped = line.removeprefix("::stop-commands::")
            continue
        if line.startswith("::"):
            run.append(parse(line))
        else:
            assert not line, f"log text outside the stop-commands wrap: {line!r}"
    assert stopped is None, "stop-commands never ended"
    return run


def test_escaping_matches_the_toolkit() -> None:
    assert escape_data("100%\r\nx:y,z") == "100%25%0D%0Ax:y,z"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_every_line_is_one_command_and_hostile_text_round_trips() -> None:
    run = commands(render(sample_report(), "github"))
    names = [name for name, _, _ in run]
    assert set(names) <= {"error", "warning", "notice"}
    hostile = next(c for c in run if c[1].get("file") == "clusters/lab/nvca-operator-values.yaml")
    assert HOSTILE in hostile[2] and HOSTILE in hostile[1]["title"]


def test_annotation_has_the_region_and_every_rule_of_the_problem() -> None:
    run = commands(render(sample_report(), "github"))
    name, props, message = run[0]
    assert name == "error"
    assert props == {
        "file": "environments/prod.yaml",
        "line": "26",
        "col": "5",
        "endColumn": "18",
        "title": "KAI-D-002 + KAI-Q-011 + NVCA-H-002: Queue differs from Git (prod-addon)",
    }
    assert "Also KAI-Q-011" in message and "Fix: patch Queue" in message


def test_live_only_problem_sits_on_the_clusters_config_entry() -> None:
    run = commands(render(sample_report(), "github"))
    node = next(c for c in run if "NVCA-S-012" in c[1]["title"])
    assert node[1]["file"] == "kai-gitops.yaml" and node[1]["line"] == "3" and node[1]["endLine"] == "10"


def test_waived_findings_are_not_annotated() -> None:
    assert not any("KAI-V-001" in c[1]["title"] for c in commands(render(sample_report(), "github")))


def many(n: int, severity: Severity = Severity.ERROR) -> list[Finding]:
    prefix = severity.value[0].upper()
    return [
        Finding(
            f"{prefix}-{i:03}",
            Kind.VIOLATION,
            severity,
            f"problem {i}",
            "c1",
            None,
            Location("values.yaml", i + 1, 1, (f"{prefix}{i}",)),
        )
        for i in range(n)
    ]


def test_at_most_ten_per_level_changed_lines_first_and_a_notice_for_the_rest() -> None:
    report = Report(
        "check",
        [ClusterReport("c1", findings=many(25) + many(3, Severity.INFO))],
        changed_lines={"values.yaml": frozenset({20, 21, 22})},
    )
    run = commands(render(report, "github"))
    errors = [c for c in run if c[0] == "error"]
    assert len(errors) == MAX_PER_LEVEL
    assert [c[1]["line"] for c in errors[:3]] == ["20", "21", "22"]  # the PR's own lines first
    notices = [c for c in run if c[0] == "notice"]
    assert len(notices) == 4 and notices[-1][1]["title"] == "kai-gitops: more problems"
    assert notices[-1][2].startswith("15 more errors not annotated")
    assert "job summary" in notices[-1][2]


def test_overflow_of_notices_keeps_a_slot_for_the_notice_that_says_so() -> None:
    report = Report("check", [ClusterReport("c1", findings=many(12, Severity.INFO))])
    notices = [c for c in commands(render(report, "github")) if c[0] == "notice"]
    assert len(notices) == MAX_PER_LEVEL
    assert notices[-1][2].startswith("3 more notices")


def test_the_log_inside_the_wrap_has_everything_and_a_fresh_token() -> None:
    first = render(sample_report(), "github")
    second = render(sample_report(), "github")
    token = re.search(r"^::stop-commands::(\w+)$", first, re.MULTILINE)
    assert token and len(token[1]) == 32 and token[1] not in second
    assert "KAI-V-001" in first  # waived: not annotated, still in the log
    # the hostile value is in the log, its CR LF shown as escapes: it starts no line, inside the wrap or out
    assert "\\r\\n::add-mask::x" in first and "\n::add-mask" not in first


def test_multi_line_region_uses_end_line_not_columns() -> None:
    finding = many(1)[0]
    finding = replace(finding, location=replace(finding.location, end_line=4, end_column=9))
    run = commands(render(Report("check", [ClusterReport("c1", findings=[finding])]), "github"))
    assert run[0][1] == {"file": "values.yaml", "line": "1", "endLine": "4", "title": "E-000: E-000 (c1)"}


def test_job_summary_is_markdown_under_the_limit_with_links_at_the_commit() -> None:
    link = blob_link("https://github.com", "acme/gitops", "abc123")
    summary = job_summary(sample_report(), link=link)
    assert "(https://github.com/acme/gitops/blob/abc123/environments/prod.yaml#L26)" in summary
    small = job_summary(sample_report(), limit=2000)
    assert len(small.encode()) <= 2000 and "**Truncated**" in small


def test_text_and_markdown_printed_beside_github_cannot_run_commands(monkeypatch: Any) -> None:
    """The template prints `-o text -o github`: the text, with a value holding a newline and `::add-mask::x`,
    was printed before the wrap, so that line ran as a workflow command."""
    from reconciler.outputs.destinations import emit, parse_output_specs

    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    printed: list[str] = []
    emit(sample_report(), parse_output_specs(["text", "github", "markdown"]), printed.append)
    run = commands("".join(printed))  # fails on any log line outside a stop-commands wrap
    assert {name for name, _, _ in run} <= {"error", "warning", "notice"}
    assert "::add-mask::x" in printed[0] and "## kai-gitops check" in printed[2]
    alone: list[str] = []
    emit(sample_report(), parse_output_specs(["text"]), alone.append)
    assert "stop-commands" not in alone[0]  # outside GitHub's format, text is plain
