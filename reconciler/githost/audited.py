"""One structured audit line per Git-host write (issue and PR/MR create, update, comment, close, reopen).

Reconcile's apply writes an audit line per cluster write; the Git host is written to as well, so each write
there leaves the same kind of record: `audit` (the operation), the object in the host's words (`issue #N`,
`pull request #N` on GitHub, `merge request !N` on GitLab), the host and repository, the title, and the
body's size and SHA-256 (so a log stack can tell two writes apart without holding the text). Never the
token: every text passes `settings.scrub`, and the JSON log formatter redacts each field once more.
"""

from __future__ import annotations

import hashlib
import logging

from reconciler.githost.base import GitHost, HostComment, HostIssue, HostPull, HostSettings
from reconciler.model.rollout import CommitStatus

log = logging.getLogger("kai_gitops.githost")


class AuditedHost:
    """A `GitHost` that logs each write after it succeeded; reads pass straight through."""

    def __init__(self, host: GitHost) -> None:
        self._host = host
        self.settings: HostSettings = host.settings

    def find_issue(self, marker: str, label: str) -> HostIssue | None:
        return self._host.find_issue(marker, label)

    def issue_comments(self, number: int) -> list[HostComment]:
        return self._host.issue_comments(number)

    def find_pull(self, marker: str, head: str) -> HostPull | None:
        return self._host.find_pull(marker, head)

    def open_pull_from(self, head: str) -> HostPull | None:
        return self._host.open_pull_from(head)

    def create_issue(
        self, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostIssue:
        issue = self._host.create_issue(title, body, labels, assignees)
        self._audit("create", "issue", issue.number, title=title, body=body, labels=list(labels))
        return issue

    def update_issue(self, number: int, *, title: str | None = None, body: str | None = None) -> HostIssue:
        issue = self._host.update_issue(number, title=title, body=body)
        self._audit("update", "issue", number, title=title, body=body)
        return issue

    def comment_issue(self, number: int, body: str) -> HostComment:
        comment = self._host.comment_issue(number, body)
        self._audit("comment", "issue", number, body=body)
        return comment

    def close_issue(self, number: int) -> HostIssue:
        issue = self._host.close_issue(number)
        self._audit("close", "issue", number)
        return issue

    def reopen_issue(self, number: int) -> HostIssue:
        issue = self._host.reopen_issue(number)
        self._audit("reopen", "issue", number)
        return issue

    def create_pull(
        self, head: str, base: str, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostPull:
        pull = self._host.create_pull(head, base, title, body, labels, assignees)
        self._audit("create", self.settings.words.pull, pull.number, title=title, body=body, head=head, base=base)
        return pull

    def update_pull(self, number: int, *, title: str | None = None, body: str | None = None) -> HostPull:
        pull = self._host.update_pull(number, title=title, body=body)
        self._audit("update", self.settings.words.pull, number, title=title, body=body)
        return pull

    def comment_pull(self, number: int, body: str) -> HostComment:
        comment = self._host.comment_pull(number, body)
        self._audit("comment", self.settings.words.pull, number, body=body)
        return comment

    def close_pull(self, number: int) -> HostPull:
        pull = self._host.close_pull(number)
        self._audit("close", self.settings.words.pull, number)
        return pull

    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        return self._host.commit_statuses(sha)

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        status = self._host.set_commit_status(sha, context, state, description)
        log.info(
            "git host: status %s %s on %s in %s",
            context,
            state,
            sha[:12],
            self.settings.repo,
            extra={
                "audit": "status",
                "object": f"commit {sha}",
                "host": self.settings.kind,
                "repo": self.settings.repo,
                "context": context,
                "state": state,
                "description": self.settings.scrub(description),
            },
        )
        return status

    def _audit(
        self,
        operation: str,
        kind: str,
        number: int,
        *,
        title: str | None = None,
        body: str | None = None,
        **more: str | list[str],
    ) -> None:
        scrub = self.settings.scrub
        ref = self.settings.words.issue_ref(number) if kind == "issue" else self.settings.words.pull_ref(number)
        fields: dict[str, str | int | list[str]] = {
            "audit": operation,
            "object": f"{kind} {ref}",
            "host": self.settings.kind,
            "repo": self.settings.repo,
            **more,
        }
        if title is not None:
            fields["title"] = scrub(title)
        if body is not None:
            data = scrub(body).encode()
            fields["bodyBytes"] = len(data)
            fields["bodySha256"] = hashlib.sha256(data).hexdigest()
        log.info("git host: %s %s in %s", operation, fields["object"], self.settings.repo, extra=fields)
