"""A real smart-HTTP Git remote for tests: git's own `git http-backend` CGI behind a local threaded server.

The Git protocol side is entirely git's (the git package's /usr/lib/git-core/git-http-backend serves the
bare repositories under `root`, push enabled); this module only does what a web server in front of it
does: HTTP basic auth with one user and token, CGI environment and body (including chunked request
bodies, which libgit2 sends when pushing), and the CGI response. It binds 127.0.0.1 on a free port.
Not modelled: TLS (the token path is the same over http://; certificate checks are libgit2's), gzip
request bodies (libgit2 sends none), and per-repository permissions.
"""

from __future__ import annotations

import base64
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from tests.support._local_http import LocalHttpServer

BACKEND_CANDIDATES = ("/usr/lib/git-core/git-http-backend", "/usr/libexec/git-core/git-http-backend")


def http_backend() -> str | None:
    for path in BACKEND_CANDIDATES:
        if os.access(path, os.X_OK):
            return path
    found = shutil.which("git")
    if found:
        exec_path = subprocess.run([found, "--exec-path"], capture_output=True, text=True).stdout.strip()
        candidate = os.path.join(exec_path, "git-http-backend")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


class GitHttpServer(LocalHttpServer):
    def __init__(self, root: Path, user: str, token: str) -> None:
        backend = http_backend()
        if backend is None:
            raise RuntimeError("git-http-backend not found (install the git package)")
        self.root, self.backend = root, backend
        self.expected = "Basic " + base64.b64encode(f"{user}:{token}".encode()).decode()
        self.requests: list[tuple[str, str, bool]] = []  # (method, path with query, authorised)
        self.request_texts: list[bytes] = []  # raw request lines + headers, for leak checks
        super().__init__(_handler_for(self))


@contextmanager
def git_http_server(root: Path, user: str, token: str) -> Iterator[GitHttpServer]:
    server = GitHttpServer(root, user, token).start()
    try:
        yield server
    finally:
        server.stop()


def _handler_for(server: GitHttpServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:  # quiet: pytest shows failures, not access logs
            pass

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            authorised = self.headers.get("Authorization") == server.expected
            server.requests.append((self.command, self.path, authorised))
            server.request_texts.append(f"{self.requestline}\n{self.headers}".encode())
            body = self._body()
            if not authorised:
                self.send_response(401)
                self.send_header("WWW-Authenticate", 'Basic realm="git"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._cgi(body)

        def _body(self) -> bytes:
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                chunks = []
                while True:
                    size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        self.rfile.readline()
                        return b"".join(chunks)
                    chunks.append(self.rfile.read(size))
                    self.rfile.readline()
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _cgi(self, body: bytes) -> None:
            parts = urlsplit(self.path)
            env = {
                "GIT_PROJECT_ROOT": str(server.root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "REMOTE_USER": "tester",
                "REMOTE_ADDR": "127.0.0.1",
                "REQUEST_METHOD": self.command,
                "PATH_INFO": parts.path,
                "QUERY_STRING": parts.query,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "GATEWAY_INTERFACE": "CGI/1.1",
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "HOME": str(server.root),
            }
            if self.headers.get("Git-Protocol"):
                env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
            done = subprocess.run([server.backend], input=body, env=env, capture_output=True, check=False)
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            if not _ and b"\n\n" in done.stdout:
                head, _, payload = done.stdout.partition(b"\n\n")
            status = 200
            headers = []
            for line in head.decode("latin-1").splitlines():
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.strip().split()[0])
                elif name:
                    headers.append((name, value.strip()))
            self.send_response(status)
            for name, value in headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler
