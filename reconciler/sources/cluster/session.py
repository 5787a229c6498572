"""One cluster session per run: the kubeconfig and context resolved once, one transport for every request.

    sessions = ClusterSessions(kubeconfig, context, guard=check_write)   # the CLI's --kubeconfig / --context
    session = sessions.open(repo_context)    # resolved on first use: the repo's kubeContext is known then
    live = session.read_live()               # the reader, the identity, the PolicyReports and the writer
    ...                                      # all use session.transport: one server, one identity
    sessions.close()

Like kopf's credentials vault: credentials are resolved once into one authenticated connection pool, and
every reader and writer of the run is handed out by the session instead of loading the kubeconfig again.
Writes go through the guard the session was opened with; a session without one refuses every write.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from reconciler.core.redact import url_without_userinfo
from reconciler.sources.cluster.client import ClusterClient, ReadSettings, WriteGuard, kube_system_uid

if TYPE_CHECKING:
    from reconciler.model.live import LiveState
    from reconciler.sources.cluster.kube import KubeConfiguration


class ClusterSession:
    """One API server, one set of credentials, one transport: what every request of a run goes through."""

    def __init__(
        self,
        configuration: KubeConfiguration,
        *,
        label: str = "cluster",
        settings: ReadSettings | None = None,
        guard: WriteGuard | None = None,
    ) -> None:
        self.label = label
        # The API server as identified, shown and audited: without a kubeconfig's `user:password@` (a
        # credential, not part of which endpoint this is; binding a plan to it would refuse the plan once the
        # password is rotated).
        self.server = url_without_userinfo(str(configuration.host).rstrip("/"))
        self.transport = ClusterClient(configuration, settings, label=label, guard=guard)
        self._uid: str | None = None
        self._uid_lock = threading.Lock()

    @classmethod
    def open(
        cls,
        kubeconfig: str | None,
        context: str | None,
        repo_context: str | None = None,
        *,
        settings: ReadSettings | None = None,
        guard: WriteGuard | None = None,
    ) -> ClusterSession:
        from reconciler.sources.cluster.kubeconfig import load_configuration

        configuration, label = load_configuration(kubeconfig, context, repo_context)
        return cls(configuration, label=label, settings=settings, guard=guard)

    def cluster_uid(self) -> str:
        """The kube-system namespace's uid: which cluster this is, whatever its server is called (read once)."""
        with self._uid_lock:
            if self._uid is None:
                self._uid = self._read_uid()
            return self._uid

    def _read_uid(self) -> str:
        return kube_system_uid(self.transport, self.server)

    def read_live(self) -> LiveState:
        from reconciler.sources.cluster import read_cluster

        return read_cluster(self.transport)

    def close(self) -> None:
        self.transport.close()


class ClusterSessions:
    """--kubeconfig/--context for a run: each cluster it reads opened once, on first use, and kept to the end.

    `context` (from --context) wins over the repo's kubeContext, so a run with --context has one session
    whatever its callers pass; the first session opened is the run's (`first`)."""

    def __init__(
        self,
        kubeconfig: str | None,
        context: str | None,
        *,
        settings: ReadSettings | None = None,
        guard: WriteGuard | None = None,
    ) -> None:
        self.kubeconfig, self.context, self.settings, self.guard = kubeconfig, context, settings, guard
        self._open: dict[str | None, ClusterSession] = {}
        self._lock = threading.Lock()

    def open(self, repo_context: str | None) -> ClusterSession:
        key = self.context or repo_context
        with self._lock:
            if key not in self._open:
                self._open[key] = ClusterSession.open(
                    self.kubeconfig, self.context, repo_context, settings=self.settings, guard=self.guard
                )
            return self._open[key]

    @property
    def first(self) -> ClusterSession | None:
        with self._lock:
            return next(iter(self._open.values()), None)

    def read_live(self, repo_context: str | None) -> LiveState:
        """A LiveReader for the pipeline; its argument is the repo's kubeContext, which --context overrides."""
        return self.open(repo_context).read_live()

    def close(self) -> None:
        with self._lock:
            sessions, self._open = list(self._open.values()), {}
        for session in sessions:
            session.close()

    def __enter__(self) -> ClusterSessions:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
