"""One model for drift and policy violations, from every check, for every output."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from reconciler.core.refs import Location, ObjectRef, YamlPath, format_path
from reconciler.core.show import MAX_TEXT, truncate_text
from reconciler.findings.age import Age, format_instant
from reconciler.findings.attribution import Attribution
from reconciler.findings.drifted_field import DriftedField
from reconciler.findings.last_write import LastWrite, NoWriteFound

# The `cluster` of findings about the repository itself (waivers, policy edits), not about one cluster: no
# cluster can be called this (names are DNS labels), so it also names the outputs' repository-wide run or suite.
REPOSITORY = "(repository)"


class Severity(StrEnum):
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return {"info": 0, "warning": 1, "error": 2}[self.value]


class Kind(StrEnum):
    DRIFT = "drift"  # live differs from what Git says it should be
    VIOLATION = "violation"  # a rule is broken (in Git, in the cluster, or in NVCA's verdict)


class Action(StrEnum):
    """What a proposed fix would do, in Terraform plan terms."""

    CREATE = "create"
    UPDATE = "update"
    NONE = "none"  # reported with a command for the operator; the tool will not touch it


class EditOp(StrEnum):
    SET = "set"  # the value at `path` becomes `value` (the key is added when absent)
    APPEND = "append"  # `value` is appended to the list at `path`
    RENAME = "rename"  # the key at `path` is respelt `value` (a string), its value kept
    REMOVE = "remove"  # the list item at `path` (ending in its index) is removed; `value` is unused


@dataclass(frozen=True)
class GitEdit:
    """One change to a file in Git that fixes a finding (docs/git-hosts.md): a fix pull request is made of these.

    `doc` is the index among the file's non-empty YAML documents (queue files hold several); `path` is
    the YAML path in that document, as the reader and `Location` spell it.
    """

    file: str
    path: YamlPath
    value: Any
    op: EditOp = EditOp.SET
    doc: int = 0

    def describe(self) -> str:
        if self.op is EditOp.RENAME:
            return f"{self.file}: rename {format_path(self.path)} to {self.value!r}"
        if self.op is EditOp.REMOVE:
            return f"{self.file}: remove {format_path(self.path)}"
        verb = "append to" if self.op is EditOp.APPEND else "set"
        return f"{self.file}: {verb} {format_path(self.path)} = {self.value!r}"

    def to_dict(self) -> dict[str, Any]:
        # The path as a list: a dotted string cannot tell `a.b` from a key named "a.b".
        return {"file": self.file, "doc": self.doc, "path": list(self.path), "op": self.op.value, "value": self.value}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> GitEdit:
        return cls(raw["file"], tuple(raw["path"]), raw["value"], EditOp(raw["op"]), int(raw["doc"]))


@dataclass(frozen=True)
class Fix:
    action: Action
    description: str
    command: str | None = None  # what an operator would run (kubectl/helm), shown verbatim
    patch: dict[str, Any] | None = None  # merge patch the tool itself may apply (docs/reconcile.md#allowed-writes)
    git_edits: tuple[GitEdit, ...] = ()  # the Git change that fixes it (`--fix-git`), when there is one

    def __post_init__(self) -> None:
        # a policy's remedy and command are free text too (see Finding.__post_init__)
        object.__setattr__(self, "description", bounded_text(self.description))
        if self.command is not None:
            object.__setattr__(self, "command", bounded_text(self.command))

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action.value,
            "description": self.description,
            "command": self.command,
            "patch": self.patch,
            "git_edits": [edit.to_dict() for edit in self.git_edits],
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Fix:
        """A saved report's fix (`report merge`); reports written before git_edits existed have none."""
        return cls(
            Action(raw["action"]),
            raw["description"],
            raw.get("command"),
            raw.get("patch"),
            tuple(GitEdit.from_dict(e) for e in raw.get("git_edits") or ()),
        )


@dataclass(frozen=True)
class Finding:
    rule_id: str
    kind: Kind
    severity: Severity
    message: str
    cluster: str
    subject: ObjectRef | None = None
    location: Location | None = None  # desired value's place in Git
    desired: Any = None
    live: Any = None
    fix: Fix | None = None
    title: str = ""
    waived_by: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    changes: tuple[DriftedField, ...] = ()  # each field a drift found changed (findings/drifted_field.py)
    attribution: tuple[Attribution, ...] = ()  # who last set each drifted field (findings/attribution.py)
    last_write: LastWrite | None = None  # who last wrote the subject, from --k8s-audit-log (drift only)
    no_write_found: NoWriteFound | None = None  # the audit logs were read and hold no write to the subject
    age: Age | None = field(default=None, compare=False)  # history, not what was found (findings/age.py)

    def __post_init__(self) -> None:
        """Free text is bounded where a finding is made, so every format renders the same bounded text: a
        cluster's answer or a policy's message can be megabytes (core.show.truncate_text)."""
        for name in ("message", "title", "waived_by"):
            value = getattr(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, bounded_text(value))
        if any(isinstance(v, str) and len(v) > MAX_TEXT for v in self.extra.values()):
            object.__setattr__(
                self, "extra", {k: bounded_text(v) if isinstance(v, str) else v for k, v in self.extra.items()}
            )

    @property
    def fingerprint(self) -> str:
        """Stable across runs and line moves: rule, cluster, subject and YAML path, never line numbers."""
        parts = [
            self.rule_id,
            self.cluster,
            str(self.subject or ""),
            self.location.dotted_path() if self.location else "",
            self.location.file if self.location else "",
        ]
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]

    def redacted(self) -> Finding:
        """This finding with every text it carries judged word by word (the subject's name too), desired, live
        and details also by key name: the net each output passes (text, SARIF, the drift issue …), whatever a
        check, a policy or the cluster put into it. The fix's patch and Git edits stay as they are: they are
        what a fix writes, not what is shown."""
        from reconciler.core.redact import redact, redact_free_text

        subject = replace(self.subject, name=redact_free_text(self.subject.name)) if self.subject else None
        fix = (
            replace(
                self.fix,
                description=redact_free_text(self.fix.description),
                command=redact_free_text(self.fix.command) if self.fix.command else None,
            )
            if self.fix
            else None
        )
        return replace(
            self,
            message=redact_free_text(self.message),
            title=redact_free_text(self.title),
            waived_by=redact_free_text(self.waived_by) if self.waived_by is not None else None,
            subject=subject,
            desired=redact(self.desired),
            live=redact(self.live),
            fix=fix,
            extra=_free_text_redacted(redact(self.extra)),
            changes=tuple(c.redacted() for c in self.changes),
            attribution=tuple(a.redacted() for a in self.attribution),
            last_write=self.last_write.redacted() if self.last_write else None,
        )

    def to_dict(self) -> dict[str, Any]:
        from reconciler.core.redact import redact, redact_free_text

        # desired/live are copied from values, the message may quote live text; the checks and the cluster
        # reader redact them, and this is the net if one does not.
        body: dict[str, Any] = {
            "rule": self.rule_id,
            "title": redact_free_text(self.title),
            "kind": self.kind.value,
            "severity": self.severity.value,
            "message": redact_free_text(self.message),
            "cluster": self.cluster,
            "subject": self.subject.to_dict() if self.subject else None,
            "location": self.location.to_dict() if self.location else None,
            "desired": redact(self.desired),
            "live": redact(self.live),
            "fix": self.fix.to_dict() if self.fix else None,
            "fingerprint": self.fingerprint,
            "waived_by": redact_free_text(self.waived_by) if self.waived_by is not None else None,
            "details": self.extra,
            **({"lastWrite": self.last_write.redacted().to_dict()} if self.last_write else {}),
            **({"noWriteFound": self.no_write_found.to_dict()} if self.no_write_found else {}),
            "firstSeen": format_instant(self.age.first_seen) if self.age else None,
        }
        if self.changes:  # a drift of fields; absent elsewhere, as in reports written before it existed
            body["changes"] = [c.redacted().to_dict() for c in self.changes]
        if self.attribution:
            body["attribution"] = [a.redacted().to_dict() for a in self.attribution]
        return body


def bounded_text(text: str) -> str:
    """`text` within MAX_TEXT characters. Text that must be cut is redacted first: the cut could fall inside a
    token, and the half left is a shape no pattern recognises when the outputs redact it later. Text that fits
    is left for the outputs to redact (`redacted()`): most text fits, and it is not judged twice."""
    if len(text) <= MAX_TEXT:
        return text
    from reconciler.core.redact import redact_free_text

    return truncate_text(redact_free_text(text))


def _free_text_redacted(value: Any) -> Any:
    """Every string judged as free text, keys and container types kept (a check's extras may hold tuples)."""
    from reconciler.core.redact import redact_free_text

    if isinstance(value, dict):
        return {k: _free_text_redacted(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_free_text_redacted(v) for v in value)
    return redact_free_text(value) if isinstance(value, str) else value


def at_or_above(findings: list[Finding], threshold: Severity) -> list[Finding]:
    return [f for f in findings if f.waived_by is None and f.severity.rank >= threshold.rank]
