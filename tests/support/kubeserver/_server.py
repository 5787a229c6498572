"""HTTP front end (ThreadingHTTPServer, HTTP/1.1 keep-alive), fault injection and the public test API."""

from __future__ import annotations

import contextlib
import email.utils
import math
import re
import socket
import struct
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, NamedTuple
from urllib.parse import parse_qs, urlsplit

import orjson

from reconciler.core.collector import collector_paused

from ._api import (
    Api,
    Request,
    Response,
    error_response,
    now_timestamp,
    register_defaults,
    strip_type,
    with_type,
)
from ._errors import ApiError, expired
from ._store import (
    KindInfo,
    StoredObject,
    decode_continue,
    decode_stored,
    encode_stored,
    inconsistent_continue,
    object_key,
)

# (group, version, kind, plural, namespaced) of the KAI Scheduler and NVCA custom resources.
KAI_AND_NVCA_KINDS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("scheduling.run.ai", "v2", "Queue", "queues", False),
    ("scheduling.run.ai", "v2alpha2", "PodGroup", "podgroups", True),
    ("kai.scheduler", "v1", "SchedulingShard", "schedulingshards", False),
    ("kai.scheduler", "v1", "Config", "configs", False),
    ("kai.scheduler", "v1alpha1", "Topology", "topologies", False),
    ("nvcf.nvidia.io", "v1", "NVCFBackend", "nvcfbackends", True),
)

# Status messages the real server uses for the codes tests inject most.
_FAULT_MESSAGES = {
    429: "Too many requests, please try again later.",
    500: "Internal error occurred: injected fault",
    503: "the server is currently unable to handle the request",
    504: "the server was unable to return a response in the time allotted, but may still be processing the request",
}


@dataclass(frozen=True)
class Fault:
    """One injected failure; see KubeTestServer.inject_fault."""

    path_regex: str
    method: str | None = None
    status: int | None = None
    retry_after: float | None = None
    retry_after_date: bool = False  # send Retry-After in its HTTP-date form: now + retry_after
    delay_s: float = 0.0
    reset: bool = False
    times: int = 1
    expire_continue: bool = False
    after: int = 0  # let this many matching requests through first (e.g. a dry-run before the write)
    html: bool = False  # answer `status` (default 200) with an HTML page, as a proxy or SSO gateway in front may
    # a list that never ends: the first page, whatever `continue` was sent, with this token (a repeated one, or
    # a fresh one per call) in its metadata
    continue_token: Callable[[], str] | None = None
    # run in the handler thread when the request arrives, before any delay: another client's write landing
    # between a client's read and its write (the server's own 409 follows), or a signal that it arrived
    before: Callable[[], None] | None = None


class RequestRecord(NamedTuple):
    """One served request; status is 0 when a fault reset the connection instead of answering."""

    method: str
    path: str
    query: dict[str, str]
    status: int


@dataclass
class _ArmedFault:
    fault: Fault
    pattern: re.Pattern[str]
    remaining: int  # -1 = forever
    skip: int = 0

    def matches(self, method: str, path: str, query: dict[str, str]) -> bool:
        if self.fault.method is not None and self.fault.method.upper() != method:
            return False
        if self.fault.expire_continue and not query.get("continue"):
            return False
        return self.pattern.search(path) is not None


class _ResetConnection(Exception):
    """Raised inside a handler to drop the connection with a TCP RST instead of answering."""


class KubeTestServer:
    """A local Kubernetes API server for tests; see the package docstring for what it does not model."""

    def __init__(self, *, page_token_ttl_s: float = 300.0) -> None:
        self._api = Api(page_token_ttl_s)
        register_defaults(self._api.registry)
        self._faults: list[_ArmedFault] = []
        self._stopping = threading.Event()
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._url = ""
        self.requests: list[RequestRecord] = []

    # --- lifecycle ---------------------------------------------------------------------------------

    def start(self) -> KubeTestServer:
        if self._httpd is not None:
            return self
        self._stopping.clear()
        self._httpd = _HTTPServer(self)
        host, port = self._httpd.server_address[:2]
        self._url = f"http://{host}:{port}"
        self._api.server_address = f"{host}:{port}"
        # A short poll interval bounds how long stop() waits for the serve loop (default 0.5 s per server).
        httpd = self._httpd
        self._thread = threading.Thread(
            target=lambda: httpd.serve_forever(poll_interval=0.02), name="kube-test-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is None:
            return
        self._stopping.set()  # wakes handlers sleeping in a delay fault
        self._httpd.shutdown()
        self._httpd.server_close()
        self._httpd.close_connections()  # idle keep-alive handlers would otherwise linger
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd, self._thread = None, None

    def __enter__(self) -> KubeTestServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        if not self._url:
            raise RuntimeError("KubeTestServer.url is only known after start()")
        return self._url

    # --- kinds -------------------------------------------------------------------------------------

    def register_kind(self, group: str, version: str, kind: str, plural: str, *, namespaced: bool) -> None:
        with self._api.lock:
            self._api.registry.register(KindInfo(group, version, kind, plural, namespaced))

    def register_kai_and_nvca_kinds(self, *, with_crds: bool = True) -> None:
        """Serve the KAI and NVCA kinds; ``with_crds`` also stores their CRD objects, as an install would."""
        for group, version, kind, plural, namespaced in KAI_AND_NVCA_KINDS:
            self.register_kind(group, version, kind, plural, namespaced=namespaced)
            if with_crds:
                self.add(_crd_object(group, version, kind, plural, namespaced))

    # --- objects -----------------------------------------------------------------------------------

    def add(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store (or overwrite) an object directly, bypassing HTTP; returns a copy of what was stored."""
        info = self._info_for(obj)
        with self._api.lock:
            key, stored = self._prepare(info, obj)
            self._api.registry.store(info).put(key, stored)
        return with_type(info, decode_stored(stored))

    def add_many(self, objs: Iterable[dict[str, Any]]) -> None:
        """Bulk load: the sorted key list of each touched resource is rebuilt once, on the next list."""
        batches: dict[KindInfo, list[tuple[str, StoredObject]]] = {}
        with self._api.lock, collector_paused():  # loading makes no cycles
            for obj in objs:
                info = self._info_for(obj)
                batches.setdefault(info, []).append(self._prepare(info, obj))
            for info, pairs in batches.items():
                self._api.registry.store(info).put_many(pairs)

    def get_object(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        try:
            info = self._api.registry.for_api_version(api_version, kind)
        except KeyError:
            return None
        if info.namespaced and namespace is None:
            raise ValueError(f"{kind} is namespaced: pass namespace=")
        key = object_key(namespace if info.namespaced else None, name)
        with self._api.lock:
            stored = self._api.registry.store(info).objects.get(key)
        return None if stored is None else with_type(info, decode_stored(stored))

    def list_objects(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        """Every stored object of a kind (all namespaces), bypassing HTTP."""
        info = self._api.registry.for_api_version(api_version, kind)
        with self._api.lock:
            stored = list(self._api.registry.store(info).objects.values())
        return [with_type(info, decode_stored(s)) for s in stored]

    def _info_for(self, obj: dict[str, Any]) -> KindInfo:
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not api_version or not kind:
            raise ValueError("objects need apiVersion and kind")
        return self._api.registry.for_api_version(api_version, kind)

    def _prepare(self, info: KindInfo, obj: dict[str, Any]) -> tuple[str, StoredObject]:
        """Fill system metadata and encode; call with the lock held (it advances the RV counter).

        Only the top level and metadata are copied: the caller's dict is never modified, and nested
        values are only read while encoding.
        """
        body = strip_type(obj)
        meta = body.get("metadata")
        if not isinstance(meta, dict) or not meta.get("name"):
            raise ValueError("objects need metadata.name")
        meta = body["metadata"] = dict(meta)
        if info.namespaced:
            meta.setdefault("namespace", "default")
        else:
            meta.pop("namespace", None)
        meta.setdefault("uid", str(uuid.uuid4()))
        meta.setdefault("creationTimestamp", now_timestamp())
        given = str(meta.get("resourceVersion") or "")
        if given.isdigit():
            # Keep a caller-chosen RV but never let the global counter run behind it.
            self._api.resource_version = max(self._api.resource_version, int(given))
        else:
            meta["resourceVersion"] = self._api.next_rv()
        return object_key(meta.get("namespace"), meta["name"]), encode_stored(info, body)

    # --- service proxy -----------------------------------------------------------------------------

    def set_healthz(
        self, status_code: int, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None
    ) -> None:
        """What ``GET .../namespaces/nvca-system/services/nvca:8000/proxy/healthz`` answers."""
        self.set_proxy_response("nvca-system", "nvca", 8000, "healthz", status_code, body, headers)

    def set_proxy_response(
        self,
        namespace: str,
        service: str,
        port: int | str,
        path: str,
        status_code: int,
        body: dict[str, Any] | bytes,
        headers: dict[str, str] | None = None,
    ) -> None:
        """``headers`` are sent as given: e.g. ``Content-Encoding: gzip`` with a body compressed by the caller."""
        if isinstance(body, dict):
            response = Response(status_code, orjson.dumps(body), headers=dict(headers or {}))
        else:
            response = Response(status_code, body, _sniff_content_type(body), dict(headers or {}))
        self._api.set_proxy(namespace, service, str(port), path, response)

    def set_proxy_handler(
        self, namespace: str, service: str, port: int | str, path: str, handler: Callable[[], tuple[int, Any]]
    ) -> None:
        """Like set_proxy_response, but ``handler`` computes (status, JSON body) on every request."""

        def answer() -> Response:
            status, body = handler()
            return Response(status, orjson.dumps(body))

        self._api.set_proxy(namespace, service, str(port), path, answer)

    # --- faults ------------------------------------------------------------------------------------

    def inject_fault(self, fault: Fault) -> None:
        if fault.times == 0 or fault.times < -1:
            raise ValueError("Fault.times must be positive or -1 (forever)")
        armed = _ArmedFault(fault, re.compile(fault.path_regex), fault.times, fault.after)
        with self._api.lock:
            self._faults.append(armed)

    def clear_faults(self) -> None:
        with self._api.lock:
            self._faults.clear()

    def _take_fault(self, method: str, path: str, query: dict[str, str]) -> Fault | None:
        """First matching fault in injection order; consumes one of its ``times``."""
        with self._api.lock:
            for armed in self._faults:
                if armed.matches(method, path, query):
                    if armed.skip > 0:
                        armed.skip -= 1
                        continue
                    if armed.remaining > 0:
                        armed.remaining -= 1
                        if armed.remaining == 0:
                            self._faults.remove(armed)
                    return armed.fault
        return None

    # --- request handling (called from handler threads) --------------------------------------------

    def _respond(self, request: Request) -> Response:
        fault = self._take_fault(request.method, request.path, request.query)
        response = self._api.handle(request) if fault is None else self._faulted(fault, request)
        self._record(request, response.status)
        return response

    def _faulted(self, fault: Fault, request: Request) -> Response:
        if fault.before is not None:
            fault.before()
        if fault.delay_s:
            self._stopping.wait(fault.delay_s)
        if fault.reset:
            self._record(request, 0)
            raise _ResetConnection
        if fault.html:
            response = Response(fault.status or 200, b"<html><body>Sign in</body></html>", "text/html")
        elif fault.expire_continue:
            start, _ = decode_continue(request.query["continue"], math.inf)
            response = error_response(expired(inconsistent_continue(start)))
        elif fault.continue_token is not None:
            response = self._endless_page(request, fault.continue_token())
        elif fault.status is not None:
            response = error_response(_fault_error(fault))
        else:
            response = self._api.handle(request)
        if fault.retry_after is not None and fault.retry_after_date:
            response.headers["Retry-After"] = email.utils.formatdate(time.time() + fault.retry_after, usegmt=True)
        elif fault.retry_after is not None:
            response.headers["Retry-After"] = str(_whole_seconds(fault.retry_after))
        return response

    def _endless_page(self, request: Request, token: str) -> Response:
        first = self._api.handle(replace(request, query={k: v for k, v in request.query.items() if k != "continue"}))
        page = orjson.loads(first.body)
        page.setdefault("metadata", {})["continue"] = token
        return replace(first, body=orjson.dumps(page))

    def _record(self, request: Request, status: int) -> None:
        # Recorded before the answer is written so a client never observes its response first.
        with self._api.lock:
            self.requests.append(RequestRecord(request.method, request.path, dict(request.query), status))


def _fault_error(fault: Fault) -> ApiError:
    assert fault.status is not None
    message = _FAULT_MESSAGES.get(fault.status, f"injected fault (HTTP {fault.status})")
    details = None if fault.retry_after is None else {"retryAfterSeconds": _whole_seconds(fault.retry_after)}
    return ApiError(fault.status, message, details=details)


def _whole_seconds(seconds: float) -> int:
    # Retry-After must be an integer (urllib3 rejects "0.5" as an unparsable HTTP date); round up.
    return max(0, math.ceil(seconds))


def _sniff_content_type(body: bytes) -> str:
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError:
        return "text/plain; charset=utf-8"
    return "application/json"


def _crd_object(group: str, version: str, kind: str, plural: str, namespaced: bool) -> dict[str, Any]:
    names = {"kind": kind, "listKind": f"{kind}List", "plural": plural, "singular": kind.lower()}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "names": names,
            "scope": "Namespaced" if namespaced else "Cluster",
            "versions": [{"name": version, "served": True, "storage": True}],
        },
        "status": {
            "acceptedNames": names,
            "storedVersions": [version],
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts"},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted"},
            ],
        },
    }


# --- HTTP plumbing ---------------------------------------------------------------------------------


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # benchmarks open many connections at once

    def __init__(self, owner: KubeTestServer) -> None:
        self.owner = owner
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()
        super().__init__(("127.0.0.1", 0), _Handler)

    def track(self, connection: socket.socket, alive: bool) -> None:
        with self._connections_lock:
            if alive:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients hanging up (timeouts, resets) are expected in fault tests; only report real bugs.
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError, _ResetConnection)):
            return
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every answer carries Content-Length
    server_version = "kube-test-server"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without NODELAY, delayed ACKs add ~40 ms per request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, alive=True)

    def finish(self) -> None:
        self.server.track(self.connection, alive=False)
        with contextlib.suppress(OSError):
            super().finish()

    def handle(self) -> None:
        try:
            super().handle()
        except _ResetConnection:
            self._reset()

    def _reset(self) -> None:
        # SO_LINGER 0 turns close() into an RST; the file objects must go first or close() is deferred.
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.rfile.close()
        self.wfile.close()
        self.connection.close()

    def log_message(self, format: str, *args: Any) -> None:
        return

    def _dispatch(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        request = Request(
            method=self.command,
            path=url.path,
            query=query,
            content_type=(self.headers.get("Content-Type") or "").split(";")[0].strip().lower(),
            user_agent=self.headers.get("User-Agent") or "",
            body=self._read_body(),
        )
        self._send(self.server.owner._respond(request))

    def _read_body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            return self._read_chunked()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _read_chunked(self) -> bytes:
        chunks: list[bytes] = []
        while True:
            size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks)
            chunks.append(self.rfile.read(size))
            self.rfile.readline()

    def _send(self, response: Response) -> None:
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(response.body)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch


def register_kai_and_nvca_kinds(server: KubeTestServer, *, with_crds: bool = True) -> None:
    """Function form of KubeTestServer.register_kai_and_nvca_kinds."""
    server.register_kai_and_nvca_kinds(with_crds=with_crds)
