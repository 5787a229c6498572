"""Policy results as Findings: the common model every output and the waiver layer work on."""

from __future__ import annotations

from collections.abc import Callable

from reconciler.checks.policy.pack import PolicyResult, YamlPath
from reconciler.core.refs import Location
from reconciler.findings.finding import Action, Finding, Fix, Kind

Locate = Callable[[str, YamlPath], Location | None]


def results_to_findings(results: list[PolicyResult], cluster: str, locate: Locate) -> list[Finding]:
    return [result_to_finding(r, cluster, locate) for r in results]


def result_to_finding(result: PolicyResult, cluster: str, locate: Locate) -> Finding:
    meta = result.rule
    # A rule that names a document but no path still points at the file (path () = document root).
    location = locate(result.doc, result.path or ()) if result.doc else None
    return meta.finding(
        Kind.VIOLATION,
        result.message,
        cluster,
        subject=result.subject,
        location=location,
        fix=Fix(Action.NONE, result.remediation or meta.remediation, command=result.fix or None),
        extra={"source": meta.source, "scope": meta.scope.value, "rationale": meta.rationale},
    )
