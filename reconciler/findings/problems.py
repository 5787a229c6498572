"""One problem, one entry: findings that share a subject and a fix are one problem, listing every rule.

A stale default queue is drift (KAI-D-002), a policy violation (KAI-Q-011) and NVCA's predicted verdict
(NVCA-H-002): three findings, one fix (patch that Queue's spec). People read problems (text, Markdown);
machines keep one result per rule, linked by the problem id (JSON `problem`, SARIF, Code Quality).

Two findings are one problem when they are in the same cluster, are equally waived or not, and
- name the same object and both fix it by a merge patch of that object (the tool's own patch, or a
  `kubectl patch … --type merge` command): one patch of one object fixes both; or
- name the same object, or the same YAML value when they name none, and give the same fix text.
Everything else is a problem of its own. The id is a hash of that key, so it is stable across runs and
line moves, like a finding's fingerprint.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from reconciler.findings.finding import Finding, Kind, Severity

_MERGE_PATCH = re.compile(r"^kubectl\s+(?:(?:-n|--namespace)[\s=]\S+\s+)?patch\s+\S+\s+(\S+)\s.*--type[\s=]merge\b")


@dataclass(frozen=True)
class Problem:
    id: str
    findings: tuple[Finding, ...]  # in report order: the first one leads (drift first, then by severity)

    @property
    def lead(self) -> Finding:
        return self.findings[0]

    @property
    def also(self) -> tuple[Finding, ...]:
        """The findings people read under the lead: every other one, the same rule's included (a queue's quota and
        its limit above the parent's are two findings of one rule); only a repeat of the lead's text is left out."""
        lead = self.lead
        return tuple(f for f in self.findings[1:] if (f.rule_id, f.message) != (lead.rule_id, lead.message))

    @property
    def rule_ids(self) -> list[str]:
        return list(dict.fromkeys(f.rule_id for f in self.findings))

    @property
    def severity(self) -> Severity:
        return max((f.severity for f in self.findings), key=lambda s: s.rank)

    @property
    def waived(self) -> bool:
        return self.lead.waived_by is not None

    @property
    def is_drift(self) -> bool:
        return any(f.kind is Kind.DRIFT for f in self.findings)


def problem_key(f: Finding) -> tuple[str, ...]:
    waived = "waived" if f.waived_by else "active"
    fix_text = (f.fix.command or f.fix.description) if f.fix else ""
    if f.subject is not None:
        if _patches_subject(f):
            return ("patch", f.cluster, waived, str(f.subject))
        return ("fix", f.cluster, waived, str(f.subject), fix_text or f.rule_id)
    if f.location is not None:
        return ("at", f.cluster, waived, f.location.file, f.location.dotted_path(), fix_text or f.rule_id)
    return ("alone", f.cluster, waived, f.fingerprint)


def problem_id(f: Finding) -> str:
    return hashlib.sha256("\x1f".join(problem_key(f)).encode()).hexdigest()[:16]


def group_problems(findings: Iterable[Finding]) -> list[Problem]:
    """Problems in the order of their first finding (pass findings in report order)."""
    groups: dict[str, list[Finding]] = {}
    for f in findings:
        groups.setdefault(problem_id(f), []).append(f)
    return [Problem(pid, tuple(members)) for pid, members in groups.items()]


def _patches_subject(f: Finding) -> bool:
    if f.fix is None or f.subject is None:
        return False
    if f.fix.patch is not None:
        return True
    found = _MERGE_PATCH.match(f.fix.command or "")
    return found is not None and found.group(1) == f.subject.name
