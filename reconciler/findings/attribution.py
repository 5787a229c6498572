"""Who last set a drifted field: the `managedFields` entry that owns it, and for Helm the release revision.

One `Attribution` per drifted field rides on its finding (`Finding.attribution`, `attribution` in JSON);
`attribution_line` is the one sentence every output prints for it (checks/attribution.py finds them).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from reconciler.core.show import show_value

SHOWN = 10  # attribution lines a human-facing output prints per finding (a Queue has 10 fields); JSON keeps all


@dataclass(frozen=True)
class ReleaseRevision:
    """The Helm release an object belongs to (its meta.helm.sh annotations), as its release Secret says."""

    name: str
    namespace: str
    revision: int | None = None
    status: str | None = None
    last_deployed: str | None = None  # RFC 3339, as Helm writes info.last_deployed

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "namespace": self.namespace,
            "revision": self.revision,
            "status": self.status,
            "lastDeployed": self.last_deployed,
        }

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> ReleaseRevision:
        revision = raw.get("revision")
        return cls(
            str(raw["name"]),
            str(raw["namespace"]),
            revision if isinstance(revision, int) else None,
            _optional(raw.get("status")),
            _optional(raw.get("lastDeployed")),
        )


@dataclass(frozen=True)
class Attribution:
    """One drifted field and the field manager that owns it; None where managedFields does not say."""

    field: str
    manager: str | None = None
    operation: str | None = None  # Update or Apply
    subresource: str | None = None  # "" on the object itself, "status" …
    time: str | None = None  # RFC 3339: when that manager last changed what it owns
    helm_release: ReleaseRevision | None = None

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "field": self.field,
            "manager": self.manager,
            "operation": self.operation,
            "subresource": self.subresource,
            "time": self.time,
        }
        if self.helm_release is not None:
            body["helmRelease"] = self.helm_release.to_dict()
        return body

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Attribution:
        release = raw.get("helmRelease")
        return cls(
            str(raw["field"]),
            _optional(raw.get("manager")),
            _optional(raw.get("operation")),
            _optional(raw.get("subresource")),
            _optional(raw.get("time")),
            ReleaseRevision.from_dict(release) if isinstance(release, Mapping) else None,
        )

    def redacted(self) -> Attribution:
        """Manager names and release names are free text anyone with write access chose; the other fields are
        checked for their shape where they are read, and judged here too, as a saved report may hold anything."""
        release = self.helm_release
        if release is not None:
            release = replace(
                release,
                name=_free(release.name),
                namespace=_free(release.namespace),
                status=_text(release.status),
                last_deployed=_text(release.last_deployed),
            )
        return replace(
            self,
            field=_free(self.field),
            manager=_text(self.manager),
            operation=_text(self.operation),
            subresource=_text(self.subresource),
            time=_text(self.time),
            helm_release=release,
        )


def attribution_lines(entries: tuple[Attribution, ...], live: Any = None, desired: Any = None) -> list[str]:
    """A finding's attribution as the human-facing outputs print it: a line per field, SHOWN at most."""
    lines = [attribution_line(entry, live, desired) for entry in entries[:SHOWN]]
    if len(entries) > SHOWN:
        lines.append(f"and {len(entries) - SHOWN} more field(s): the JSON report names every one")
    return lines


def attribution_line(entry: Attribution, live: Any = None, desired: Any = None) -> str:
    """ "cpu.quota 0 → -1, last set by kubectl-edit (Update) 2026-11-30 14:02 UTC"; the values when the
    finding's live and desired name this field (queues, kai-config), else the field alone."""
    field = entry.field
    if isinstance(live, Mapping) and isinstance(desired, Mapping) and field in live and field in desired:
        field = f"{field} {show_value(live[field])} → {show_value(desired[field])}"
    if entry.manager is None:
        return f"{field}: no field manager owns it"
    return f"{field}, {who_set_it(entry)}"


def who_set_it(entry: Attribution) -> str:
    """ "last set by kubectl-edit (Update) 2026-11-30 14:02 UTC", with the Helm release when Helm set it."""
    if entry.manager is None:
        return "no field manager owns it"
    how = ", ".join(part for part in (entry.operation, _subresource(entry.subresource)) if part)
    line = f"last set by {entry.manager}{f' ({how})' if how else ''}"
    if entry.time:
        line += f" {short_time(entry.time)}"
    release = entry.helm_release
    if release is not None:
        revision = f" revision {release.revision}" if release.revision is not None else ""
        state = ", ".join(
            p for p in (release.status, release.last_deployed and f"deployed {short_time(release.last_deployed)}") if p
        )
        line += f" — Helm release {release.namespace}/{release.name}{revision}{f' ({state})' if state else ''}"
    return line


def short_time(stamp: str) -> str:
    """RFC 3339 as people read it, in UTC: "2026-11-30T15:02:11.5+01:00" → "2026-11-30 14:02 UTC" (Helm writes
    its local zone and nanoseconds); anything else as it is."""
    try:
        when = datetime.fromisoformat(stamp)
        return when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC") if when.tzinfo is not None else stamp
    except (ValueError, OverflowError):  # OverflowError: a valid shape past the last UTC instant
        return stamp


def _subresource(name: str | None) -> str:
    return f"subresource {name}" if name else ""


def _free(text: str) -> str:
    from reconciler.core.redact import redact_free_text

    return redact_free_text(text)


def _text(value: str | None) -> str | None:
    return _free(value) if value is not None else None


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)
