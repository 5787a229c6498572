"""JSON audit lines of an apply, to stderr or appended to --audit-log FILE.

Before each write an intent line (result `started`), after it the outcome (`applied`, `failed`), and one
line for each change not written (`already-applied`, `not-attempted`). A file kept from run to run (the
self-heal CronJob's, on a volume) is bounded by --audit-log-max-bytes: once past it, the file keeps only
the history controller-fight detection reads, the last `applied` line for each field (see trim).
Each line is written and flushed (and fsynced, for a file) at once, so even a SIGKILL between a write and
its outcome leaves the `started` line; a re-run finds the change applied (`already-applied`) or writes it,
so no change is ever applied twice.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import IO, Any, BinaryIO

import orjson

from reconciler.checks.ownership import OwnWrite
from reconciler.core.errors import UserError
from reconciler.core.files import open_for_append, sync, write_atomically
from reconciler.core.redact import redact
from reconciler.plans.applied import ChangeResult


class AuditLog:
    def __init__(
        self, path: str | None, *, plan_id: str, cluster: str, server: str, holder: str, max_bytes: int = 0
    ) -> None:
        self.holder = holder
        self._path, self._max_bytes = path, max_bytes
        self.context = {"planId": plan_id, "cluster": cluster, "server": server, "holder": holder}
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        if path:
            self._open(path)

    def _open(self, path: str) -> None:
        try:  # the file itself, never where a symbolic link planted at its name points
            self._file = os.fdopen(open_for_append(path, 0o666), "ab")
        except OSError as exc:
            raise UserError(
                f"cannot open the audit log: {exc.strerror}",
                where=path,
                hint="--audit-log takes the file itself (never a symbolic link), a FIFO or a character device",
            ) from None

    def trim(self) -> None:
        """Past --audit-log-max-bytes, rewrite the file to the last `applied` line of each field: all that the
        next run's fight detection reads (a field's last write by us, and when). Called under the Lease, before
        the first line of this run, so no other writer's lines are lost; a stream or an unbounded log is left
        as it is. The kept history grows only with the number of distinct fields ever written."""
        if self._file is None or self._path is None or self._max_bytes <= 0:
            return
        status = os.fstat(self._file.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size <= self._max_bytes:
            return
        try:
            with open(self._path, "rb") as file:
                kept = last_write_lines(file.read().splitlines(keepends=True))
            self.close()
            write_atomically(self._path, b"".join(kept), stat.S_IMODE(status.st_mode))
        except OSError as exc:
            raise UserError(
                f"cannot trim the audit log: {exc.strerror}",
                where=self._path,
                hint="the folder of --audit-log must be writable (the file is replaced)",
            ) from None
        self._open(self._path)

    def record(self, result: ChangeResult) -> None:
        change = result.change
        line: dict[str, Any] = {
            "time": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
            **self.context,
            "object": change.ref.to_dict(),
            "operation": change.operation.value,
            "fields": [{"path": list(f.path), "before": f.before, "after": f.after} for f in change.fields],
            "result": result.result.value,
            "error": result.error,
            "resourceVersion": result.resource_version,
            "previousManagers": list(result.previous_managers),
            "rules": list(change.rules),
        }
        data = orjson.dumps(redact(line)) + b"\n"
        with self._lock:
            if self._file is not None:
                self._file.write(data)
                self._file.flush()
                sync(self._file.fileno())
            else:
                sys.stderr.write(data.decode())
                sys.stderr.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def read_own_writes(path: str | None) -> tuple[OwnWrite, ...]:
    """The fields earlier runs wrote (`applied` lines) in the audit log this run appends to: how the next plan
    knows a drifted field is one kai-gitops wrote (checks/ownership.py: a controller fight). Only a regular
    file is read (a FIFO or /dev/stderr holds no history); a line cut short by a crash, or one this version
    did not write, is skipped: the log is a record, and a line it cannot read holds no write to fight over."""
    if not path:
        return ()
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return ()
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a link: not the file this run appends to
            return ()
        raise UserError(
            f"cannot read the audit log: {exc.strerror}",
            where=path,
            hint="--audit-log takes a file this user may read and append to",
        ) from None
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                return ()
            return tuple(write for line in _recent_lines(file) for write in _writes(line))
    except OSError as exc:
        raise UserError(
            f"cannot read the audit log: {exc.strerror}",
            where=path,
            hint="--audit-log takes a file this user may read and append to",
        ) from None


# The log only grows (every --apply appends): its last OWN_WRITES_TAIL bytes are read, the newest writes, which
# are the ones a fight is about (each field's last write by kai-gitops). 64 MiB is ~100,000 applied lines.
OWN_WRITES_TAIL = 64 * 1024 * 1024
_LONGEST_LINE = 1024 * 1024  # an applied line names one object's fields: longer is no line this tool wrote


def _recent_lines(file: BinaryIO) -> Iterator[bytes]:
    size = os.fstat(file.fileno()).st_size
    if size > OWN_WRITES_TAIL:
        file.seek(size - OWN_WRITES_TAIL)
        file.readline(_LONGEST_LINE)  # the line the cut fell into
    while line := file.readline(_LONGEST_LINE):
        if len(line) >= _LONGEST_LINE and not line.endswith(b"\n"):
            while (rest := file.readline(_LONGEST_LINE)) and not rest.endswith(b"\n"):
                pass  # skip the rest of an overlong line
            continue
        yield line


def last_write_lines(lines: list[bytes]) -> list[bytes]:
    """The `applied` lines that hold the last write of at least one field, in their order."""
    last: dict[tuple[str, str, str, tuple[str, ...]], int] = {}
    for index, line in enumerate(lines):
        for write in _writes(line):
            last[(write.cluster, write.kind, write.name, write.path)] = index
    keep = set(last.values())
    return [line if line.endswith(b"\n") else line + b"\n" for index, line in enumerate(lines) if index in keep]


def _writes(line: bytes) -> list[OwnWrite]:
    try:
        entry = orjson.loads(line)
        if not isinstance(entry, dict) or entry.get("result") != "applied":
            return []
        obj, when = entry["object"], datetime.fromisoformat(str(entry["time"]).replace("Z", "+00:00"))
        return [
            OwnWrite(
                str(entry["cluster"]),
                str(obj["kind"]),
                str(obj["name"]),
                tuple(str(step) for step in field["path"]),
                when.astimezone(UTC),
            )
            for field in entry["fields"]
        ]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        return []
