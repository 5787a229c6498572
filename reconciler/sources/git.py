"""Desired files read from Git with pygit2: at a ref without a checkout, or from the working tree."""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text

_URL = re.compile(r"^(https?|ssh|git|file)://|^[\w.-]+@[\w.-]+:")


def cache_dir() -> Path:
    base = os.environ.get("KAI_GITOPS_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kai-gitops")
    return Path(base) / "repos"


@dataclass
class GitTree:
    """Files of one repository at one ref (or its working tree). Paths are repo-relative, '/'-separated."""

    repo: Any          # pygit2.Repository
    label: str         # what the user gave: path or URL
    ref: str
    worktree: bool = False
    _commit: Any = None

    @property
    def commit_id(self) -> str | None:
        if self.worktree:
            return None
        return str(self._resolve().id)

    def read(self, path: str) -> bytes:
        data = self.read_optional(path)
        if data is None:
            where = "in the working tree" if self.worktree else f"at ref {self.ref}"
            hint = "check the path in kai-gitops.yaml" + ("" if self.worktree else
                                                          ", or pass --worktree for uncommitted files")
            raise UserError(f"file not found {where}", where=_normalise(path), hint=hint)
        return data

    def read_optional(self, path: str) -> bytes | None:
        """The file's bytes, or None when it does not exist; anything else wrong with it is still an error."""
        path = _normalise(path)
        if self.worktree:
            return self._read_worktree(path)
        try:
            entry = self._resolve().tree[path]
        except KeyError:
            return None
        if entry.type_str != "blob":
            raise UserError(f"is a {entry.type_str}, not a file", where=path)
        if entry.filemode == _SYMLINK_MODE:  # its content is the link target's path, not the file
            raise UserError("is a symbolic link; links are not followed at a ref", where=path,
                            hint="commit the file itself")
        return entry.data

    def exists(self, path: str) -> bool:
        return self.read_optional(path) is not None

    def iter_files(self, top: str, *, suffix: str = "") -> Iterator[tuple[str, bytes]]:
        """(repo path, content) of every file under `top` ending in `suffix`, in path order."""
        top = _normalise(top)
        if self.worktree:
            root = Path(self.repo.workdir or ".") / top
            for path in sorted(root.rglob(f"*{suffix}")) if root.is_dir() else []:
                if path.is_file() and _inside(Path(self.repo.workdir), path):
                    yield f"{top}/{path.relative_to(root).as_posix()}", path.read_bytes()
            return
        try:
            node = self._resolve().tree[top]
        except KeyError:
            return
        yield from _walk_tree(node, top, suffix)

    def _read_worktree(self, path: str) -> bytes | None:
        root = self.repo.workdir
        if root is None:
            raise UserError("--worktree needs a working copy, but the repository is bare", where=self.label)
        file = Path(root) / path
        if not _inside(Path(root), file):
            raise UserError("resolves outside the repository (symbolic link?)", where=path,
                            hint="kai-gitops reads only files inside the GitOps repository")
        if not file.exists():
            return None
        if not file.is_file():
            raise UserError("is a directory, not a file", where=path)
        return file.read_bytes()

    def _resolve(self) -> Any:
        if self._commit is None:
            try:
                self._commit = self.repo.revparse_single(self.ref).peel(_commit_type())
            except (KeyError, ValueError, TypeError):
                raise UserError(f"ref '{self.ref}' does not exist", where=self.label,
                                hint="pass an existing branch, tag or commit with --ref") from None
        return self._commit


def open_tree(spec: str | None, ref: str = "HEAD", *, worktree: bool = False) -> GitTree:
    """Open a working copy, a bare repository or (cached) clone URL."""
    import pygit2

    label = spec or "."
    if _URL.match(label):
        label = redact_text(label)   # a URL may carry a password; it must not reach errors or reports
        if worktree:
            raise UserError("--worktree cannot be used with a clone URL", where=label)
        return GitTree(_cached_clone(spec or "", label), label, ref)
    found = pygit2.discover_repository(os.path.abspath(label))
    if found is None:
        raise UserError("not a Git repository", where=label,
                        hint="pass --repo PATH|URL pointing at the GitOps repository")
    return GitTree(pygit2.Repository(found), label, ref, worktree)


def _cached_clone(url: str, label: str) -> Any:
    import pygit2

    target = cache_dir() / hashlib.sha256(url.encode()).hexdigest()[:16]
    callbacks = git_callbacks()
    try:
        if (target / "HEAD").exists():
            repo = pygit2.Repository(str(target))
            repo.remotes["origin"].fetch(["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"],
                                         callbacks=callbacks)
            return repo
        target.parent.mkdir(parents=True, exist_ok=True)
        return pygit2.clone_repository(url, str(target), bare=True, callbacks=callbacks)
    except pygit2.GitError as exc:
        raise UserError(f"cannot clone or fetch: {redact_text(str(exc))}", where=label,
                        hint="check the URL and your credentials ($KAI_GITOPS_GIT_TOKEN)") from None
    except OSError as exc:  # e.g. a read-only root filesystem and no cache volume
        raise UserError(f"cannot write the clone cache {target.parent}: {exc.strerror}", where=label,
                        hint="set $KAI_GITOPS_CACHE to a writable directory (in a pod: an emptyDir)") from None


def git_callbacks(ssh_key: str | None = None) -> Any:
    """Credentials for fetch and push. HTTPS: the token in $KAI_GITOPS_GIT_TOKEN (user $KAI_GITOPS_GIT_USER,
    default x-access-token, which GitHub and GitLab deploy tokens both accept). SSH: the key file `ssh_key`
    (passphrase $KAI_GITOPS_GIT_SSH_PASSPHRASE), else the SSH agent. A credential the server refused is not
    offered again: libgit2 would replay it until "too many authentication replays" and hide the reason."""
    import pygit2
    from pygit2.enums import CredentialType

    token = os.environ.get("KAI_GITOPS_GIT_TOKEN")
    user = os.environ.get("KAI_GITOPS_GIT_USER", "x-access-token")

    class _Callbacks(pygit2.RemoteCallbacks):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.offered: set[str] = set()
            self.rejected: dict[str, str] = {}

        def credentials(self, url: str, username_from_url: str | None, allowed_types: Any) -> Any:
            kind = "ssh" if allowed_types & CredentialType.SSH_KEY else "https"
            if kind in self.offered:
                raise UserError("the Git server refused the credentials", where=redact_text(url),
                                hint=_AUTH_HINT[kind])
            self.offered.add(kind)
            if kind == "https" and token and allowed_types & CredentialType.USERPASS_PLAINTEXT:
                return pygit2.UserPass(user, token)
            if kind == "ssh":
                name = username_from_url or "git"
                if ssh_key:
                    public = f"{ssh_key}.pub" if os.path.exists(f"{ssh_key}.pub") else None
                    return pygit2.Keypair(name, public, ssh_key, os.environ.get("KAI_GITOPS_GIT_SSH_PASSPHRASE", ""))
                return pygit2.KeypairFromAgent(name)
            what = ("credentials of a kind kai-gitops cannot offer (HTTPS: username and token only)" if token
                    else "credentials and none are set")
            raise UserError(f"the Git server asks for {what}", where=redact_text(url), hint=_AUTH_HINT[kind])

        def push_update_reference(self, refname: str, message: str | None) -> None:
            if message:
                self.rejected[refname] = message

    return _Callbacks()


_AUTH_HINT = {"https": "set $KAI_GITOPS_GIT_TOKEN to a token with write access to the repository",
              "ssh": "load the deploy key into ssh-agent or pass --git-ssh-key FILE"}


def _commit_type() -> Any:
    import pygit2

    return pygit2.Commit


_SYMLINK_MODE = 0o120000


def _inside(root: Path, path: Path) -> bool:
    return path.resolve().is_relative_to(root.resolve())


def _walk_tree(node: Any, prefix: str, suffix: str) -> Iterator[tuple[str, bytes]]:
    if node.type_str != "tree":
        return
    for child in sorted(node, key=lambda c: c.name):
        path = f"{prefix}/{child.name}"
        if child.type_str == "tree":
            yield from _walk_tree(child, path, suffix)
        elif child.name.endswith(suffix) and child.filemode != _SYMLINK_MODE:
            yield path, child.data


def _normalise(path: str) -> str:
    parts = [p for p in path.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UserError("paths must stay inside the repository ('..' is not allowed)", where=path)
    return "/".join(parts)
