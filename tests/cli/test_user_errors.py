"""Conditions the user can fix are one-line user errors (or, for a reader that left, a quiet exit), never
"internal error … report it": a repository owned by another user, a closed or abandoned stdout."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.helpers import DEMO_SNAPSHOTS, ROOT, assert_one_line_error, load_demo_builder

OTHER_USER = 12345


def _kai_gitops(*args: Any, home: Path, **popen: Any) -> subprocess.Popen[bytes]:
    """The real command in its own process: HOME (Git's global config) and stdout as a user's shell has them."""
    env = {**os.environ, "HOME": str(home), "KAI_GITOPS_CACHE": str(home / "cache")}
    env.pop("KAI_GITOPS_DEBUG", None)
    return subprocess.Popen(
        [sys.executable, "-m", "reconciler", *map(str, args), "--log-format", "text"],
        cwd=ROOT,
        env=env,
        stderr=subprocess.PIPE,
        **popen,
    )


def _finished(proc: subprocess.Popen[bytes]) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, (out or b"").decode(), err.decode()


def _diff(repo: Path) -> list[Any]:
    return ["diff", "--repo", repo, "--cluster", "prod-addon", "--snapshot", DEMO_SNAPSHOTS / "prod-addon.yaml"]


def _owned_by_another_user(path: Path) -> None:
    """What a CI container sees of a checkout mounted from the host: files owned by some other uid."""
    if os.geteuid() != 0:
        pytest.fail("making a repository owned by another user needs root (chown), as the test image runs")
    for root, dirs, files in os.walk(path):
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), OTHER_USER, OTHER_USER, follow_symlinks=False)
    os.chown(path, OTHER_USER, OTHER_USER)


def test_a_repository_owned_by_another_user_names_the_safe_directory_fix(tmp_path: Path) -> None:
    repo = tmp_path / "checkout"
    load_demo_builder().build_repo(repo)
    _owned_by_another_user(repo)
    home = tmp_path / "home"
    home.mkdir()
    code, out, err = _finished(_kai_gitops(*_diff(repo), home=home, stdout=subprocess.PIPE))
    assert_one_line_error(
        code, out, err, str(repo), "owned by another user", f"git config --global --add safe.directory {repo}"
    )
    subprocess.run(
        ["git", "config", "--global", "--add", "safe.directory", str(repo)],
        check=True,
        env={**os.environ, "HOME": str(home)},
    )
    code, out, err = _finished(_kai_gitops(*_diff(repo), home=home, stdout=subprocess.PIPE))
    assert code == 2 and "kai-gitops diff — cluster prod-addon" in out, err  # the hint is the whole fix


def test_a_reader_that_leaves_early_ends_the_run_quietly(demo_repo: Path, tmp_path: Path) -> None:
    """`kai-gitops diff | head`: no error line and no BrokenPipeError at exit; exit 1, not a clean 0 or 2."""
    proc = _kai_gitops(*_diff(demo_repo), "-o", "json", home=tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.close()  # the reader is gone before the report is written
    code, _, err = _finished(proc)
    assert (code, err) == (1, "")


def test_a_reader_that_takes_the_start_and_leaves_cuts_the_report_which_exits_1(
    demo_repo: Path, tmp_path: Path
) -> None:
    """`kai-gitops check -o sarif | head -c 100`: the report (190 kB) outgrows the pipe; the reader leaves with
    the pipe full, the write in progress returns short with no error. Exit 1, as for any cut-off report."""
    proc = _kai_gitops("check", "--repo", demo_repo, "-o", "sarif", home=tmp_path, stdout=subprocess.PIPE)
    assert proc.stdout is not None
    assert len(proc.stdout.read(100)) == 100
    proc.stdout.close()
    code, _, err = _finished(proc)
    assert (code, err) == (1, "")


def test_a_closed_stdout_is_one_line_saying_where_the_report_should_go(demo_repo: Path, tmp_path: Path) -> None:
    proc = _kai_gitops(*_diff(demo_repo), home=tmp_path, preexec_fn=lambda: os.close(1))
    code, out, err = _finished(proc)
    assert_one_line_error(code, out, err, "standard output is closed", "redirect it to a file")


def test_a_full_stdout_is_one_line_saying_no_space_is_left(demo_repo: Path, tmp_path: Path) -> None:
    """`kai-gitops diff … > /dev/full` (a full disk): not "internal error: OSError: [Errno 28]", and no second
    complaint from the interpreter's own flush at exit. The report and every other stdout writer (schema)."""
    with open("/dev/full", "wb") as full:
        report = _finished(_kai_gitops(*_diff(demo_repo), home=tmp_path, stdout=full))
        schema = _finished(
            subprocess.Popen(
                [sys.executable, "-m", "reconciler", "schema"], cwd=ROOT, stdout=full, stderr=subprocess.PIPE
            )
        )
    for code, out, err in (report, schema):
        assert_one_line_error(code, out, err, "cannot write to standard output: No space left on device", "free space")
