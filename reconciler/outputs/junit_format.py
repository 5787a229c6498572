"""JUnit XML for CI systems that only read test reports: a testsuite per cluster, a testcase per rule.

Every rule evaluated in a cluster is a test case, so passing rules show as passed. A rule with findings
at or above `--fail-on` fails, its message naming each finding's place; findings below the threshold are
in `system-out` of a passing case; a rule whose findings are all waived is skipped, with the waiver.
Findings about the change itself (waivers, policy edits) form the `(repository)` suite.

A run that stopped on an error before it had a report is one test case in error (`render_error`): JUnit's
`error`, a test that could not run, rather than a `failure` of a rule.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections import defaultdict

from reconciler.findings.finding import REPOSITORY, Finding
from reconciler.findings.rules import RuleMeta
from reconciler.outputs.input_error import CHECK_NAME, InputError
from reconciler.report.report import Report, finding_order

# XML 1.0 cannot carry most control characters, even escaped: a value holding one would break the file.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def render(report: Report, *, color: bool | None = None) -> str:
    catalog = {meta.id: meta for meta in report.rules()}
    root = ET.Element("testsuites", name=f"kai-gitops {report.command}")
    suites = [(c.cluster, c.rules, c.findings) for c in report.clusters]
    if report.repository:
        suites.insert(0, (REPOSITORY, [], report.repository))
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for name, rules, findings in suites:
        suite = _suite(report, name, rules, findings, catalog)
        root.append(suite)
        for key in totals:
            totals[key] += int(suite.get(key, "0"))
    root.attrib.update({key: str(value) for key, value in totals.items()} | {"errors": "0"})
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def render_error(error: InputError) -> str:
    counts = {"tests": "1", "failures": "0", "errors": "1", "skipped": "0"}
    root = ET.Element("testsuites", {"name": _clean(f"kai-gitops {error.command}"), **counts})
    suite = ET.SubElement(root, "testsuite", {"name": CHECK_NAME, **counts})
    case = ET.SubElement(
        suite,
        "testcase",
        classname=_clean(f"kai-gitops.{error.command}"),
        name=_clean(f"kai-gitops {error.command} reads its input"),
    )
    failure = ET.SubElement(case, "error", message=_clean(error.line()), type=CHECK_NAME)
    failure.text = _clean(f"{error.line()}\n\nNothing was checked: the run stopped at this error.")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(
    report: Report, name: str, rules: list[RuleMeta], findings: list[Finding], catalog: dict[str, RuleMeta]
) -> ET.Element:
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for f in sorted(findings, key=finding_order):
        by_rule[f.rule_id].append(f)
    ids = sorted({m.id for m in rules} | set(by_rule))
    suite = ET.Element("testsuite", name=_clean(name))
    failures = skipped = 0
    for rule_id in ids:
        meta = catalog.get(rule_id)
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_clean(f"kai-gitops.{name}"),
            name=_clean(f"{rule_id} {meta.title}" if meta else rule_id),
        )
        found = by_rule.get(rule_id, [])
        active = [f for f in found if f.waived_by is None]
        failing = [f for f in active if f.severity.rank >= report.fail_on.rank]
        if failing:
            failures += 1
            failure = ET.SubElement(case, "failure", message=_clean(_summary(failing)), type=failing[0].severity.value)
            failure.text = _clean("\n\n".join(_describe(f) for f in failing))
        elif found and not active:
            skipped += 1
            ET.SubElement(case, "skipped", message=_clean(f"waived: {found[0].waived_by}"))
        if active and not failing:
            ET.SubElement(case, "system-out").text = _clean("\n\n".join(_describe(f) for f in active))
    suite.attrib.update({"tests": str(len(ids)), "failures": str(failures), "errors": "0", "skipped": str(skipped)})
    return suite


def _summary(findings: list[Finding]) -> str:
    first = findings[0]
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    return f"{first.location or first.subject or first.cluster}: {first.message}{more}"


def _describe(f: Finding) -> str:
    lines = [f"{f.severity.value.upper()} {f.rule_id} {f.location or f.subject or ''}".rstrip(), f.message]
    if f.fix and (f.fix.command or f.fix.description):
        lines.append(f"fix: {f.fix.command or f.fix.description}")
    return "\n".join(lines)


def _clean(text: str) -> str:
    return _NOT_XML.sub("\N{REPLACEMENT CHARACTER}", text)
