"""Where a command reads live state: a saved snapshot, or the cluster of --kubeconfig/--context.

A command with live options opens the run's cluster sessions once (`run_cluster`); the live read, the
PolicyReports' first-seen times, the plan's identity, the writes and the published reports all go through
them, and every write through the one write guard (reconcile/allowed_writes.py) they are opened with.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.app.settings import LiveSettings
    from reconciler.reconcile.cluster import ClusterTarget
    from reconciler.sources.cluster.session import ClusterSessions


@contextlib.contextmanager
def run_cluster(live: LiveSettings) -> Iterator[ClusterSessions | None]:
    """The run's cluster, each session opened on first use and all closed when the command ends; None with
    --snapshot."""
    if live.snapshot:
        _refuse_cluster_flags(live)
        yield None
        return
    from reconciler.reconcile.allowed_writes import check_write
    from reconciler.sources.cluster.session import ClusterSessions

    with ClusterSessions(live.kubeconfig, live.kube_context, guard=check_write) as sessions:
        yield sessions


def live_reader(live: LiveSettings, sessions: ClusterSessions | None) -> Callable[[str | None], Any]:
    """kube context (or None) -> live state, for `diff` and `doctor`."""
    if sessions is None:
        from reconciler.sources.snapshot import read_snapshot

        snapshot = live.snapshot or ""
        return lambda _context: read_snapshot(snapshot)
    return sessions.read_live


def cluster_target(sessions: ClusterSessions | None) -> ClusterTarget | None:
    """The live cluster to plan against and apply to; None with --snapshot (a plan, never an apply)."""
    if sessions is None:
        return None
    from reconciler.reconcile.cluster import ClusterTarget

    return ClusterTarget(sessions)


def _refuse_cluster_flags(live: LiveSettings) -> None:
    if live.kube_context or live.kubeconfig:
        from reconciler.core.errors import UserError

        raise UserError("--snapshot cannot be combined with --context/--kubeconfig")
