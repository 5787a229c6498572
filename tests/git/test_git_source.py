"""Desired files read from real Git repositories: refs, working tree, bare repos and cached clones."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from reconciler.core.errors import UserError
from reconciler.sources.git import cache_dir, open_tree
from tests.support.helpers import commit_files, file_url, make_bare_remote, make_repo, push


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, list[str]]:
    """Three commits of values.yaml (v: 1, 2, 3); a tag on the first, a branch at the second."""
    path, ids = make_repo(
        tmp_path,
        {"values.yaml": "v: 1\n", "dir/nested.yaml": "n: 1\n"},
        [{"values.yaml": "v: 2\n"}, {"values.yaml": "v: 3\n", "dir/nested.yaml": None}],
    )
    repo = pygit2.Repository(str(path))
    repo.create_tag(
        "v1.0",
        pygit2.Oid(hex=ids[0]),
        pygit2.enums.ObjectType.COMMIT,
        pygit2.Signature("t", "t@example.invalid", 1764400000, 0),
        "release 1",
    )
    repo.branches.local.create("second", repo.get(ids[1]))
    return path, ids


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("KAI_GITOPS_CACHE", str(folder))
    return folder


# -- refs ------------------------------------------------------------------------------------------------


def test_reads_at_head_by_default(history: tuple[Path, list[str]]) -> None:
    path, ids = history
    tree = open_tree(str(path))
    assert tree.ref == "HEAD"
    assert tree.read("values.yaml") == b"v: 3\n"
    assert tree.commit_id == ids[2]


@pytest.mark.parametrize(
    "ref, expected, index",
    [
        ("HEAD~1", b"v: 2\n", 1),
        ("HEAD~2", b"v: 1\n", 0),
        ("second", b"v: 2\n", 1),
        ("v1.0", b"v: 1\n", 0),  # annotated tag peels to its commit
        ("main", b"v: 3\n", 2),
    ],
)
def test_reads_at_branch_tag_and_older_commit(
    history: tuple[Path, list[str]], ref: str, expected: bytes, index: int
) -> None:
    path, ids = history
    tree = open_tree(str(path), ref)
    assert tree.read("values.yaml") == expected
    assert tree.commit_id == ids[index]


def test_reads_at_a_full_and_an_abbreviated_commit_id(history: tuple[Path, list[str]]) -> None:
    path, ids = history
    assert open_tree(str(path), ids[0]).read("values.yaml") == b"v: 1\n"
    assert open_tree(str(path), ids[1][:10]).read("values.yaml") == b"v: 2\n"


def test_file_deleted_later_still_reads_at_the_older_ref(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    assert open_tree(str(path), "HEAD~1").read("dir/nested.yaml") == b"n: 1\n"
    with pytest.raises(UserError) as info:
        open_tree(str(path)).read("dir/nested.yaml")
    assert info.value.where == "dir/nested.yaml"
    assert "HEAD" in info.value.message


def test_paths_are_normalised(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    tree = open_tree(str(path), "HEAD~1")
    assert tree.read("./dir/nested.yaml") == b"n: 1\n"
    assert tree.read("dir//nested.yaml") == b"n: 1\n"
    assert tree.read("dir\\nested.yaml") == b"n: 1\n"


def test_working_copy_is_found_from_a_subdirectory(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    (path / "sub").mkdir()
    assert open_tree(str(path / "sub")).read("values.yaml") == b"v: 3\n"


# -- working tree ----------------------------------------------------------------------------------------


def test_worktree_reads_uncommitted_edits(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    (path / "values.yaml").write_text("v: uncommitted\n")
    (path / "new.yaml").write_text("brand: new\n")
    assert open_tree(str(path)).read("values.yaml") == b"v: 3\n"
    tree = open_tree(str(path), worktree=True)
    assert tree.read("values.yaml") == b"v: uncommitted\n"
    assert tree.read("new.yaml") == b"brand: new\n"
    assert tree.commit_id is None


def test_worktree_missing_file(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    with pytest.raises(UserError) as info:
        open_tree(str(path), worktree=True).read("nope.yaml")
    assert info.value.where == "nope.yaml"
    assert "working tree" in info.value.message


def test_worktree_refuses_dotdot(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = history
    (tmp_path / "outside.yaml").write_text("secret: 1\n")
    with pytest.raises(UserError) as info:
        open_tree(str(path), worktree=True).read("../outside.yaml")
    assert "'..'" in info.value.message


# -- bare repositories and clone URLs -----------------------------------------------------------------------


def test_bare_repository(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, ids = history
    bare = make_bare_remote(tmp_path, path)
    tree = open_tree(str(bare))
    assert tree.read("values.yaml") == b"v: 3\n"
    assert tree.commit_id == ids[2]
    assert open_tree(str(bare), "HEAD~2").read("values.yaml") == b"v: 1\n"


def test_bare_repository_has_no_worktree(history: tuple[Path, list[str]], tmp_path: Path) -> None:
    path, _ = history
    bare = make_bare_remote(tmp_path, path)
    with pytest.raises(UserError) as info:
        open_tree(str(bare), worktree=True).read("values.yaml")
    assert "bare" in info.value.message
    assert info.value.where == str(bare)


def test_clone_url_is_cached_and_refetched(tmp_path: Path, cache: Path) -> None:
    source, first = make_repo(tmp_path, {"values.yaml": "v: 1\n"}, name="source")
    bare = make_bare_remote(tmp_path, source)
    url = file_url(bare)

    tree = open_tree(url)
    assert tree.read("values.yaml") == b"v: 1\n"
    assert tree.commit_id == first[0]
    clones = list((cache / "repos").iterdir())
    assert len(clones) == 1
    assert pygit2.Repository(str(clones[0])).is_bare

    second = commit_files(source, {"values.yaml": "v: 2\n"}, "second")
    push(source)
    again = open_tree(url)
    assert again.read("values.yaml") == b"v: 2\n"  # the new commit on the remote is seen
    assert again.commit_id == second
    assert list((cache / "repos").iterdir()) == clones  # same cache entry, fetched, not re-cloned


def test_clone_url_sees_new_branches_and_tags(tmp_path: Path, cache: Path) -> None:
    source, ids = make_repo(tmp_path, {"values.yaml": "v: 1\n"}, name="source")
    bare = make_bare_remote(tmp_path, source)
    url = file_url(bare)
    open_tree(url).read("values.yaml")

    commit_files(source, {"values.yaml": "v: feature\n"}, "feature work")
    repo = pygit2.Repository(str(source))
    repo.branches.local.create("feature", repo.head.peel(pygit2.Commit))
    repo.create_reference("refs/tags/first", pygit2.Oid(hex=ids[0]))
    push(source, ["refs/heads/feature:refs/heads/feature", "refs/tags/first:refs/tags/first"])

    assert open_tree(url, "feature").read("values.yaml") == b"v: feature\n"
    assert open_tree(url, "first").read("values.yaml") == b"v: 1\n"


def test_clone_url_with_worktree_is_refused(cache: Path) -> None:
    with pytest.raises(UserError) as info:
        open_tree("git@example.invalid:org/gitops.git", worktree=True)
    assert "--worktree" in info.value.message
    assert info.value.where == "git@example.invalid:org/gitops.git"


def test_unreachable_clone_url_is_a_user_error(tmp_path: Path, cache: Path) -> None:
    url = file_url(tmp_path / "does-not-exist.git")
    with pytest.raises(UserError) as info:
        open_tree(url)
    assert info.value.where == url
    assert "clone" in info.value.message


def test_cache_dir_respects_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAI_GITOPS_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "kai-gitops" / "repos"
    monkeypatch.setenv("KAI_GITOPS_CACHE", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine" / "repos"


# -- errors ------------------------------------------------------------------------------------------------


def test_missing_file_at_ref_names_path_and_ref(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    with pytest.raises(UserError) as info:
        open_tree(str(path), "second").read("clusters/lab/kai-values.yaml")
    line = info.value.line()
    assert info.value.where == "clusters/lab/kai-values.yaml"
    assert "second" in line
    assert line.startswith("clusters/lab/kai-values.yaml: file not found at ref second")


@pytest.mark.parametrize("ref", ["no-such-branch", "HEAD~9", "0" * 40, "v9.9"])
def test_nonexistent_ref(history: tuple[Path, list[str]], ref: str) -> None:
    path, _ = history
    tree = open_tree(str(path), ref)
    with pytest.raises(UserError) as info:
        tree.read("values.yaml")
    assert f"ref '{ref}' does not exist" in info.value.message
    assert info.value.where == str(path)
    with pytest.raises(UserError):
        _ = tree.commit_id


def test_not_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(UserError) as info:
        open_tree(str(plain))
    assert info.value.message == "not a Git repository"
    assert info.value.where == str(plain)


@pytest.mark.parametrize("bad", ["../x.yaml", "a/../../x.yaml", "dir/../values.yaml", "..", "/../etc/passwd"])
def test_dotdot_paths_are_refused(history: tuple[Path, list[str]], bad: str) -> None:
    path, _ = history
    with pytest.raises(UserError) as info:
        open_tree(str(path)).read(bad)
    assert "'..' is not allowed" in info.value.message
    assert info.value.where == bad


def test_directory_is_not_a_file(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    with pytest.raises(UserError) as info:
        open_tree(str(path), "HEAD~2").read("dir")
    assert "not a file" in info.value.message


def test_exists(history: tuple[Path, list[str]]) -> None:
    path, _ = history
    tree = open_tree(str(path), "HEAD~2")
    assert tree.exists("dir/nested.yaml")
    assert not tree.exists("dir/missing.yaml")
    assert not open_tree(str(path)).exists("dir/nested.yaml")
