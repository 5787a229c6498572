"""Desired files read from Git with pygit2: at a ref without a checkout, or from the working tree."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast
from urllib.parse import unquote, urlsplit

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text, url_without_secrets, url_without_userinfo
from reconciler.sources.materialize import SYMLINK_HINT, SYMLINK_MODE, symlink_at_ref, walk_subtree

if TYPE_CHECKING:
    import pygit2

    from reconciler.sources.git_credentials import GitCallbacks

_URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")


def cache_dir() -> Path:
    base = os.environ.get("KAI_GITOPS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kai-gitops"
    )
    return Path(base) / "repos"


@dataclass
class GitTree:
    """Files of one repository at one ref (or its working tree). Paths are repo-relative, '/'-separated."""

    repo: pygit2.Repository
    label: str  # what the user gave: path or URL
    ref: str
    worktree: bool = False
    _commit: pygit2.Commit | None = None
    # What was read at the ref (files, and directories by suffix), for `edited_in_worktree`.
    _read: set[str] = field(default_factory=set)
    _walked: set[tuple[str, str]] = field(default_factory=set)
    _trees: dict[str, pygit2.Tree] = field(default_factory=dict)  # directory -> its tree at the ref (_entry)

    @property
    def commit_id(self) -> str | None:
        if self.worktree:
            return None
        return str(self._resolve().id)

    def read(self, path: str) -> bytes:
        data = self.read_optional(path)
        if data is None:
            where = "in the working tree" if self.worktree else f"at ref {self.ref}"
            hint = "check the path in kai-gitops.yaml" + (
                "" if self.worktree else ", or pass --worktree for uncommitted files"
            )
            raise UserError(f"file not found {where}", where=_normalise(path), hint=hint)
        return data

    def read_optional(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist; anything else wrong with it is still an error."""
        path = _normalise(path)
        if self.worktree:
            return self._read_worktree(path)
        import pygit2

        self._read.add(path)
        try:
            entry = self._entry(path)
            if not isinstance(entry, pygit2.Blob):
                raise UserError(f"is a {entry.type_str}, not a file", where=path)
            if entry.filemode == SYMLINK_MODE:  # its content is the link target's path, not the file
                raise UserError(symlink_at_ref(self.ref), where=path, hint=SYMLINK_HINT)
            return entry.data
        except KeyError:
            return None
        except pygit2.GitError as exc:  # a tree on the way that libgit2 cannot parse (an empty name, …)
            raise self._unreadable(exc, path) from None

    def _entry(self, path: str) -> pygit2.Object:
        """The object at `path` (KeyError when there is none), from its directory's tree, kept: a fleet reads
        a thousand files from each of a few directories, and looking each up from the root read every tree on
        the way again (~0.25 ms a file in a 1,000-cluster repository)."""
        import pygit2

        folder, _, name = path.rpartition("/")
        tree = self._trees.get(folder)
        if tree is None:
            found = self._resolve().tree[folder] if folder else self._resolve().tree
            if not isinstance(found, pygit2.Tree):
                raise KeyError(path)  # a file on the way: nothing lies under it
            tree = self._trees[folder] = found
        return tree[name]

    def exists(self, path: str) -> bool:
        return self.read_optional(path) is not None

    def iter_files(self, top: str, *, suffix: str = "") -> Iterator[tuple[str, bytes]]:
        """(repo path, content) of every file under `top` ending in `suffix`, in path order."""
        top = _normalise(top)  # "" is the repository's root
        if self.worktree:
            root = Path(self.repo.workdir or ".") / top
            for path in sorted(root.rglob(f"*{suffix}")) if root.is_dir() else []:
                name = _under(top, path.relative_to(root).as_posix())
                if name == ".git" or name.startswith(".git/"):
                    continue  # Git's own store, not a file of the repository
                if not _inside(Path(self.repo.workdir), path):  # as read() refuses it, not skipped unseen
                    raise UserError(
                        "resolves outside the repository (symbolic link?)",
                        where=name,
                        hint="kai-gitops reads only files inside the GitOps repository",
                    )
                if path.is_file():
                    yield name, path.read_bytes()
            return
        import pygit2

        self._walked.add((top, suffix))
        try:
            node = self._resolve().tree[top] if top else self._resolve().tree
        except KeyError:
            return
        except pygit2.GitError as exc:
            raise self._unreadable(exc, top or ".") from None
        if node.type == pygit2.enums.ObjectType.TREE:
            yield from walk_subtree(self.repo, node.id, top, suffix, self.ref)

    def edited_in_worktree(self) -> list[str]:
        """The files read at the ref that differ in the working copy (edited, staged, deleted, or new where
        a file or directory was looked for), when the ref is the checked-out commit: a run that read them
        checked the commit, not the edits. Empty with --worktree, for a bare repository or clone, another
        ref, or nothing read."""
        import pygit2

        if self.worktree or self.repo.is_bare or self._commit is None or not (self._read or self._walked):
            return []
        try:
            if self.repo.head_is_unborn or self.repo.head.peel(pygit2.Commit).id != self._commit.id:
                return []
            changed = self.repo.status(untracked_files="normal")  # one pass: milliseconds for 1,000 files
        except pygit2.GitError:
            return []
        return sorted(
            path
            for path in changed
            if path in self._read
            or any(path.startswith(f"{top}/") and path.endswith(suffix) for top, suffix in self._walked)
        )

    def _read_worktree(self, path: str) -> bytes | None:
        root = self.repo.workdir
        if root is None:
            raise UserError("--worktree needs a working copy, but the repository is bare", where=self.label)
        file = Path(root) / path
        if not _inside(Path(root), file):
            raise UserError(
                "resolves outside the repository (symbolic link?)",
                where=path,
                hint="kai-gitops reads only files inside the GitOps repository",
            )
        if not file.exists():
            return None
        if not file.is_file():
            raise UserError("is a directory, not a file", where=path)
        return file.read_bytes()

    def _unreadable(self, exc: Exception, path: str) -> UserError:
        return UserError(
            f"a Git object on the way to this path at ref {self.ref} cannot be read: {exc}",
            where=path,
            hint="the tree was not written by Git; run git fsck on the repository",
        )

    def _resolve(self) -> pygit2.Commit:
        import pygit2

        if self._commit is None:
            try:
                self._commit = self.repo.revparse_single(self.ref).peel(pygit2.Commit)
            except (KeyError, ValueError, TypeError):
                if self.ref == "HEAD" and self.repo.head_is_unborn:
                    raise UserError(
                        "the repository has no commits yet",
                        where=self.label,
                        hint="commit the files (git add, git commit), then run again",
                    ) from None
                raise UserError(
                    f"ref '{self.ref}' does not exist",
                    where=self.label,
                    hint="pass an existing branch, tag or commit with --ref",
                ) from None
        return self._commit


def open_tree(spec: str | None, ref: str = "HEAD", *, worktree: bool = False) -> GitTree:
    """Open a working copy, a bare repository or (cached) clone URL."""
    import pygit2

    label = spec or "."
    if _URL.match(label):
        label = redact_text(label)  # a URL may carry a password; it must not reach errors or reports
        if worktree:
            raise UserError("--worktree cannot be used with a clone URL", where=label)
        return GitTree(_cached_clone(spec or "", label), label, ref)
    found = pygit2.discover_repository(os.path.abspath(label))
    if found is None:
        raise UserError(
            "not a Git repository", where=label, hint="pass --repo PATH|URL pointing at the GitOps repository"
        )
    return GitTree(open_repository(found), label, ref, worktree)


def _as_fetched(spec: str | None) -> pygit2.Repository | None:
    """The repository this run read: a clone URL's cache as this run's fetch left it (not fetched again), or
    None without a cache."""
    label = spec or "."
    if _URL.match(label):
        cached = cache_dir() / hashlib.sha256(url_without_secrets(label).encode()).hexdigest()[:16]
        return open_repository(str(cached)) if (cached / "HEAD").exists() else None
    return open_tree(spec).repo


def known_descendants(spec: str | None, commit: str, limit: int = 20) -> tuple[str, ...]:
    """Commits on the repository's branches that descend from `commit`, newest first, at most `limit`: a
    cluster's report on one of them speaks for `commit` too (rollout waves)."""
    repo = _as_fetched(spec)
    if repo is None or commit not in repo:
        return ()
    tips = {
        repo.references[name].resolve().target
        for name in repo.references
        if name.startswith(("refs/heads/", "refs/remotes/"))
    }
    found: dict[str, int] = {}
    for tip in tips:
        if str(tip) == commit or not repo.descendant_of(tip, commit):
            continue
        for step, seen in enumerate(repo.walk(tip)):
            if str(seen.id) == commit or step >= 10 * limit:
                break
            if repo.descendant_of(seen.id, commit):
                found[str(seen.id)] = seen.commit_time
    return tuple(sorted(found, key=lambda sha: -found[sha])[:limit])


def first_parent_files(spec: str | None, commit: str, path: str, limit: int = 50) -> Iterator[tuple[str, bytes | None]]:
    """(id, `path` in it, None when it has no such file) of `commit`'s first parent, then its first parent, …, at
    most `limit`; nothing past a root commit, or where a shallow clone stops."""
    repo = _as_fetched(spec)
    if repo is None or commit not in repo:
        return
    current = cast("pygit2.Commit", repo[commit])
    for _ in range(limit):
        parents = current.parent_ids
        if not parents or parents[0] not in repo:
            return
        current = cast("pygit2.Commit", repo[parents[0]])
        tree = current.tree
        blob = cast("pygit2.Blob", tree[path]) if path in tree else None
        yield str(current.id), blob.data if blob is not None else None


_NOT_OWNED = re.compile(r"repository path '(?P<path>[^']*)' is not owned by current user")


def open_repository(path: str) -> pygit2.Repository:
    """The repository at `path`. One owned by another user (a checkout mounted into a CI container) is refused
    by libgit2, as by Git, until it is listed in safe.directory: a user error saying so, not an internal one."""
    import pygit2

    try:
        return pygit2.Repository(path)
    except pygit2.GitError as exc:
        owned = _NOT_OWNED.search(str(exc))
        if owned is None:
            raise
        top = owned["path"].rstrip("/") or path
        raise UserError(
            "the repository is owned by another user, and Git refuses it until it is marked safe",
            where=top,
            hint=f"git config --global --add safe.directory {top}",
        ) from None


def _cached_clone(url: str, label: str) -> pygit2.Repository:
    """A bare clone kept under the cache, keyed and configured by the URL without its credential: a token in
    the URL (`https://TOKEN@host/…`, `user:password@`) is offered when the server asks, and a token in its
    query (`?private_token=…`) is used only by an in-memory (anonymous) remote; neither is ever written into
    the cache's config, where `git config -l` or a copied cache would show it."""
    import pygit2

    endpoint = url_without_secrets(url)
    target = cache_dir() / hashlib.sha256(endpoint.encode()).hexdigest()[:16]
    callbacks = git_callbacks(url_credential=_url_credential(url))
    fresh = not (target / "HEAD").exists()
    try:
        return _fill_cache(target, endpoint, url_without_userinfo(url), callbacks, fresh=fresh)
    except BaseException as exc:
        if fresh:  # no half-made cache (a refused credential too): the next run clones again, not reads it empty
            shutil.rmtree(target, ignore_errors=True)
        if isinstance(exc, pygit2.GitError):
            raise UserError(
                f"cannot clone or fetch: {redact_text(str(exc))}",
                where=label,
                hint="check the URL and your credentials ($KAI_GITOPS_GIT_TOKEN)",
            ) from None
        if isinstance(exc, OSError):  # e.g. a read-only root filesystem and no cache volume
            raise UserError(
                f"cannot write the clone cache {target.parent}: {exc.strerror}",
                where=label,
                hint="set $KAI_GITOPS_CACHE to a writable directory (in a pod: an emptyDir)",
            ) from None
        raise


def _fill_cache(
    target: Path, endpoint: str, fetch_url: str, callbacks: GitCallbacks, *, fresh: bool
) -> pygit2.Repository:
    """Fetch every branch and tag into the bare cache at `target` (made first when `fresh`), from `fetch_url`
    through an anonymous remote: the config's `origin` is `endpoint`, which holds no credential."""
    import pygit2

    if fresh:
        target.parent.mkdir(parents=True, exist_ok=True)
        repo = pygit2.init_repository(str(target), bare=True)
        repo.remotes.create("origin", endpoint)
    else:
        repo = open_repository(str(target))
        repo.remotes.set_url("origin", endpoint)
    remote = repo.remotes.create_anonymous(fetch_url)
    if fresh:  # HEAD as a clone sets it: the branch the server's HEAD names
        head = next((h.symref_target for h in remote.list_heads(callbacks) if h.name == "HEAD"), None)
        if head:
            repo.set_head(head)
    remote.fetch(["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"], callbacks=callbacks)
    return repo


def _url_credential(url: str) -> tuple[str, str] | None:
    """(user, password) of the URL's userinfo, split at its last `@` as urllib3 and libgit2 do; a token
    given as the user name has an empty password."""
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return None
    return None if not user else (unquote(user), unquote(password or ""))


def git_callbacks(ssh_key: str | None = None, *, url_credential: tuple[str, str] | None = None) -> GitCallbacks:
    """Credentials for fetch and push (see GitCallbacks); pygit2 is imported only when a remote is used."""
    from reconciler.sources.git_credentials import GitCallbacks

    return GitCallbacks(ssh_key, url_credential=url_credential)


def _inside(root: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _under(top: str, inside: str) -> str:
    return f"{top}/{inside}" if top else inside


def _normalise(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UserError("paths must stay inside the repository ('..' is not allowed)", where=path)
    return "/".join(parts)
