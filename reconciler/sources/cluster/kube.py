"""What the cluster reader uses of the kubernetes client, as types: mypy treats the client as untyped.

The client ships annotations only from release 37 and not for its configuration and ApiClient classes; we
support >=29 (pyproject.toml). These Protocols say what our code relies on, and mypy holds our code to
them; that the client still has it is what tests/cluster/test_cluster_source.py checks, with the real client.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, TypedDict

import urllib3

# One entry of Configuration.auth_settings(): a bearer token (from a kubeconfig, exec or OIDC plugin), sent
# as header `key` when `in` is "header". The functional form because `in` is a keyword.
AuthSetting = TypedDict("AuthSetting", {"type": str, "in": str, "key": str, "value": str}, total=False)


class KubeConfiguration(Protocol):
    """kubernetes.client.Configuration, as loaded from a kubeconfig or the pod's service account."""

    host: str
    retries: bool | int | None
    client_go_retries: bool
    connection_pool_maxsize: int
    api_key: dict[str, str]
    # the client's hook renewing an expiring token, run by auth_settings()
    refresh_api_key_hook: Callable[[KubeConfiguration], None] | None

    def auth_settings(self) -> dict[str, AuthSetting]: ...


class RestClient(Protocol):
    pool_manager: urllib3.PoolManager


class KubeApiClient(Protocol):
    """kubernetes.client.ApiClient: its authenticated connection pool is our transport."""

    rest_client: RestClient

    def close(self) -> None: ...
