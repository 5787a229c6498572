"""Shared helpers of tests/git/test_gitfix_pull.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.support.helpers import file_url, load_demo_builder

HOST_TOKEN = "glpat-HostTokenThatMustNeverBeShown-0123456789"

PUSH_TOKEN = "ghs_PushTokenThatMustNeverBeShown0123456789"


def _demo(tmp_path: Path, remote_url: str | None = None) -> tuple[Path, Path]:
    """The demo repository (template commit, then the operator's PR commit) with a bare remote holding main."""
    work = tmp_path / "work"
    load_demo_builder().build_repo(work)
    bare = tmp_path / "remote.git"
    pygit2.init_repository(str(bare), bare=True, initial_head="main")
    repo = pygit2.Repository(str(work))
    repo.remotes.create("origin", remote_url or file_url(bare))
    return work, bare
