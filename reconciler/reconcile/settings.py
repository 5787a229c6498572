"""What `reconcile` is asked to do beyond a diff: save or load a plan, apply it, the guard rails' limits, and
where the rollout waves' reports are."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from reconciler.githost.base import HostFlags
from reconciler.model.rollout import CommitStatus, RolloutConfig
from reconciler.report.report import Report
from reconciler.sources.settings import LiveSettings

DEFAULT_LEASE_NAMESPACE = "kai-gitops"


class StatusBoard(Protocol):
    """Where clusters report on commits: a Git host client (githost.GitHost has both) or a fleet simulation's."""

    def commit_statuses(self, sha: str) -> list[CommitStatus]: ...

    def set_commit_status(self, sha: str, context: str, state: str, description: str) -> CommitStatus: ...


@dataclass(frozen=True)
class RolloutSettings:
    ignore_waves: bool = False  # --ignore-waves: apply whatever the waves say (warned)
    host_flags: HostFlags = field(default_factory=HostFlags)
    repo: str | None = None  # --repo, for the Git host its remote names
    board: Callable[[Report], StatusBoard] | None = None  # None: the Git host kai-gitops.yaml and the flags name
    descendants: Callable[[str], tuple[str, ...]] | None = None  # None: the commits `repo`'s branches know
    # None: kai-gitops.yaml's rollout at the commit's parent in `repo` (what gates the commit: reconcile/rollout.py)
    rollout_before: Callable[[str], RolloutConfig | None] | None = None
    clock: Callable[[], float] = time.time


@dataclass(frozen=True)
class ReconcileSettings:
    apply: bool = False
    plan_file: str | None = None  # --plan: apply exactly this saved plan
    plan_out: str | None = None  # --plan-out: save the plan
    max_changes: int = 10
    lease_namespace: str | None = None
    lease_wait_s: float = 30.0
    audit_log: str | None = None
    audit_log_max_bytes: int = 0  # past it, the audit log keeps only each field's last write (0: never trimmed)
    live: LiveSettings = field(default_factory=LiveSettings)  # a snapshot: a plan can be shown, never applied
    allow_over_quota: bool = False  # apply a change KAI-Q-020 flags (a quota cut below running work)
    rollout: RolloutSettings = field(default_factory=RolloutSettings)  # the waves: --ignore-waves, the host

    def lease_ns(self) -> str:
        """--lease-namespace, else the pod's own namespace, else kai-gitops."""
        if self.lease_namespace:
            return self.lease_namespace
        from reconciler.sources.cluster.kubeconfig import service_account_dir

        try:
            own = (service_account_dir() / "namespace").read_text().strip()
        except OSError:
            own = ""
        return own or DEFAULT_LEASE_NAMESPACE
