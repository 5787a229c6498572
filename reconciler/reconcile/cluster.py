"""One cluster for `reconcile`: the live read the checks use, its identity, and (for --apply) the writer.

All three come from one cluster session (sources/cluster/session.py), so a plan is always built from,
identified with and applied to one API server, with one identity, through one transport.
"""

from __future__ import annotations

from reconciler.model.live import LiveState
from reconciler.model.sensitive import SensitiveAllow
from reconciler.plans.plan import ClusterIdentity
from reconciler.reconcile.apply import ClusterWriter
from reconciler.sources.cluster.session import ClusterSession, ClusterSessions


class ClusterTarget:
    """The run's cluster sessions; the first one opened (for the repo's kubeContext) is the one planned and applied."""

    def __init__(self, sessions: ClusterSessions) -> None:
        self.sessions = sessions
        self._session: ClusterSession | None = None

    def connect(self, repo_context: str | None) -> ClusterSession:
        if self._session is None:
            self._session = self.sessions.open(repo_context)
        return self._session

    def read_live(self, repo_context: str | None) -> LiveState:
        return self.connect(repo_context).read_live()

    def identity(self, repo_context: str | None) -> ClusterIdentity:
        session = self.connect(repo_context)
        return ClusterIdentity(session.server, session.cluster_uid())

    def writer(self, allowed_sensitive: tuple[SensitiveAllow, ...] = ()) -> ClusterWriter:
        return ClusterWriter(self.connect(None), allowed_sensitive=allowed_sensitive)
