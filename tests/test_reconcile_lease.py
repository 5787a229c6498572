"""The run's Lease against the test API server: a renewal that hangs, a holder whose clock runs behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.remedies.apply import ClusterWriter
from reconciler.remedies.lease import Lease
from tests.reconcile_support import Demo, demo_cluster
from tests.support.kubeserver import Fault

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kai-gitops/leases/kai-gitops-reconcile"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def writer(demo: Demo) -> ClusterWriter:
    from kubernetes import client

    return ClusterWriter(client.Configuration(host=demo.server.url))


def wait_for(condition: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.02)
    return bool(condition())


def test_a_renewal_that_hangs_past_the_renew_deadline_stops_the_writes(demo: Demo) -> None:
    # The PUT hangs longer than the lease lasts: another run may take the lease over meanwhile, so the
    # holder must stop before its lease can expire, not when (or if) the renewal finally answers.
    demo.server.inject_fault(Fault(LEASE + "$", method="PUT", delay_s=3.0))
    started = time.monotonic()
    with Lease(writer(demo), "kai-gitops", wait_s=0, holder="run-a", duration_s=1) as lease:
        assert wait_for(lambda: lease.lost is not None, 2.0), "still writing after the lease could have expired"
        assert time.monotonic() - started < 1.0 + 0.3
        assert lease.lost and "not renewed within" in lease.lost
