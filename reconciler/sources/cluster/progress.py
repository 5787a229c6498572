"""Object counts per kind on stderr while a slow read runs; silent when stderr is not a terminal."""

from __future__ import annotations

import sys
import threading
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.live import Live
    from rich.spinner import Spinner


class ReadProgress:
    """Thread-safe counters; a rich display appears only if the read is still running after `delay_s`."""

    def __init__(self, label: str, *, enabled: bool | None = None, delay_s: float = 1.0) -> None:
        self.label = label
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.delay_s = delay_s
        self._counts: dict[tuple[str, str], int] = {}  # (kind, read) -> objects
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._live: Live | None = None
        self._starter: threading.Thread | None = None

    def count(self, kind: str, read: str, n: int) -> None:
        """Objects of `kind` read so far by `read` (absolute: a list restarted after 410 goes back down)."""
        with self._lock:
            self._counts[(kind, read)] = n

    def counts(self) -> dict[str, int]:
        """Per kind, summed over the reads of that kind (e.g. pods of every NVCF namespace)."""
        totals: dict[str, int] = {}
        with self._lock:
            for (kind, _read), n in self._counts.items():
                totals[kind] = totals.get(kind, 0) + n
        return totals

    def __enter__(self) -> ReadProgress:
        if self.enabled:
            self._starter = threading.Thread(target=self._start_later, name="read-progress", daemon=True)
            self._starter.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with self._lock:
            self._done.set()
            live, self._live = self._live, None
        if live is not None:
            live.stop()

    def _start_later(self) -> None:
        if self._done.wait(self.delay_s):
            return  # fast reads print nothing
        from rich.console import Console
        from rich.live import Live
        from rich.spinner import Spinner

        spinner = Spinner("dots", text=self._text())
        live = Live(
            get_renderable=partial(self._render, spinner),
            console=Console(stderr=True),
            transient=True,
            refresh_per_second=8,
        )
        with self._lock:
            if self._done.is_set():
                return
            self._live = live
            live.start()

    def _render(self, spinner: Spinner) -> Spinner:
        spinner.update(text=self._text())
        return spinner

    def _text(self) -> str:
        counts = self.counts()
        shown = " · ".join(f"{kind} {n:,}" for kind, n in counts.items() if n) or "connecting"
        return f"reading {self.label}: {shown}"
