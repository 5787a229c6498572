"""What a rule is: id, title, severity, scope, rationale, remedy and source, for a Rego `meta` and a built-in rule.

A finding of a rule takes its id, title and severity from the rule's `RuleMeta` (`RuleMeta.finding`), so
each of these facts is written once: in the Rego `meta`, or in builtin_rules.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from reconciler.core.errors import UserError
from reconciler.findings.finding import Finding, Kind, Severity


class Scope(StrEnum):
    STATIC = "static"  # judged on Git alone (`check`)
    LIVE = "live"  # needs the cluster (`diff`, `doctor`, `reconcile`)


class DoctorList(StrEnum):
    """Which of doctor's lists of checks shows a rule, passed (✓) or not (✗)."""

    KAI = "kai"  # kai-config and what the operator deployed (docs/policies.md#kai-config-health)
    GANGS = "gangs"  # stuck gangs and topology prerequisites (docs/policies.md#gangs-and-topology)


# As messages list them: the most severe first.
SEVERITIES = tuple(s.value for s in sorted(Severity, key=lambda s: -s.rank))
SCOPES = tuple(s.value for s in Scope)
META_KEYS = ("id", "title", "severity", "scope", "rationale", "remediation", "source")


@dataclass(frozen=True)
class RuleMeta:
    id: str
    title: str
    severity: Severity
    scope: Scope
    rationale: str
    remediation: str
    source: str
    listed_in: DoctorList | None = None  # a built-in rule's; not part of a Rego `meta` nor of a saved report
    # A built-in drift rule's: text and Markdown show its field changes one a line, live → Git, in place of its
    # message (a Queue's numbers); the others' messages name their fields already.
    lists_changes: bool = False

    def __post_init__(self) -> None:
        # Rego metas and saved reports spell both as strings; held as the enums (ValueError if neither).
        object.__setattr__(self, "severity", Severity(self.severity))
        object.__setattr__(self, "scope", Scope(self.scope))

    @classmethod
    def from_dict(cls, raw: object, where: str) -> RuleMeta:
        if not isinstance(raw, dict):
            raise UserError("rule `meta` must be an object", where=where)
        missing = [k for k in META_KEYS if not isinstance(raw.get(k), str) or not raw.get(k)]
        if missing:
            raise UserError(f"rule `meta` lacks non-empty string field(s): {', '.join(missing)}", where=where)
        if raw["severity"] not in SEVERITIES:
            raise UserError(f"rule {raw['id']}: severity {raw['severity']!r} is not one of {SEVERITIES}", where=where)
        if raw["scope"] not in SCOPES:
            raise UserError(f"rule {raw['id']}: scope {raw['scope']!r} is not one of {SCOPES}", where=where)
        return cls(**{k: raw[k] for k in META_KEYS})

    def finding(self, kind: Kind, message: str, cluster: str, **details: Any) -> Finding:
        """A finding of this rule: id, title and severity from here, the rest (subject, fix, …) from the check."""
        return Finding(self.id, kind, self.severity, message, cluster, title=self.title, **details)
