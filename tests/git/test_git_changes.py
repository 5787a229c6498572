"""changed_lines: the lines a change added or edited, for the committed head and for --worktree."""

from __future__ import annotations

from pathlib import Path

import pygit2

from reconciler.sources.git import open_tree
from reconciler.sources.git_changes import changed_lines
from tests.support.helpers import make_repo


def test_worktree_lines_are_counted_from_the_merge_base_and_include_new_files(tmp_path: Path) -> None:
    """A pre-commit or local `check --worktree --base main`: a file the change adds (staged or not) is all
    changed lines, and what landed on main after the branch point is not the change's."""
    path, (branch_point, _) = make_repo(
        tmp_path, {"a.yaml": "x: 1\ny: 2\n", "b.yaml": "p: 1\n"}, [{"a.yaml": "x: 1\ny: 3\n"}]
    )
    repo = pygit2.Repository(str(path))
    repo.branches.local.create("feature", repo[branch_point])
    repo.checkout("refs/heads/feature")
    (path / "b.yaml").write_text("p: 2\n")
    (path / "staged.yaml").write_text("s: 1\nt: 2\n")
    repo.index.add("staged.yaml")
    repo.index.write()
    (path / "sub").mkdir()
    (path / "sub" / "untracked.yaml").write_text("u: 1\n")

    changed = changed_lines(open_tree(str(path), worktree=True), "main")

    assert changed == {"b.yaml": frozenset({1}), "staged.yaml": frozenset({1, 2}), "sub/untracked.yaml": frozenset({1})}


def test_committed_head_is_counted_from_the_merge_base(tmp_path: Path) -> None:
    path, (branch_point, _) = make_repo(tmp_path, {"a.yaml": "x: 1\ny: 2\n"}, [{"a.yaml": "x: 1\ny: 3\n"}])
    repo = pygit2.Repository(str(path))
    repo.branches.local.create("feature", repo[branch_point])
    repo.checkout("refs/heads/feature")
    (path / "c.yaml").write_text("c: 1\n")
    repo.index.add("c.yaml")
    repo.index.write()
    sig = pygit2.Signature("t", "t@example.invalid", 1764400000, 0)
    repo.create_commit("HEAD", sig, sig, "add c", repo.index.write_tree(), [repo.head.target])

    assert changed_lines(open_tree(str(path), "feature"), "main") == {"c.yaml": frozenset({1})}
