"""The Kubernetes API server's audit log (`--k8s-audit-log`): JSON lines of `audit.k8s.io/v1` Events, as its log
backend writes them, plain or gzip.

A log can be many GB, so it is streamed a line at a time and only the last successful write to each object asked
about is kept: memory grows with the objects asked about, never with the log. Lines that cannot be a finished
write to one of those objects are not parsed at all (the object's name, a write verb and the stage
ResponseComplete must appear in the line), which keeps a multi-GB read near the speed of the disk.

A malformed line (a log cut mid-write, a stray line from another writer) is counted and skipped, with one warning
per file naming the first: the writes around it are still the cluster's history, and dropping the whole answer
for one torn line would hide every other. A file whose first line is no audit Event is not an audit log at all
(a wrong path, a different log): that is an error, as is a file that cannot be read or a gzip stream cut short
(its lost tail would be the newest writes, the ones asked about).
"""

from __future__ import annotations

import gzip
import ipaddress
import logging
import os
import re
import stat
import zlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Any, Protocol

from reconciler.core.capped import TooDeep, load_json
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue

log = logging.getLogger("kai_gitops.audit")
API_VERSION = "audit.k8s.io/v1"
WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "apply"})
_GZIP_MAGIC = b"\x1f\x8b"
# The API server's own audit IDs are UUIDs; a client may send any Audit-ID header, which it passes on.
_AUDIT_ID = re.compile(r"[0-9A-Za-z-]{1,64}")
# An Event at the RequestResponse level carries whole objects; no KAI or Kubernetes object comes near this.
MAX_LINE = 16 * 1024 * 1024
_STAGE = b"ResponseComplete"  # a line without it holds no finished write: it is not parsed
_QUOTED_VERBS = tuple(f'"{verb}"'.encode() for verb in sorted(WRITE_VERBS))
_HINT = "pass the API server's --audit-log-path file: JSON lines of audit.k8s.io/v1 Events, plain or gzip"


class _Lines(Protocol):
    def readline(self, size: int = -1, /) -> bytes: ...


@dataclass(frozen=True)
class AuditTarget:
    """An object asked about, as an audit Event's objectRef names it; `prefix` matches names that start with
    `name` (a Helm release's Secrets, one per revision)."""

    group: str  # "" for the core API group
    resource: str  # the plural, as in the request's path
    namespace: str | None
    name: str
    prefix: bool = False

    def matches(self, ref: dict[str, Any]) -> bool:
        name = ref.get("name") or ""
        return (
            ref.get("resource") == self.resource
            and (ref.get("apiGroup") or "") == self.group
            and (ref.get("namespace") or None) == self.namespace
            and (name.startswith(self.name) if self.prefix else name == self.name)
        )


@dataclass(frozen=True)
class AuditWrite:
    """One successful write, with the identity as the API server authenticated it."""

    time: datetime
    verb: str
    audit_id: str
    user: str
    groups: tuple[str, ...]
    impersonated_user: str | None
    impersonated_groups: tuple[str, ...]
    user_agent: str | None
    source_ip: str | None
    stamp: str  # `time` as the log wrote it


def last_writes(files: Sequence[str], targets: Iterable[AuditTarget], until: datetime) -> dict[AuditTarget, AuditWrite]:
    """The last successful write to each target at or before `until`, over all `files` (in any order: rotated
    logs are compared by time, not by where they are read)."""
    wanted = tuple(targets)
    found: dict[AuditTarget, AuditWrite] = {}
    for file in files:
        _scan(file, wanted, until, found)
    return found


def check_audit_log(file: str) -> None:
    """Readable, and an audit log: its first Event read now, so a wrong path fails before the cluster is read."""
    with _open(file) as raw, _decoded(raw) as stream:
        for number, line in _lines(file, stream):
            if line.strip():
                _first_event(file, number, line.strip())
                return


def _scan(file: str, wanted: tuple[AuditTarget, ...], until: datetime, found: dict[AuditTarget, AuditWrite]) -> None:
    needles = tuple({t.name.encode() for t in wanted})
    bad = _BadLines(file)
    first = True
    with _open(file) as raw, _decoded(raw) as stream:
        for number, line in _lines(file, stream):
            text = line.strip()
            if not text:
                continue
            if first:
                _first_event(file, number, text)
                first = False
            if not (text.startswith(b"{") and text.endswith(b"}")):  # cut short, or no JSON object at all
                bad.add(number)
            elif _may_be_write(text, needles):
                event = _event(text)
                if event is None:
                    bad.add(number)
                else:
                    _keep(event, wanted, until, found, bad, number)
    bad.warn()


def _may_be_write(text: bytes, needles: tuple[bytes, ...]) -> bool:
    """Substring tests that any encoding of a finished write to an asked object passes, whatever its spacing."""
    return any(needle in text for needle in needles) and _STAGE in text and any(verb in text for verb in _QUOTED_VERBS)


def _keep(
    event: dict[str, Any],
    wanted: tuple[AuditTarget, ...],
    until: datetime,
    found: dict[AuditTarget, AuditWrite],
    bad: _BadLines,
    number: int,
) -> None:
    if not _successful_write(event):
        return
    ref = event.get("objectRef")
    if not isinstance(ref, dict) or ref.get("subresource") == "status":  # status is the controllers' report
        return
    targets = [t for t in wanted if t.matches(ref)]
    if not targets:
        return
    write = _write(event)
    if write is None:
        bad.add(number)
        return
    if write.time > until:
        return
    for target in targets:
        if target not in found or found[target].time <= write.time:
            found[target] = write


def _successful_write(event: dict[str, Any]) -> bool:
    status = event.get("responseStatus")
    code = status.get("code") if isinstance(status, dict) else None
    return (
        event.get("stage") == "ResponseComplete"
        and event.get("verb") in WRITE_VERBS
        and isinstance(code, int)
        and code < 400
    )


def _write(event: dict[str, Any]) -> AuditWrite | None:
    """The identity and time of one write; None when the Event lacks what every Event has (a user, a time)."""
    user, impersonated = event.get("user"), event.get("impersonatedUser")
    stamp = event.get("stageTimestamp") or event.get("requestReceivedTimestamp")
    if not isinstance(user, dict) or not isinstance(user.get("username"), str) or not isinstance(stamp, str):
        return None
    try:
        moment = datetime.fromisoformat(stamp)
        # The API server writes UTC with a zone; a time without one would be read in this machine's zone.
        time = moment.astimezone(UTC) if moment.tzinfo is not None else None
    except (ValueError, OverflowError):  # OverflowError: a valid shape past the last UTC instant
        return None
    if time is None:
        return None
    ips = event.get("sourceIPs") or []
    agent = event.get("userAgent")
    other = impersonated if isinstance(impersonated, dict) and isinstance(impersonated.get("username"), str) else {}
    return AuditWrite(
        time,
        str(event["verb"]),
        _audit_id(event.get("auditID")),
        user["username"],
        _strings(user.get("groups")),
        other.get("username"),
        _strings(other.get("groups")),
        agent if isinstance(agent, str) else None,
        _address(ips),
        stamp,
    )


def _audit_id(value: JSONValue) -> str:
    """The API server takes a client's Audit-ID header as it is: kept only in the shape it generates itself."""
    return value if isinstance(value, str) and _AUDIT_ID.fullmatch(value) else ""


def _address(ips: JSONValue) -> str | None:
    first = ips[0] if isinstance(ips, list) and ips else None
    try:
        return str(ipaddress.ip_address(first)) if isinstance(first, str) else None
    except ValueError:
        return None


def _strings(value: JSONValue) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _event(line: bytes) -> dict[str, Any] | None:
    """The Event a line holds; None for a line that is no JSON object, or nests deeper than MAX_JSON_DEPTH (a tenant's
    own object, written deep enough to exhaust a recursive parser)."""
    try:
        event = load_json(line)
    except (ValueError, TooDeep):  # not JSON, not UTF-8, or too deep
        return None
    return event if isinstance(event, dict) and event.get("kind") == "Event" else None


def _first_event(file: str, number: int, line: bytes) -> None:
    event = _event(line)
    if event is None or event.get("apiVersion") != API_VERSION:
        raise UserError(
            "is not a Kubernetes audit log: its first line is no audit.k8s.io/v1 Event",
            where=f"{file}:{number}",
            hint=_HINT,
        )


class _BadLines:
    def __init__(self, file: str) -> None:
        self.file, self.first, self.count = file, 0, 0

    def add(self, number: int) -> None:
        self.first, self.count = self.first or number, self.count + 1

    def warn(self) -> None:
        if self.count:
            log.warning(
                "%s:%d: %d malformed audit log line(s) skipped (not an audit.k8s.io/v1 Event); the "
                "writes they held are not counted",
                self.file,
                self.first,
                self.count,
            )


def _open(file: str) -> IO[bytes]:
    """The file, opened only when it is a regular file (or a directory, which `open` refuses by name): a pipe
    (`/dev/stdin`, `<(zcat …)`, a FIFO) can be read only once, but the log is read twice, its first line before
    the cluster is read and then whole, and gzip is told by bytes that would have to be read back."""
    try:
        mode = os.stat(file).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):  # stat, not open: opening a FIFO blocks
            raise UserError(
                "is not a regular file: pass the log's path; a pipe can be read only once",
                where=file,
                hint="decompress or copy it to a file first if it comes from a command",
            )
        return open(file, "rb")  # the caller's `with` closes it
    except OSError as exc:
        raise UserError(f"cannot read the audit log: {exc.strerror or exc}", where=file, hint=_HINT) from None


def _decoded(raw: IO[bytes]) -> AbstractContextManager[_Lines]:
    """gzip by its magic bytes, not its name: rotated logs are renamed by tools that do not ask."""
    head = raw.read(2)
    raw.seek(0)
    return gzip.GzipFile(fileobj=raw, mode="rb") if head == _GZIP_MAGIC else nullcontext(raw)


def _lines(file: str, stream: _Lines) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, each at most MAX_LINE bytes: a longer one (or a file with no line breaks) is yielded as
    its first MAX_LINE bytes, which cannot parse and count as malformed, and the rest is skipped unread."""
    number = 0
    try:
        while line := stream.readline(MAX_LINE):
            number += 1
            if len(line) == MAX_LINE and not line.endswith(b"\n"):
                _skip_rest_of_line(stream)
                line = line[:1]
            yield number, line
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        raise UserError(
            f"the gzip stream is damaged or cut short after line {number} ({exc})",
            where=file,
            hint="the newest writes are at its end: pass a complete copy",
        ) from None
    except OSError as exc:
        raise UserError(f"cannot read the audit log: {exc.strerror or exc}", where=file, hint=_HINT) from None


def _skip_rest_of_line(stream: _Lines) -> None:
    while (chunk := stream.readline(MAX_LINE)) and not chunk.endswith(b"\n"):
        pass


def run_start() -> datetime:
    return datetime.now(UTC)


def audit_log_files(path: str) -> list[str]:
    """`path` itself, or for a directory (the API server's `--audit-log-path` folder, mounted into the CronJob) the
    regular files directly in it, by name: the log and the backups it rotates to (`audit-<time>.log`, gzip with
    `--audit-log-compress`). Links and sub-folders are not followed; a folder with no file is an error."""
    try:
        if not stat.S_ISDIR(os.stat(path).st_mode):
            return [path]
        with os.scandir(path) as entries:
            files = sorted(e.path for e in entries if not e.name.startswith(".") and e.is_file(follow_symlinks=False))
    except OSError as exc:
        raise UserError(f"cannot read the audit log: {exc.strerror or exc}", where=path, hint=_HINT) from None
    if not files:
        raise UserError("is a directory with no log file in it", where=path, hint=_HINT)
    return files
