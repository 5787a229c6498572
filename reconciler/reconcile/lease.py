"""A coordination.k8s.io/v1 Lease held (and renewed) for the writes of one run: two reconcilers never
apply at once. Locking is the API server's resourceVersion precondition on create/update, as in
client-go's leader election: a waiting run polls until --lease-wait, then fails naming the holder; a
lease not renewed within its duration is expired and taken over; the holder releases it at the end.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

from reconciler.core.errors import UserError
from reconciler.core.resources import LEASE
from reconciler.reconcile.apply import ApiFailure, ClusterWriter

LEASE_NAME = "kai-gitops-reconcile"
DURATION_ENV = "KAI_GITOPS_LEASE_DURATION_S"
DEFAULT_DURATION_S = 30
# As client-go's renewDeadline (10 s of a 15 s lease): stop writing well before others may see the lease expired.
RENEW_DEADLINE = 2 / 3
# The holder's renewTime is its clock, not ours: trusted only this far past expiry (a crashed run's lease
# from long ago is taken at once); otherwise the record must stay unchanged for a whole duration as we watch.
CLOCK_SKEW_S = 60.0


def holder_identity() -> str:
    """hostname_random, like client-go: unique per run even for two runs on one machine."""
    return f"{socket.gethostname()}_{uuid.uuid4().hex[:8]}"


def lease_duration_s() -> int:
    raw = os.environ.get(DURATION_ENV)
    if raw is None:
        return DEFAULT_DURATION_S
    try:
        value = int(raw)
    except ValueError:
        raise UserError(f"${DURATION_ENV} must be a whole number of seconds, got {raw!r}") from None
    if value < 1:
        raise UserError(f"${DURATION_ENV} must be at least 1")
    return value


def micro_time(when: datetime | None = None) -> str:
    return (when or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _parse_time(raw: Any) -> datetime | None:
    if not isinstance(raw, str) or not raw:
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


class Lease:
    def __init__(
        self,
        writer: ClusterWriter,
        namespace: str,
        *,
        wait_s: float,
        holder: str | None = None,
        duration_s: int | None = None,
        name: str = LEASE_NAME,
    ) -> None:
        self.writer, self.namespace, self.name, self.wait_s = writer, namespace, name, wait_s
        self.holder = holder or holder_identity()
        self.duration_s = duration_s or lease_duration_s()
        self._current: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self._renewed_at: float | None = None  # monotonic time the last successful renewal was sent
        self._lost: str | None = None
        self._last_failure: str | None = None  # of a renewal, retried until the deadline
        self._observed: tuple[Any, float] | None = None  # another holder's record, and since when we see it

    @property
    def where(self) -> str:
        return f"Lease {self.namespace}/{self.name}"

    @property
    def lost(self) -> str | None:
        """Why the lease is no longer safely held (renewal refused, or overdue); the applier stops on it."""
        deadline = self.duration_s * RENEW_DEADLINE
        if self._lost is None and self._renewed_at is not None and time.monotonic() - self._renewed_at > deadline:
            # A renewal hanging in a slow API server: others may take over once the duration has passed.
            failure = f" (last renewal: {self._last_failure})" if self._last_failure else ""
            self._lost = f"{self.where} was not renewed within {deadline:.3g} s{failure}"
        return self._lost

    # -- acquire -------------------------------------------------------------------------------------

    def acquire(self) -> None:
        deadline = time.monotonic() + self.wait_s
        poll = min(1.0, max(0.05, self.duration_s / 10))
        while True:
            try:
                if self._try_acquire():
                    return
            except ApiFailure as exc:
                if exc.status != 409:  # 409: another run won this round; look again
                    raise UserError(f"cannot take {self.where}: {exc.line()}", hint=_lease_hint(exc)) from None
            left = deadline - time.monotonic()
            if left <= 0:
                raise UserError(
                    f"another reconciler holds {self.where}: {self._describe_holder()}; "
                    f"waited {self.wait_s:g} s, nothing was written",
                    hint="let it finish and re-run, or raise --lease-wait",
                )
            time.sleep(min(poll, left))

    def _try_acquire(self) -> bool:
        existing = self.writer.get_lease(self.namespace, self.name)
        now, sent = datetime.now(UTC), time.monotonic()
        if existing is None:
            body = {
                "apiVersion": LEASE.api_version,
                "kind": LEASE.kind,
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(now, acquired=now, transitions=0),
            }
            self._current = self.writer.create_lease(self.namespace, body)
            self._renewed_at = sent
            return True
        spec = existing.get("spec") or {}
        holder = spec.get("holderIdentity") or ""
        if holder and holder != self.holder and not self._expired(existing, now):
            self._current = existing
            return False
        transitions = int(spec.get("leaseTransitions") or 0) + (1 if holder != self.holder else 0)
        body = dict(existing)  # carries metadata.resourceVersion: the update is conditional
        body["spec"] = self._spec(now, acquired=now, transitions=transitions)
        self._current = self.writer.update_lease(self.namespace, self.name, body)
        self._renewed_at = sent
        return True

    def _expired(self, existing: dict[str, Any], now: datetime) -> bool:
        """Expired by our clock beyond any plausible skew, or unchanged for its duration while we watch
        (client-go's rule, immune to skew: a holder whose clock runs behind or ahead still renews)."""
        spec = existing.get("spec") or {}
        if _expired_by_clock(spec, now):
            return True
        record = (
            (existing.get("metadata") or {}).get("resourceVersion"),
            spec.get("holderIdentity"),
            spec.get("renewTime"),
        )
        if self._observed is None or self._observed[0] != record:
            self._observed = (record, time.monotonic())
        duration = spec.get("leaseDurationSeconds")
        return isinstance(duration, int) and time.monotonic() - self._observed[1] > duration

    def _spec(self, now: datetime, *, acquired: datetime, transitions: int) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration_s,
            "acquireTime": micro_time(acquired),
            "renewTime": micro_time(now),
            "leaseTransitions": transitions,
        }

    def _describe_holder(self) -> str:
        spec = (self._current or {}).get("spec") or {}
        renewed = spec.get("renewTime") or "never"
        holder = spec.get("holderIdentity") or "unknown"
        return f"{holder} (renewed {renewed}, for {spec.get('leaseDurationSeconds')} s)"

    # -- renew and release ---------------------------------------------------------------------------

    def _renew_loop(self) -> None:
        """Renew every third of the duration; after a failed renewal retry sooner, until the renew deadline
        (see `lost`) — unless the lease is gone or someone else holds it (404, 409): then it is lost at once."""
        interval = max(0.05, self.duration_s / 3)
        wait = interval
        while not self._stop.wait(wait):
            try:
                self.renew()
                wait = interval
            except ApiFailure as exc:
                if exc.status in (404, 409):
                    self._lost = self._lost or f"{self.where} could not be renewed: {exc.line()}"
                    return
                self._last_failure = exc.line()
                wait = interval / 3

    def renew(self) -> None:
        with self._lock:
            body = dict(self._current or {})
            spec = dict(body.get("spec") or {})
            sent = time.monotonic()
            spec["renewTime"] = micro_time()
            body["spec"] = spec
            self._current = self.writer.update_lease(self.namespace, self.name, body)
            self._renewed_at = sent

    def release(self) -> None:
        """Hand the lease back at once (holder cleared, 1 s duration) instead of letting it expire."""
        with self._lock:
            body = dict(self._current or {})
            spec = dict(body.get("spec") or {})
            if self.lost or spec.get("holderIdentity") != self.holder:
                return  # not ours (any more): leave it to its holder
            spec.pop("holderIdentity", None)
            spec["leaseDurationSeconds"] = 1
            spec["renewTime"] = micro_time()
            body["spec"] = spec
            with contextlib.suppress(ApiFailure):  # if this fails it expires on its own within its duration
                self._current = self.writer.update_lease(self.namespace, self.name, body)

    def __enter__(self) -> Lease:
        self.acquire()
        self._renewer = threading.Thread(target=self._renew_loop, name="kai-gitops-lease", daemon=True)
        self._renewer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join(timeout=5)
        self.release()


def _expired_by_clock(spec: dict[str, Any], now: datetime) -> bool:
    renewed = _parse_time(spec.get("renewTime")) or _parse_time(spec.get("acquireTime"))
    duration = spec.get("leaseDurationSeconds")
    if renewed is None or not isinstance(duration, int):
        return True
    return (now - renewed).total_seconds() > duration + CLOCK_SKEW_S


def _lease_hint(exc: ApiFailure) -> str | None:
    if exc.status == 403:
        return (
            "grant the fixer role (deploy/overlays/self-heal/rbac-fixer.yaml): get/create/update leases in "
            "this namespace"
        )
    if exc.status == 404:
        return "the namespace does not exist: create it or pass --lease-namespace"
    return None
