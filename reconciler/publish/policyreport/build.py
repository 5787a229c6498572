"""Findings as PolicyReport objects: one per subject scope, bounded in results and bytes. No I/O here.

Cluster-scoped subjects (Queues, the SchedulingShard) and findings without a subject (Git, waivers) go to
one cluster report; namespaced subjects to one report per namespace. Kyverno's users filled etcd with
report objects, so every object is bounded: at most `max_results` results and `SIZE_BUDGET` bytes of JSON
(etcd refuses 1.5 MiB); what does not fit is counted in a last result and in annotations, never dropped
silently, and `summary` always counts every finding of the scope.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import orjson

from reconciler.core.redact import redact_text
from reconciler.core.resources import CLUSTER_POLICY_REPORT, OPEN_CLUSTER_REPORT, OPEN_REPORT, POLICY_REPORT, Resource
from reconciler.findings.attribution import attribution_lines
from reconciler.findings.finding import Finding, Severity
from reconciler.plans.writable import MANAGED_BY, MANAGED_BY_LABEL
from reconciler.report.report import finding_order

SOURCE = MANAGED_BY  # the label's value, and the field manager of every write
CLUSTER_LABEL = "kai-gitops/cluster"
TOTAL_ANNOTATION = "kai-gitops/results-total"
OMITTED_ANNOTATION = "kai-gitops/results-omitted"
TRUNCATED_POLICY = "kai-gitops-report-truncated"
DEFAULT_MAX_RESULTS = 100
SIZE_BUDGET = 512 * 1024  # bytes of JSON per object: a third of etcd's 1.5 MiB request limit
MESSAGE_LIMIT = 1024  # characters of one message; the full text is in `kai-gitops diff`
PROPERTY_LIMIT = 256
NAME_LIMIT = 253  # an object name (DNS-1123 subdomain)
LABEL_VALUE_LIMIT = 63

# PolicyReport v1alpha2 and OpenReports share the result shape; their severity enums both hold these.
_SEVERITY = {Severity.ERROR: "high", Severity.WARNING: "medium", Severity.INFO: "info"}
_RESULT = {Severity.ERROR: "fail", Severity.WARNING: "warn", Severity.INFO: "warn"}


# The only kinds this tool ever deletes; see cluster.py.
REPORT_KINDS = (CLUSTER_POLICY_REPORT, POLICY_REPORT, OPEN_CLUSTER_REPORT, OPEN_REPORT)


@dataclass(frozen=True)
class ReportSettings:
    cluster: str  # kai-gitops.yaml cluster name: [a-z0-9-], of any length
    commit: str | None = None
    max_results: int = DEFAULT_MAX_RESULTS
    size_budget: int = SIZE_BUDGET


@dataclass
class Scope:
    """One report's worth of findings: the cluster (namespace None) or one namespace."""

    namespace: str | None
    findings: list[Finding] = field(default_factory=list)


def report_name(cluster: str) -> str:
    return _bounded(f"kai-gitops-{cluster}", NAME_LIMIT)


def cluster_label_value(cluster: str) -> str:
    """kai-gitops.yaml bounds a cluster name's characters, not its length; a label value holds 63."""
    return _bounded(cluster, LABEL_VALUE_LIMIT)


def managed_labels(cluster: str) -> dict[str, str]:
    return {MANAGED_BY_LABEL: SOURCE, CLUSTER_LABEL: cluster_label_value(cluster)}


def _bounded(text: str, limit: int) -> str:
    """`text` itself when it fits, else a prefix and a hash of the whole, so two long names stay apart."""
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(text.encode()).hexdigest()[:10]
    return f"{text[: limit - len(digest) - 1].rstrip('-')}-{digest}"


def scopes(findings: Iterable[Finding], *, cluster_namespaces: frozenset[str] = frozenset()) -> list[Scope]:
    """The cluster scope always (so a clean run empties it), then one per namespace with findings.

    `cluster_namespaces` are namespaces that do not exist: their findings join the cluster report, because a
    namespaced report cannot be written there and the finding (e.g. "KAI is not installed") matters most then.
    """
    by_namespace: dict[str | None, Scope] = {None: Scope(None)}
    for finding in findings:
        namespace = finding.subject.namespace if finding.subject else None
        if namespace in cluster_namespaces:
            namespace = None
        by_namespace.setdefault(namespace, Scope(namespace)).findings.append(finding)
    return [by_namespace[None], *(by_namespace[n] for n in sorted(n for n in by_namespace if n))]


def build_report(
    kind: Resource,
    scope: Scope,
    settings: ReportSettings,
    now: datetime,
    first_seen: Mapping[str, dict[str, int]] | None = None,
) -> dict[str, Any]:
    """One report object; `first_seen` maps fingerprints (and TRUNCATED_POLICY) to the timestamps an earlier
    run gave them. A result's timestamp is that, else its finding's firstSeen, else `now`."""
    stamp = _stamp(now)
    # fingerprint and message break ties (the fingerprint leaves the message out), so the arrival order of
    # findings never rewrites an unchanged report
    ordered = sorted(
        scope.findings, key=lambda f: (f.waived_by is not None, finding_order(f), f.fingerprint, f.message)
    )
    earlier = first_seen or {}
    results = [_result(f, settings, earlier.get(f.fingerprint) or _seen(f, stamp)) for f in ordered]
    body = _skeleton(kind, scope, settings, len(results))
    kept = _within_bounds(body, results, settings)
    omitted = len(results) - len(kept)
    if omitted:
        # keeps the time the report was first truncated, so an unchanged truncated report is not rewritten
        since = (first_seen or {}).get(TRUNCATED_POLICY, stamp)
        kept.append(_truncation_result(omitted, len(results), settings, since))
        body["metadata"]["annotations"][OMITTED_ANNOTATION] = str(omitted)
    body["results"] = kept
    body["summary"] = _summary(ordered)
    return body


def _stamp(moment: datetime) -> dict[str, int]:
    return {"seconds": int(moment.timestamp()), "nanos": moment.microsecond * 1000}


def _seen(finding: Finding, now: dict[str, int]) -> dict[str, int]:
    return _stamp(finding.age.first_seen) if finding.age else now


def _skeleton(kind: Resource, scope: Scope, settings: ReportSettings, total: int) -> dict[str, Any]:
    metadata: dict[str, Any] = {
        "name": report_name(settings.cluster),
        "labels": managed_labels(settings.cluster),
        "annotations": {TOTAL_ANNOTATION: str(total)},
    }
    if kind.namespaced:
        metadata["namespace"] = scope.namespace
    body: dict[str, Any] = {"apiVersion": kind.api_version, "kind": kind.kind, "metadata": metadata}
    if kind.group == OPEN_REPORT.group:
        body["source"] = SOURCE
        body["configuration"] = {"limits": {"maxResults": settings.max_results}}
    return body


def _within_bounds(
    body: dict[str, Any], results: list[dict[str, Any]], settings: ReportSettings
) -> list[dict[str, Any]]:
    """The longest prefix that fits both bounds, leaving room for the truncation result if one is needed."""
    if len(results) <= settings.max_results and _size(body, results) <= settings.size_budget:
        return list(results)
    room = (
        settings.size_budget
        - _size(body, [])
        - _size_of(_truncation_result(10**9, 10**9, settings, {"seconds": 0, "nanos": 0}))
        - 64
    )
    kept: list[dict[str, Any]] = []
    for result in results[: max(settings.max_results - 1, 0)]:
        room -= _size_of(result) + 1
        if room < 0:
            break
        kept.append(result)
    return kept


def _size(body: dict[str, Any], results: list[dict[str, Any]]) -> int:
    return len(orjson.dumps({**body, "results": results, "summary": _summary([])}))


def _size_of(value: Any) -> int:
    return len(orjson.dumps(value))


def _result(finding: Finding, settings: ReportSettings, stamp: dict[str, int]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "policy": finding.rule_id,
        "rule": _clip(finding.title or finding.rule_id, PROPERTY_LIMIT),
        "category": finding.kind.value,
        "result": "skip" if finding.waived_by else _RESULT[finding.severity],
        "severity": _SEVERITY[finding.severity],
        "message": _clip(redact_text(finding.message), MESSAGE_LIMIT),
        "timestamp": dict(stamp),
        "source": SOURCE,
        "scored": True,
        "properties": _properties(finding, settings),
    }
    if finding.subject:
        ref = finding.subject
        resource = {"apiVersion": ref.api_version, "kind": ref.kind, "name": ref.name}
        if ref.namespace:
            resource["namespace"] = ref.namespace
        result["resources"] = [resource]
    return result


def _properties(finding: Finding, settings: ReportSettings) -> dict[str, str]:
    """Strings only: both CRDs declare `properties` as a map of strings."""
    props = {"fingerprint": finding.fingerprint, "cluster": finding.cluster}
    if settings.commit:
        props["commit"] = settings.commit
    if finding.location:
        props["file"] = finding.location.file
        if finding.location.line is not None:
            props["line"] = str(finding.location.line)
        if finding.location.path:
            props["path"] = finding.location.dotted_path()
    if finding.waived_by:
        props["waivedBy"] = finding.waived_by
    if finding.fix and finding.fix.command:
        props["fix"] = finding.fix.command
    if finding.attribution:
        redacted = tuple(a.redacted() for a in finding.attribution)  # manager names are free text
        props["attribution"] = "; ".join(attribution_lines(redacted, finding.live, finding.desired))
    return {k: _clip(redact_text(v), MESSAGE_LIMIT if k == "attribution" else PROPERTY_LIMIT) for k, v in props.items()}


def _truncation_result(omitted: int, total: int, settings: ReportSettings, stamp: dict[str, int]) -> dict[str, Any]:
    return {
        "policy": TRUNCATED_POLICY,
        "rule": "report-bounds",
        "category": "report",
        "result": "warn",
        "severity": "info",
        "timestamp": dict(stamp),
        "source": SOURCE,
        "scored": False,
        "message": (
            f"{omitted} of {total} results are not listed: a report keeps at most "
            f"{settings.max_results} results (--report-max-results) and {settings.size_budget} "
            "bytes; `summary` counts all of them and `kai-gitops diff` lists them"
        ),
        "properties": {"omitted": str(omitted), "total": str(total), "maxResults": str(settings.max_results)},
    }


def _summary(findings: list[Finding]) -> dict[str, int]:
    summary = {"pass": 0, "fail": 0, "warn": 0, "error": 0, "skip": 0}
    for finding in findings:
        summary["skip" if finding.waived_by else _RESULT[finding.severity]] += 1
    return summary


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
