"""Waivers: reviewed exceptions kept in the GitOps repo (`kai-gitops-waivers.yaml`), each with an expiry.

    waivers:                       # or the list itself at the top level
      - rule: NVCA-P-001           # rule id; shell-style wildcards allowed (NVCA-P-*)
        subject: Pod/nvcf-fn/fn-0  # Kind/name, Kind/namespace/name, wildcards, or "*" (also matches no subject)
        cluster: prod-addon        # optional; default every cluster
        reason: legacy function, redeploy planned with the Q3 migration
        owner: team-nvcf@example.com
        expires: 2026-12-31        # YYYY-MM-DD; after this day the waiver stops applying

One run may check several clusters, so applying and judging are separate: `apply_waivers` marks one
cluster's findings and returns the indexes of the waivers it used; after the last cluster the caller
passes the union of those indexes to `waiver_findings` once, which reports each expired waiver (KAI-W-001)
and each waiver that matched nothing in any cluster (KAI-W-002) a single time, as repository findings.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import date

from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONObject, JSONValue, expect_object
from reconciler.core.redact import redact_free_text
from reconciler.core.refs import Location, ObjectRef, YamlPath
from reconciler.findings.builtin_rules import WAIVER_EXPIRED, WAIVER_UNUSED
from reconciler.findings.finding import REPOSITORY, Action, Finding, Fix, Kind
from reconciler.findings.rules import RuleMeta
from reconciler.yamlio.document import YamlDoc, load_document

WAIVERS_FILE = "kai-gitops-waivers.yaml"
REQUIRED = ("rule", "subject", "reason", "owner", "expires")
ALLOWED = (*REQUIRED, "cluster")


@dataclass(frozen=True)
class Waiver:
    rule: str
    subject: str
    reason: str
    owner: str
    expires: date
    cluster: str | None
    file: str
    line: int
    index: int

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @property
    def label(self) -> str:
        return f"{self.where} ({self.owner}, until {self.expires.isoformat()}): {self.reason}"

    def applies_to_cluster(self, cluster: str | None) -> bool:
        return self.cluster is None or cluster is None or self.cluster == cluster

    def matches(self, finding: Finding) -> bool:
        return (
            self.applies_to_cluster(finding.cluster)
            and fnmatch.fnmatchcase(finding.rule_id, self.rule)
            and subject_matches(self.subject, finding.subject)
        )


def subject_matches(pattern: str, subject: ObjectRef | None) -> bool:
    if pattern == "*":
        return True
    return subject is not None and fnmatch.fnmatchcase(str(subject), pattern)


def load_waivers(text: str | bytes, file_name: str = WAIVERS_FILE) -> list[Waiver]:
    """Parse and validate; every problem is one UserError naming file:line (bytes must be UTF-8).

    Read with the project's YAML reader, so duplicate keys, alias bombs and bad encodings get the same
    one-line errors as every other file in the repo.
    """
    doc = load_document(text, file_name)
    base = waiver_list_path(doc)
    items = doc.get(base)  # a list, or nothing: waiver_list_path says so
    return [parse_waiver(_Item(doc, (*base, i)), i) for i in range(len(items) if isinstance(items, list) else 0)]


def waiver_list_path(doc: YamlDoc) -> YamlPath:
    """Where the list is: the document itself, or its `waivers:` key."""
    data = doc.data
    if isinstance(data, dict) and data:
        extra = [k for k in data if k != "waivers"]
        if extra:
            raise UserError(f"unknown top-level key {extra[0]!r} (expected `waivers:`)", where=_line(doc, (extra[0],)))
        path: YamlPath = ("waivers",)
    else:
        path = ()
    value = doc.get(path)
    if value not in (None, {}) and not isinstance(value, list):
        raise UserError("waivers must be a list of {rule, subject, reason, owner, expires}", where=_line(doc, path))
    return path


@dataclass(frozen=True)
class _Item:
    doc: YamlDoc
    path: YamlPath

    @property
    def value(self) -> JSONValue:
        return self.doc.get(self.path)

    @property
    def fields(self) -> JSONObject:
        """The waiver's keys, once parse_waiver has checked it is a mapping."""
        return expect_object(self.value, self.where())

    def where(self, key: str | None = None) -> str:
        return _line(self.doc, self.path if key is None else (*self.path, key))


def _line(doc: YamlDoc, path: YamlPath) -> str:
    return f"{doc.file}:{doc.locate(path).line}"


def parse_waiver(item: _Item, index: int) -> Waiver:
    value = item.value
    if not isinstance(value, dict):
        raise UserError(f"waiver {index + 1} must be a mapping with {', '.join(REQUIRED)}", where=item.where())
    unknown = [k for k in value if k not in ALLOWED]
    if unknown:
        raise UserError(
            f"waiver {index + 1}: unknown key {unknown[0]!r} (allowed: {', '.join(ALLOWED)})",
            where=item.where(unknown[0]),
        )
    missing = [k for k in REQUIRED if value.get(k) in (None, "")]
    if missing:
        raise UserError(f"waiver {index + 1}: missing {', '.join(missing)}", where=item.where())
    # The reason and the owner are free text every output quotes (the waived finding, KAI-W-001/002, the job
    # summary): a credential pasted into them is masked here, as it is read, like any free text from Git.
    return Waiver(
        rule=text_field(item, "rule", index),
        subject=subject_field(item, index),
        reason=redact_free_text(text_field(item, "reason", index)),
        owner=redact_free_text(text_field(item, "owner", index)),
        expires=date_field(item, index),
        cluster=cluster_field(item, index),
        file=item.doc.file,
        line=item.doc.locate(item.path).line or 1,
        index=index,
    )


def cluster_field(item: _Item, index: int) -> str | None:
    value = item.fields.get("cluster")
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise UserError(
            f"waiver {index + 1}: cluster must be a cluster name (a string), got {yaml_type(value)}",
            where=item.where("cluster"),
            hint="quote it if the name looks like a number",
        )
    return value.strip()


def yaml_type(value: JSONValue) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return f"the number {value}"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__


def text_field(item: _Item, key: str, index: int) -> str:
    value = item.fields[key]
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"waiver {index + 1}: {key} must be a non-empty string", where=item.where(key))
    return value.strip()


def subject_field(item: _Item, index: int) -> str:
    value = item.fields["subject"]
    if isinstance(value, dict):
        kind, name, ns = value.get("kind"), value.get("name"), value.get("namespace")
        if not isinstance(kind, str) or not isinstance(name, str):
            raise UserError(f"waiver {index + 1}: subject needs kind and name", where=item.where("subject"))
        return f"{kind}/{ns}/{name}" if ns else f"{kind}/{name}"
    text = text_field(item, "subject", index)
    if text != "*" and "/" not in text:
        raise UserError(
            f'waiver {index + 1}: subject {text!r} must be Kind/name, Kind/namespace/name or "*"',
            where=item.where("subject"),
        )
    return text


def date_field(item: _Item, index: int) -> date:
    value = item.fields["expires"]
    try:
        return date.fromisoformat(str(value))  # the YAML reader keeps timestamps as their text
    except ValueError:
        raise UserError(
            f"waiver {index + 1}: expires {value!r} is not a date YYYY-MM-DD", where=item.where("expires")
        ) from None


def apply_waivers(
    findings: Iterable[Finding], waivers: list[Waiver], today: date, *, cluster: str | None = None
) -> tuple[list[Finding], set[int]]:
    """Mark the findings of one cluster waived; return them with the indexes of the waivers that matched.

    `cluster` is the cluster these findings belong to (default: the first finding's); a waiver scoped to
    another cluster, or expired on `today`, does not apply. A finding already waived keeps its waiver.
    Nothing is reported about the waivers themselves: that is `waiver_findings`, once per run.
    """
    findings = list(findings)
    run_cluster = cluster or next((f.cluster for f in findings), None)
    active = [w for w in waivers if w.applies_to_cluster(run_cluster) and w.expires >= today]
    used: set[int] = set()
    out = []
    for f in findings:
        waiver = next((w for w in active if f.waived_by is None and w.matches(f)), None)
        if waiver:
            used.add(waiver.index)
        out.append(replace(f, waived_by=waiver.label) if waiver else f)
    return out, used


def waiver_findings(
    waivers: list[Waiver], used: Collection[int], today: date, *, clusters: Collection[str] | None = None
) -> list[Finding]:
    """The run's verdict on the waivers file: one KAI-W-001 (warning) per expired waiver and one KAI-W-002
    (info) per unexpired waiver whose index is not in `used` (the union over every cluster checked).

    `clusters`: the clusters this run checked, when it did not check them all (`--cluster`); a waiver
    scoped to another cluster is then neither reported expired nor unused. Findings carry the cluster
    "(repository)" and point at the waiver's file:line.
    """
    out = []
    for w in waivers:
        if clusters is not None and w.cluster is not None and w.cluster not in clusters:
            continue
        if w.expires < today:
            out.append(waiver_finding(w, WAIVER_EXPIRED, expired_message(w)))
        elif w.index not in used:
            out.append(waiver_finding(w, WAIVER_UNUSED, unused_message(w)))
    return out


def expired_message(w: Waiver) -> str:
    return (
        f"waiver for {w.rule} on {w.subject} (owner {w.owner}) expired on {w.expires.isoformat()}; "
        "its findings are reported again. Fix them, or renew the waiver with a new reason and date"
    )


def unused_message(w: Waiver) -> str:
    where = f"in cluster {w.cluster}" if w.cluster else "in any cluster checked"
    return (
        f"waiver for {w.rule} on {w.subject} (owner {w.owner}) matches no finding {where}; "
        "remove it if the problem is fixed"
    )


def waiver_finding(w: Waiver, rule: RuleMeta, message: str) -> Finding:
    return rule.finding(
        Kind.VIOLATION,
        message,
        REPOSITORY,
        location=Location(w.file, w.line, None, (w.index,)),
        fix=Fix(Action.NONE, f"Edit {w.where}: renew, or delete the waiver."),
        # `report merge` needs the scope: an unscoped waiver is unused only if no shard used it.
        extra={"waiver": {"index": w.index, "cluster": w.cluster}},
    )
