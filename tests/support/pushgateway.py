"""A local Prometheus Pushgateway stand-in: records every push and keeps groups the way the real one does.

    with PushgatewayStandin(credentials=("user", "pw")) as gateway:
        push(gateway.url, facts)
        gateway.pushes[-1].method, gateway.pushes[-1].authorization, gateway.families()

What it models, from the Pushgateway's README (prometheus/pushgateway, "API"):

* `PUT /metrics/job/<job>{/<label>/<value>}`: replaces every metric of that grouping key;
  `POST` replaces only the metric families (by name) the body contains; `DELETE` drops the group;
  202 on success (pushes answer 200 on older versions; clients accept both);
* bodies in the Prometheus text exposition format, parsed with `prometheus_client.parser`; an
  unparsable body answers 400 and changes nothing;
* `GET /metrics`: every group's metrics with the grouping labels added, as Prometheus scrapes them;
* HTTP basic auth when `credentials` are given (401 with `WWW-Authenticate` otherwise), as the
  Pushgateway's `--web.config.file` does.

What it does not model: the protobuf push format, `@base64` label values in the path, the
`push_time_seconds`/`push_failure_time_seconds` metrics it adds, consistency checks of metric types and
help across groups, a metric label that conflicts with a grouping label, persistence, the admin and
status APIs, TLS.
"""

from __future__ import annotations

import base64
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from prometheus_client.parser import text_string_to_metric_families

from tests.support._local_http import LocalHttpServer


@dataclass(frozen=True)
class Push:
    method: str
    path: str
    grouping: tuple[tuple[str, str], ...]
    authorization: str | None
    content_type: str | None
    body: bytes


class PushgatewayStandin(LocalHttpServer):
    def __init__(self, *, credentials: tuple[str, str] | None = None) -> None:
        self.credentials = credentials
        self.pushes: list[Push] = []
        self.groups: dict[tuple[tuple[str, str], ...], dict[str, Any]] = {}
        self.lock = threading.Lock()
        owner = self

        class Handler(_Handler):
            gateway = owner

        super().__init__(Handler)

    def __enter__(self) -> PushgatewayStandin:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def families(self, grouping: dict[str, str] | None = None) -> dict[str, Any]:
        """Metric families (by name) of one group, or of the only group."""
        with self.lock:
            if grouping is None:
                assert len(self.groups) == 1, list(self.groups)
                return dict(next(iter(self.groups.values())))
            return dict(self.groups[tuple(sorted(grouping.items()))])

    def exposition(self) -> str:
        """What `GET /metrics` answers: every sample with its group's labels."""
        lines: list[str] = []
        with self.lock:
            for grouping, families in sorted(self.groups.items()):
                for family in families.values():
                    for sample in family.samples:
                        labels = {**sample.labels, **dict(grouping)}
                        text = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
                        lines.append(f"{sample.name}{{{text}}} {sample.value}")
        return "\n".join(lines) + "\n"


class _Handler(BaseHTTPRequestHandler):
    gateway: PushgatewayStandin
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path != "/metrics":
            return self._answer(404, b"not found")
        self._answer(200, self.gateway.exposition().encode())

    def do_PUT(self) -> None:
        self._push(replace_group=True)

    def do_POST(self) -> None:
        self._push(replace_group=False)

    def do_DELETE(self) -> None:
        grouping = self._grouping()
        if grouping is None:
            return self._answer(404, b"not found")
        with self.gateway.lock:
            self.gateway.groups.pop(grouping, None)
        self._answer(202, b"")

    def _push(self, *, replace_group: bool) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        grouping = self._grouping()
        auth = self.headers.get("Authorization")
        with self.gateway.lock:
            self.gateway.pushes.append(
                Push(self.command, self.path, grouping or (), auth, self.headers.get("Content-Type"), body)
            )
        if not self._authorized(auth):
            return self._answer(401, b"Unauthorized", {"WWW-Authenticate": 'Basic realm="pushgateway"'})
        if grouping is None:
            return self._answer(404, b"push path must be /metrics/job/<job>{/<label>/<value>}")
        try:
            families = {f.name: f for f in text_string_to_metric_families(body.decode())}
        except (ValueError, UnicodeDecodeError) as exc:
            return self._answer(400, f"text format parsing error: {exc}".encode())
        with self.gateway.lock:
            group = {} if replace_group else dict(self.gateway.groups.get(grouping, {}))
            group.update(families)
            self.gateway.groups[grouping] = group
        self._answer(202, b"")

    def _grouping(self) -> tuple[tuple[str, str], ...] | None:
        parts = [unquote(p) for p in self.path.split("?")[0].strip("/").split("/")]
        if len(parts) < 3 or parts[0] != "metrics" or parts[1] != "job" or len(parts) % 2 != 1:
            return None
        pairs = [("job", parts[2])] + [(parts[i], parts[i + 1]) for i in range(3, len(parts), 2)]
        return tuple(sorted(pairs))

    def _authorized(self, header: str | None) -> bool:
        if self.gateway.credentials is None:
            return True
        expected = base64.b64encode(":".join(self.gateway.credentials).encode()).decode()
        return header == f"Basic {expected}"

    def _answer(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
