"""`--fix-git` for `check` and `reconcile`: from a report to one fix pull request per cluster.

Reads the same commit the report was built from (never the working tree: a fix is proposed against a
commit the host knows), plans the edits, pushes the branch and opens/updates/closes the PR or MR.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from reconciler.core.errors import UserError
from reconciler.gitfix.branch import Author, FixBranches
from reconciler.gitfix.plan import FixPlan, plan_fix
from reconciler.gitfix.pull_request import FixAction, FixContext, FixOutcome, propose_fix, safe_diff
from reconciler.githost.base import WORDS, HostFlags, HostSettings, HostWords
from reconciler.report.report import Report
from reconciler.sources.settings import GitSettings
from reconciler.telemetry import logs


@dataclass(frozen=True)
class FixGitSettings:
    """`--fix-git` (or its dry run): the repository and ref the run read, and who pushes how."""

    dry_run: bool = False  # show the fix branch and its lines; push nothing, call no host
    # the GitOps repository and ref the run read; the ref's branch is the pull request's target, unless one is set
    git: GitSettings = field(default_factory=GitSettings)
    author: str | None = None  # 'NAME <EMAIL>' of the fix commits; None: the default author
    ssh_key: str | None = None  # private key for an SSH push; None: ssh-agent
    host_flags: HostFlags = field(default_factory=HostFlags)

    @property
    def repo(self) -> str | None:
        return self.git.repo

    @property
    def ref(self) -> str:
        return self.git.ref


def fix_git(
    report: Report, fix: FixGitSettings, *, host: Any = None, echo: Callable[[str], None] | None = None
) -> list[FixOutcome]:
    """Every cluster of `report`; `host` may be given (tests), else it comes from flags, `gitHost:` and the remote."""
    from reconciler.sources.git import open_tree

    say = echo or logs.say
    commit = _read_commit(report)
    tree = open_tree(fix.repo, commit)
    author = Author.parse(fix.author)  # a bad --git-author fails before anything is pushed
    if fix.dry_run:
        words = _dry_run_words(report, tree, fix)
        return [
            _dry_run(cluster.cluster, plan_fix(cluster.cluster, cluster.findings, tree.read), say, words)
            for cluster in report.clusters
        ]
    branches = FixBranches(tree.repo, fix.ssh_key)
    settings = None
    if host is None:
        settings = _host_settings(report, tree, fix)
        from reconciler.githost import open_host

        host = open_host(settings)
    settings = settings or host.settings
    base_branch = settings.base_branch or _branch_of(tree.repo, fix.ref)
    outcomes = []
    for cluster in report.clusters:
        plan = plan_fix(cluster.cluster, cluster.findings, tree.read)
        ctx = FixContext(
            base_branch,
            commit,
            author,
            settings.labels,
            settings.assignees,
            lambda path, line: settings.blob_url(commit, path, line),
            report.command,
            settings.words,
        )
        outcome = propose_fix(host, branches, plan, ctx)
        say(
            _none_possible(cluster.cluster, plan, settings.words)
            if outcome.action is FixAction.NONE and plan.unfixable
            else outcome.line()
        )
        for reason in outcome.skipped:
            say(f"  not fixed automatically: {reason}")
        _say_unfixable(plan, say)
        outcomes.append(outcome)
    return outcomes


def _dry_run(cluster: str, plan: FixPlan, say: Callable[[str], None], words: HostWords) -> FixOutcome:
    """What `--fix-git` would commit, on stderr: no push, no host call (no token needed)."""
    if plan.empty and plan.unfixable:
        say(f"{_none_possible(cluster, plan, words)} [dry run]")
    elif plan.empty:
        say(f"fix {words.pull} for {cluster}: none needed (Git needs no edit) [dry run]")
    else:
        files = ", ".join(change.path for change in plan.changes)
        say(
            f"fix {words.pull} for {cluster}: would push {plan.branch} with {len(plan.fixed)} fix(es) in {files} "
            "[dry run]"
        )
        logs.say_lines(safe_diff(plan, words))  # like the PR body: changed lines only, secrets masked
    for skipped in plan.skipped:
        say(f"  not fixed automatically: {skipped.finding.rule_id}: {skipped.reason}")
    _say_unfixable(plan, say)
    return FixOutcome(
        cluster,
        FixAction.DRY_RUN if not plan.empty else FixAction.NONE,
        None if plan.empty else plan.branch,
        words=words,
    )


def _dry_run_words(report: Report, tree: Any, fix: FixGitSettings) -> HostWords:
    """The host's words when the flags, `gitHost:` or the remote tell which host it is; a pull request
    otherwise (a dry run needs neither a host nor a token)."""
    from reconciler.githost.base import host_kind
    from reconciler.githost.remote import remote_url
    from reconciler.report.repo_config import report_repo_config

    try:
        config = report_repo_config(report, fix.repo, tree=tree)
        url = remote_url(fix.repo) if fix.repo is None or "://" not in fix.repo else fix.repo
        kind = host_kind(url, config.git_host if config else None, fix.host_flags)
    except UserError:
        return WORDS["github"]
    return WORDS.get(kind, WORDS["github"])


def _none_possible(cluster: str, plan: FixPlan, words: HostWords) -> str:
    return f"fix {words.pull} for {cluster}: none possible ({len(plan.unfixable)} error(s) with no automatic fix)"


def _say_unfixable(plan: FixPlan, say: Callable[[str], None]) -> None:
    for finding in plan.unfixable:
        where = finding.location or finding.subject or finding.cluster
        say(f"  no automatic fix: {finding.rule_id} at {where}: {finding.message}")


def _read_commit(report: Report) -> str:
    gits = {c.git.commit for c in report.clusters if c.git}
    if not gits or None in gits:
        raise UserError(
            "--fix-git needs committed files, not --worktree",
            hint="commit the change (the fix branch is based on that commit), then run again",
        )
    if len(gits) != 1:
        raise UserError("the report was read from several commits; --fix-git needs one")
    return str(next(iter(gits)))


def _host_settings(report: Report, tree: Any, fix: FixGitSettings) -> HostSettings:
    from reconciler.githost import resolve_host_settings
    from reconciler.githost.remote import remote_url
    from reconciler.report.repo_config import report_repo_config

    config = report_repo_config(report, fix.repo, tree=tree)
    url = remote_url(fix.repo) if fix.repo is None or "://" not in fix.repo else fix.repo
    return resolve_host_settings(url, config.git_host if config else None, fix.host_flags, os.environ)


def _branch_of(repo: Any, ref: str) -> str:
    """The branch the read ref names (HEAD's branch, `main`, `origin/main`): the fix PR's target."""
    if ref == "HEAD" and not repo.head_is_detached and not repo.head_is_unborn:
        return str(repo.head.shorthand)
    for prefix in ("refs/heads/", "refs/remotes/"):
        name = ref.removeprefix(prefix)
        if f"refs/heads/{name}" in repo.references:
            return name
        if f"refs/remotes/{name}" in repo.references and "/" in name:
            return name.split("/", 1)[1]
    raise UserError(
        f"cannot tell which branch the fix pull request should target from ref '{ref}'",
        hint="pass --git-host-base-branch BRANCH or set gitHost.baseBranch in kai-gitops.yaml",
    )
