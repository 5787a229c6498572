"""kai-gitops.yaml as a report's run read it, for the code that acts on a report (drift issues, PolicyReports,
fix pull requests): the run's own copy when it has one, else read again at the commit the report names."""

from __future__ import annotations

from reconciler.model.config import RepoConfig
from reconciler.report.report import Report
from reconciler.sources.git import GitTree, open_tree
from reconciler.sources.repoconfig import CONFIG_FILE, parse_repo_config


def report_repo_config(report: Report, repo: str | None, *, tree: GitTree | None = None) -> RepoConfig | None:
    """`report.config`, else the file at the commit of the report's first cluster read from Git (at its ref
    for a working-tree run), in `repo` as the run was given it, or in `tree` when the caller has that commit
    open already (a clone URL is not fetched twice). None when the report read no Git (doctor without --repo).
    """
    if report.config is not None:
        return report.config
    git = next((c.git for c in report.clusters if c.git), None)
    if git is None:
        return None
    if tree is None:
        tree = open_tree(repo, git.commit or git.ref, worktree=git.worktree)
    return parse_repo_config(tree.read(CONFIG_FILE), CONFIG_FILE)
