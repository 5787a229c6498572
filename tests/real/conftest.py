"""The real-cluster tier: tests against etcd + kube-apiserver built from tools/ (``make tools``).

Every test in this folder is marked ``real`` (``pytest -m "not real"`` leaves them out). Fixtures:

``envtest``          the running server (tests.support.envtest.EnvTest), reset after the test: namespaces,
                     Nodes, custom objects, cluster objects and CRDs the test created are removed, the
                     product's CRDs re-installed if the test deleted or changed one. Use this one.
``envtest_session``  the same server without the reset (one per pytest session; for session fixtures).
                     It writes an audit log (``audit_log``, ``audit_events()``).
``admin_client``     a ``kubernetes.client.ApiClient`` as the admin (O=system:masters), closed after the test.
``cluster``          a ``KaiCluster`` (tests/support/kai_cluster.py): helm, kubectl and kai-gitops on a kubeconfig.

One server per session: started on first use (~4-5 s), stopped and its data dir removed at session end,
also when the session fails or is interrupted (fixture finalizer, atexit, and the processes die with the
test process). Without the tools the tests skip with the reason; under CI=true they fail.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.envtest import EnvTest, running_server
from tests.support.kai_cluster import KaiCluster

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).parents:
            item.add_marker(pytest.mark.real)


@pytest.fixture(scope="session")
def envtest_session() -> Iterator[EnvTest]:
    yield from running_server()


@pytest.fixture
def envtest(envtest_session: EnvTest) -> Iterator[EnvTest]:
    yield envtest_session
    envtest_session.reset()


@pytest.fixture
def admin_client(envtest: EnvTest):
    client = envtest.api_client()
    try:
        yield client
    finally:
        client.close()


@pytest.fixture
def cluster(envtest: EnvTest, tmp_path: Path) -> Iterator[KaiCluster]:
    made = KaiCluster(envtest, tmp_path)
    try:
        yield made
    finally:
        made.close()
