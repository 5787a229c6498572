"""A minimal HTTPS JSON client for the harness's own calls (readiness, CRDs, state reset): standard library
only, keep-alive, one connection per thread, the admin client certificate. Tests use the real ``kubernetes``
client instead (``EnvTest.api_client()``)."""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from typing import Any
from urllib.parse import urlsplit


class ApiError(Exception):
    def __init__(self, method: str, path: str, status: int, body: Any):
        message = body.get("message") if isinstance(body, dict) else str(body)[:300]
        super().__init__(f"{method} {path}: {status} {message}")
        self.status = status
        self.body = body


class RestClient:
    def __init__(
        self,
        url: str,
        ca_file: str,
        cert_file: str | None = None,
        key_file: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
    ):
        parts = urlsplit(url)
        self.host, self.port = parts.hostname, parts.port
        self.context = ssl.create_default_context(cafile=ca_file)
        if cert_file:
            self.context.load_cert_chain(cert_file, key_file)
        self.token = token
        self.timeout = timeout
        self._local = threading.local()

    def _connection(self) -> http.client.HTTPSConnection:
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=self.timeout)
            self._local.connection = connection
        return connection

    def close(self) -> None:
        connection = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    def raw(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        accept: str = "application/json",
    ) -> tuple[int, Any]:
        headers = {"Accept": accept, "User-Agent": "kai-gitops-envtest"}
        payload = None
        if body is not None:
            payload = json.dumps(body).encode()
            headers["Content-Type"] = content_type
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        for attempt in (1, 2):  # a kept-alive connection the server closed meanwhile: one fresh retry
            connection = self._connection()
            try:
                connection.request(method, path, body=payload, headers=headers)
                response = connection.getresponse()
                data = response.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError, ssl.SSLEOFError):
                self.close()
                if attempt == 2:
                    raise
        try:
            decoded = json.loads(data) if data else None
        except ValueError:
            decoded = data.decode(errors="replace")
        return response.status, decoded

    def call(self, method: str, path: str, body: Any = None, *, ok: tuple[int, ...] = (200, 201, 202), **kwargs) -> Any:
        status, decoded = self.raw(method, path, body, **kwargs)
        if status not in ok:
            raise ApiError(method, path, status, decoded)
        return decoded

    def get(self, path: str, **kwargs) -> Any:
        return self.call("GET", path, **kwargs)
