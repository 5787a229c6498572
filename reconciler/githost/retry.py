"""One retry policy for both hosts: rate limits waited out within a bound, 5xx retried a few times.

The clients' own retry loops are switched off (PyGithub's GithubRetry sleeps until a rate limit resets,
python-gitlab's obey_rate_limit sleeps `Retry-After` up to ten times): neither bounds the total time, and
a CronJob that sleeps an hour holds the reconcile Lease for that hour. Here every wait counts against
`HostSettings.rate_limit_wait`; past it the run ends with one line naming when the limit resets.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from reconciler.core.errors import UserError
from reconciler.githost.base import HostSettings

T = TypeVar("T")
SECONDARY_LIMIT_WAIT = 60.0  # GitHub: "wait at least one minute" when a secondary limit names no time
BACKOFF = 1.0  # first pause after a 5xx; doubles per attempt, at most 30 s


def _sleep(seconds: float) -> None:
    time.sleep(seconds)


@dataclass(frozen=True)
class RateLimited(Exception):
    wait: float  # seconds until the host says a retry may succeed
    reason: str


@dataclass(frozen=True)
class Transient(Exception):
    status: int | None  # None: the connection itself failed
    reason: str


class RetryPolicy:
    """Runs host calls; `sleep` and `clock` are injectable so tests wait in simulated time."""

    def __init__(
        self,
        settings: HostSettings,
        host_name: str,
        *,
        sleep: Callable[[float], None] | None = None,
        clock: Callable[[], float] | None = None,
        backoff: float | None = None,
    ) -> None:
        self.settings, self.host_name = settings, host_name
        self.sleep = sleep or _sleep
        self.clock = clock or time.time
        self.backoff = BACKOFF if backoff is None else backoff
        self.waited = 0.0  # seconds spent waiting out rate limits in this run, across calls

    def run(
        self,
        what: str,
        call: Callable[[], T],
        classify: Callable[[Exception], Exception | None],
        *,
        idempotent: bool = True,
    ) -> T:
        """`call()`, retried per the policy. `classify` maps a client exception to RateLimited, Transient,
        a UserError to raise as is, or None (not ours: re-raised untouched)."""
        failures = 0
        while True:
            try:
                return call()
            except Exception as raw:  # classified below; unknown ones re-raised
                kind = classify(raw)
                if kind is None:
                    raise
                if isinstance(kind, RateLimited):
                    self._wait_out(what, kind)
                    continue
                if isinstance(kind, Transient):
                    failures += 1
                    self._retry_transient(what, kind, failures, idempotent)
                    continue
                raise kind from None

    def _wait_out(self, what: str, limit: RateLimited) -> None:
        wait = max(limit.wait, 1.0)
        if self.waited + wait > self.settings.rate_limit_wait:
            resume = datetime.fromtimestamp(self.clock() + wait, UTC).strftime("%H:%M:%S UTC")
            raise UserError(
                f"{self.host_name} rate limit while {what}: {limit.reason}; it allows requests again "
                f"at {resume}, beyond the {self.settings.rate_limit_wait:g}s this run may wait",
                hint="re-run later, or raise --git-host-rate-limit-wait",
            ) from None
        self.waited += wait
        self.sleep(wait)

    def _retry_transient(self, what: str, error: Transient, failures: int, idempotent: bool) -> None:
        if not idempotent:
            # A 5xx after a create may still have created it: the next run finds it by its marker.
            raise UserError(
                f"{self.host_name} failed while {what}: {error.reason}",
                hint="not retried because it may have been applied; re-run (the marker finds it)",
            )
        if failures > self.settings.retries:
            raise UserError(
                f"{self.host_name} failed while {what}: {error.reason} ({failures} attempts)",
                hint="the host is unavailable; re-run later",
            )
        self.sleep(min(self.backoff * 2 ** (failures - 1), 30.0))


def header(headers: object, name: str) -> str | None:
    """Case-insensitive header lookup over whatever mapping a client hands back."""
    if not headers:
        return None
    items = headers.items() if hasattr(headers, "items") else []
    for key, value in items:
        if str(key).lower() == name.lower():
            return str(value)
    return None


def limit_wait(headers: object, now: float, default: float) -> float:
    """Seconds to wait per `Retry-After`, else `X-RateLimit-Reset`/`RateLimit-Reset` (epoch), else default."""
    retry_after = header(headers, "retry-after")
    if retry_after and retry_after.strip().isdigit():
        return float(retry_after)
    for name in ("x-ratelimit-reset", "ratelimit-reset"):
        reset = header(headers, name)
        if reset and reset.strip().isdigit():
            return max(float(reset) - now, 0.0) + 1.0  # the reset second itself may still be limited
    return default
