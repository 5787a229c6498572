"""Who last wrote a drifted object, from the cluster's audit log (`--k8s-audit-log`): the `lastWrite` of a finding.

The API server records the user (or the user it impersonated), user agent and source IP of every write;
kai-gitops keeps the last successful one before the run and says whose kind of identity it was, so that a
person's change stands out among the cluster's own components and the GitOps tools.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from reconciler.core.show import MAX_TEXT, truncate_text


class Identity(StrEnum):
    PERSON = "person"  # anyone on neither list: the change to look at
    SYSTEM = "system"  # the cluster's own components (system:* users, kube-system ServiceAccounts)
    GITOPS = "gitops"  # kai-gitops, Helm, the KAI operator, Argo CD, Flux and what kai-gitops.yaml adds


@dataclass(frozen=True)
class LastWrite:
    user: str
    identity: Identity
    time: str  # the write's stageTimestamp, RFC 3339, as the API server wrote it
    verb: str
    audit_id: str
    groups: tuple[str, ...] = ()
    user_agent: str | None = None
    source_ip: str | None = None
    impersonated_by: str | None = None  # the authenticated user, when `user` is the one it impersonated
    caveat: str | None = None  # what may make it not the write the live state shows (AFTER_SNAPSHOT)

    def __post_init__(self) -> None:
        """A client sends what it likes as its user agent (and an authenticator may pass long names): bounded
        like a finding's text, so every format renders the same bounded sentence."""
        for name in ("user", "user_agent", "impersonated_by", "time", "verb", "audit_id", "source_ip", "caveat"):
            value = getattr(self, name)
            if isinstance(value, str) and len(value) > MAX_TEXT:
                object.__setattr__(self, name, _bounded(value))
        if len(self.groups) > MAX_GROUPS or any(len(g) > MAX_TEXT for g in self.groups):
            object.__setattr__(self, "groups", tuple(_bounded(g) for g in self.groups[:MAX_GROUPS]))

    def to_dict(self) -> dict[str, Any]:
        return {
            "user": self.user,
            "groups": list(self.groups),
            "userAgent": self.user_agent,
            "sourceIP": self.source_ip,
            "time": self.time,
            "verb": self.verb,
            "identity": self.identity.value,
            "auditID": self.audit_id,
            "impersonatedBy": self.impersonated_by,
            "caveat": self.caveat,
        }

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> LastWrite:
        """A saved report's: each field of the type this tool writes, or TypeError (the reader's one-line error)."""
        groups = raw.get("groups") or []
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise TypeError("lastWrite.groups must be a list of strings")
        return cls(
            _text(raw, "user"),
            Identity(raw["identity"]),
            _text(raw, "time"),
            _text(raw, "verb"),
            _text(raw, "auditID"),
            tuple(groups),
            _optional(raw, "userAgent"),
            _optional(raw, "sourceIP"),
            _optional(raw, "impersonatedBy"),
            _optional(raw, "caveat"),
        )

    def redacted(self) -> LastWrite:
        """User names and user agents are whatever a client sent: free text, judged as such."""
        from reconciler.core.redact import redact_free_text

        def text(value: str | None) -> str | None:
            return redact_free_text(value) if value is not None else None

        return replace(
            self,
            user=redact_free_text(self.user),
            groups=tuple(map(redact_free_text, self.groups)),
            user_agent=text(self.user_agent),
            impersonated_by=text(self.impersonated_by),
            time=redact_free_text(self.time),
            verb=redact_free_text(self.verb),
            audit_id=redact_free_text(self.audit_id),
            source_ip=text(self.source_ip),
            caveat=text(self.caveat),
        )

    def sentence(self) -> str:
        """ "last written by alice@example.com (person) via kubectl/v1.36.0 from 10.0.0.7 at 2026-11-30 14:02 UTC"."""
        parts = [f"last {_PAST.get(self.verb, 'written')} by {self.user} ({self.identity.value})"]
        if self.impersonated_by:
            parts.append(f"impersonated by {self.impersonated_by}")
        if self.user_agent:
            parts.append(f"via {self.user_agent}")
        if self.source_ip:
            parts.append(f"from {self.source_ip}")
        parts.append(f"at {_minute(self.time)}")
        if self.caveat:
            parts.append(f"({self.caveat})")
        return " ".join(parts)

    @property
    def by_person(self) -> bool:
        return self.identity is Identity.PERSON

    def shown(self) -> str:
        """The sentence as the outputs print it: a person's change marked, so it stands out among the tools'."""
        return f"{PERSON_MARK} {self.sentence()}" if self.by_person else self.sentence()


@dataclass(frozen=True)
class NoWriteFound:
    """The audit logs were read and hold no successful write to the subject up to the cut-off: said per object, so
    that "not found" and "not read" do not look the same."""

    files: int  # how many log files were read
    until: str  # the cut-off, RFC 3339: the run's start, or when the snapshot was taken

    def to_dict(self) -> dict[str, Any]:
        return {"files": self.files, "until": self.until}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> NoWriteFound:
        files = raw.get("files")
        if not isinstance(files, int) or isinstance(files, bool) or files < 0:
            raise TypeError("noWriteFound.files must be a count")
        return cls(files, _text(raw, "until"))

    def sentence(self) -> str:
        logs = "1 audit log file" if self.files == 1 else f"{self.files} audit log files"
        return (
            f"no write to it in {logs} up to {_minute(self.until)}: it was written before the log begins, "
            "or the log does not record writes to it (docs/audit-logs.md)"
        )


PERSON_MARK = "⚠"
# A snapshot that does not say when it was taken: the log is cut at the run's start instead.
AFTER_SNAPSHOT = "the snapshot does not say when it was taken: this write may be after it"
MAX_GROUPS = 50  # groups shown of one writer; the auditID finds the rest in the log


def _bounded(text: str) -> str:
    """Redacted before it is cut: a cut inside a token leaves a half no pattern recognises (finding.bounded_text)."""
    from reconciler.core.redact import redact_free_text

    return truncate_text(redact_free_text(text)) if len(text) > MAX_TEXT else text


_PAST = {"create": "created", "delete": "deleted"}


def _text(raw: dict[str, Any], key: str) -> str:
    value = raw[key]
    if not isinstance(value, str):
        raise TypeError(f"lastWrite.{key} must be a string")
    return value


def _optional(raw: dict[str, Any], key: str) -> str | None:
    value = raw.get(key)
    return None if value is None else _text(raw, key)


def _minute(stamp: str) -> str:
    from reconciler.findings.attribution import short_time  # one way to show a time to people

    return short_time(stamp)
