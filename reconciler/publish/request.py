"""What a `--report-to` target is handed: the run's report, its plan, and the settings to publish with."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from reconciler.githost.base import HostFlags
from reconciler.report.report import Report
from reconciler.sources.settings import GitSettings, LiveSettings

if TYPE_CHECKING:
    from reconciler.sources.cluster.session import ClusterSessions


@dataclass(frozen=True)
class PublishSettings:
    """What the targets need of the run beyond its report: where it read from, and how to publish."""

    git: GitSettings = field(default_factory=GitSettings)  # the GitOps repository the run read
    live: LiveSettings = field(default_factory=LiveSettings)  # a snapshot: there is no cluster to write to
    cluster: ClusterSessions | None = None  # the run's cluster sessions (what it read); None: no live cluster
    max_results: int | None = None  # per PolicyReport object; None: the target's default
    host_flags: HostFlags = field(default_factory=HostFlags)

    @property
    def repo(self) -> str | None:
        return self.git.repo


@dataclass(frozen=True)
class PublishRequest:
    report: Report  # its `config` is kai-gitops.yaml as the run read it, when it has one
    plan: Any | None = None  # reconciler.plans.plan.Plan when `reconcile` made one
    settings: PublishSettings = field(default_factory=PublishSettings)


# A target raises `UserError` for anything an operator must fix.
Target = Callable[[PublishRequest], None]
