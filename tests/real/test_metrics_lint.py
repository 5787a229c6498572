"""`promtool check metrics` (tools/promtool) on the textfile a run writes with --metrics-file: a clean run, runs
with findings (diff, and reconcile with its change counts), and an error run written over the findings run's
file (the last-success timestamp carried over). promtool's lint: HELP on every family, counters ending in
_total, base units, no type or unit abbreviations in names, snake_case, no duplicates."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.helpers import CANONICAL_KAI_VALUES, DEMO_SNAPSHOTS, load_demo_builder, make_repo, standalone_config
from tests.support.tools import require_tool

KAI_GITOPS = Path(sys.executable).parent / "kai-gitops"


def run(*args: object) -> int:
    done = subprocess.run(
        [str(KAI_GITOPS), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KAI_GITOPS_LOG_FORMAT": "text"},
    )
    return done.returncode


def promtool_lint(text: str) -> str:
    """promtool's complaints (empty when it has none)."""
    done = subprocess.run(
        [str(require_tool("promtool")), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    complaints = (done.stdout + done.stderr).strip()
    assert (done.returncode == 0) == (not complaints), complaints
    return complaints


@pytest.fixture(scope="module")
def demo_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("metrics") / "gitops"
    load_demo_builder().build_repo(root)
    return root


def test_a_clean_run_s_metrics_pass_promtool(tmp_path: Path) -> None:
    repo, _ = make_repo(tmp_path, {"kai-gitops.yaml": standalone_config(), "kai-values.yaml": CANONICAL_KAI_VALUES})
    metrics = tmp_path / "clean.prom"
    assert run("check", "--repo", repo, "--metrics-file", metrics) == 0
    assert "kai_gitops_last_run_success" in metrics.read_text()
    assert promtool_lint(metrics.read_text()) == ""


def test_runs_with_findings_then_an_error_pass_promtool(demo_repo: Path, tmp_path: Path) -> None:
    snapshot = DEMO_SNAPSHOTS / "prod-addon.yaml"
    metrics = tmp_path / "kai-gitops.prom"
    assert (
        run("diff", "--repo", demo_repo, "--cluster", "prod-addon", "--snapshot", snapshot, "--metrics-file", metrics)
        == 2
    )
    assert "kai_gitops_findings{" in metrics.read_text()
    assert promtool_lint(metrics.read_text()) == ""

    assert (
        run(
            "diff",
            "--repo",
            demo_repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            tmp_path / "missing.yaml",
            "--metrics-file",
            metrics,
        )
        == 1
    )
    failed = metrics.read_text()
    assert "kai_gitops_last_run_success" in failed and "kai_gitops_last_success_timestamp_seconds" in failed
    assert promtool_lint(failed) == ""

    planned = tmp_path / "reconcile.prom"
    assert (
        run(
            "reconcile",
            "--repo",
            demo_repo,
            "--cluster",
            "prod-addon",
            "--snapshot",
            snapshot,
            "--metrics-file",
            planned,
        )
        == 2
    )
    assert "kai_gitops_changes_planned{" in planned.read_text()
    assert promtool_lint(planned.read_text()) == ""


def test_promtool_does_lint() -> None:
    """The checks above mean something: promtool names a family without HELP and a counter without _total."""
    complaints = promtool_lint("# TYPE kai_gitops_runs counter\nkai_gitops_runs 1\n")
    assert "no help text" in complaints and "_total" in complaints
