"""GitLab Code Quality report (the merge request widget): a JSON array of issues.

Fields per GitLab's Code Quality documentation: `description`, `check_name`, `fingerprint`, `severity`
(info, minor, major, critical, blocker) and `location.path` + `location.lines.begin`. Fingerprints are our
finding fingerprints (rule, cluster, object, YAML path, file; never line numbers), so moving a line does not
re-open an issue; GitLab needs them unique, so two findings that would share one get a numbered suffix.
Waived findings are left out: the widget has no "accepted" state and would show them as new.
A finding without a file sits on the cluster's entry in kai-gitops.yaml.

A run that stopped on an error before it had a report is one `blocker` issue, `input-error`, at the file
and line the error names (`render_error`); its fingerprint is the command, file and message (no line).
"""

from __future__ import annotations

import hashlib

import orjson

from reconciler.core.jsonvalue import JSONLike
from reconciler.findings.finding import Finding
from reconciler.findings.problems import problem_id
from reconciler.outputs.input_error import CHECK_NAME, InputError
from reconciler.report.report import ClusterReport, Report, finding_order

# Errors break scheduling or NVCA's health check; warnings are deviations; info is advice.
SEVERITY = {"error": "critical", "warning": "minor", "info": "info"}
CONFIG_FILE = "kai-gitops.yaml"


def render(report: Report, *, color: bool | None = None) -> str:
    issues: list[dict[str, JSONLike]] = []
    seen: set[str] = set()
    for cluster, f in _active(report):
        issues.append(_issue(f, cluster, seen))
    return orjson.dumps(issues, option=orjson.OPT_INDENT_2).decode() + "\n"


def render_error(error: InputError) -> str:
    location = error.location
    key = "\x1f".join((CHECK_NAME, error.command, location.file if location else "", error.message))
    issue: dict[str, JSONLike] = {
        "type": "issue",
        "description": f"{error.title}: {error.message}",
        "check_name": CHECK_NAME,
        "fingerprint": hashlib.sha256(key.encode()).hexdigest()[:32],
        "severity": "blocker",
        "location": {
            "path": location.file if location else CONFIG_FILE,
            "lines": {"begin": location.line if location and location.line else 1},
        },
        "categories": ["Bug Risk"],
        "content": {"body": f"{error.line()}\n\nNothing was checked: the run stopped at this error."},
    }
    return orjson.dumps([issue], option=orjson.OPT_INDENT_2).decode() + "\n"


def _active(report: Report) -> list[tuple[ClusterReport | None, Finding]]:
    pairs: list[tuple[ClusterReport | None, Finding]] = [
        (None, f) for f in sorted(report.repository, key=finding_order)
    ]
    for cluster in report.clusters:
        pairs.extend((cluster, f) for f in sorted(cluster.findings, key=finding_order))
    return [(c, f) for c, f in pairs if f.waived_by is None]


def _issue(f: Finding, cluster: ClusterReport | None, seen: set[str]) -> dict[str, JSONLike]:
    location = f.location or (cluster.anchor if cluster else None)
    path = location.file if location else CONFIG_FILE
    begin = location.line if location and location.line else 1
    lines: dict[str, int] = {"begin": begin}
    if location and location.end_line and location.end_line != begin:
        lines["end"] = location.end_line
    description = f"{f.rule_id} [{f.cluster}] {f.message}"
    if f.location is None and f.subject is not None:
        description += f" (live object {f.subject})"
    issue: dict[str, JSONLike] = {
        "type": "issue",
        "description": description,
        "check_name": f.rule_id,
        "fingerprint": _unique(f.fingerprint, seen),
        "severity": SEVERITY[f.severity.value],
        "location": {"path": path, "lines": lines},
        "categories": ["Bug Risk"] if f.severity.value == "error" else ["Style"],
    }
    fix = f.fix.command or f.fix.description if f.fix else None
    body = f"{f.title}\n\n{f.message}" + (f"\n\nFix: {fix}" if fix else "")
    issue["content"] = {"body": body}
    issue["problem"] = problem_id(f)  # extra field (GitLab ignores it): links the rules of one problem
    return issue


def _unique(fingerprint: str, seen: set[str]) -> str:
    candidate, n = fingerprint, 1
    while candidate in seen:
        n += 1
        candidate = hashlib.sha256(f"{fingerprint}\x1f{n}".encode()).hexdigest()[:32]
    seen.add(candidate)
    return candidate
