"""Files of a Git subtree on disk: every name proven to be a plain file name before anything is written, and
everything written inside a fresh private directory the tool creates and removes.

A tree object can hold any name (`..`, `/etc/passwd`, `a/b`, `CON`) and any mode: `git add` never writes such
a tree, but `git mktree` or a library can, and a plain `git push` to a repository with default settings
accepts it. So the walk reads each tree object raw (libgit2 reports modes normalised, and looks names up
assuming Git's order) and refuses, with one line naming the ref and the path: a name that is not one plain
path component, two names that one case-insensitive or Unicode-normalising file system would merge, a
symbolic link, a submodule (gitlink), a mode Git never writes, an entry whose object is not what its mode
says, and a subtree too deep or too large to be a chart or a policy folder. A `WorkArea` then writes the
files, each opened relative to its parent directory's descriptor, never following a link and never
replacing a file (O_NOFOLLOW, O_EXCL), and checks each name again: it also takes `--worktree` files.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from reconciler.core.errors import UserError

if TYPE_CHECKING:
    import pygit2

FILE_MODES = frozenset({0o100644, 0o100755, 0o100664})  # 100664: what Git wrote before 2005; fsck accepts it
TREE_MODE = 0o040000
SYMLINK_MODE = 0o120000
GITLINK_MODE = 0o160000
MAX_DEPTH = 64  # directories below the walked one
MAX_ENTRIES = 100_000  # entries taken (a tree may name one subtree many times: a bomb grows exponentially)
MAX_TOTAL_BYTES = 256 * 1024 * 1024
_NAME_MAX = 255  # bytes of one file name (Linux, macOS)
_DRIVE = re.compile(r"^[A-Za-z]:")
_DEVICES = frozenset(
    {
        "CON",
        "PRN",
        "AUX",
        "NUL",
        "CONIN$",
        "CONOUT$",
        *(f"{port}{n}" for port in ("COM", "LPT") for n in (*"123456789", "¹", "²", "³")),
    }
)

SYMLINK_HINT = "commit the file itself (or pass --worktree to follow links inside the repository)"
_NAME_HINT = "kai-gitops writes only plain file names; rename or remove the entry (git mv, or git rm --cached)"


def symlink_at_ref(ref: str) -> str:
    """A link's content is its target's path, not the file: refused, as `read` refuses one, never skipped."""
    return f"is a symbolic link at ref {ref}; links are not followed at a ref"


def name_problem(name: str) -> str | None:
    """Why `name` cannot be one file name in a directory the tool writes, on any system; None when it can."""
    if name in ("", ".", ".."):
        return "is not a file name (empty, '.' or '..')"
    if name.startswith(("/", "\\")):
        return "is an absolute path"
    if "/" in name or "\\" in name:
        return "holds a path separator"
    if "\0" in name:
        return "holds a NUL character"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        return "holds a control character"
    if any("\udc80" <= c <= "\udcff" for c in name):  # a byte decoding left as it was (surrogateescape)
        return "is not valid UTF-8"
    if _DRIVE.match(name):
        return "starts with a Windows drive letter"
    if name.split(".")[0].rstrip(" ").upper() in _DEVICES:
        return "is a Windows device name"
    if len(name.encode("utf-8", "surrogateescape")) > _NAME_MAX:
        return f"is longer than {_NAME_MAX} bytes"
    return None


def folded(name: str) -> str:
    """The name as a case-insensitive, Unicode-normalising file system (macOS, Windows) compares it."""
    return unicodedata.normalize("NFC", name).casefold()


def _shown(name: str) -> str:
    """The name as an error shows it: control characters and undecodable bytes escaped, at most 80 characters."""
    shown = repr(name)[1:-1]
    return shown if len(shown) <= 80 else shown[:60] + "…"


def _under(top: str, name: str) -> str:
    return f"{top}/{name}" if top else name


# -- reading a subtree at a ref ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Entry:
    mode: int
    name: str
    oid: pygit2.Oid


def walk_subtree(
    repo: pygit2.Repository, tree_id: pygit2.Oid, top: str, suffix: str, ref: str
) -> Iterator[tuple[str, bytes]]:
    """(repo path, content) of every file under the tree `tree_id` (at repo path `top`) whose name ends in
    `suffix`, in path order; every subtree is walked. Each entry taken is checked as the module says: any
    problem is one UserError naming the ref and the path."""
    taken, total = 0, 0
    stack: list[tuple[str, pygit2.Oid, int]] = [(top, tree_id, 0)]
    found: list[tuple[str, pygit2.Oid]] = []
    while stack:
        path, oid, depth = stack.pop()
        entries = [e for e in _read_tree(repo, oid, path, ref) if _is_folder(e.mode) or e.name.endswith(suffix)]
        _check_names(entries, path, ref)
        taken += len(entries)
        if taken > MAX_ENTRIES or depth > MAX_DEPTH:
            limit = f"over {MAX_ENTRIES:,} entries" if taken > MAX_ENTRIES else f"deeper than {MAX_DEPTH} folders"
            raise UserError(
                f"the tree at ref {ref} is {limit}: not a chart or policy folder",
                where=top or ".",
                hint="point kai-gitops.yaml at the folder that holds the files",
            )
        for entry in entries:
            where = _under(path, entry.name)
            if entry.mode == TREE_MODE:
                stack.append((where, entry.oid, depth + 1))
            else:
                _check_file_mode(entry.mode, where, ref)
                found.append((where, entry.oid))
    for path, oid in sorted(found):
        data = _read_object(repo, oid, "blob", path, ref)
        total += len(data)
        if total > MAX_TOTAL_BYTES:
            raise UserError(
                f"the files under this folder at ref {ref} are over {MAX_TOTAL_BYTES:,} bytes",
                where=top or ".",
                hint="a chart or policy folder holds far less; check kai-gitops.yaml",
            )
        yield path, data


def _is_folder(mode: int) -> bool:
    """A tree's type bits, whatever the rest says: libgit2 would walk it, so it is judged, never skipped."""
    return mode & 0o170000 == TREE_MODE


def _read_tree(repo: pygit2.Repository, oid: pygit2.Oid, path: str, ref: str) -> list[_Entry]:
    """The entries of a raw tree object: `<octal mode> <name>\\0<object id>`, repeated."""
    import pygit2

    raw = _read_object(repo, oid, "tree", path or ".", ref)
    width = len(oid.raw)
    entries, at = [], 0
    try:
        while at < len(raw):
            space = raw.index(b" ", at)
            end = raw.index(b"\0", space)
            mode, name = int(raw[at:space], 8), raw[space + 1 : end]
            entries.append(
                _Entry(mode, name.decode("utf-8", "surrogateescape"), pygit2.Oid(raw=raw[end + 1 : end + 1 + width]))
            )
            at = end + 1 + width
            if at > len(raw):
                raise ValueError("truncated")
    except ValueError:
        raise UserError(
            f"a tree object at ref {ref} is corrupt", where=path or ".", hint="run git fsck on the repository"
        ) from None
    return entries


def _read_object(repo: pygit2.Repository, oid: pygit2.Oid, kind: str, path: str, ref: str) -> bytes:
    from pygit2.enums import ObjectType

    wanted = ObjectType.TREE if kind == "tree" else ObjectType.BLOB
    try:
        found, data = repo.odb.read(oid)
    except (KeyError, ValueError):  # pygit2's NotFoundError is a KeyError
        raise UserError(
            f"the Git object of this entry at ref {ref} is missing",
            where=path,
            hint="fetch the whole history (not a partial or shallow clone), or run git fsck",
        ) from None
    if found != wanted:
        raise UserError(
            f"the entry at ref {ref} says {kind} but its object is a {ObjectType(found).name.lower()}",
            where=path,
            hint="the tree was not written by Git; remove the entry",
        ) from None
    return bytes(data)


def _check_names(entries: list[_Entry], path: str, ref: str) -> None:
    seen: dict[str, str] = {}
    for entry in entries:
        problem = name_problem(entry.name)
        if problem is not None:
            raise UserError(
                f"the tree entry '{_shown(entry.name)}' at ref {ref} {problem}", where=path or ".", hint=_NAME_HINT
            )
        other = seen.get(folded(entry.name))
        seen[folded(entry.name)] = entry.name
        if other == entry.name:
            raise UserError(
                f"the tree at ref {ref} holds the entry '{_shown(other)}' twice", where=path or ".", hint=_NAME_HINT
            )
        if other is not None:
            raise UserError(
                f"the tree at ref {ref} names one file as '{_shown(other)}' and '{_shown(entry.name)}' "
                "(a case-insensitive file system keeps one of them)",
                where=path or ".",
                hint=_NAME_HINT,
            )


def _check_file_mode(mode: int, path: str, ref: str) -> None:
    if mode in FILE_MODES:
        return
    if mode == SYMLINK_MODE:  # its content is the link target's path, not the file
        raise UserError(symlink_at_ref(ref), where=path, hint=SYMLINK_HINT)
    if mode == GITLINK_MODE:
        raise UserError(
            f"is a submodule (gitlink) at ref {ref}; a submodule's files are not read",
            where=path,
            hint="commit the files themselves into the repository",
        )
    raise UserError(
        f"has mode {mode:o} at ref {ref}, which Git never writes",
        where=path,
        hint="the tree was not written by Git; commit the file again with git add",
    )


# -- writing: the work area ----------------------------------------------------------------------------------


class WorkArea:
    """A fresh private directory (mkdtemp: mode 0700, a name no one else has) that files are written into
    by relative path, and that is removed with everything in it on exit.

    Each path component is checked (`name_problem`, and no two names one case-insensitive file system would
    merge), each directory is opened relative to its parent's descriptor without following a link, each
    file is created relative to its directory's descriptor, exclusively and without following a link, and
    its real path is proven to stay under the area. Whatever a name says, nothing is written elsewhere.
    """

    def __init__(self, purpose: str) -> None:
        self.purpose = purpose
        self._root: Path | None = None
        self._dirs: dict[str, int] = {}
        self._names: dict[tuple[str, str], str] = {}

    def __enter__(self) -> WorkArea:
        self._root = Path(os.path.realpath(tempfile.mkdtemp(prefix=f"kai-gitops-{self.purpose}-")))
        self._dirs[""] = os.open(self._root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)  # rmtree never follows a link out of the tree
            self._root = None

    @property
    def root(self) -> Path:
        if self._root is None:
            raise RuntimeError("the work area is used outside its with block")
        return self._root

    def path(self, relative: str) -> Path:
        """The absolute path of `relative` (checked as write checks it) inside the area."""
        parts = self._parts(relative, relative)
        return self.root.joinpath(*parts)

    def write(self, relative: str, data: bytes, *, shown: str) -> Path:
        """Write `data` to `relative` ('/'-separated) in the area; `shown` names the file in errors (its repo
        path). A name that cannot be a plain file name, or a file already there, is one UserError."""
        parts = self._parts(relative, shown)
        try:
            fd = os.open(
                parts[-1],
                os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                0o600,
                dir_fd=self._directory(parts[:-1]),
            )
        except OSError as exc:
            raise UserError(
                f"cannot write this file into the private work area: {exc.strerror}",
                where=shown,
                hint="two entries name one file, or the entry is not a plain file",
            ) from None
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        written = self.root.joinpath(*parts)
        if not Path(os.path.realpath(written)).is_relative_to(self.root):  # proven, not assumed
            raise UserError("resolves outside the private work area", where=shown, hint=_NAME_HINT)
        return written

    def _parts(self, relative: str, shown: str) -> list[str]:
        parts = relative.split("/")
        for index, part in enumerate(parts):
            problem = name_problem(part)
            if problem is not None:
                raise UserError(f"the name '{_shown(part)}' {problem}", where=shown, hint=_NAME_HINT)
            parent = "/".join(parts[:index])
            other = self._names.setdefault((parent, folded(part)), part)
            if other != part:
                raise UserError(
                    f"'{_shown(other)}' and '{_shown(part)}' name one file on a case-insensitive file system",
                    where=shown,
                    hint=_NAME_HINT,
                )
        return parts

    def _directory(self, parts: list[str]) -> int:
        """The descriptor of the directory `parts` in the area, made (mode 0700) where missing."""
        for index in range(len(parts)):
            key = "/".join(parts[: index + 1])
            if key in self._dirs:
                continue
            parent = self._dirs["/".join(parts[:index])]
            with contextlib.suppress(FileExistsError):
                os.mkdir(parts[index], 0o700, dir_fd=parent)
            try:
                self._dirs[key] = os.open(
                    parts[index], os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=parent
                )
            except OSError as exc:
                raise UserError(
                    f"cannot make the folder {key} in the private work area: {exc.strerror}",
                    hint="two entries name one path, one as a file and one as a folder",
                ) from None
        return self._dirs["/".join(parts)]
