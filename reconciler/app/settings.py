"""What one run is asked to do (Git, cluster, policy engine, threshold) and the desired repo it opened.

Below the pipeline and its helpers (policy_run, the reconcile, publish and gitfix rooms), which all take these
types: none of them has to import the pipeline for its signatures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from reconciler.findings.finding import Severity
from reconciler.model.config import RepoConfig
from reconciler.report.report import GitInfo
from reconciler.report.shards import Shard
from reconciler.sources.git import GitTree
from reconciler.sources.settings import GitSettings as GitSettings  # where the run reads: below the rooms
from reconciler.sources.settings import LiveSettings as LiveSettings

if TYPE_CHECKING:
    from reconciler.sources.cluster.session import ClusterSessions


@dataclass
class PolicySettings:
    opa_url: str | None = None
    opa_token: str | None = None
    opa_ca: Path | None = None
    opa_timeout: float = 10.0
    opa_preloaded: bool = False
    # The repo's own policies are untrusted in a pull request checked without --base: the embedded engine then
    # evaluates them in a child process within this budget (checks/policy/budget.py).
    untrusted: bool = False
    timeout_s: float = 60.0
    memory_mb: int = 2048


def run_start() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@dataclass(frozen=True)
class HistorySettings:
    """Where a run learns when its findings were first reported (app/history.py)."""

    previous_report: str | None = None  # an earlier `-o json` report
    # the run's cluster, whose PolicyReports are read: None without a live cluster (check, snapshots)
    cluster: ClusterSessions | None = None
    started: datetime = field(default_factory=run_start)  # the first-seen time of what is new


@dataclass
class RunSettings:
    git: GitSettings = field(default_factory=GitSettings)
    cluster: str | None = None
    fail_on: Severity = Severity.WARNING
    policy: PolicySettings = field(default_factory=PolicySettings)
    base_ref: str | None = None
    shard: Shard | None = None  # check --shard i/n: only the clusters this shard owns
    k8s_audit_logs: tuple[str, ...] = ()  # the cluster's audit logs: who last wrote each drifted object
    helm: str | None = None  # check --helm: the binary that renders function charts (else PATH)
    helm_memory_mb: int = 4096  # check --helm-memory: the address space `helm template` may map
    history: HistorySettings = field(default_factory=HistorySettings)
    # check --live-snapshot: (cluster, snapshot file); cluster None means the one --cluster names
    live_snapshots: tuple[tuple[str | None, str], ...] = ()
    live_snapshot_max_age: timedelta = timedelta(hours=24)  # older: its live checks are said to be stale


@dataclass
class DesiredRepo:
    tree: GitTree
    config: RepoConfig
    git: GitInfo
