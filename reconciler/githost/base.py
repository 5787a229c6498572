"""The Git host interface both hosts implement, its typed records, and how a run finds its host and token.

Issues, pull requests and merge requests are always found again by a hidden marker in their body plus a
label, never by title: people rename titles, and a title match would adopt someone else's issue. Only one
authored by the token's own user or a configured bot identity is adopted (`Adoption`): anyone who can open an
issue can copy the marker and the label.
Every text a caller hands to a host goes through `reconciler.core.redact` in the host class itself (the
last gate before the network), whatever the caller already did.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol
from urllib.parse import quote

from reconciler.core.errors import UserError
from reconciler.core.urls import split_url
from reconciler.model.config import GitHostConfig
from reconciler.model.rollout import CommitStatus

HOST_KINDS = ("github", "gitlab")
TOKEN_ENV = {
    "github": ("KAI_GITOPS_GIT_HOST_TOKEN", "GITHUB_TOKEN"),
    "gitlab": ("KAI_GITOPS_GIT_HOST_TOKEN", "GITLAB_TOKEN"),
}
DEFAULT_LABELS = ("kai-gitops",)
DEFAULT_RATE_LIMIT_WAIT = 300.0  # seconds a run may spend waiting out rate limits, in total
DEFAULT_RETRIES = 3  # extra attempts after a 5xx or a dropped connection
log = logging.getLogger("kai_gitops.githost")


@dataclass(frozen=True)
class HostWords:
    """How a host names what the tool proposes and refers to: on GitLab `#2` links an issue and a merge request
    is `!2`; on GitHub pull requests and issues share one numbering, `#2`."""

    pull: str  # "pull request" | "merge request"
    short: str  # "PR" | "MR"
    pull_sigil: str  # "#" | "!"
    diff_tab: str  # where the host shows a proposal's whole diff

    def pull_ref(self, number: int) -> str:
        return f"{self.pull_sigil}{number}"

    def issue_ref(self, number: int) -> str:
        return f"#{number}"


WORDS = {
    "github": HostWords("pull request", "PR", "#", "Files changed"),
    "gitlab": HostWords("merge request", "MR", "!", "Changes"),
}


def words_for(kind: str) -> HostWords:
    return WORDS[kind]


@dataclass(frozen=True)
class HostIssue:
    number: int  # GitHub issue number / GitLab issue iid: what humans see as #N
    title: str
    body: str
    state: str  # "open" | "closed"
    labels: tuple[str, ...]
    url: str
    author: str = ""  # login / username of who opened it ("" unknown: never adopted)


@dataclass(frozen=True)
class HostPull:
    """A GitHub pull request or a GitLab merge request."""

    number: int  # GitHub PR number / GitLab MR iid
    title: str
    body: str
    state: str  # "open" | "closed" | "merged"
    labels: tuple[str, ...]
    url: str
    head: str  # source branch
    base: str  # target branch
    author: str = ""  # login / username of who opened it ("" unknown: never adopted)


@dataclass(frozen=True)
class HostComment:
    id: int
    body: str
    url: str


class GitHost(Protocol):
    """What drift reports and fix pull requests need from a Git host. Both hosts implement all of it.

    Errors are `UserError`s with one line and the token redacted; rate limits are waited out inside the
    call up to `HostSettings.rate_limit_wait` seconds, then raise.
    """

    settings: HostSettings

    # -- issues ---------------------------------------------------------------------------------------------
    def find_issue(self, marker: str, label: str) -> HostIssue | None:
        """The most recently updated issue (open or closed) carrying `label` whose body has `marker` on a line
        of its own outside code fences (`has_marker`), opened by an identity `Adoption` adopts; a newer one by
        anyone else is passed over with a warning."""
        ...

    def create_issue(
        self, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostIssue: ...

    def update_issue(self, number: int, *, title: str | None = None, body: str | None = None) -> HostIssue: ...

    def comment_issue(self, number: int, body: str) -> HostComment: ...

    def issue_comments(self, number: int) -> list[HostComment]: ...

    def close_issue(self, number: int) -> HostIssue: ...

    def reopen_issue(self, number: int) -> HostIssue: ...

    # -- pull requests / merge requests -----------------------------------------------------------------
    def find_pull(self, marker: str, head: str) -> HostPull | None:
        """The open PR/MR from branch `head` whose body has `marker` (as `has_marker` judges it), opened by an
        identity `Adoption` adopts (others are passed over with a warning)."""
        ...

    def open_pull_from(self, head: str) -> HostPull | None:
        """An open PR/MR from branch `head`, whoever opened it and whatever its body: when `find_pull` finds none
        of ours, whether the branch's PR was closed or someone else's is open on it."""
        ...

    def create_pull(
        self, head: str, base: str, title: str, body: str, labels: tuple[str, ...] = (), assignees: tuple[str, ...] = ()
    ) -> HostPull: ...

    def update_pull(self, number: int, *, title: str | None = None, body: str | None = None) -> HostPull: ...

    def comment_pull(self, number: int, body: str) -> HostComment: ...

    def close_pull(self, number: int) -> HostPull: ...

    # -- commit statuses (rollout waves) ---------------------------------------------------------------------
    def commit_statuses(self, sha: str) -> list[CommitStatus]:
        """Every status on commit `sha` (all pages), newest first as both hosts list them."""
        ...

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus:
        """`state`: success | failure | pending | error (GitLab: failed for failure and error)."""
        ...


@dataclass(frozen=True)
class HostFlags:
    """Command-line overrides: --git-host, --git-host-url, --git-host-repo, --git-host-base-branch,
    --git-host-rate-limit-wait (None = not given)."""

    host: str | None = None
    url: str | None = None
    repo: str | None = None
    base_branch: str | None = None
    rate_limit_wait: float | None = None


@dataclass(frozen=True)
class HostSettings:
    kind: str  # "github" | "gitlab"
    api_url: str  # GitHub: REST root (…/api/v3 for Enterprise); GitLab: instance URL
    repo: str  # "owner/name" or GitLab "group/sub/project"
    token: str = field(repr=False)
    labels: tuple[str, ...] = DEFAULT_LABELS
    assignees: tuple[str, ...] = ()
    base_branch: str | None = None
    rate_limit_wait: float = DEFAULT_RATE_LIMIT_WAIT
    retries: int = DEFAULT_RETRIES
    timeout: float = 30.0
    bot_identities: tuple[str, ...] = ()  # gitHost.botIdentities: adopted besides the token's own user

    @property
    def words(self) -> HostWords:
        return WORDS[self.kind]

    def web_url(self) -> str:
        """The repository's page: where people read issues and where blob links point."""
        if self.kind == "github":
            api = split_url(self.api_url, "the Git host API URL")
            root = "https://github.com" if api.hostname == "api.github.com" else self.api_url.removesuffix("/api/v3")
        else:
            root = self.api_url
        return f"{root}/{self.repo}"

    def blob_url(self, commit: str, path: str, line: int | None = None) -> str:
        """A file (and line) at one commit, so the link still shows what the run read after later pushes."""
        separator = "/blob/" if self.kind == "github" else "/-/blob/"
        return f"{self.web_url()}{separator}{commit}/{quote(path)}" + (f"#L{line}" if line else "")

    def scrub(self, text: str) -> str:
        """`text` with the token removed: for every error message that might quote a request."""
        return text.replace(self.token, "<redacted>") if self.token else text


class Adoption:
    """Whose marked issues and pull requests a run takes as its own: the user the token belongs to and the
    configured bot identities. Logins compare case-insensitively, as both hosts treat them."""

    def __init__(self, token_user: str | None, bots: tuple[str, ...]) -> None:
        self.token_user = token_user  # None: the host cannot say (a GitHub App installation token)
        self.bots = bots
        self._names = {name.casefold() for name in (token_user, *bots) if name}

    def adopts(self, author: str, what: str, url: str) -> bool:
        """Whether `author`'s marked `what` (at `url`) is the tool's own; if not, one warning saying why."""
        if author and author.casefold() in self._names:
            return True
        log.warning(
            "%s %s carries kai-gitops's marker but was opened by %s, not by %s: not adopted (kai-gitops "
            "uses or opens its own; list a bot login in gitHost.botIdentities if it is yours)",
            what,
            url,
            repr(author) if author else "an unknown author",
            self._expected(),
        )
        return False

    def _expected(self) -> str:
        token = f"the token's user {self.token_user!r}" if self.token_user else "the token's user (unknown)"
        return token + (f" or gitHost.botIdentities {', '.join(self.bots)}" if self.bots else "")


_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


def has_marker(body: str, marker: str) -> bool:
    """`marker` on a line of its own, outside fenced code: a value quoted in a code block (a command, a plan
    line) can hold any text, so a marker planted there must not make the issue look like another's."""
    fence: str | None = None
    for line in body.splitlines():
        opening = _FENCE.match(line)
        if opening:
            mark = opening.group(1)
            if fence is None:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence) and not line.strip()[len(mark) :].strip():
                fence = None
            continue
        if fence is None and line.strip() == marker:
            return True
    return False


def resolve_host_settings(
    remote_url: str | None, config_block: GitHostConfig | None, cli_flags: HostFlags, env: Mapping[str, str]
) -> HostSettings:
    """Flags over the `gitHost:` block over what the remote URL makes obvious; the token from the environment."""
    config = config_block or GitHostConfig()
    remote = _parse_remote(remote_url)
    url = cli_flags.url or config.url
    kind = host_kind(remote_url, config_block, cli_flags)
    if kind not in HOST_KINDS:
        raise UserError(f"unknown Git host kind '{kind}'", hint="use --git-host github or --git-host gitlab")
    api_url = (url or _default_api_url(kind, remote)).rstrip("/")
    repo = cli_flags.repo or config.repo or _repo_from_remote(remote, url)
    if not repo:
        raise UserError(
            "cannot tell which repository to report to",
            hint="pass --git-host-repo owner/name (GitLab: group/project) or set gitHost.repo",
        )
    _check_repo(kind, repo)
    return HostSettings(
        kind,
        api_url,
        repo,
        _token(kind, env),
        config.labels or DEFAULT_LABELS,
        config.assignees,
        cli_flags.base_branch or config.base_branch,
        DEFAULT_RATE_LIMIT_WAIT if cli_flags.rate_limit_wait is None else cli_flags.rate_limit_wait,
        bot_identities=config.bot_identities,
    )


def host_kind(remote_url: str | None, config_block: GitHostConfig | None, cli_flags: HostFlags) -> str:
    """github or gitlab (or what the flag or `gitHost.host` says, checked by the caller): no token needed."""
    config = config_block or GitHostConfig()
    return cli_flags.host or config.host or _infer_kind(_parse_remote(remote_url), cli_flags.url or config.url)


@dataclass(frozen=True)
class _Remote:
    host: str
    path: str  # without leading slash and .git suffix


_SCP_LIKE = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")


def _parse_remote(remote_url: str | None) -> _Remote | None:
    if not remote_url:
        return None
    if "://" in remote_url:
        parts = split_url(remote_url, "the Git remote URL")
        if parts.scheme == "file" or not parts.hostname:
            return None
        return _Remote(parts.hostname.lower(), _clean_path(parts.path))
    match = _SCP_LIKE.match(remote_url)  # git@github.com:owner/name.git
    return _Remote(match["host"].lower(), _clean_path(match["path"])) if match else None


def _clean_path(path: str) -> str:
    path = path.strip("/")
    return path[:-4] if path.endswith(".git") else path


def _infer_kind(remote: _Remote | None, url: str | None) -> str:
    api_host = split_url(url, "the Git host API URL").hostname if url else None
    hosts = [h for h in (remote.host if remote else None, api_host) if h]
    for host in hosts:
        for kind in HOST_KINDS:
            if kind in host.split(".")[0] or host in (f"{kind}.com", f"api.{kind}.com"):
                return kind
    raise UserError(
        "cannot tell whether the Git host is GitHub or GitLab from the remote URL",
        hint="pass --git-host github|gitlab or set gitHost.host in kai-gitops.yaml",
    )


def _default_api_url(kind: str, remote: _Remote | None) -> str:
    host = remote.host if remote else f"{kind}.com"
    if kind == "github":
        return "https://api.github.com" if host == "github.com" else f"https://{host}/api/v3"
    return f"https://{host}"


def _repo_from_remote(remote: _Remote | None, url: str | None) -> str | None:
    if remote is None:
        return None
    path = remote.path
    prefix = split_url(url, "the Git host API URL").path.strip("/") if url else ""
    for strip in (prefix, prefix.removesuffix("api/v3").strip("/")):  # self-managed GitLab under /gitlab
        if strip and path.startswith(strip + "/"):
            return path[len(strip) + 1 :]
    return path or None


_REPO_PATTERN = {
    "github": re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$"),
    "gitlab": re.compile(r"^[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)+$"),
}


def _check_repo(kind: str, repo: str) -> None:
    if not _REPO_PATTERN[kind].match(repo):
        shape = "owner/name" if kind == "github" else "group/project (subgroups allowed)"
        raise UserError(f"'{repo}' is not a {kind} repository path", hint=f"expected {shape}")


def _token(kind: str, env: Mapping[str, str]) -> str:
    for name in TOKEN_ENV[kind]:
        if env.get(name):
            return env[name].strip()
    names = " or ".join(f"${n}" for n in TOKEN_ENV[kind])
    raise UserError(f"no {kind} token: set {names}", hint=f"the token needs write access to issues/{WORDS[kind].pull}s")
