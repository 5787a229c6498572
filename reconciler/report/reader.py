"""Reports read back from their JSON (`-o json`), for `report merge`: the exact inverse of `Report.to_dict`.

`report_from_dict(report.to_dict()).to_dict() == report.to_dict()` for every report (a property test
holds it to that). Derived fields (fingerprint, summary, exitCode) are recomputed, not trusted; a report
of another schemaVersion or tool, or not a JSON object of the documented shape, is a one-line error
naming the file.
"""

from __future__ import annotations

import re
from datetime import datetime

import orjson

from reconciler.checks.nvca import Verdict
from reconciler.core.capped import MAX_JSON_DEPTH, TooDeep, line_at, load_json, read_input
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONArray, JSONObject, JSONValue, expect_object, list_at, mapping_at, objects_at
from reconciler.core.names import context_name, dns_label, object_name, require
from reconciler.core.refs import Location, ObjectRef, YamlPath, format_path
from reconciler.findings.age import Age, parse_instant
from reconciler.findings.attribution import Attribution
from reconciler.findings.builtin_rules import BY_ID as BUILTIN_RULES
from reconciler.findings.drifted_field import DriftedField, changes_from_dicts
from reconciler.findings.finding import REPOSITORY, Finding, Fix, Kind, Severity
from reconciler.findings.last_write import LastWrite, NoWriteFound
from reconciler.findings.rules import META_KEYS, RuleMeta, Scope
from reconciler.model.queues import field_path
from reconciler.report.report import SCHEMA_VERSION, ClusterReport, GitInfo, Report
from reconciler.report.shards import Shard

MAX_REPORT_BYTES = 512 * 1024 * 1024
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def load_report(file: str) -> Report:
    """A report written by `kai-gitops … -o json`, from a file (or '-' for stdin), read to MAX_REPORT_BYTES."""
    raw = read_input(file, MAX_REPORT_BYTES, "report")
    try:
        data = load_json(raw)
    except TooDeep as exc:
        raise UserError(
            f"report nests deeper than {MAX_JSON_DEPTH} levels",
            where=f"{file}:{line_at(raw, exc.offset)}",
            hint="pass files written by `kai-gitops check -o json`",
        ) from None
    except orjson.JSONDecodeError as exc:
        raise UserError(
            f"not a JSON report: {exc.msg}",
            where=f"{file}:{line_at(raw, exc.pos)}",
            hint="pass files written by `kai-gitops check -o json`",
        ) from None
    return report_from_dict(data, file)


def report_from_dict(data: JSONValue, where: str = "report") -> Report:
    if not isinstance(data, dict) or data.get("tool") != "kai-gitops":
        raise UserError(
            "not a kai-gitops JSON report", where=where, hint="pass files written by `kai-gitops check -o json`"
        )
    if data.get("schemaVersion") != SCHEMA_VERSION:
        raise UserError(
            f"report has schemaVersion {data.get('schemaVersion')!r}; this kai-gitops reads {SCHEMA_VERSION}",
            where=where,
            hint="merge reports written by the same kai-gitops version",
        )
    try:
        report = _report(data, where)
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise UserError(
            f"report does not have the documented shape ({type(exc).__name__}: {exc})",
            where=where,
            hint="pass files written by `kai-gitops … -o json`, unedited",
        ) from None
    _check_names(report, where)
    return report


def _check_names(report: Report, where: str) -> None:
    """The names a report carries, held to the rules kai-gitops.yaml and Kubernetes hold them to: an edited
    report must not put a newline or a terminal sequence into the merged report's every format. A cluster is
    named by kai-gitops.yaml in `check` (a DNS-1123 label); `diff` and `doctor` may name it after a kube
    context (`gke_project_zone_name`, an EKS ARN), which only has to be printable."""
    cluster_rule = dns_label if report.command == "check" else context_name
    for cluster in report.clusters:
        require(cluster_rule, cluster.cluster, "cluster name", where)
    for finding in [*report.repository, *(f for c in report.clusters for f in c.findings)]:
        if finding.cluster != REPOSITORY:
            require(cluster_rule, finding.cluster, "cluster name of a finding", where)
        if finding.subject is not None:
            require(object_name, finding.subject.name, "subject name of a finding", where)
            if finding.subject.namespace is not None:
                require(dns_label, finding.subject.namespace, "subject namespace of a finding", where)


def _report(data: JSONObject, where: str) -> Report:
    command = str(data["command"])
    catalog = {meta.id: meta for meta in (_meta(m) for m in objects_at(data, "rules"))}
    generated = _instant(data.get("generatedAt"))
    # diff/doctor put their one cluster's fields at the top level
    clusters = (
        [_cluster(c, catalog, generated) for c in _objects(data["clusters"], "clusters")]
        if "clusters" in data
        else [_cluster(data, catalog, generated)]
    )
    shard_raw = data.get("shard")
    shard = Shard.from_dict(shard_raw, where) if shard_raw is not None else None
    repository = [
        finding_from_dict(f, generated)
        for f in _objects(mapping_at(data, "repository").get("findings", []), "repository.findings")
    ]
    changed = data.get("changedLines")
    return Report(
        command,
        clusters,
        Severity(_text(data["failOn"])),
        repository,
        {
            f: frozenset(_line_number(n) for n in _array(lines, f"changedLines.{f}"))
            for f, lines in expect_object(changed, "changedLines").items()
        }
        if changed is not None
        else None,
        shard=shard,
        generated_at=generated,
    )


def _cluster(data: JSONObject, catalog: dict[str, RuleMeta], generated: datetime | None) -> ClusterReport:
    git = data.get("git")
    live = data.get("live")
    nvca = data.get("nvca")
    anchor = data.get("anchor")
    healthz = data.get("healthz")
    return ClusterReport(
        cluster=str(data["cluster"]),
        git=_git(expect_object(git, "git")) if git else None,
        live_source=_text(expect_object(live, "live")["source"]) if live else None,
        nvca=_verdict(expect_object(expect_object(nvca, "nvca")["kai-scheduler-queues"], "nvca")) if nvca else None,
        healthz=expect_object(healthz, "healthz") if healthz is not None else None,
        findings=[finding_from_dict(f, generated) for f in _objects(data["findings"], "findings")],
        rules=[catalog[str(rule_id)] for rule_id in list_at(data, "rulesEvaluated")],
        anchor=_location(expect_object(anchor, "anchor")) if anchor else None,
        plan_counts=_plan_counts(data.get("planCounts")),
    )


def _plan_counts(value: JSONValue) -> dict[str, int] | None:
    """The plan's counts the report was written with (diff, reconcile), so that a report read back says what it
    said; a report without them (check, doctor, or written before they existed) counts its drift findings."""
    if value is None:
        return None
    counts = expect_object(value, "planCounts")
    if set(counts) != {"create", "update", "operator"} or not all(
        isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in counts.values()
    ):
        raise TypeError("planCounts must hold the counts create, update and operator")
    return {name: int(n) for name, n in counts.items() if isinstance(n, int)}


def _git(data: JSONObject) -> GitInfo:
    return GitInfo(_text(data["repo"]), _text(data["ref"]), _optional_text(data["commit"]), bool(data["worktree"]))


def _meta(data: JSONObject) -> RuleMeta:
    """As written (a rule known only by its findings may have empty fields, which a policy's meta may not);
    severity and scope must be ones every format maps (RuleMeta refuses others)."""
    text = {key: str(data[key]) for key in META_KEYS}
    builtin = BUILTIN_RULES.get(text["id"])  # which of doctor's lists shows it is not written, but known
    return RuleMeta(
        text["id"],
        text["title"],
        Severity(text["severity"]),
        Scope(text["scope"]),
        text["rationale"],
        text["remediation"],
        text["source"],
        listed_in=builtin.listed_in if builtin else None,
    )


def _verdict(data: JSONObject) -> Verdict:
    status = data["status"]
    if status not in ("healthy", "unhealthy", "not-evaluated"):
        raise ValueError(f"unknown NVCA status {status!r}")
    return Verdict(
        status != "unhealthy",
        tuple(_text(e) for e in _array(data["errors"], "errors")),
        evaluated=status != "not-evaluated",
    )


def finding_from_dict(data: JSONObject, generated: datetime | None = None) -> Finding:
    """A finding as written; its age is measured to the report's `generatedAt` (reports written before
    `firstSeen` existed have no age)."""
    subject, location, fix = data["subject"], data["location"], data["fix"]
    first_seen = _instant(data.get("firstSeen"))
    details = dict(mapping_at(data, "details"))
    changes = changes_from_dicts(data.get("changes")) or _legacy_queue_changes(details)
    return Finding(
        rule_id=str(data["rule"]),
        kind=Kind(_text(data["kind"])),
        severity=Severity(_text(data["severity"])),
        message=str(data["message"]),
        cluster=str(data["cluster"]),
        subject=_subject(expect_object(subject, "subject")) if subject else None,
        location=_location(expect_object(location, "location")) if location else None,
        desired=data["desired"],
        live=data["live"],
        fix=Fix.from_dict(expect_object(fix, "fix")) if fix else None,
        title=str(data["title"]),
        waived_by=_optional_text(data["waived_by"]),
        extra=details,
        changes=changes,
        attribution=tuple(
            Attribution.from_dict(expect_object(a, "an attribution"))
            for a in _array(data.get("attribution") or [], "attribution")
        ),
        last_write=_last_write(data.get("lastWrite")),
        no_write_found=NoWriteFound.from_dict(expect_object(data["noWriteFound"], "noWriteFound"))
        if data.get("noWriteFound")
        else None,
        age=Age(first_seen, generated or first_seen) if first_seen else None,
    )


def _legacy_queue_changes(details: JSONObject) -> tuple[DriftedField, ...]:
    """A Queue drift's changes as reports written before `changes` held them: `details.changes`, [field, live,
    Git] each (taken out of the details, which no longer carry them). Other drifts' old `details.fields` and
    `details.paths` named fields only, for attribution, which such a report carries already."""
    legacy = details.pop("changes", None)
    if not isinstance(legacy, list):
        return ()
    return tuple(
        DriftedField(field_path(str(key)), live, want, str(key))
        for key, live, want in (_triple(item) for item in legacy)
    )


def _triple(item: JSONValue) -> tuple[JSONValue, JSONValue, JSONValue]:
    if not isinstance(item, list) or len(item) != 3:
        raise TypeError("details.changes holds [field, live, desired] triples")
    return item[0], item[1], item[2]


def _last_write(value: JSONValue) -> LastWrite | None:
    """Reports written without --k8s-audit-log, or before it existed, have none."""
    return LastWrite.from_dict(expect_object(value, "lastWrite")) if value else None


def _subject(data: JSONObject) -> ObjectRef:
    return ObjectRef(
        _text(data["apiVersion"]), _text(data["kind"]), _text(data["name"]), _optional_text(data["namespace"])
    )


def _location(data: JSONObject) -> Location:
    return Location(
        _text(data["file"]),
        _line(data["line"]),
        _line(data["column"]),
        parse_path(_text(data["path"])),
        _line(data.get("endLine")),
        _line(data.get("endColumn")),
    )


def _line(value: JSONValue) -> int | None:
    """A line or column as written: an integer or null, never text SARIF would carry."""
    return None if value is None else _line_number(value)


def _line_number(value: JSONValue) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{value!r} is not a line or column number")
    return value


def _text(value: JSONValue) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not a string")
    return value


def _optional_text(value: JSONValue) -> str | None:
    return None if value is None else _text(value)


def _instant(value: JSONValue) -> datetime | None:
    return None if value is None else parse_instant(_text(value))


def _array(value: JSONValue, what: str) -> JSONArray:
    if not isinstance(value, list):
        raise TypeError(f"{what} is a {type(value).__name__}, not a list")
    return value


def _objects(value: JSONValue, what: str) -> list[JSONObject]:
    return [expect_object(item, f"an item of {what}") for item in _array(value, what)]


def parse_path(text: str) -> YamlPath:
    """The inverse of `format_path` ("a.b[0]" → ("a", "b", 0)); a key holding '.' or '[' cannot be told
    apart from a path, so such text is kept as one part, which formats back to the same text."""
    parts: list[str | int] = []
    for match in _PATH_PART.finditer(text):
        parts.append(int(match.group(1)) if match.group(1) is not None else match.group(2))
    path = tuple(parts)
    return path if format_path(path) == text else ((text,) if text else ())
