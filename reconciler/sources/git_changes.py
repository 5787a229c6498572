"""Which lines a pull request added or changed: annotations on those lines come first (GitHub shows ~10)."""

from __future__ import annotations

from reconciler.errors import UserError
from reconciler.sources.git import GitTree


def changed_lines(head: GitTree, base_ref: str) -> dict[str, frozenset[int]]:
    """Repo-relative path -> new-side line numbers added or edited between the merge base and head.

    The merge base, like a pull request's diff: commits that landed on the base branch after the
    branch point are not the PR's changes. The working tree is the head with --worktree.
    """
    import pygit2

    repo = head.repo
    try:
        base = repo.revparse_single(base_ref).peel(pygit2.Commit)
    except (KeyError, ValueError, TypeError):
        raise UserError(f"base ref '{base_ref}' does not exist", where=head.label) from None
    if head.worktree:
        diff = base.tree.diff_to_workdir(context_lines=0)
    else:
        head_commit = repo.revparse_single(head.ref).peel(pygit2.Commit)
        merge_base = repo.merge_base(base.id, head_commit.id) or base.id
        diff = repo.diff(repo[merge_base].peel(pygit2.Commit).tree, head_commit.tree, context_lines=0)
    changed: dict[str, set[int]] = {}
    for patch in diff:
        if patch.delta.is_binary:
            continue
        lines = changed.setdefault(patch.delta.new_file.path, set())
        for hunk in patch.hunks:
            lines.update(line.new_lineno for line in hunk.lines if line.origin == "+" and line.new_lineno > 0)
    return {path: frozenset(lines) for path, lines in changed.items() if lines}
