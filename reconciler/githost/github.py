"""GitHub (github.com and Enterprise Server at https://HOST/api/v3) through PyGithub.

Issues are listed by label (`GET /repos/{o}/{r}/issues?labels=…&state=all`) and matched by marker, not
found through `/search/issues`: search is eventually consistent (an issue created a minute ago may not be
found, so a second run would open a duplicate) and has a 30-requests-a-minute limit of its own.

The token's own login comes from `GET /user`. An installation token (a GitHub App's, or Actions'
`GITHUB_TOKEN`) may not read it (403 "Resource not accessible by integration"): then the configured
`gitHost.botIdentities` are adopted, or, with none configured, `github-actions[bot]`, the login Actions'
token writes as.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict, TypeVar
from urllib.parse import quote

from github.CommitStatus import CommitStatus as GitHubStatus
from github.PaginatedList import PaginatedList

from reconciler.core.errors import UserError
from reconciler.githost.base import Adoption, HostComment, HostIssue, HostPull, HostSettings, has_marker
from reconciler.githost.redaction import scrub_body
from reconciler.githost.retry import (
    SECONDARY_LIMIT_WAIT,
    RateLimited,
    RetryPolicy,
    Transient,
    header,
    limit_wait,
)
from reconciler.model.rollout import CommitStatus, StatusState

if TYPE_CHECKING:
    from github.Issue import Issue
    from github.IssueComment import IssueComment
    from github.Label import Label
    from github.NamedUser import NamedUser
    from github.PullRequest import PullRequest
    from github.Repository import Repository

T = TypeVar("T")
Editable = TypeVar("Editable", "Issue", "PullRequest")
WRITE_INTERVAL = 1.0  # GitHub asks for a second between content-creating writes (secondary limits)
ACTIONS_BOT = "github-actions[bot]"  # who Actions' GITHUB_TOKEN writes as


class GitHubHost:
    kind = "github"

    def __init__(
        self, settings: HostSettings, *, policy: RetryPolicy | None = None, write_interval: float | None = None
    ) -> None:
        from github import Auth, Github

        self.settings = settings
        self.policy = policy or RetryPolicy(settings, "GitHub")
        interval = WRITE_INTERVAL if write_interval is None else write_interval
        # retry=None: PyGithub's GithubRetry would sleep until a limit resets, unbounded; ours is bounded.
        self._client = Github(
            auth=Auth.Token(settings.token),
            base_url=settings.api_url,
            timeout=int(settings.timeout),
            retry=None,
            per_page=100,
            seconds_between_requests=None,
            seconds_between_writes=interval or None,
        )
        self._repo_obj: Repository | None = None
        self._adoption: Adoption | None = None

    # -- plumbing -------------------------------------------------------------------------------------------
    def _run(self, what: str, call: Callable[[], T], *, idempotent: bool = True) -> T:
        return self.policy.run(what, call, self._classify, idempotent=idempotent)

    @property
    def _repo(self) -> Repository:
        if self._repo_obj is None:
            name = self.settings.repo
            self._repo_obj = self._run(f"opening {name}", lambda: self._client.get_repo(name))
        return self._repo_obj

    def _classify(self, exc: Exception) -> Exception | None:
        from github import GithubException
        from requests import exceptions as http

        if isinstance(exc, (http.ConnectionError, http.Timeout)):
            return Transient(None, self.settings.scrub(f"cannot reach {self.settings.api_url}: {type(exc).__name__}"))
        if not isinstance(exc, GithubException):
            return None
        message = str((exc.data or {}).get("message", "") if isinstance(exc.data, dict) else "") or ""
        status, headers = exc.status, exc.headers
        secondary = "secondary rate limit" in message.lower()
        if status == 429 or (status == 403 and (header(headers, "x-ratelimit-remaining") == "0" or secondary)):
            default = SECONDARY_LIMIT_WAIT if secondary or status == 429 else 60.0
            kind = "secondary rate limit" if secondary else f"HTTP {status}"
            return RateLimited(limit_wait(headers, self.policy.clock(), default), kind)
        if status >= 500:
            return Transient(status, f"HTTP {status}")
        return UserError(self.settings.scrub(self._explain(status, message)), where=self._where())

    def _explain(self, status: int, message: str) -> str:
        if status == 401:
            return "GitHub rejected the token (HTTP 401); check $GITHUB_TOKEN / $KAI_GITOPS_GIT_HOST_TOKEN"
        if status == 404:
            return (
                f"GitHub repository or object not found (HTTP 404): is '{self.settings.repo}' right, and can "
                "the token see it?"
            )
        if status == 403:
            return f"GitHub refused (HTTP 403): {message or 'forbidden'}; the token needs issues/pull-requests write"
        return f"GitHub answered HTTP {status}: {message or 'no message'}"

    def _where(self) -> str:
        return f"{self.settings.api_url} {self.settings.repo}"

    @property
    def adoption(self) -> Adoption:
        if self._adoption is None:
            user = self._run("reading the token's user (GET /user)", self._token_login)
            bots = self.settings.bot_identities or ((ACTIONS_BOT,) if user is None else ())
            self._adoption = Adoption(user, bots)
        return self._adoption

    def _token_login(self) -> str | None:
        from github import GithubException

        try:
            return str(self._client.get_user().login)
        except GithubException as exc:
            if exc.status == 403 and isinstance(self._classify(exc), UserError):
                return None  # an installation token: /user is not for integrations (not a rate limit)
            raise

    # -- issues ---------------------------------------------------------------------------------------------
    def find_issue(self, marker: str, label: str) -> HostIssue | None:
        def scan() -> HostIssue | None:
            listing = self._repo.get_issues(state="all", labels=[label], sort="updated", direction="desc")
            for issue in listing:
                if (
                    issue.pull_request is None
                    and has_marker(issue.body or "", marker)
                    and self.adoption.adopts(_login(issue.user), "issue", issue.html_url)
                ):
                    return _issue(issue)
            return None

        return self._run(f"listing issues labelled '{label}'", scan)

    def create_issue(
        self, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostIssue:
        return _issue(
            self._run(
                "creating an issue",
                lambda: self._repo.create_issue(
                    title=scrub_body(title), body=scrub_body(body), labels=list(labels), assignees=list(assignees)
                ),
                idempotent=False,
            )
        )

    def update_issue(self, number: int, *, title: str | None = None, body: str | None = None) -> HostIssue:
        return self._edit_issue(number, f"updating issue #{number}", _Edit(title=title, body=body))

    def close_issue(self, number: int) -> HostIssue:
        return self._edit_issue(number, f"closing issue #{number}", _Edit(state="closed"))

    def reopen_issue(self, number: int) -> HostIssue:
        return self._edit_issue(number, f"reopening issue #{number}", _Edit(state="open"))

    def comment_issue(self, number: int, body: str) -> HostComment:
        def post() -> IssueComment:
            return self._repo.get_issue(number).create_comment(scrub_body(body))

        return _comment(self._run(f"commenting on #{number}", post, idempotent=False))

    def issue_comments(self, number: int) -> list[HostComment]:
        return self._run(
            f"reading comments of #{number}", lambda: [_comment(c) for c in self._repo.get_issue(number).get_comments()]
        )

    def _edit_issue(self, number: int, what: str, changes: _Edit) -> HostIssue:
        return _issue(self._edit(what, lambda: self._repo.get_issue(number), changes))

    def _edit(self, what: str, fetch: Callable[[], Editable], changes: _Edit) -> Editable:
        """PATCH an issue or pull request: texts scrubbed, unset fields left out."""
        fields = changes.fields()

        def edit() -> Editable:
            target = fetch()
            target.edit(**fields)
            return target

        return self._run(what, edit)

    # -- pull requests --------------------------------------------------------------------------------------
    def find_pull(self, marker: str, head: str) -> HostPull | None:
        owner = self.settings.repo.split("/")[0]

        def scan() -> HostPull | None:
            for pull in self._repo.get_pulls(state="open", head=f"{owner}:{head}"):
                if (
                    pull.head.ref == head
                    and has_marker(pull.body or "", marker)
                    and self.adoption.adopts(_login(pull.user), "pull request", pull.html_url)
                ):
                    return _pull(pull)
            return None

        return self._run(f"listing pull requests from '{head}'", scan)

    def open_pull_from(self, head: str) -> HostPull | None:
        owner = self.settings.repo.split("/")[0]

        def scan() -> HostPull | None:
            pulls = self._repo.get_pulls(state="open", head=f"{owner}:{head}")
            return next((_pull(pull) for pull in pulls if pull.head.ref == head), None)

        return self._run(f"listing pull requests from '{head}'", scan)

    def create_pull(
        self, head: str, base: str, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostPull:
        pull = self._run(
            f"opening a pull request from '{head}'",
            lambda: self._repo.create_pull(base=base, head=head, title=scrub_body(title), body=scrub_body(body)),
            idempotent=False,
        )
        if labels or assignees:  # pulls take labels and assignees through their issue
            self._run(
                f"labelling pull request #{pull.number}",
                lambda: self._repo.get_issue(pull.number).edit(labels=list(labels), assignees=list(assignees)),
            )
        return _pull(pull, labels)

    def update_pull(self, number: int, *, title: str | None = None, body: str | None = None) -> HostPull:
        return self._edit_pull(number, f"updating pull request #{number}", _Edit(title=title, body=body))

    def comment_pull(self, number: int, body: str) -> HostComment:
        return self.comment_issue(number, body)  # a PR's conversation is its issue's comments

    def close_pull(self, number: int) -> HostPull:
        return self._edit_pull(number, f"closing pull request #{number}", _Edit(state="closed"))

    def _edit_pull(self, number: int, what: str, changes: _Edit) -> HostPull:
        return _pull(self._edit(what, lambda: self._repo.get_pull(number), changes))

    # -- commit statuses ------------------------------------------------------------------------------------
    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        """`GET /repos/{o}/{r}/commits/{sha}/statuses`, every page (PyGithub's Commit.get_statuses calls the
        older `/statuses/{sha}` form, which GitHub's description no longer lists)."""

        def read() -> list[CommitStatus]:
            url = f"{self._repo.url}/commits/{quote(sha, safe='')}/statuses"
            listing = PaginatedList(GitHubStatus, self._repo._requester, url, None)
            return [_status(sha, status) for status in listing]

        return self._run(f"reading the statuses of {sha[:12]}", read)

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        """`POST /repos/{o}/{r}/statuses/{sha}` (PyGithub's Commit.create_status would first GET the commit)."""
        body = {"state": state, "context": context, "description": scrub_body(description)[:140]}

        def write() -> GitHubStatus:
            requester = self._repo._requester
            headers, data = requester.requestJsonAndCheck(
                "POST", f"{self._repo.url}/statuses/{quote(sha, safe='')}", input=body
            )
            return GitHubStatus(requester, headers, data)

        return _status(sha, self._run(f"writing status {context} on {sha[:12]}", write))


_STATES: dict[str, StatusState] = {"success": "success", "failure": "failure", "pending": "pending"}


def _status(sha: str, status: GitHubStatus) -> CommitStatus:
    state = _STATES.get(status.state, "error")
    return CommitStatus(
        sha, status.context or "default", state, status.updated_at.timestamp(), status.description or ""
    )


class _Fields(TypedDict, total=False):
    title: str
    body: str
    state: str


@dataclass(frozen=True, kw_only=True)
class _Edit:
    """The fields one PATCH changes; PyGithub sends a field given as None as null, so unset ones are left out."""

    title: str | None = None
    body: str | None = None
    state: str | None = None

    def fields(self) -> _Fields:
        fields: _Fields = {}
        if self.title is not None:
            fields["title"] = scrub_body(self.title)
        if self.body is not None:
            fields["body"] = scrub_body(self.body)
        if self.state is not None:
            fields["state"] = self.state
        return fields


def _labels(raw: Iterable[Label] | None) -> tuple[str, ...]:
    return tuple(label.name for label in raw or ())


def _login(user: NamedUser | None) -> str:
    return str(user.login) if user is not None and user.login else ""


def _issue(issue: Issue) -> HostIssue:
    return HostIssue(
        issue.number,
        issue.title,
        issue.body or "",
        issue.state,
        _labels(issue.labels),
        issue.html_url,
        _login(issue.user),
    )


def _pull(pull: PullRequest, labels: tuple[str, ...] | None = None) -> HostPull:
    state = "merged" if pull.merged else pull.state
    return HostPull(
        pull.number,
        pull.title,
        pull.body or "",
        state,
        labels if labels is not None else _labels(pull.labels),
        pull.html_url,
        pull.head.ref,
        pull.base.ref,
        _login(pull.user),
    )


def _comment(comment: IssueComment) -> HostComment:
    return HostComment(comment.id, comment.body or "", comment.html_url)
