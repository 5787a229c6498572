"""Fix branches with pygit2: one commit on top of the commit that was read, pushed; or deleted again.

Nothing is checked out and the working tree is never touched: the commit is built from the read commit's
tree with the changed blobs swapped in. A branch whose remote tip already has the same tree on the same
base is left alone (no new commit, no push), so a CronJob can run `--fix-git` every hour.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text
from reconciler.gitfix.plan import BRANCH_PREFIX, FileChange

if TYPE_CHECKING:  # pygit2 is imported when a fix branch is made, not by every run that imports this module
    from pygit2 import Oid, Repository, Tree
    from pygit2.remotes import Remote

    from reconciler.sources.git_credentials import GitCallbacks

Answer = TypeVar("Answer")

DEFAULT_AUTHOR = "kai-gitops <kai-gitops@users.noreply>"
REMOTE = "origin"
log = logging.getLogger("kai_gitops.gitfix")
_AUTHOR = re.compile(r"^\s*(?P<name>[^<>]+?)\s*<(?P<email>[^<>\s]+)>\s*$")


@dataclass(frozen=True)
class Author:
    name: str
    email: str

    @classmethod
    def parse(cls, text: str | None) -> Author:
        match = _AUTHOR.match(text or DEFAULT_AUTHOR)
        if match is None:
            raise UserError(f"--git-author '{text}' is not 'Name <email>'", hint=f"e.g. '{DEFAULT_AUTHOR}'")
        return cls(match["name"], match["email"])


@dataclass(frozen=True)
class Published:
    branch: str
    commit: str
    pushed: bool  # False: the remote branch already had this change on this base
    foreign: bool = False  # the remote tip is someone else's commit: left alone, not force-pushed over


class FixBranches:
    """The tool's own branches (`kai-gitops/fix/…`) on one remote of one repository."""

    def __init__(self, repo: Repository, ssh_key: str | None = None, remote: str = REMOTE) -> None:
        from reconciler.sources.git import git_callbacks

        self.repo = repo
        self._callbacks = partial(git_callbacks, ssh_key)
        self.remote_name = remote
        try:
            url = repo.remotes[remote].url
        except (KeyError, ValueError):
            raise UserError(
                f"the repository has no remote '{remote}' to push fix branches to",
                where=repo.path,
                hint=f"add one: git remote add {remote} URL",
            ) from None
        self.url = redact_text(url or "")

    @property
    def remote(self) -> Remote:
        """A fresh remote per operation: libgit2 keeps a listed (fetch-direction) connection open, and a push
        over it fails with "this operation is only valid for push"."""
        return self.repo.remotes[self.remote_name]

    def heads(self, prefix: str = BRANCH_PREFIX) -> dict[str, str]:
        """Remote branches under `prefix`: name (without refs/heads/) -> commit id."""
        listed = self._network("list the branches of", lambda cb: self.remote.list_heads(callbacks=cb))
        return {
            h.name[len("refs/heads/") :]: str(h.oid)
            for h in listed
            if h.name and h.name.startswith("refs/heads/" + prefix)
        }

    def publish(
        self,
        branch: str,
        base_commit: str,
        changes: tuple[FileChange, ...],
        message: str,
        author: Author,
        remote_tip: str | None,
    ) -> Published:
        import pygit2

        base = self.repo[base_commit].peel(pygit2.Commit)
        tree = self._tree_with(base.tree, changes)
        if remote_tip is not None:
            self._fetch_tip(branch, remote_tip)
            tip = self.repo[remote_tip].peel(pygit2.Commit)
            if tip.tree_id == tree and [str(p) for p in tip.parent_ids] == [base_commit]:
                return Published(branch, remote_tip, pushed=False)
            if tip.committer.email != author.email:  # someone pushed onto the fix branch: never force over it
                return Published(branch, remote_tip, pushed=False, foreign=True)
        signature = pygit2.Signature(author.name, author.email)
        commit = self.repo.create_commit(None, signature, signature, message, tree, [base.id])
        self.repo.references.create(f"refs/heads/{branch}", commit, force=True)
        self._push([f"+refs/heads/{branch}:refs/heads/{branch}"])
        log.info(
            "fix branch: pushed %s (%s)",
            branch,
            str(commit)[:12],
            extra={
                "audit": "push",
                "object": f"branch {branch}",
                "remote": self.remote_name,
                "url": self.url,
                "commit": str(commit),
                "base": base_commit,
                "previous": remote_tip,
                "files": [change.path for change in changes],
            },
        )
        return Published(branch, str(commit), pushed=True)

    def delete(self, branch: str) -> None:
        # The only branches the tool may ever delete are its own fix branches.
        if not branch.startswith(BRANCH_PREFIX) or ".." in branch:
            raise ValueError(f"refusing to delete branch {branch!r}: not a {BRANCH_PREFIX}* branch")
        self._push([f":refs/heads/{branch}"])
        log.info(
            "fix branch: deleted %s",
            branch,
            extra={"audit": "delete", "object": f"branch {branch}", "remote": self.remote_name, "url": self.url},
        )
        local = f"refs/heads/{branch}"
        if local in self.repo.references:
            self.repo.references.delete(local)

    def _fetch_tip(self, branch: str, tip: str) -> None:
        if tip not in self.repo:
            self._network(
                "fetch",
                lambda cb: self.remote.fetch(
                    [f"+refs/heads/{branch}:refs/remotes/{self.remote_name}/{branch}"], callbacks=cb
                ),
            )

    def _tree_with(self, tree: Tree, changes: tuple[FileChange, ...]) -> Oid:
        for change in changes:
            tree = self._replace(tree, change.path.split("/"), self.repo.create_blob(change.after))
        return tree.id

    def _replace(self, tree: Tree, parts: list[str], blob: Oid) -> Tree:
        import pygit2

        builder = self.repo.TreeBuilder(tree)
        name = parts[0]
        if len(parts) == 1:
            mode = tree[name].filemode if name in tree else pygit2.enums.FileMode.BLOB
            builder.insert(name, blob, mode)
        else:
            sub = self.repo[tree[name].id if name in tree else self.repo.TreeBuilder().write()].peel(pygit2.Tree)
            builder.insert(name, self._replace(sub, parts[1:], blob).id, pygit2.enums.FileMode.TREE)
        return self.repo[builder.write()].peel(pygit2.Tree)

    def _push(self, specs: list[str]) -> None:
        callbacks = self._callbacks()
        self._network("push to", lambda cb: self.remote.push(specs, callbacks=cb), callbacks)
        if callbacks.rejected:
            ref, why = next(iter(callbacks.rejected.items()))
            raise UserError(
                f"the remote rejected {ref}: {redact_text(why)}",
                where=self.url,
                hint="check branch protection rules for kai-gitops/fix/* branches",
            )

    def _network(
        self, what: str, call: Callable[[GitCallbacks], Answer], callbacks: GitCallbacks | None = None
    ) -> Answer:
        import pygit2

        try:
            return call(callbacks or self._callbacks())
        except pygit2.GitError as exc:
            raise UserError(
                f"cannot {what} the remote: {redact_text(str(exc))}",
                where=self.url,
                hint="check the remote URL, the network and $KAI_GITOPS_GIT_TOKEN / --git-ssh-key",
            ) from None
