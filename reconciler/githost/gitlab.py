"""GitLab (gitlab.com and self-managed, also under a path prefix such as https://example.com/gitlab) through
python-gitlab.

python-gitlab's own loop (obey_rate_limit, ten retries, each sleeping `Retry-After`) is switched off per
request, and the last response's headers are kept, because its exceptions carry no headers and the bounded
policy in retry.py needs `Retry-After` / `RateLimit-Reset` to decide.

The token's own username comes from `GET /user` (project and group access tokens answer with their bot
user); a token that may not read it leaves only `gitHost.botIdentities` to adopt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from reconciler.core.errors import UserError
from reconciler.githost.base import Adoption, HostComment, HostIssue, HostPull, HostSettings, has_marker
from reconciler.githost.redaction import scrub_body
from reconciler.githost.retry import RateLimited, RetryPolicy, Transient, limit_wait
from reconciler.model.rollout import CommitStatus, StatusState

if TYPE_CHECKING:
    import gitlab
    import requests
    from gitlab.base import RESTObject
    from gitlab.v4.objects import (
        Project,
        ProjectCommitStatus,
        ProjectIssue,
        ProjectIssueNote,
        ProjectMergeRequest,
        ProjectMergeRequestNote,
    )

T = TypeVar("T")
Saved = TypeVar("Saved", "ProjectIssue", "ProjectMergeRequest")
_STATES = {"opened": "open", "closed": "closed", "merged": "merged", "locked": "closed"}
# GitLab's commit status states, read as both hosts' four; written: failure and error are `failed`.
_STATUS_READ: dict[str, StatusState] = {
    "success": "success",
    "pending": "pending",
    "running": "pending",
    "created": "pending",
    "failed": "failure",
    "canceled": "failure",
}
_STATUS_WRITE = {"success": "success", "pending": "pending", "failure": "failed", "error": "failed"}


def _client(settings: HostSettings, last_response: dict[str, Mapping[str, str]]) -> gitlab.Gitlab:
    """`last_response["headers"]`: the headers of the latest answer (python-gitlab's errors carry none)."""
    import gitlab
    import requests

    session = requests.Session()
    session.hooks["response"].append(lambda response, *args, **kwargs: last_response.update(headers=response.headers))

    class Client(gitlab.Gitlab):
        # Any: a pass-through to python-gitlab's own http_request, whatever its arguments
        def http_request(self, *args: Any, **kwargs: Any) -> requests.Response:
            kwargs |= {"obey_rate_limit": False, "max_retries": 0, "retry_transient_errors": False}
            return super().http_request(*args, **kwargs)

    return Client(
        settings.api_url,
        private_token=settings.token,
        timeout=settings.timeout,
        session=session,
        per_page=100,
        keep_base_url=True,
    )


class GitLabHost:
    kind = "gitlab"

    def __init__(self, settings: HostSettings, *, policy: RetryPolicy | None = None) -> None:
        self.settings = settings
        self.policy = policy or RetryPolicy(settings, "GitLab")
        self._last_response: dict[str, Mapping[str, str]] = {}
        self._gl = _client(settings, self._last_response)
        self._project_obj: Project | None = None
        self._user_ids: dict[str, int] = {}
        self._adoption: Adoption | None = None

    # -- plumbing -------------------------------------------------------------------------------------------
    def _run(self, what: str, call: Callable[[], T], *, idempotent: bool = True) -> T:
        return self.policy.run(what, call, self._classify, idempotent=idempotent)

    @property
    def _project(self) -> Project:
        if self._project_obj is None:
            path = self.settings.repo
            self._project_obj = self._run(f"opening project {path}", lambda: self._gl.projects.get(path))
        return self._project_obj

    def _classify(self, exc: Exception) -> Exception | None:
        from gitlab.exceptions import GitlabAuthenticationError, GitlabError
        from requests import exceptions as http

        if isinstance(exc, (http.ConnectionError, http.Timeout)):
            return Transient(None, self.settings.scrub(f"cannot reach {self.settings.api_url}: {type(exc).__name__}"))
        if not isinstance(exc, GitlabError):
            return None
        status = exc.response_code or 0
        message = self.settings.scrub(str(exc.error_message or ""))[:200]
        headers = self._last_response.get("headers")
        if status == 429 or (status == 403 and "rate limit" in message.lower()):
            return RateLimited(limit_wait(headers, self.policy.clock(), 60.0), f"HTTP {status}")
        if status >= 500:
            return Transient(status, f"HTTP {status}")
        if isinstance(exc, GitlabAuthenticationError) or status == 401:
            text = "GitLab rejected the token (HTTP 401); check $GITLAB_TOKEN / $KAI_GITOPS_GIT_HOST_TOKEN"
        elif status == 404:
            text = (
                f"GitLab project or object not found (HTTP 404): is '{self.settings.repo}' right, and can the "
                "token see it?"
            )
        elif status == 403:
            text = f"GitLab refused (HTTP 403): {message or 'forbidden'}; the token needs the api scope"
        else:
            text = f"GitLab answered HTTP {status}: {message or 'no message'}"
        return UserError(text, where=f"{self.settings.api_url} {self.settings.repo}")

    @property
    def adoption(self) -> Adoption:
        if self._adoption is None:
            user = self._run("reading the token's user (GET /user)", self._token_username)
            self._adoption = Adoption(user, self.settings.bot_identities)
        return self._adoption

    def _token_username(self) -> str | None:
        from gitlab.exceptions import GitlabError

        try:
            self._gl.auth()
        except GitlabError as exc:
            if exc.response_code == 403 and isinstance(self._classify(exc), UserError):
                return None  # a token without read access to its own user: only the configured bots
            raise
        return str(self._gl.user.username) if self._gl.user is not None else None

    def _assignee_ids(self, usernames: tuple[str, ...]) -> list[int]:
        ids = []
        for name in usernames:
            if name not in self._user_ids:
                found = self._run(f"looking up user {name}", partial(self._gl.users.list, username=name))
                if not found:
                    raise UserError(f"GitLab has no user '{name}'", hint="fix gitHost.assignees")
                self._user_ids[name] = found[0].id
            ids.append(self._user_ids[name])
        return ids

    # -- issues ---------------------------------------------------------------------------------------------
    def find_issue(self, marker: str, label: str) -> HostIssue | None:
        def scan() -> HostIssue | None:
            for issue in self._project.issues.list(labels=[label], order_by="updated_at", sort="desc", iterator=True):
                if has_marker(issue.description or "", marker) and self.adoption.adopts(
                    _author(issue), "issue", issue.web_url
                ):
                    return _issue(issue)
            return None

        return self._run(f"listing issues labelled '{label}'", scan)

    def create_issue(
        self, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostIssue:
        data: dict[str, str | list[int]] = {
            "title": scrub_body(title),
            "description": scrub_body(body),
            "labels": ",".join(labels),
        }
        if assignees:
            data["assignee_ids"] = self._assignee_ids(assignees)
        return _issue(self._run("creating an issue", lambda: self._project.issues.create(data), idempotent=False))

    def update_issue(self, number: int, *, title: str | None = None, body: str | None = None) -> HostIssue:
        return self._save_issue(number, f"updating issue #{number}", title=title, description=body)

    def close_issue(self, number: int) -> HostIssue:
        return self._save_issue(number, f"closing issue #{number}", state_event="close")

    def reopen_issue(self, number: int) -> HostIssue:
        return self._save_issue(number, f"reopening issue #{number}", state_event="reopen")

    def comment_issue(self, number: int, body: str) -> HostComment:
        def post() -> ProjectIssueNote:
            return self._project.issues.get(number, lazy=True).notes.create({"body": scrub_body(body)})

        return _note(self._run(f"commenting on #{number}", post, idempotent=False))

    def issue_comments(self, number: int) -> list[HostComment]:
        def read() -> list[HostComment]:
            notes = self._project.issues.get(number, lazy=True).notes.list(iterator=True, sort="asc")
            return [_note(n) for n in notes if not getattr(n, "system", False)]

        return self._run(f"reading comments of #{number}", read)

    def _save_issue(self, number: int, what: str, **changes: str | None) -> HostIssue:
        return _issue(self._save(what, lambda: self._project.issues.get(number), changes))

    def _save(self, what: str, fetch: Callable[[], Saved], changes: dict[str, str | None]) -> Saved:
        """PUT an issue or merge request: texts scrubbed, unset fields left out."""

        def save() -> Saved:
            target = fetch()
            _assign(target, changes)
            target.save()
            return target

        return self._run(what, save)

    # -- merge requests -------------------------------------------------------------------------------------
    def find_pull(self, marker: str, head: str) -> HostPull | None:
        def scan() -> HostPull | None:
            for mr in self._project.mergerequests.list(state="opened", source_branch=head, iterator=True):
                if (
                    mr.source_branch == head
                    and has_marker(mr.description or "", marker)
                    and self.adoption.adopts(_author(mr), "merge request", mr.web_url)
                ):
                    return _pull(mr)
            return None

        return self._run(f"listing merge requests from '{head}'", scan)

    def open_pull_from(self, head: str) -> HostPull | None:
        def scan() -> HostPull | None:
            requests = self._project.mergerequests.list(state="opened", source_branch=head, iterator=True)
            return next((_pull(mr) for mr in requests if mr.source_branch == head), None)

        return self._run(f"listing merge requests from '{head}'", scan)

    def create_pull(
        self, head: str, base: str, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostPull:
        data: dict[str, str | list[int]] = {
            "source_branch": head,
            "target_branch": base,
            "title": scrub_body(title),
            "description": scrub_body(body),
            "labels": ",".join(labels),
        }
        if assignees:
            data["assignee_ids"] = self._assignee_ids(assignees)
        return _pull(
            self._run(
                f"opening a merge request from '{head}'",
                lambda: self._project.mergerequests.create(data),
                idempotent=False,
            )
        )

    def update_pull(self, number: int, *, title: str | None = None, body: str | None = None) -> HostPull:
        return self._save_pull(number, f"updating merge request !{number}", title=title, description=body)

    def comment_pull(self, number: int, body: str) -> HostComment:
        def post() -> ProjectMergeRequestNote:
            return self._project.mergerequests.get(number, lazy=True).notes.create({"body": scrub_body(body)})

        return _note(self._run(f"commenting on !{number}", post, idempotent=False))

    def close_pull(self, number: int) -> HostPull:
        return self._save_pull(number, f"closing merge request !{number}", state_event="close")

    def _save_pull(self, number: int, what: str, **changes: str | None) -> HostPull:
        return _pull(self._save(what, lambda: self._project.mergerequests.get(number), changes))

    # -- commit statuses ------------------------------------------------------------------------------------
    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        """`GET /projects/:id/repository/commits/:sha/statuses`, every page."""

        def read() -> list[CommitStatus]:
            listing = self._project.commits.get(sha, lazy=True).statuses.list(iterator=True)
            return [_commit_status(sha, status) for status in listing]

        return self._run(f"reading the statuses of {sha[:12]}", read)

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        """`POST /projects/:id/statuses/:sha`, the context as the status's `name`."""
        data = {"state": _STATUS_WRITE.get(state, state), "name": context, "description": scrub_body(description)[:255]}

        def write() -> ProjectCommitStatus:
            return self._project.commits.get(sha, lazy=True).statuses.create(data)

        return _commit_status(sha, self._run(f"writing status {context} on {sha[:12]}", write))


def _commit_status(sha: str, status: ProjectCommitStatus) -> CommitStatus:
    stamp = str(getattr(status, "created_at", "") or "")
    return CommitStatus(
        sha,
        str(getattr(status, "name", "") or "default"),
        _STATUS_READ.get(str(status.status), "error"),
        _epoch(stamp),
        str(getattr(status, "description", "") or ""),
    )


def _epoch(stamp: str) -> float:
    """GitLab's ISO 8601 time (`2026-12-01T08:00:00.000Z`) as seconds; an unreadable one is the end of time,
    so a status without a time never counts as soaked."""
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return float("inf")


def _assign(obj: RESTObject, changes: dict[str, str | None]) -> None:
    for key, value in changes.items():
        if value is not None:
            setattr(obj, key, scrub_body(value) if key in ("title", "description") else value)


def _author(item: ProjectIssue | ProjectMergeRequest) -> str:
    author = getattr(item, "author", None)
    return str(author.get("username") or "") if isinstance(author, dict) else ""


def _issue(issue: ProjectIssue) -> HostIssue:
    return HostIssue(
        issue.iid,
        issue.title,
        issue.description or "",
        _STATES.get(issue.state, issue.state),
        tuple(issue.labels or ()),
        issue.web_url,
        _author(issue),
    )


def _pull(mr: ProjectMergeRequest) -> HostPull:
    return HostPull(
        mr.iid,
        mr.title,
        mr.description or "",
        _STATES.get(mr.state, mr.state),
        tuple(mr.labels or ()),
        mr.web_url,
        mr.source_branch,
        mr.target_branch,
        _author(mr),
    )


def _note(note: ProjectIssueNote | ProjectMergeRequestNote) -> HostComment:
    return HostComment(note.id, note.body or "", getattr(note, "web_url", "") or "")
