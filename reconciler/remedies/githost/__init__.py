"""The Git host layer: one interface (`base.GitHost`) over GitHub (PyGithub) and GitLab (python-gitlab)."""

from reconciler.remedies.githost.base import (
    GitHost,
    HostComment,
    HostFlags,
    HostIssue,
    HostPull,
    HostSettings,
    resolve_host_settings,
)

__all__ = ["GitHost", "HostComment", "HostFlags", "HostIssue", "HostPull", "HostSettings", "resolve_host_settings"]
