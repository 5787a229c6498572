"""The local HTTP server every test stand-in runs on: 127.0.0.1 on a free port, served from a daemon thread.

Subclasses build their request handler (usually a closure over `self`) and pass it to `__init__`.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self


class LocalHttpServer:
    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        # Handlers write headers and body separately: without TCP_NODELAY each answer waits ~40 ms for a
        # delayed ACK.
        quick = type(handler.__name__, (handler,), {"disable_nagle_algorithm": True})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), quick)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def url(self) -> str:
        return self.origin

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        """Afterwards the port refuses connections."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
