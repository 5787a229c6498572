"""actionlint (tools/actionlint) on every GitHub Actions workflow the project ships (repo-templates/ci/): workflow
syntax, expressions and their contexts, action inputs, job needs and matrices, permissions; with `shellcheck` on
PATH it also lints each `run:` script. The GitLab CI templates have no pinned linter: tests/deploy/test_ci_templates.py
parses them, checks every kai-gitops call against the command tree and runs the merge-request note step."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.tools import require_tool

CI = Path(__file__).resolve().parents[2] / "repo-templates" / "ci"
# A GitHub workflow has a top-level `jobs:`; a GitLab pipeline's top-level keys are its jobs.
WORKFLOWS = sorted(p for p in CI.glob("*.y*ml") if "jobs" in yaml.safe_load(p.read_text()))


def actionlint(*paths: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(require_tool("actionlint")), "-no-color", *map(str, paths)], capture_output=True, text=True, timeout=60
    )


def test_the_shipped_workflows_are_found() -> None:
    assert [p.name for p in WORKFLOWS] == ["github-actions-sharded.yml", "github-actions.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_finds_nothing(workflow: Path) -> None:
    done = actionlint(workflow)
    assert done.returncode == 0, done.stdout + done.stderr


def test_actionlint_does_lint(tmp_path: Path) -> None:
    """The checks above mean something: a job without runs-on and an unknown context are reported."""
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  check:\n    steps:\n      - run: echo ${{ nope.value }}\n")
    done = actionlint(broken)
    assert done.returncode == 1
    assert '"runs-on" section is missing' in done.stdout and 'undefined variable "nope"' in done.stdout
