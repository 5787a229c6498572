"""The run's Lease against the test API server: a renewal that hangs, a holder whose clock runs behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reconciler.errors import UserError
from reconciler.remedies.apply import ClusterWriter
from reconciler.remedies.lease import Lease, micro_time
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
    demo.server.inject_fault(Fault(LEASE + "$", method="PUT", delay_s=1.5))
    started = time.monotonic()
    with Lease(writer(demo), "kai-gitops", wait_s=0, holder="run-a", duration_s=1) as lease:
        assert wait_for(lambda: lease.lost is not None, 1.4), "still writing after the lease could have expired"
        assert time.monotonic() - started < 1.5   # while the renewal still hangs
        assert lease.lost and "not renewed within" in lease.lost


def _held(demo: Demo, *, renewed: datetime, duration: int) -> None:
    demo.server.add({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                     "metadata": {"name": "kai-gitops-reconcile", "namespace": "kai-gitops"},
                     "spec": {"holderIdentity": "other_1", "leaseDurationSeconds": duration,
                              "renewTime": micro_time(renewed), "acquireTime": micro_time(renewed)}})


def test_a_holder_whose_clock_runs_behind_keeps_its_lease(demo: Demo) -> None:
    # Renewed just now by a clock 45 s behind ours: by our clock 30 s past its 15 s, but not expired.
    _held(demo, renewed=datetime.now(UTC) - timedelta(seconds=45), duration=15)
    with pytest.raises(UserError, match=r"another reconciler holds .* other_1"):
        Lease(writer(demo), "kai-gitops", wait_s=0.3, holder="run-b").acquire()


def test_a_lease_renewed_by_a_clock_running_ahead_expires_as_observed(demo: Demo) -> None:
    # Its renewTime is an hour ahead of ours; the holder crashed: unchanged for its 1 s, it is taken over.
    _held(demo, renewed=datetime.now(UTC) + timedelta(hours=1), duration=1)
    started = time.monotonic()
    lease = Lease(writer(demo), "kai-gitops", wait_s=5, holder="run-b", duration_s=1)
    lease.acquire()
    assert 1.0 <= time.monotonic() - started < 3.0
    spec = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")["spec"]
    assert spec["holderIdentity"] == "run-b"
