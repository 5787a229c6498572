"""Reports read back from their JSON (`-o json`), for `report merge`: the exact inverse of `Report.to_dict`.

`report_from_dict(report.to_dict()).to_dict() == report.to_dict()` for every report (a property test
holds it to that). Derived fields (fingerprint, summary, exitCode) are recomputed, not trusted; a report
of another schemaVersion or tool, or not a JSON object of the documented shape, is a one-line error
naming the file.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import orjson

from reconciler.checks.nvca import Verdict
from reconciler.core.errors import UserError
from reconciler.core.refs import Location, ObjectRef, YamlPath, format_path
from reconciler.findings.finding import Finding, Fix, Kind, Severity
from reconciler.findings.rules import META_KEYS, RuleMeta
from reconciler.report.report import SCHEMA_VERSION, ClusterReport, GitInfo, Report
from reconciler.report.shards import Shard

MAX_REPORT_BYTES = 512 * 1024 * 1024
_PATH_PART = re.compile(r"\[(\d+)\]|\.?([^.\[]+)")


def load_report(file: str) -> Report:
    """A report written by `kai-gitops … -o json`, from a file (or '-' for stdin)."""
    try:
        raw = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
    except OSError as exc:
        raise UserError(f"cannot read the report: {exc.strerror}", where=file) from None
    if len(raw) > MAX_REPORT_BYTES:
        raise UserError(f"report is {len(raw)} bytes, over the {MAX_REPORT_BYTES} byte limit", where=file)
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        line = raw[: exc.pos].count(b"\n") + 1
        raise UserError(f"not a JSON report: {exc.msg}", where=f"{file}:{line}",
                        hint="pass files written by `kai-gitops check -o json`") from None
    return report_from_dict(data, file)


def report_from_dict(data: Any, where: str = "report") -> Report:
    if not isinstance(data, dict) or data.get("tool") != "kai-gitops":
        raise UserError("not a kai-gitops JSON report", where=where,
                        hint="pass files written by `kai-gitops check -o json`")
    if data.get("schemaVersion") != SCHEMA_VERSION:
        raise UserError(f"report has schemaVersion {data.get('schemaVersion')!r}; this kai-gitops reads "
                        f"{SCHEMA_VERSION}", where=where, hint="merge reports written by the same kai-gitops version")
    try:
        return _report(data, where)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise UserError(f"report does not have the documented shape ({type(exc).__name__}: {exc})",
                        where=where, hint="pass files written by `kai-gitops … -o json`, unedited") from None


def _report(data: dict[str, Any], where: str) -> Report:
    command = str(data["command"])
    catalog = {m["id"]: _meta(m) for m in data.get("rules") or []}
    # diff/doctor put their one cluster's fields at the top level
    clusters = [_cluster(c, catalog) for c in data["clusters"]] if "clusters" in data else [_cluster(data, catalog)]
    shard = Shard.from_dict(data["shard"], where) if data.get("shard") is not None else None
    repository = [finding_from_dict(f) for f in (data.get("repository") or {}).get("findings", [])]
    changed = data.get("changedLines")
    return Report(command, clusters, Severity(data["failOn"]), repository,
                  {f: frozenset(_line(n, optional=False) for n in lines) for f, lines in changed.items()}
                  if changed is not None else None, shard=shard)


def _cluster(data: dict[str, Any], catalog: dict[str, RuleMeta]) -> ClusterReport:
    git = data.get("git")
    live = data.get("live")
    nvca = data.get("nvca")
    anchor = data.get("anchor")
    return ClusterReport(
        cluster=str(data["cluster"]),
        git=GitInfo(git["repo"], git["ref"], git["commit"], bool(git["worktree"])) if git else None,
        live_source=live["source"] if live else None,
        nvca=_verdict(nvca["kai-scheduler-queues"]) if nvca else None,
        healthz=data.get("healthz"),
        findings=[finding_from_dict(f) for f in data["findings"]],
        rules=[catalog[rule_id] for rule_id in data.get("rulesEvaluated") or []],
        anchor=_location(anchor) if anchor else None)


def _meta(data: dict[str, Any]) -> RuleMeta:
    """As written (a rule known only by its findings may have empty fields, which a policy's meta may not);
    severity and scope must be ones every format maps (RuleMeta refuses others)."""
    return RuleMeta(**{key: str(data[key]) for key in META_KEYS})


def _verdict(data: dict[str, Any]) -> Verdict:
    status = data["status"]
    if status not in ("healthy", "unhealthy", "not-evaluated"):
        raise ValueError(f"unknown NVCA status {status!r}")
    return Verdict(status != "unhealthy", tuple(data["errors"]), evaluated=status != "not-evaluated")


def finding_from_dict(data: dict[str, Any]) -> Finding:
    subject, location, fix = data["subject"], data["location"], data["fix"]
    return Finding(
        rule_id=str(data["rule"]),
        kind=Kind(data["kind"]),
        severity=Severity(data["severity"]),
        message=str(data["message"]),
        cluster=str(data["cluster"]),
        subject=ObjectRef(subject["apiVersion"], subject["kind"], subject["name"], subject["namespace"])
        if subject else None,
        location=_location(location) if location else None,
        desired=data["desired"],
        live=data["live"],
        fix=Fix.from_dict(fix) if fix else None,
        title=str(data["title"]),
        waived_by=data["waived_by"],
        extra=dict(data.get("details") or {}),
    )


def _location(data: dict[str, Any]) -> Location:
    return Location(data["file"], _line(data["line"]), _line(data["column"]), parse_path(data["path"]),
                    _line(data.get("endLine")), _line(data.get("endColumn")))


def _line(value: Any, *, optional: bool = True) -> Any:
    """A line or column as written: an integer (or null where the field may be), never text SARIF would carry."""
    if (value is not None or not optional) and (isinstance(value, bool) or not isinstance(value, int)):
        raise ValueError(f"{value!r} is not a line or column number")
    return value


def parse_path(text: str) -> YamlPath:
    """The inverse of `format_path` ("a.b[0]" → ("a", "b", 0)); a key holding '.' or '[' cannot be told
    apart from a path, so such text is kept as one part, which formats back to the same text."""
    parts: list[str | int] = []
    for match in _PATH_PART.finditer(text):
        parts.append(int(match.group(1)) if match.group(1) is not None else match.group(2))
    path = tuple(parts)
    return path if format_path(path) == text else ((text,) if text else ())
