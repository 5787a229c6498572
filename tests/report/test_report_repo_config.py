"""kai-gitops.yaml for the code that acts on a report (drift issues, PolicyReports, fix pull requests): the
run's own copy, else the file at the commit the report was built from, never the branch's newer one."""

from __future__ import annotations

from pathlib import Path

from reconciler.report.repo_config import report_repo_config
from reconciler.report.report import ClusterReport, GitInfo, Report
from reconciler.sources.git import open_tree
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config
from tests.support.helpers import make_repo, standalone_config

CONTEXT = "    kubeContext: {}\n"


def _repo(tmp_path: Path) -> tuple[Path, list[str]]:
    return make_repo(
        tmp_path,
        {CONFIG_FILE: standalone_config(extra=CONTEXT.format("lab-before"))},
        [{CONFIG_FILE: standalone_config(extra=CONTEXT.format("lab-after"))}],
    )


def _report(git: GitInfo | None) -> Report:
    return Report("check", [ClusterReport("lab", git)])


def test_the_file_is_read_at_the_reports_commit(tmp_path: Path) -> None:
    path, (first, _second) = _repo(tmp_path)
    config = report_repo_config(_report(GitInfo(str(path), "main", first)), str(path))
    assert config is not None and config.clusters[0].kube_context == "lab-before"


def test_a_working_tree_report_reads_the_working_tree(tmp_path: Path) -> None:
    path, _ids = _repo(tmp_path)
    (path / CONFIG_FILE).write_text(standalone_config(extra=CONTEXT.format("lab-uncommitted")))
    config = report_repo_config(_report(GitInfo(str(path), "HEAD", None, worktree=True)), str(path))
    assert config is not None and config.clusters[0].kube_context == "lab-uncommitted"


def test_an_open_tree_is_read_instead_of_opening_the_repository_again(tmp_path: Path) -> None:
    path, (first, _second) = _repo(tmp_path)
    tree = open_tree(str(path), first)
    config = report_repo_config(_report(GitInfo("elsewhere", "main", first)), "/nonexistent", tree=tree)
    assert config is not None and config.clusters[0].kube_context == "lab-before"


def test_the_runs_own_config_wins_and_no_git_means_none() -> None:
    own = parse_repo_config(standalone_config(extra=CONTEXT.format("own")).encode())
    report = _report(GitInfo("/nonexistent", "main", "0" * 40))
    report.config = own
    assert report_repo_config(report, "/nonexistent") is own
    assert report_repo_config(_report(None), "/nonexistent") is None
