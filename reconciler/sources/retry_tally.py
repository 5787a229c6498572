"""The count of cluster-read retries in this process, apart from the cluster client: the run's telemetry reads it
at the start and end of every command, and importing the client (kubernetes, urllib3) for it cost every command
~0.1 s of start-up, `check` included, which reads no cluster."""

from __future__ import annotations

import threading


class RetryTally:
    """Retries of every cluster read in this process, for the live-read-retries metric (read as a delta)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = 0

    def add(self) -> None:
        with self._lock:
            self._count += 1

    @property
    def count(self) -> int:
        with self._lock:
            return self._count


RETRIES = RetryTally()
