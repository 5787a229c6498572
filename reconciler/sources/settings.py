"""Where a run reads from: the GitOps repository (path or clone URL, ref) and live state (a snapshot, or a
cluster through a kubeconfig and context).

Below every room that takes them -- the pipeline, `reconcile`, the publish targets, fix pull requests -- so
each takes these two instead of declaring its own `repo`, `kubeconfig`, `context` or `snapshot`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class GitSettings:
    repo: str | None = None  # the GitOps repository as given (path or clone URL); None: .
    ref: str = "HEAD"
    worktree: bool = False


@dataclass(frozen=True)
class LiveSettings:
    """Where live state is read: a saved snapshot, or a cluster through a kubeconfig and context."""

    kubeconfig: str | None = None
    kube_context: str | None = None
    snapshot: str | None = None
