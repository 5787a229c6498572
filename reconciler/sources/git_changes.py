"""Which lines a pull request added or changed: annotations on those lines come first (GitHub shows ~10)."""

from __future__ import annotations

from reconciler.core.errors import UserError
from reconciler.sources.git import GitTree


def changed_lines(head: GitTree, base_ref: str) -> dict[str, frozenset[int]]:
    """Repo-relative path -> new-side line numbers added or edited between the merge base and head.

    The merge base, like a pull request's diff: commits that landed on the base branch after the
    branch point are not the PR's changes. The working tree is the head with --worktree.
    """
    import pygit2
    from pygit2.enums import DiffOption

    repo = head.repo
    try:
        base = repo.revparse_single(base_ref).peel(pygit2.Commit)
    except (KeyError, ValueError, TypeError):
        raise UserError(f"base ref '{base_ref}' does not exist", where=head.label) from None
    head_commit = repo.revparse_single("HEAD" if head.worktree else head.ref).peel(pygit2.Commit)
    merge_base = repo[repo.merge_base(base.id, head_commit.id) or base.id].peel(pygit2.Commit)
    if head.worktree:
        # A file the change adds is new to the tree whether staged or not: without these flags libgit2
        # leaves it out, and its lines were never "changed".
        untracked = DiffOption.INCLUDE_UNTRACKED | DiffOption.RECURSE_UNTRACKED_DIRS | DiffOption.SHOW_UNTRACKED_CONTENT
        diff = merge_base.tree.diff_to_workdir(flags=untracked, context_lines=0)
    else:
        diff = merge_base.tree.diff_to_tree(head_commit.tree, context_lines=0, interhunk_lines=0)
    changed: dict[str, set[int]] = {}
    for patch in diff:
        if patch is None or patch.delta.is_binary:  # None: libgit2 made no patch of this delta
            continue
        lines = changed.setdefault(patch.delta.new_file.path, set())
        for hunk in patch.hunks:
            lines.update(line.new_lineno for line in hunk.lines if line.origin == "+" and line.new_lineno > 0)
    return {path: frozenset(lines) for path, lines in changed.items() if lines}
