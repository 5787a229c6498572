"""The Git host layer: one interface (`base.GitHost`) over GitHub (PyGithub) and GitLab (python-gitlab)."""

from __future__ import annotations

from reconciler.githost.base import (
    GitHost,
    HostComment,
    HostFlags,
    HostIssue,
    HostPull,
    HostSettings,
    resolve_host_settings,
)
from reconciler.model.config import GitHostConfig

__all__ = [
    "GitHost",
    "GitHostConfig",
    "HostComment",
    "HostFlags",
    "HostIssue",
    "HostPull",
    "HostSettings",
    "open_host",
    "resolve_host_settings",
]


def open_host(settings: HostSettings) -> GitHost:
    """The client for `settings.kind`, each write audited; imported here so a run that reports nowhere never
    loads either library."""
    from reconciler.githost.audited import AuditedHost

    if settings.kind == "github":
        from reconciler.githost.github import GitHubHost

        return AuditedHost(GitHubHost(settings))
    from reconciler.githost.gitlab import GitLabHost

    return AuditedHost(GitLabHost(settings))
