"""What both Git host stand-ins share: a threaded HTTP server, a request log, fault injection, paging."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from tests.support._local_http import LocalHttpServer

NOW = "2026-12-01T08:00:00Z"


@dataclass
class Fault:
    """Answer the next `times` requests matching `method` and `path_contains` with `status`/`headers`/`body`."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] = field(default_factory=dict)
    times: int = 1
    method: str | None = None
    path_contains: str = ""

    def matches(self, method: str, path: str) -> bool:
        return self.times > 0 and (self.method in (None, method)) and self.path_contains in path


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    status: int = 0


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


class HttpError(Exception):
    def __init__(self, status: int, message: str, extra: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.extra = status, message, extra or {}


class StandInServer(LocalHttpServer):
    """Subclasses implement `route(method, path, query, body) -> Reply` and may override `check_*`."""

    def __init__(self, prefix: str = "", token: str = "test-token") -> None:
        self.prefix = prefix.rstrip("/")
        self.token = token
        self.faults: list[Fault] = []
        self.requests: list[Recorded] = []
        self.problems: list[str] = []  # contract violations: asserted empty when the test ends
        self.lock = threading.RLock()
        super().__init__(_handler(self))

    @property
    def url(self) -> str:
        return self.origin + self.prefix

    def assert_clean(self) -> None:
        if self.problems:
            raise AssertionError("Git host stand-in saw contract violations:\n" + "\n".join(self.problems))

    def inject(self, fault: Fault) -> None:
        with self.lock:
            self.faults.append(fault)

    def bodies(self) -> list[bytes]:
        return [r.body for r in self.requests if r.body]

    # -- to override ----------------------------------------------------------------------------------------
    def route(self, method: str, path: str, query: dict[str, str], body: Any) -> Reply:
        raise NotImplementedError

    def authorised(self, headers: dict[str, str]) -> bool:
        raise NotImplementedError

    def unauthorised(self) -> Reply:
        return Reply(401, {"message": "401 Unauthorized"})

    def error_body(self, error: HttpError) -> dict[str, Any]:
        return {"message": error.message, **error.extra}

    def check_request(self, recorded: Recorded) -> None:
        """Record a contract violation in `self.problems` (and raise HttpError 400) if the request is wrong."""

    def check_response(self, recorded: Recorded, reply: Reply, body: bytes) -> None:
        """Record a contract violation if the stand-in's own reply is wrong."""

    # -- paging ---------------------------------------------------------------------------------------------
    def page(self, items: list[Any], query: dict[str, str], path: str, *, style: str) -> Reply:
        per_page = max(1, min(int(query.get("per_page", "30")), 100))
        number = max(1, int(query.get("page", "1")))
        chunk = items[(number - 1) * per_page : number * per_page]
        last = max(1, -(-len(items) // per_page))
        links = []
        for rel, target in (("next", number + 1), ("last", last), ("first", 1), ("prev", number - 1)):
            if (rel == "next" and number < last) or (rel == "prev" and number > 1) or rel in ("first", "last"):
                links.append(f'<{self.url}{path}?{urlencode({**query, "page": target})}>; rel="{rel}"')
        headers = {"Link": ", ".join(links)}
        if style == "gitlab":
            headers |= {
                "X-Page": str(number),
                "X-Per-Page": str(per_page),
                "X-Total": str(len(items)),
                "X-Total-Pages": str(last),
                "X-Next-Page": str(number + 1) if number < last else "",
            }
        return Reply(200, chunk, headers)


def _handler(stand_in: StandInServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            self._serve()

        do_POST = do_PATCH = do_PUT = do_DELETE = do_GET

        def _serve(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            recorded = Recorded(
                self.command,
                parts.path,
                dict(parse_qsl(parts.query, keep_blank_values=True)),
                {k.lower(): v for k, v in self.headers.items()},
                raw,
            )
            with stand_in.lock:
                stand_in.requests.append(recorded)
                try:
                    reply = self._reply(recorded)
                except Exception as exc:  # a stand-in bug must fail the test, not hang the client
                    stand_in.problems.append(f"{recorded.method} {recorded.path}: stand-in crashed: {exc!r}")
                    reply = Reply(500, {"message": f"stand-in crashed: {exc!r}"})
            payload = b"" if reply.body is None else json.dumps(reply.body).encode()
            recorded.status = reply.status
            stand_in.check_response(recorded, reply, payload)
            self.send_response(reply.status)
            for key, value in {"Content-Type": "application/json; charset=utf-8", **reply.headers}.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def _reply(self, recorded: Recorded) -> Reply:
            path = recorded.path
            if stand_in.prefix:
                if not path.startswith(stand_in.prefix + "/"):
                    return Reply(404, {"message": f"not under {stand_in.prefix}"})
                path = path[len(stand_in.prefix) :]
            recorded.path = path
            if not stand_in.authorised(recorded.headers):
                return stand_in.unauthorised()
            for fault in stand_in.faults:
                if fault.matches(recorded.method, path):
                    fault.times -= 1
                    return Reply(fault.status, fault.body or {"message": "injected fault"}, dict(fault.headers))
            try:
                stand_in.check_request(recorded)
                body = json.loads(recorded.body) if recorded.body else None
                return stand_in.route(recorded.method, path, recorded.query, body)
            except HttpError as exc:
                return Reply(exc.status, stand_in.error_body(exc))

    return Handler


Route = Callable[..., Reply]
