"""Where a command reads live state: a saved snapshot, or the cluster of --kubeconfig/--context."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from reconciler.app.settings import LiveSettings
    from reconciler.reconcile.cluster import ClusterTarget


def live_reader(live: LiveSettings) -> Callable[[str | None], Any]:
    """kube context (or None) -> live state, for `diff` and `doctor`."""
    if live.snapshot:
        _refuse_cluster_flags(live)
        from reconciler.sources.snapshot import read_snapshot

        snapshot = live.snapshot
        return lambda _context: read_snapshot(snapshot)
    from reconciler.sources.cluster import cluster_reader

    return cluster_reader(live.kubeconfig, live.kube_context)


def cluster_target(live: LiveSettings) -> ClusterTarget | None:
    """The live cluster to plan against and apply to; None with --snapshot (a plan, never an apply)."""
    if live.snapshot:
        _refuse_cluster_flags(live)
        return None
    from reconciler.reconcile.cluster import ClusterTarget

    return ClusterTarget(live.kubeconfig, live.kube_context)


def _refuse_cluster_flags(live: LiveSettings) -> None:
    if live.kube_context or live.kubeconfig:
        from reconciler.core.errors import UserError

        raise UserError("--snapshot cannot be combined with --context/--kubeconfig")
