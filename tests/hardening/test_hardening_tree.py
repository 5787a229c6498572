"""Nothing a Git tree names is written outside the tool's private work area (reconciler/sources/materialize.py).

A tree object may hold any name and mode (`..`, `/home/me/.bashrc`, `a/b`, `CON`, a link, a submodule); `git
add` never writes one, but pygit2's raw object writer (as `git mktree`) does, and a plain `git push` to a
repository with default settings accepts it. Every command that reads a ref materializes files from it: the
function charts under `workloads:` (`check`, with or without `--base`) and the `policies.dirs` folders (`check`,
`diff`, `reconcile`, `policy bundle`). Each must refuse such a tree with one line and exit 1, and leave every
file outside the work area byte-identical.

The hostile runs happen in a sandbox: HOME, the repository (with its .git/hooks) and the temporary folder the
work areas are made in (twelve folders deep, so a `..` climb of the old code stays inside) are all under one
fresh folder, whose every file is hashed before and after. Absolute names only ever point into it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import unicodedata
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pygit2
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pygit2.enums import FileMode, ObjectType

from reconciler.core.errors import UserError
from reconciler.sources.materialize import WorkArea, name_problem
from tests.support.helpers import DEMO_SNAPSHOTS, assert_one_line_error, load_demo_builder, run_cli
from tests.support.policy_shared import USER_RULE
from tests.support.tools import ToolMissing, tool_path

BLOB, EXEC, TREE, LINK, GITLINK = 0o100644, 0o100755, 0o040000, 0o120000, 0o160000
CHART = "charts/fn"
POLICY = "policy"
WORKLOAD = f"workloads:\n  - name: fn\n    clusters: [prod-addon]\n    chart: {CHART}\n"
POLICIES = f"policies:\n  dirs: [{POLICY}]\n"
STS = """\
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: {{ .Release.Name }}-worker
spec:
  replicas: {{ .Values.replicas }}
  serviceName: w
  selector:
    matchLabels: {app: w}
  template:
    metadata:
      labels: {app: w}
    spec:
      containers:
        - {name: w, image: busybox}
"""
DEEP = 12  # folders between the sandbox and the work areas' temporary folder
HOOK = "#!/bin/sh\necho the repository's own hook\n"
BASHRC = "# the user's shell start file\n"


@pytest.fixture(scope="module")
def helm() -> Path:
    try:
        return tool_path("helm")
    except ToolMissing as missing:
        pytest.skip(str(missing))


# -- raw trees ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """One tree entry as written raw: `content` is a blob's bytes, a subtree's entries, or a gitlink's id."""

    mode: int
    name: bytes
    content: bytes | tuple[Raw, ...]


def write_tree(repo: pygit2.Repository, entries: tuple[Raw, ...]) -> pygit2.Oid:
    """A tree object holding exactly `entries` (in Git's order, so libgit2 can still look names up)."""
    rows = []
    for entry in entries:
        if isinstance(entry.content, tuple):
            oid = write_tree(repo, entry.content)
        elif entry.mode == GITLINK:
            oid = pygit2.Oid(raw=entry.content)
        else:
            oid = repo.create_blob(entry.content)
        rows.append((entry.mode, entry.name, oid))
    rows.sort(key=lambda row: row[1] + (b"/" if row[0] == TREE else b""))
    return repo.odb.write(ObjectType.TREE, b"".join(b"%o %s\0" % (mode, name) + oid.raw for mode, name, oid in rows))


def replace_subtree(repo: pygit2.Repository, tree: pygit2.Tree | None, parts: list[str], oid: pygit2.Oid) -> pygit2.Oid:
    """`tree` with the folder at `parts` (made where missing) replaced by the tree `oid`."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    if len(parts) == 1:
        inner = oid
    else:
        child = tree[parts[0]] if tree is not None and parts[0] in tree else None
        inner = replace_subtree(repo, child, parts[1:], oid)
    builder.insert(parts[0], inner, FileMode.TREE)
    return builder.write()


def chart_entries(extra: tuple[Raw, ...] = (), inside: tuple[Raw, ...] = ()) -> tuple[Raw, ...]:
    templates = (Raw(BLOB, b"sts.yaml", STS.encode()), *inside)
    return (
        Raw(BLOB, b"Chart.yaml", b"apiVersion: v2\nname: fn\nversion: 0.1.0\n"),
        Raw(BLOB, b"values.yaml", b"replicas: 2\n"),
        Raw(TREE, b"templates", templates),
        *extra,
    )


def policy_entries(extra: tuple[Raw, ...] = (), inside: tuple[Raw, ...] = ()) -> tuple[Raw, ...]:
    return (Raw(TREE, b"acme", (Raw(BLOB, b"names.rego", USER_RULE.encode()), *inside)), *extra)


def commit_hostile(repo_path: Path, branch: str, chart: tuple[Raw, ...] | None, policy: tuple[Raw, ...] | None) -> str:
    """Branch `branch`: main's tree with the chart and/or policy folder replaced by the given raw trees."""
    repo = pygit2.Repository(str(repo_path))
    main = repo.revparse_single("main").peel(pygit2.Commit)
    tree = main.tree
    for path, entries in ((CHART, chart), (POLICY, policy)):
        if entries is not None:
            tree = repo[replace_subtree(repo, tree, path.split("/"), write_tree(repo, entries))]
    sig = pygit2.Signature("mallory", "mallory@example.invalid", 1764400000, 0)
    return str(repo.create_commit(f"refs/heads/{branch}", sig, sig, "innocent change", tree.id, [main.id]))


# -- the sandbox ----------------------------------------------------------------------------------------------


@dataclass
class Sandbox:
    root: Path
    repo: Path

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def temp(self) -> Path:
        return self.root.joinpath(*["d"] * DEEP, "tmp")

    @property
    def out(self) -> Path:
        return self.root / "out"

    def hashes(self) -> dict[str, str]:
        """Every file and link under the sandbox but the output folder, by path: content hash or link target."""
        seen: dict[str, str] = {}
        for top, dirs, files in os.walk(self.root):
            dirs[:] = [d for d in dirs if Path(top, d) != self.out]
            for name in dirs + files:
                path = Path(top, name)
                rel = str(path.relative_to(self.root))
                if path.is_symlink():
                    seen[rel] = "link:" + os.readlink(path)
                elif path.is_file():
                    seen[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
                else:
                    seen[rel] = "dir"
        return seen

    @contextmanager
    def confined(self) -> Iterator[None]:
        """Work areas made under the sandbox's deep temporary folder while the commands run."""
        previous = tempfile.tempdir
        tempfile.tempdir = str(self.temp)
        try:
            yield
        finally:
            tempfile.tempdir = previous


def make_sandbox(root: Path, pristine: Path) -> Sandbox:
    root.mkdir(parents=True)
    box = Sandbox(root, root / "repo")
    shutil.copytree(pristine, box.repo, symlinks=True)
    hooks = box.repo / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    (hooks / "pre-commit").write_text(HOOK)
    box.home.mkdir()
    (box.home / ".bashrc").write_text(BASHRC)
    (box.home / ".gitconfig").write_text("[user]\n\tname = me\n")
    box.temp.mkdir(parents=True)
    (box.temp.parent / "canary.rego").write_text("package canary\n")
    box.out.mkdir()
    return box


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo repository with a function chart deployed to prod-addon and a policy folder, on main."""
    from tests.support.helpers import commit_files

    repo = tmp_path_factory.mktemp("pristine") / "repo"
    load_demo_builder().build_repo(repo)
    config = (repo / "kai-gitops.yaml").read_text()
    commit_files(
        repo,
        {
            "kai-gitops.yaml": config + WORKLOAD + POLICIES,
            f"{CHART}/Chart.yaml": "apiVersion: v2\nname: fn\nversion: 0.1.0\n",
            f"{CHART}/values.yaml": "replicas: 2\n",
            f"{CHART}/templates/sts.yaml": STS,
            f"{POLICY}/acme/names.rego": USER_RULE,
        },
        "a function chart and a policy",
    )
    return repo


def commands(box: Sandbox, ref: str, *, chart_only: bool) -> dict[str, list[Any]]:
    """Every command that reads `ref`: those that read only the policy folder are left out when only the
    chart is hostile."""
    repo = ["--repo", box.repo, "--ref", ref]
    live = ["--cluster", "prod-addon", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml"]
    every = {
        "check": ["check", *repo],
        "check --base": ["check", *repo, "--base", "main"],
        "diff": ["diff", *repo, *live],
        "reconcile": ["reconcile", *repo, *live],
        "policy bundle": ["policy", "bundle", *repo, "-o", box.out / "bundle.tar.gz"],
    }
    return {name: args for name, args in every.items() if not chart_only or name.startswith("check")}


def run_confined(box: Sandbox, args: list[Any]) -> tuple[int, str, str]:
    with box.confined():
        return run_cli(args, env={"HOME": str(box.home), "XDG_CACHE_HOME": str(box.home / ".cache")})


def test_the_clean_branch_passes_every_command(helm: Path, pristine: Path, tmp_path: Path) -> None:
    """The sandbox's repository is sound: only a hostile entry makes a command fail, and nothing is left."""
    box = make_sandbox(tmp_path / "sb", pristine)
    before = box.hashes()
    for name, args in commands(box, "main", chart_only=False).items():
        code, _, stderr = run_confined(box, args)
        assert code in (0, 2), (name, stderr)
    assert box.hashes() == before
    assert (box.out / "bundle.tar.gz").is_file() and not list(box.temp.iterdir())


# -- generated hostile trees ----------------------------------------------------------------------------------

TAILS = ("home/.bashrc", "repo/.git/hooks/pre-commit", "planted", "d/canary.rego")


def _name(text: str, suffix: str) -> bytes:
    return (text + suffix).encode("utf-8", "surrogateescape")


def hostile_entries(sandbox: str, suffix: str) -> st.SearchStrategy[tuple[Raw, ...]]:
    """One or two entries no plain checkout would hold; `suffix` ('.rego' in a policy folder) makes each one
    an entry the walk takes. Absolute names point only into `sandbox`; `..` climbs stay within DEEP folders."""
    payload = b"#!/bin/sh\necho pwned\n"
    climb = st.builds(lambda k, tail: "../" * k + tail, st.integers(1, DEEP), st.sampled_from(TAILS))
    absolute = st.sampled_from(TAILS).map(lambda tail: f"{sandbox}/{tail}")
    joined = st.lists(st.sampled_from(["..", ".", "", "x", "templates"]), min_size=2, max_size=5).map(
        lambda parts: "/".join([st_first(parts[0]), *parts[1:]])
    )
    windows = st.sampled_from(
        ["CON", "aux", "NUL.txt", "com1", "LPT9.yaml", "con .yaml", "C:evil", "c:\\evil", "..\\..\\evil", "\\evil"]
    )
    odd_text = st.sampled_from(["evil\nname", "\x1b]0;t\x07", "tab\there", "\x7f", "a" * 300, "\udcff\udcfe"])
    plain = st.one_of(climb, absolute, joined, windows, odd_text).map(lambda n: (Raw(BLOB, _name(n, suffix), payload),))
    # a chain of folders named '..', '.' or '' (at most DEEP), or one folder with an absolute or climbing name,
    # ending in a file
    leaf = st.sampled_from(["planted", ".bashrc"]).map(lambda tail: _name(tail, suffix))
    dots = st.lists(st.sampled_from(["..", ".", ""]), min_size=1, max_size=DEEP)
    folders = st.one_of(dots, absolute.map(lambda a: [a]), climb.map(lambda c: [c]))
    chain = st.builds(lambda names, tail: _chain(names, tail, payload), folders, leaf)
    cafe = "caf\u00e9"
    folded = st.sampled_from(
        [
            ("values", "Values"),
            ("x", "X"),
            (cafe, unicodedata.normalize("NFD", cafe)),
            ("dup", "dup"),
            ("straße", "STRASSE"),
        ]
    ).map(lambda pair: tuple(Raw(BLOB, _name(n, suffix), payload) for n in pair))
    link_target = st.sampled_from([f"{sandbox}/home/.bashrc", "../../../home/.bashrc", "/etc/passwd"])
    link = link_target.map(lambda t: (Raw(LINK, _name("link", suffix), t.encode()),))
    gitlink = st.binary(min_size=20, max_size=20).map(lambda oid: (Raw(GITLINK, _name("sub", suffix), oid),))
    modes = st.sampled_from([0o100600, 0o100777, 0o100000, 0o000000, 0o140000, 0o060000, 0o100666, 0o010644, 0o040755])
    odd_mode = modes.map(lambda m: (Raw(m, _name("odd", suffix), payload),))
    mistyped = st.sampled_from(
        [
            (Raw(BLOB, _name("tree-as-file", suffix), (Raw(BLOB, b"x", payload),)),),
            (Raw(TREE, b"file-as-tree", payload),),
        ]
    )
    return st.one_of(plain, chain, folded, link, gitlink, odd_mode, mistyped)


def st_first(part: str) -> str:
    """A joined name never starts with '/' (that would name this machine's root, outside the sandbox)."""
    return part or "."


def _chain(names: list[str], leaf: bytes, payload: bytes) -> tuple[Raw, ...]:
    entry = Raw(BLOB, leaf, payload)
    for name in reversed(names):
        entry = Raw(TREE, name.encode("utf-8", "surrogateescape"), (entry,))
    return (entry,)


@st.composite
def hostile_commits(draw: st.DrawFn, sandbox: str) -> tuple[str, tuple[Raw, ...] | None, tuple[Raw, ...] | None]:
    """(where, chart entries, policy entries): the hostile entries go into the chart, the policy folder or
    both, at the folder's top or one folder down."""
    where = draw(st.sampled_from(["chart", "policy", "both"]))
    chart = policy = None
    if where in ("chart", "both"):
        bad = draw(hostile_entries(sandbox, ""))
        chart = chart_entries(inside=bad) if draw(st.booleans()) else chart_entries(extra=bad)
    if where in ("policy", "both"):
        bad = draw(hostile_entries(sandbox, ".rego"))
        policy = policy_entries(inside=bad) if draw(st.booleans()) else policy_entries(extra=bad)
    return where, chart, policy


EXAMPLES = 30


# No shrinking: one example is five full runs; the failure prints the tree as drawn.
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_hostile_tree_writes_nothing_outside_the_work_area(
    helm: Path, pristine: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    box = make_sandbox(tmp_path_factory.mktemp("example") / "sb", pristine)
    where, chart, policy = data.draw(hostile_commits(str(box.root)), label="hostile")
    commit_hostile(box.repo, "pr", chart, policy)
    before = box.hashes()
    for name, args in commands(box, "pr", chart_only=where == "chart").items():
        code, stdout, stderr = run_confined(box, args)
        assert box.hashes() == before, name
        assert not list(box.temp.iterdir()), name  # the work area is gone too
        assert_one_line_error(code, stdout, stderr)
    assert not (box.out / "bundle.tar.gz").exists()


# -- a real push of a hostile tree ----------------------------------------------------------------------------


def git(*args: Any, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        ["git", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=120
    )


def test_a_pushed_hostile_tree_is_refused_by_check_base_and_writes_nothing(
    helm: Path, pristine: Path, tmp_path: Path
) -> None:
    """A real `git push` (the server's receive.fsckObjects left at its default) of a branch whose chart holds
    an absolute name, a `..` climb and a folder named `..`; cloned, then checked as a pull request."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    box = make_sandbox(tmp_path / "sb", pristine)
    clone = box.root / "clone"
    payload = b"#!/bin/sh\necho pwned\n"
    hostile = (
        Raw(BLOB, f"{box.root}/home/.bashrc".encode(), payload),
        Raw(BLOB, b"../../../" + b"../" * DEEP + b"clone/.git/hooks/pre-commit", payload),
        Raw(TREE, b"..", (Raw(TREE, b"..", (Raw(BLOB, b"planted", payload),)),)),
    )
    commit_hostile(box.repo, "pr", chart_entries(extra=hostile), None)
    remote = box.root / "remote.git"
    assert git("init", "--bare", "--initial-branch=main", remote).returncode == 0
    pushed = git("push", remote, "main", "pr", cwd=box.repo)
    assert pushed.returncode == 0, pushed.stderr  # the server accepts the tree as it is
    cloned = git("clone", remote, clone)
    assert cloned.returncode == 0, cloned.stderr  # main checks out; the pull request is a remote branch
    (clone / ".git" / "hooks" / "pre-commit").write_text(HOOK)
    fsck = git("fsck", cwd=clone)  # what a fsck would have said: the tree is not one Git writes
    assert "fullPathname" in fsck.stdout + fsck.stderr and "hasDotdot" in fsck.stdout + fsck.stderr
    before = box.hashes()
    code, stdout, stderr = run_confined(box, ["check", "--repo", clone, "--ref", "origin/pr", "--base", "main"])
    assert (box.home / ".bashrc").read_text() == BASHRC
    assert box.hashes() == before
    assert not list(box.temp.iterdir())
    assert_one_line_error(code, stdout, stderr, "charts/fn: the tree entry", "at ref origin/pr")


# -- the rules, one by one --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name",
    [
        "",
        ".",
        "..",
        "/etc/passwd",
        "\\evil",
        "a/b",
        "a\\b",
        "nul\0byte",
        "line\nbreak",
        "\x1b[2J",
        "C:evil",
        "z:",
        "CON",
        "con",
        "aux.yaml",
        "NUL.tar.gz",
        "com1",
        "LPT9.x",
        "COM\u00b9",
        "con .yaml",
        "a" * 256,
        "\udcff",
    ],
)
def test_a_name_that_is_not_one_plain_file_name_is_refused(name: str) -> None:
    assert name_problem(name) is not None


@pytest.mark.parametrize(
    "name",
    [
        "Chart.yaml",
        ".helmignore",
        "values-prod.yaml",
        "console.yaml",
        "com10",
        "a..b",
        "...",
        "naïve.rego",
        "a" * 255,
        "auxiliary.yaml",
        "c.yaml",
    ],
)
def test_a_plain_file_name_is_taken(name: str) -> None:
    assert name_problem(name) is None


def test_the_work_area_writes_only_inside_itself_and_is_removed(tmp_path: Path) -> None:
    with WorkArea("test") as work:
        written = work.write("a/b/c.yaml", b"x", shown="charts/fn/a/b/c.yaml")
        root = work.root
        assert written == root / "a/b/c.yaml" and written.read_bytes() == b"x"
        assert oct(root.stat().st_mode & 0o777) == "0o700" and oct(written.stat().st_mode & 0o777) == "0o600"
    assert not root.exists()


@pytest.mark.parametrize(
    ("path", "needle"),
    [
        ("../x", "'..' is not a file name"),
        ("/abs", "'' is not a file name"),
        ("a//b", "'' is not a file name"),
        ("a/C:x", "'C:x' starts with a Windows drive letter"),
        ("aux.yaml", "'aux.yaml' is a Windows device name"),
    ],
)
def test_the_work_area_refuses_a_bad_path(path: str, needle: str) -> None:
    with WorkArea("test") as work, pytest.raises(UserError) as refused:
        work.write(path, b"x", shown=f"charts/fn/{path}")
    assert needle in refused.value.message and refused.value.where == f"charts/fn/{path}"


def test_the_work_area_refuses_a_case_fold_collision_and_a_second_write() -> None:
    with WorkArea("test") as work:
        work.write("t/values.yaml", b"x", shown="v1")
        with pytest.raises(UserError, match="name one file on a case-insensitive file system"):
            work.write("T/other.yaml", b"x", shown="v2")
        with pytest.raises(UserError, match="name one file on a case-insensitive file system"):
            work.write("t/Values.yaml", b"x", shown="v3")
        with pytest.raises(UserError, match="cannot write this file into the private work area: File exists"):
            work.write("t/values.yaml", b"y", shown="v4")
        assert (work.root / "t/values.yaml").read_bytes() == b"x"


def test_the_work_area_never_follows_a_link_planted_inside_it(tmp_path: Path) -> None:
    """Another process of this user swaps a folder or a file of the area for a link: nothing is written
    through it (the descriptors are opened with O_NOFOLLOW)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    with WorkArea("test") as work:
        (work.root / "linked").symlink_to(outside)
        with pytest.raises(UserError, match="cannot make the folder linked"):
            work.write("linked/x.yaml", b"x", shown="x")
        (work.root / "file.yaml").symlink_to(outside / "target.yaml")
        with pytest.raises(UserError, match="cannot write this file"):
            work.write("file.yaml", b"x", shown="file.yaml")
    assert list(outside.iterdir()) == []


def tree_repo(tmp_path: Path, chart: tuple[Raw, ...] | Callable[[pygit2.Repository], pygit2.Oid]) -> Path:
    """A repository whose main holds `chart` (entries, or what writes the tree) at charts/fn."""
    from tests.support.helpers import make_repo

    path = make_repo(tmp_path, {"README.md": "x\n"})[0]
    repo = pygit2.Repository(str(path))
    head = repo.head.peel(pygit2.Commit)
    oid = write_tree(repo, chart) if isinstance(chart, tuple) else chart(repo)
    tree = replace_subtree(repo, head.tree, ["charts", "fn"], oid)
    sig = pygit2.Signature("t", "t@example.invalid", 1764400000, 0)
    repo.create_commit("refs/heads/main", sig, sig, "chart", tree, [head.id])
    return path


def nested(repo: pygit2.Repository, levels: int, names: tuple[bytes, ...]) -> pygit2.Oid:
    """`levels` trees, each naming the one below under every one of `names`, above one file."""
    oid = write_tree(repo, (Raw(BLOB, b"x.yaml", b"x"),))
    for _ in range(levels):
        oid = repo.odb.write(ObjectType.TREE, b"".join(b"40000 %s\0" % name + oid.raw for name in names))
    return oid


def walked(path: Path, suffix: str = "") -> list[str]:
    from reconciler.sources.git import open_tree

    return [p for p, _ in open_tree(str(path), "main").iter_files(CHART, suffix=suffix)]


def test_a_tree_bomb_and_a_deep_tree_are_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from reconciler.sources import materialize

    monkeypatch.setattr(materialize, "MAX_ENTRIES", 1000)
    bomb = tree_repo(tmp_path / "bomb", lambda repo: nested(repo, 40, (b"a", b"b")))  # 2^40 files, 80 entries
    with pytest.raises(UserError, match="is over 1,000 entries"):
        walked(bomb)
    deep = tree_repo(tmp_path / "deep", lambda repo: nested(repo, 2000, (b"d",)))  # past Python's recursion limit
    with pytest.raises(UserError, match="is deeper than 64 folders"):
        walked(deep)


def test_only_the_entries_a_walk_takes_are_judged(tmp_path: Path) -> None:
    """In a policy folder, a README linked elsewhere or a submodule beside the .rego files is no policy:
    skipped as before. Every folder is walked, so a bad folder name is refused whatever it holds."""
    beside = (
        Raw(LINK, b"README.md", b"../../README.md"),
        Raw(GITLINK, b"vendor", b"\1" * 20),
        Raw(BLOB, b"CON", b"x"),
        Raw(BLOB, b"a.rego", b"package a\n"),
    )
    path = tree_repo(tmp_path / "beside", beside)
    assert walked(path, ".rego") == [f"{CHART}/a.rego"]
    with pytest.raises(UserError, match="'CON' at ref main is a Windows device name"):
        walked(path)
    folder = tree_repo(tmp_path / "folder", (Raw(TREE, b"..", (Raw(BLOB, b"notes.txt", b"x"),)),))
    with pytest.raises(UserError, match=r"the tree entry '\.\.' at ref main is not a file name"):
        walked(folder, ".rego")
    odd = tree_repo(tmp_path / "odd", (Raw(0o040755, b"lib", (Raw(BLOB, b"b.rego", b"package b\n"),)),))
    with pytest.raises(UserError) as refused:
        walked(odd, ".rego")
    assert refused.value.line().startswith(f"{CHART}/lib: has mode 40755 at ref main, which Git never writes")


def test_a_corrupt_or_missing_object_is_one_line(tmp_path: Path) -> None:
    missing = tree_repo(tmp_path / "missing", (Raw(BLOB, b"Chart.yaml", b"x"),))
    repo = pygit2.Repository(str(missing))
    blob_id = repo.revparse_single(f"main:{CHART}/Chart.yaml").id
    shutil.rmtree(Path(repo.path) / "objects" / str(blob_id)[:2])
    with pytest.raises(UserError, match="the Git object of this entry at ref main is missing"):
        walked(missing)
    empty = tree_repo(tmp_path / "empty", (Raw(BLOB, b"", b"x"), Raw(BLOB, b"Chart.yaml", b"x")))
    with pytest.raises(UserError, match="the tree entry '' at ref main is not a file name"):
        walked(empty)


# -- `# Source:` comments a template writes itself ----------------------------------------------------------------

OWN_SOURCE = [
    "fn/../../../../etc/passwd",
    "/etc/passwd",
    "fn//etc/passwd",
    "fn/templates/../../../kai-gitops.yaml",
    "fn/templates/missing.yaml",
    "fn/",
]


@pytest.mark.parametrize("source", OWN_SOURCE)
def test_a_source_comment_naming_no_file_of_the_chart_points_at_the_chart(source: str) -> None:
    from reconciler.model.config import WorkloadConfig
    from reconciler.model.workloads import rendered_objects

    files = {"charts/fn/templates/sts.yaml": "kind: ConfigMap\n"}
    render = (
        "---\n# Source: fn/templates/sts.yaml\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n"
        f"---\n# Source: fn/templates/sts.yaml\n# Source: {source}\napiVersion: v1\nkind: ConfigMap\n"
        "metadata:\n  name: b\n"
    )
    workload = WorkloadConfig("fn", ("gpu",), chart="charts/fn")
    honest, forged = rendered_objects(render, workload, files.get).objects
    assert honest.doc.file == "charts/fn/templates/sts.yaml"
    assert forged.doc.file == "charts/fn" and forged.doc.locate(("kind",)).line == 1


def test_sarif_and_annotations_stay_in_the_repository_whatever_a_template_says(helm: Path, tmp_path: Path) -> None:
    """The template's own `# Source:` comment sits nearer its object than Helm's: the finding is the chart's."""
    from tests.support.checks_function_charts import TEMPLATE_STS, chart_repo

    forged = "# Source: fn/../../../../../etc/passwd\n" + TEMPLATE_STS
    repo = chart_repo(
        tmp_path,
        {
            "sts.yaml": forged,
            "other.yaml": "# Source: /etc/shadow\n"
            + TEMPLATE_STS.replace("{{ .Release.Name }}-worker", "{{ .Release.Name }}-other"),
        },
    )
    out = tmp_path / "out"
    code, _, stderr = run_cli(
        [
            "check",
            "--repo",
            repo,
            "-o",
            f"sarif={out}/r.sarif",
            "-o",
            f"json={out}/r.json",
            "-o",
            f"github={out}/annotations.txt",
        ]
    )
    assert code == 2, stderr
    sarif = json.loads((out / "r.sarif").read_text())
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for run in sarif["runs"]
        for result in run["results"]
        for loc in result.get("locations", [])
    }
    workload = [
        f
        for c in json.loads((out / "r.json").read_text())["clusters"]
        for f in c["findings"]
        if f["rule"] == "NVCF-F-002"
    ]
    assert len(workload) == 2 and {f["location"]["file"] for f in workload} == {"charts/fn"}
    assert "charts/fn" in uris and not any("etc/" in uri or ".." in uri or uri.startswith("/") for uri in uris)
    annotations = (out / "annotations.txt").read_text()
    assert "file=charts/fn," in annotations and "etc/" not in annotations


# -- charts within a memory budget ------------------------------------------------------------------------------


def test_helm_runs_under_the_address_space_limit_of_the_option(tmp_path: Path) -> None:
    """The limit holds for the --helm binary and what it starts: a wrapper's shell reports its own."""
    from tests.support.checks_function_charts import TEMPLATE_STS, chart_repo

    fake = tmp_path / "helm"
    fake.write_text('#!/bin/sh\necho "limit $(ulimit -v) KiB" >&2\nexit 1\n')
    fake.chmod(0o755)
    repo = chart_repo(tmp_path, {"sts.yaml": TEMPLATE_STS})
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--helm", fake, "--helm-memory", 123])
    assert_one_line_error(code, stdout, stderr, "helm template failed for chart charts/fn: limit 125952 KiB")
    code, stdout, stderr = run_cli(["check", "--repo", repo, "--helm", fake])
    assert_one_line_error(code, stdout, stderr, f"limit {4096 * 1024} KiB")


SMALL_BUDGET_MB = 2048  # above the ~1.5 GB of address space helm maps to render a small chart, far below what
# `until` asks


def test_a_chart_past_its_memory_budget_is_one_line_naming_the_option(helm: Path, tmp_path: Path) -> None:
    """`until` makes a list of that many numbers at once: 8 bytes each, 3.2 GB here, refused at its mapping."""
    from tests.support.checks_function_charts import TEMPLATE_STS, chart_repo

    small = chart_repo(tmp_path / "small", {"sts.yaml": TEMPLATE_STS})
    code, _, stderr = run_cli(["check", "--repo", small, "--helm-memory", SMALL_BUDGET_MB])
    assert code == 2, stderr  # an ordinary chart renders within the budget
    huge = chart_repo(tmp_path / "huge", {"sts.yaml": TEMPLATE_STS, "huge.yaml": "{{- $n := until 400000000 }}\n"})
    code, stdout, stderr = run_cli(["check", "--repo", huge, "--helm-memory", SMALL_BUDGET_MB])
    assert_one_line_error(
        code,
        stdout,
        stderr,
        "charts/fn: workload 'fn': helm template of chart charts/fn exceeded "
        f"its memory budget of {SMALL_BUDGET_MB:,} MB",
        "raise --helm-memory",
    )


@pytest.mark.parametrize(
    ("entries", "line"),
    [
        (
            (Raw(BLOB, b"values.yaml", b"a"), Raw(BLOB, b"Values.yaml", b"b")),
            "charts/fn: the tree at ref main names one file as 'Values.yaml' and 'values.yaml' (a case-insensitive",
        ),
        (
            (Raw(BLOB, b"a.yaml", b"a"), Raw(BLOB, b"a.yaml", b"b")),
            "charts/fn: the tree at ref main holds the entry 'a.yaml' twice",
        ),
        ((Raw(GITLINK, b"vendor", b"\1" * 20),), "charts/fn/vendor: is a submodule (gitlink) at ref main"),
        ((Raw(0o100600, b"x.yaml", b"a"),), "charts/fn/x.yaml: has mode 100600 at ref main, which Git never writes"),
        ((Raw(LINK, b"x.yaml", b"/etc/passwd"),), "charts/fn/x.yaml: is a symbolic link at ref main"),
        (
            (Raw(BLOB, b"x.yaml", (Raw(BLOB, b"y", b"y"),)),),
            "charts/fn/x.yaml: the entry at ref main says blob but its object is a tree",
        ),
        (
            (Raw(BLOB, b"evil\n::error::x", b"a"),),
            "charts/fn: the tree entry 'evil\\n::error::x' at ref main holds a control character",
        ),
    ],
)
def test_each_refusal_is_one_line_naming_the_path_and_the_ref(
    tmp_path: Path, entries: tuple[Raw, ...], line: str
) -> None:
    with pytest.raises(UserError) as refused:
        walked(tree_repo(tmp_path, entries))
    assert refused.value.line().startswith(line), refused.value.line()
