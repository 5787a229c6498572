"""Files replaced whole, never seen half-written: the one way kai-gitops writes an output file.

A temporary file in the target's directory (a rename is atomic only within one filesystem) is written,
fsynced (so a crash right after the rename cannot leave an empty file under the target's name), given its
mode, then renamed over the target. On any failure the temporary file is removed and the target is left
as it was.

Only a regular file (or a name not yet taken) is replaced. A stream is written in place, as a shell's `>`
would: a character device (`/dev/null`, a terminal), a FIFO, and the process's own descriptors
(`/dev/stdout`, `/dev/stderr`, `/dev/fd/N`), whatever they are open on; renaming over one would put a
regular file where the device was (as root, over the machine's `/dev/null`). Anything else that is not a
regular file (a directory, a socket, a block device) is refused before a byte is written.

The caller chooses the mode, because who reads the file differs:

    reports (-o FMT=PATH)        new_file_mode(): as readable as any file the user creates
    plans (--plan-out)           0600: a plan names the cluster's API server and its objects
    snapshots (snapshot -o)      0600: a snapshot describes a cluster
    metrics (--metrics-file)     0644: node-exporter reads it as another user
    policy bundles               0644: policies and their data hold no secret; their ConfigMap is world-readable
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import sys
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from reconciler.core.errors import UserError

OWNER_ONLY = 0o600
WORLD_READABLE = 0o644

# The process's own descriptors: written through the descriptor itself, because opening the path again
# would truncate a file stdout is redirected to, and cannot open a socket (a systemd journal stream).
_OWN_DESCRIPTOR = re.compile(
    r"/dev/(?:std(?P<std>out|err)|fd/(?P<fd>[0-9]+))|/proc/(?:self|thread-self)/fd/"
    r"(?P<proc>[0-9]+)"
)
_STD = {"out": 1, "err": 2}
_MAX_LINKS = 40  # as the kernel's own limit on a chain of symbolic links
_REFUSED = ((stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"), (stat.S_ISBLK, "a block device"))


def _own_descriptor(path: Path) -> int | None:
    """The descriptor `path` names (`/dev/stdout` → 1), following symbolic links that lead to one."""
    text = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        match = _OWN_DESCRIPTOR.fullmatch(text)
        if match:
            return _STD[match["std"]] if match["std"] else int(match["fd"] or match["proc"])
        if not os.path.islink(text):
            return None
        text = os.path.normpath(os.path.join(os.path.dirname(text), os.readlink(text)))
    return None


def _is_stream(mode: int) -> bool:
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode)


def _refuse(mode: int) -> OSError:
    kind = next((name for test, name in _REFUSED if test(mode)), "not a regular file")
    number = errno.EISDIR if stat.S_ISDIR(mode) else errno.EINVAL
    return OSError(number, f"is {kind}, not a file")


def held_descriptor(path: str | Path) -> int | None:
    """The descriptor of this process that `path` names (`/dev/stdin` → 0, the `/dev/fd/63` of a shell's
    `<(command)`), or None for any other path."""
    return _own_descriptor(Path(path))


def names_stdout(path: str | Path) -> bool:
    """`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`, or a symbolic link to one: this process's stdout."""
    return _own_descriptor(Path(path)) == 1


def writes_in_place(path: str | Path) -> bool:
    """True when `path` is a stream written in place (a device, a FIFO, /dev/stdout); False when it is a
    regular file, or no file yet, that a write replaces. Raises OSError for a target that is neither."""
    if _own_descriptor(Path(path)) is not None:
        return True
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISREG(mode):
        return False
    if _is_stream(mode):
        return True
    raise _refuse(mode)


def _open_in_place(path: Path) -> int | None:
    """A descriptor to write `path` in place, or None when it is a regular file (or none) to replace."""
    if not writes_in_place(path):
        return None
    own = _own_descriptor(path)
    if own is not None:
        if own in (1, 2):  # what the process printed before goes first
            (sys.stdout if own == 1 else sys.stderr).flush()
        return os.dup(own)
    # A FIFO blocks here until a reader opens it, as a shell's `>` does.
    fd = os.open(path, os.O_WRONLY | os.O_NOCTTY | os.O_CLOEXEC)
    mode = os.fstat(fd).st_mode
    if not _is_stream(mode):  # swapped for something else since the stat
        os.close(fd)
        raise _refuse(mode) if not stat.S_ISREG(mode) else OSError(errno.EAGAIN, "changed while it was opened")
    return fd


def open_for_append(path: str | Path, mode: int) -> int:
    """A descriptor appending to the file at `path` itself (created with `mode`), never one a symbolic link
    points to: a log another user could aim elsewhere. A FIFO or character device is appended to in place."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "is a symbolic link, which is never followed") from None
        raise
    found = os.fstat(fd).st_mode
    if not (stat.S_ISREG(found) or _is_stream(found)):
        os.close(fd)
        raise _refuse(found)
    return fd


def sync(fd: int) -> None:
    """fsync a regular file; a pipe or a device has nothing to sync (and fsync refuses it)."""
    if stat.S_ISREG(os.fstat(fd).st_mode):
        os.fsync(fd)


class AtomicFile:
    """A file written in steps (a snapshot streams its items), then committed or discarded as a whole.

        with AtomicFile(path, OWNER_ONLY) as out:
            out.write(...)
            out.commit()      # leaving the block without commit() removes the temporary file

    A stream target (see the module) is written in place as the data comes, without the mode: what a
    reader already took cannot be taken back, so a discarded stream has received part of the data.

    Raises OSError; the caller words it for its users.
    """

    def __init__(self, path: str | Path, mode: int, *, text: bool = False) -> None:
        self.path = Path(path)
        self.mode = mode
        self._temp: str | None = None
        self._done = False
        in_place = _open_in_place(self.path)
        if in_place is not None:
            self._file: IO[Any] = _wrap(in_place, text)
            return
        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            self._file = _wrap(fd, text)
        except BaseException:
            os.close(fd)
            Path(temp).unlink(missing_ok=True)
            raise
        self._temp = temp

    def write(self, data: str | bytes) -> None:
        self._file.write(data)

    def commit(self) -> None:
        assert not self._done, "an AtomicFile is committed once"
        self._file.flush()
        if self._temp is None:  # written in place
            self._done = True
            self._file.close()
            return
        os.fsync(self._file.fileno())
        self._file.close()
        os.chmod(self._temp, self.mode)  # mkstemp creates 0600 whatever the umask
        os.replace(self._temp, self.path)
        self._temp = None
        self._done = True

    def discard(self) -> None:
        """Remove the temporary file (nothing after a commit); a stream is only closed."""
        self._done = True
        with contextlib.suppress(OSError):  # a stream's buffered rest is flushed here: its reader may be gone
            self._file.close()
        if self._temp is not None:
            Path(self._temp).unlink(missing_ok=True)
            self._temp = None

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.discard()


def _wrap(fd: int, text: bool) -> IO[Any]:
    return os.fdopen(fd, "w", encoding="utf-8") if text else os.fdopen(fd, "wb")


def write_atomically(path: str | Path, data: str | bytes, mode: int) -> None:
    """`data` (text as UTF-8) as the whole new content of `path`, with `mode`; raises OSError."""
    with AtomicFile(path, mode, text=isinstance(data, str)) as out:
        out.write(data)
        out.commit()


def new_file_mode() -> int:
    """0666 minus the process umask: the mode a plain open() would give a new file."""
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


def check_output_target(path: Path, option: str) -> None:
    """Refuse, before anything is read or built, a target `option` cannot write: a directory, a socket, a
    block device, a missing or read-only parent (a stream written in place needs no parent)."""
    try:
        if writes_in_place(path):
            return
    except OSError as exc:
        raise UserError(
            exc.strerror or str(exc), where=str(path), hint=f"{option} takes a file, a FIFO or a character device"
        ) from None
    if not path.parent.is_dir():
        raise UserError("the output directory does not exist", where=str(path))
    if not os.access(path.parent, os.W_OK):
        raise UserError("the output directory is not writable", where=str(path))
