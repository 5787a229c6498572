"""The run's Lease against the test API server: a renewal that hangs, a holder whose clock runs behind."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reconciler.core.errors import UserError
from reconciler.reconcile.apply import ClusterWriter
from reconciler.reconcile.lease import Lease, micro_time
from tests.support.cluster_session import session_at
from tests.support.kubeserver import Fault
from tests.support.reconcile_support import Demo, demo_cluster

LEASE = "/apis/coordination.k8s.io/v1/namespaces/kai-gitops/leases/kai-gitops-reconcile"


@pytest.fixture
def demo(tmp_path: Path) -> Iterator[Demo]:
    yield from demo_cluster(tmp_path)


def writer(demo: Demo) -> ClusterWriter:
    return ClusterWriter(session_at(demo.server.url))


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
        assert time.monotonic() - started < 1.5  # while the renewal still hangs
        assert lease.lost and "not renewed within" in lease.lost


def _held(demo: Demo, *, renewed: datetime, duration: int) -> None:
    demo.server.add(
        {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "kai-gitops-reconcile", "namespace": "kai-gitops"},
            "spec": {
                "holderIdentity": "other_1",
                "leaseDurationSeconds": duration,
                "renewTime": micro_time(renewed),
                "acquireTime": micro_time(renewed),
            },
        }
    )


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


def test_an_interrupt_mid_apply_stops_the_node_writes_not_yet_started(demo: Demo) -> None:
    from reconciler.core.refs import ObjectRef
    from reconciler.plans.applied import ChangeResult
    from reconciler.plans.plan import Change, FieldChange, Operation
    from reconciler.plans.writable import LABEL_PATH
    from reconciler.reconcile.apply import Pending, apply_changes
    from tests.support.helpers import node

    for i in range(30):
        demo.server.add(node(f"n-{i:02d}", None))
    pending = [
        Pending(
            Change(
                ObjectRef("v1", "Node", f"n-{i:02d}"),
                Operation.UPDATE,
                (FieldChange(LABEL_PATH, None, "true"),),
                (),
                "",
            ),
            None,
        )
        for i in range(30)
    ]
    chosen = writer(demo)
    real = chosen.write_change
    calls: list[str] = []

    def write_change(change: Change, rv: str | None, *, dry_run: bool) -> dict[str, Any]:
        calls.append(change.ref.name)
        if len(calls) == 1:
            raise KeyboardInterrupt  # Ctrl-C (or SIGTERM, below) while the writes run
        return real(change, rv, dry_run=dry_run)

    chosen.write_change = write_change  # type: ignore[method-assign]
    decided: list[ChangeResult] = []
    with pytest.raises(KeyboardInterrupt):
        apply_changes(chosen, pending, decided.append, workers=2)
    assert len(calls) <= 3, f"{len(calls)} writes attempted after the interrupt"
    outcomes = [r for r in decided if r.result != "started"]
    assert sorted(r.change.ref.name for r in outcomes) == [f"n-{i:02d}" for i in range(30)]  # all audited
    assert sorted(r.change.ref.name for r in decided if r.result == "started") == sorted(calls)
    interrupted = [r for r in decided if r.result == "failed"]
    assert len(interrupted) == 1 and "may or may not have been applied" in (interrupted[0].error or "")
    assert sum(r.result == "not-attempted" for r in decided) >= 27


def test_sigterm_mid_apply_releases_the_lease_and_audits_every_change(demo: Demo) -> None:
    # A CronJob's pod is stopped with SIGTERM (deadline, eviction, a new rollout): Python's default dies
    # at once, leaving the Lease held and the change being written without its audit line.
    import os
    import signal
    import subprocess
    import sys

    node_write = "/api/v1/nodes/gpu-node-2"
    demo.server.inject_fault(Fault(node_write + "$", method="PATCH", delay_s=1.0, after=1))  # after the dry-run
    audit = demo.tmp / "audit.jsonl"
    env = {**os.environ, "KAI_GITOPS_LEASE_DURATION_S": "30"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "reconciler", *demo.args("--apply", "--audit-log", audit)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # queues written (intent + outcome each), then the node's intent line
        assert wait_for(lambda: audit.exists() and len(audit.read_text().splitlines()) == 5, 20), "queues not written"
        proc.send_signal(signal.SIGTERM)  # the node write is in flight
        _out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err, (proc.returncode, err)
    spec = demo.server.get_object("coordination.k8s.io/v1", "Lease", "kai-gitops-reconcile", "kai-gitops")["spec"]
    assert "holderIdentity" not in spec  # released, not left to expire
    assert [line.count('"gpu-node-2"') for line in audit.read_text().splitlines()][-2:] == [1, 1]


def test_one_failed_renewal_is_retried_before_the_renew_deadline(demo: Demo) -> None:
    # A 500 from a busy API server on one renewal is no reason to abort an apply that still holds its lease.
    demo.server.inject_fault(Fault(LEASE + "$", method="PUT", status=500))
    with Lease(writer(demo), "kai-gitops", wait_s=0, holder="run-a", duration_s=1) as lease:
        assert wait_for(lambda: [r.status for r in demo.server.requests if r.method == "PUT"][:2] == [500, 200], 1.5)
        assert lease.lost is None


def test_the_default_lease_namespace_is_read_from_the_service_account_folder_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$KAI_GITOPS_SERVICE_ACCOUNT_DIR moves the credentials; the pod's namespace is read from the same folder."""
    from reconciler.reconcile.settings import ReconcileSettings

    (tmp_path / "namespace").write_text("platform-gitops\n")
    monkeypatch.setenv("KAI_GITOPS_SERVICE_ACCOUNT_DIR", str(tmp_path))
    assert ReconcileSettings().lease_ns() == "platform-gitops"
    assert ReconcileSettings(lease_namespace="explicit").lease_ns() == "explicit"
