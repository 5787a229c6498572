"""SARIF 2.1.0 for code scanning (GitHub's `upload-sarif`, GitLab, IDEs).

One run per cluster, told apart by `automationDetails.id` (GitHub's category), each listing every rule
that ran with its description and remedy, so a rule that found nothing closes its old alerts. Results
point at the YAML value: key to end of value, repo-relative. A finding without a file (read from the
live cluster) is placed on the cluster's entry in kai-gitops.yaml, never on line 1 of nothing.
`partialFingerprints` carry our fingerprint, which survives line moves; waived findings are results with
an external suppression, so code scanning shows them as dismissed rather than forgetting them.

GitHub rejects a file with more than 20 runs. A report with more clusters than that is one run for the
whole fleet (`kai-gitops/<command>/`), each result naming its cluster in `properties.cluster`. It also
rejects a run with more than 25,000 results: past that a run keeps the most severe (waived ones last) and
says in `invocations[].toolExecutionNotifications` how many it left out and where they are.
The repository's run is `(repository)`, which no cluster can be called (names are DNS labels), so its
category never collides with a cluster's.

A run that stopped on an error before it had a report (`render_error`) is one run whose invocation failed,
with the error as a tool execution notification at its file and line, and no results. Its category is
`kai-gitops/<command>/(error)/`, apart from the clusters' own: an upload with no results in their category
would close every alert they have.
"""

from __future__ import annotations

from urllib.parse import quote

import orjson

from reconciler.core.jsonvalue import JSONLike
from reconciler.core.refs import Location
from reconciler.findings.finding import REPOSITORY, Finding, Severity
from reconciler.findings.problems import problem_id
from reconciler.findings.rules import RuleMeta
from reconciler.outputs.input_error import CHECK_NAME, InputError
from reconciler.outputs.markdown_format import escape_markdown
from reconciler.report.report import ClusterReport, Report, finding_order

Sarif = dict[str, JSONLike]  # one object of the SARIF log

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
FINGERPRINT_KEY = "kaiGitops/v1"
INFORMATION_URI = "https://github.com/kai-scheduler/KAI-Scheduler"
_LEVEL = {"error": "error", "warning": "warning", "info": "note"}
_AREA = {
    "C": "components",
    "D": "drift",
    "G": "gates",
    "H": "health",
    "M": "modes",
    "P": "pods",
    "Q": "queues",
    "R": "release",
    "S": "shared-cluster",
    "V": "values",
    "W": "waivers",
}
MAX_RUNS = 20  # GitHub code scanning's hard limit of runs per SARIF file
MAX_RESULTS = 25_000  # and of results per run
_RANK = {"error": 0, "warning": 1, "note": 2}


def render(report: Report, *, color: bool | None = None) -> str:
    rules = report.rules()
    index = {meta.id: i for i, meta in enumerate(rules)}
    driver = _driver(rules)
    runs = []
    if len(report.clusters) + bool(report.repository) > MAX_RUNS:
        results = [_result(f, None, index) for f in sorted(report.repository, key=finding_order)]
        for cluster in report.clusters:
            results += [_result(f, cluster, index) for f in sorted(cluster.findings, key=finding_order)]
        runs.append(_run(report, None, results, None, driver))
    else:
        if report.repository:
            runs.append(
                _run(
                    report,
                    REPOSITORY,
                    [_result(f, None, index) for f in sorted(report.repository, key=finding_order)],
                    None,
                    driver,
                )
            )
        for cluster in report.clusters:
            results = [_result(f, cluster, index) for f in sorted(cluster.findings, key=finding_order)]
            runs.append(_run(report, cluster.cluster, results, cluster, driver))
    sarif = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": runs}
    return orjson.dumps(sarif, option=orjson.OPT_INDENT_2).decode() + "\n"


def render_error(error: InputError) -> str:
    notification: Sarif = {"level": "error", "message": {"text": error.line()}, "descriptor": {"id": CHECK_NAME}}
    if error.location is not None:
        notification["locations"] = [_physical(error.location)]
    run: Sarif = {
        "tool": {"driver": _driver([])},
        "automationDetails": {"id": f"kai-gitops/{error.command}/(error)/"},
        "columnKind": "unicodeCodePoints",
        "results": [],
        "invocations": [{"executionSuccessful": False, "toolExecutionNotifications": [notification]}],
    }
    sarif = {"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]}
    return orjson.dumps(sarif, option=orjson.OPT_INDENT_2).decode() + "\n"


def _driver(rules: list[RuleMeta]) -> Sarif:
    version = _version()
    return {
        "name": "kai-gitops",
        "semanticVersion": version,
        "version": version,
        "informationUri": INFORMATION_URI,
        "rules": [_rule(meta) for meta in rules],
    }


def _rule(meta: RuleMeta) -> Sarif:
    area = _AREA.get(meta.id.split("-")[1][:1] if meta.id.count("-") >= 2 else "", "policy")
    return {
        "id": meta.id,
        "name": "".join(word.capitalize() for word in area.split("-")) + meta.id.split("-")[-1],
        "shortDescription": {"text": meta.title},
        "fullDescription": {"text": meta.rationale},
        "help": {
            "text": f"{meta.rationale}\n\nRemedy: {meta.remediation}\n\nSource: {meta.source}",
            "markdown": _help_markdown(meta),
        },
        "defaultConfiguration": {"level": _LEVEL[meta.severity]},
        "properties": {
            "tags": ["kai-gitops", area, meta.scope.value],
            "precision": "very-high",
            "problem.severity": meta.severity.value if meta.severity is not Severity.INFO else "recommendation",
        },
    }


def _help_markdown(meta: RuleMeta) -> str:
    # A rule known only by its findings (a user policy's, a merged report's) is described by their message,
    # which carries queue and gate names: escaped like every other user text reaching Markdown.
    return (
        f"{escape_markdown(meta.rationale)}\n\n**Remedy:** {escape_markdown(meta.remediation)}\n\n"
        f"*Source: {escape_markdown(meta.source)}*"
    )


def _run(report: Report, name: str | None, results: list[Sarif], cluster: ClusterReport | None, driver: Sarif) -> Sarif:
    category = f"kai-gitops/{report.command}/" + (f"{name}/" if name else "")
    invocation: Sarif = {"executionSuccessful": True}
    if len(results) > MAX_RESULTS:
        results = sorted(results, key=lambda r: ("suppressions" in r, _RANK[str(r["level"])]))
        left_out = len(results) - MAX_RESULTS
        results = results[:MAX_RESULTS]
        invocation["toolExecutionNotifications"] = [
            {
                "level": "warning",
                "message": {
                    "text": (
                        f"{left_out} results left out, waived and least severe first: code scanning accepts "
                        f"{MAX_RESULTS} per run. "
                        "The JSON report (-o json) has every finding."
                    )
                },
            }
        ]
    run: Sarif = {
        "tool": {"driver": driver},
        "automationDetails": {"id": category},
        "columnKind": "unicodeCodePoints",  # the YAML reader counts characters, not UTF-16 units
        "results": results,
        "invocations": [invocation],
    }
    if cluster is not None and cluster.git and cluster.git.commit:
        run["properties"] = {"commit": cluster.git.commit, "ref": cluster.git.ref}
    return run


def _result(f: Finding, cluster: ClusterReport | None, index: dict[str, int]) -> Sarif:
    result: Sarif = {
        "ruleId": f.rule_id,
        "ruleIndex": index[f.rule_id],
        "level": _LEVEL[f.severity.value],
        "message": {"text": _message(f)},
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": {"problem": problem_id(f), "cluster": f.cluster, "kind": f.kind.value},
    }
    location = _physical(f.location) if f.location else _anchor(cluster)
    if location:
        result["locations"] = [location | _logical(f)]
    elif f.subject:
        result["locations"] = [_logical(f)]
    if f.waived_by:
        result["suppressions"] = [{"kind": "external", "status": "accepted", "justification": f.waived_by}]
    return result


def _message(f: Finding) -> str:
    text = f.message
    if f.location is None and f.subject is not None:
        text += f" (live object {f.subject}; not in a file)"
    if f.fix and f.fix.command:
        text += f"\nFix: {f.fix.command}"
    elif f.fix and f.fix.description:
        text += f"\nFix: {f.fix.description}"
    return text


def _physical(location: Location) -> Sarif:
    # a URI reference: a path's space, '#' or '%' would otherwise be read as the end or an escape
    uri = quote(location.file, safe="/")
    physical: Sarif = {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}}
    if location.line is not None:
        region: dict[str, int] = {"startLine": location.line, "startColumn": location.column or 1}
        if location.end_line is not None and location.end_column is not None:
            region |= {"endLine": location.end_line, "endColumn": location.end_column}
        physical["region"] = region
    return {"physicalLocation": physical}


def _anchor(cluster: ClusterReport | None) -> Sarif | None:
    """Live-only findings: the cluster's entry in kai-gitops.yaml, where the cluster is declared."""
    if cluster is None or cluster.anchor is None:
        return None
    return _physical(cluster.anchor)


def _logical(f: Finding) -> Sarif:
    if f.subject is None:
        return {}
    return {
        "logicalLocations": [
            {"fullyQualifiedName": f"{f.cluster}/{f.subject}", "name": f.subject.name, "kind": "object"}
        ]
    }


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("kai-gitops")
    except PackageNotFoundError:  # running from a source tree without an install
        return "0.0.0"
