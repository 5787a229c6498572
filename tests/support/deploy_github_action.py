"""Shared helpers of tests/deploy/test_github_action.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pygit2
import yaml

from tests.support.helpers import ROOT, make_repo, template_files

ACTION = ROOT / "action.yml"


def action() -> dict[str, Any]:
    return yaml.safe_load(ACTION.read_text())


ACTION_INPUTS = set(action()["inputs"])


def action_step(workflow: dict[str, Any]) -> dict[str, Any]:
    """The step of a workflow that uses this action."""
    (step,) = [s for job in workflow["jobs"].values() for s in job["steps"] if "/kai-gitops@" in s.get("uses", "")]
    return step


def pr_repo(tmp_path: Path, values: str) -> Path:
    """A pull request's checkout: the lab template, the PR's commit on top, origin/main at the base."""
    repo, (base, _) = make_repo(tmp_path, template_files(), [{"clusters/lab/kai-values.yaml": values}])
    pygit2.Repository(str(repo)).references.create("refs/remotes/origin/main", pygit2.Oid(hex=base))
    return repo
