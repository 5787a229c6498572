"""Files replaced whole, never seen half-written: the one way kai-gitops writes an output file.

A temporary file in the target's directory (a rename is atomic only within one filesystem) is written,
fsynced (so a crash right after the rename cannot leave an empty file under the target's name), given its
mode, then renamed over the target. On any failure the temporary file is removed and the target is left
as it was.

The caller chooses the mode, because who reads the file differs:

    reports (-o FMT=PATH)        new_file_mode(): as readable as any file the user creates
    plans (--plan-out)           0600: a plan names the cluster's API server and its objects
    snapshots (snapshot -o)      0600: a snapshot describes a cluster
    metrics (--metrics-file)     0644: node-exporter reads it as another user
    policy bundles               0644: policies and their data hold no secret; their ConfigMap is world-readable
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from reconciler.core.errors import UserError

OWNER_ONLY = 0o600
WORLD_READABLE = 0o644


class AtomicFile:
    """A file written in steps (a snapshot streams its items), then committed or discarded as a whole.

        with AtomicFile(path, OWNER_ONLY) as out:
            out.write(...)
            out.commit()      # leaving the block without commit() removes the temporary file

    Raises OSError; the caller words it for its users.
    """

    def __init__(self, path: str | Path, mode: int, *, text: bool = False) -> None:
        self.path = Path(path)
        self.mode = mode
        fd, temp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            self._file: IO[Any] = os.fdopen(fd, "w", encoding="utf-8") if text else os.fdopen(fd, "wb")
        except BaseException:
            os.close(fd)
            Path(temp).unlink(missing_ok=True)
            raise
        self._temp: str | None = temp

    def write(self, data: str | bytes) -> None:
        self._file.write(data)

    def commit(self) -> None:
        assert self._temp is not None, "an AtomicFile is committed once"
        self._file.flush()
        os.fsync(self._file.fileno())
        self._file.close()
        os.chmod(self._temp, self.mode)   # mkstemp creates 0600 whatever the umask
        os.replace(self._temp, self.path)
        self._temp = None

    def discard(self) -> None:
        """Remove the temporary file (nothing after a commit)."""
        self._file.close()
        if self._temp is not None:
            Path(self._temp).unlink(missing_ok=True)
            self._temp = None

    def __enter__(self) -> AtomicFile:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.discard()


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


def check_output_target(path: Path) -> None:
    """Refuse, before anything is read or built, a target that cannot be written: a directory, a missing or
    read-only parent."""
    if path.is_dir():
        raise UserError("is a directory; give a file name", where=str(path))
    if not path.parent.is_dir():
        raise UserError("the output directory does not exist", where=str(path))
    if not os.access(path.parent, os.W_OK):
        raise UserError("the output directory is not writable", where=str(path))
