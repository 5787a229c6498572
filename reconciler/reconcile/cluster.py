"""One cluster for `reconcile`: the live read the checks use, its identity, and (for --apply) the writer.

The same kubeconfig and context serve all three, so a plan is always built from, identified with and
applied to one API server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from reconciler.core.redact import url_without_userinfo
from reconciler.model.live import LiveState
from reconciler.model.sensitive import SensitiveAllow
from reconciler.plans.plan import ClusterIdentity
from reconciler.sources.cluster import kube_system_uid
from reconciler.sources.cluster.client import ClusterClient, ReadSettings

if TYPE_CHECKING:
    from reconciler.reconcile.apply import ClusterWriter



@dataclass
class Connection:
    client: ClusterClient   # reads, with the reader's retries
    configuration: Any      # kubernetes.client.Configuration: the writer's credentials
    label: str

    @property
    def server(self) -> str:
        """The API server URL as identified, shown and audited: without a kubeconfig's `user:password@`
        (a credential, not part of which endpoint this is; it would leak into saved plans and audit logs,
        and binding a plan to it would refuse the plan once the password is rotated)."""
        return url_without_userinfo(str(self.configuration.host).rstrip("/"))

    def identity(self) -> ClusterIdentity:
        return read_identity(self.client, self.server)

    def writer(self, allowed_sensitive: tuple[SensitiveAllow, ...] = ()) -> ClusterWriter:
        from reconciler.reconcile.apply import ClusterWriter

        return ClusterWriter(self.configuration, label=self.label, allowed_sensitive=allowed_sensitive)

    def close(self) -> None:
        self.client.close()


class ClusterTarget:
    """--kubeconfig/--context, opened once per run for the repo's kubeContext."""

    def __init__(self, kubeconfig: str | None, context: str | None, settings: ReadSettings | None = None) -> None:
        self.kubeconfig, self.context, self.settings = kubeconfig, context, settings
        self._connection: Connection | None = None

    def connect(self, repo_context: str | None) -> Connection:
        if self._connection is None:
            from reconciler.sources.cluster.kubeconfig import load_configuration

            configuration, label = load_configuration(self.kubeconfig, self.context, repo_context)
            # The reader turns retries off on the configuration it gets; the writer keeps its own copy.
            reader_configuration = _copy(configuration)
            self._connection = Connection(ClusterClient(reader_configuration, self.settings, label=label),
                                          configuration, label)
        return self._connection

    def read_live(self, repo_context: str | None) -> LiveState:
        from reconciler.sources.cluster import read_cluster

        return read_cluster(self.connect(repo_context).client)

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def read_identity(client: ClusterClient, server: str) -> ClusterIdentity:
    return ClusterIdentity(server, kube_system_uid(client, server))


def _copy(configuration: Any) -> Any:
    import copy

    return copy.copy(configuration)
