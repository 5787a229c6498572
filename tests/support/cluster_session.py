"""A cluster session as a run opens one (reconciler/sources/cluster/session.py), for tests that hold a
kubernetes client Configuration: guarded by the product's one write guard, as cli/live.py opens it.

`seen` is called with every write just before the guard (a test records bodies, or makes a concurrent
edit there); the guard still decides."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from reconciler.reconcile.allowed_writes import check_write
from reconciler.sources.cluster.client import ReadSettings
from reconciler.sources.cluster.session import ClusterSession

if TYPE_CHECKING:
    from tests.support.envtest import EnvTest

Seen = Callable[[str, str, Any], None]  # (method, path, body) of a write about to be guarded and sent


def guarded_session(
    configuration: Any, *, label: str = "cluster", settings: ReadSettings | None = None, seen: Seen | None = None
) -> ClusterSession:
    def guard(method: str, path: str, body: Any, content_type: str | None) -> None:
        if seen is not None:
            seen(method, path, body)
        check_write(method, path, body, content_type)

    return ClusterSession(configuration, label=label, settings=settings, guard=guard)


def session_at(url: str, *, label: str = "cluster", settings: ReadSettings | None = None) -> ClusterSession:
    """A session to a server that takes no credentials (the stand-in server)."""
    from kubernetes import client

    return guarded_session(client.Configuration(host=url), label=label, settings=settings)


def envtest_session(envtest: EnvTest, *, token: str | None = None, seen: Seen | None = None) -> ClusterSession:
    """A session to the real API server: the admin's client certificate, or `token`."""
    from kubernetes import client

    assert envtest.pki is not None
    configuration = client.Configuration(host=envtest.url)
    configuration.ssl_ca_cert = str(envtest.pki.ca_cert)
    if token is None:
        configuration.cert_file, configuration.key_file = str(envtest.pki.admin_cert), str(envtest.pki.admin_key)
    else:
        configuration.api_key = {"BearerToken": f"Bearer {token}"}
    return guarded_session(configuration, label="envtest", seen=seen)
