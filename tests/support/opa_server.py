"""A real OPA server for tests: ``opa run --server`` (built from tools/opa, ``make tools``) on a free loopback port.

::

    with OpaServer(bundle=path) as opa:                          # what a bundle-fed sidecar serves
        run kai-gitops ... --opa-url opa.url --opa-preloaded
    with OpaServer(token="s3cret", tls=pki) as opa:              # bearer tokens and HTTPS, as in production
        run kai-gitops ... --opa-url opa.url --opa-token s3cret --opa-ca pki.ca_cert

With ``token`` the server runs ``--authentication=token --authorization=basic`` and an administrative
policy (``system.authz``) that allows exactly that token: any other request is refused with 401, as a
locked-down sidecar does. With ``tls`` (a tests.support.envtest.Pki) it serves HTTPS with that run's
serving certificate for 127.0.0.1. The process dies with the test process and is stopped (SIGTERM, then
SIGKILL) by ``stop()``. ``requests()`` reads what it answered (method, path, status) from its own log.

The stand-in (tests/support/opa_standin.py) stays for faults the real server cannot be made to show on
demand (slow, garbage answers, 500s, upload-order refusals on every attempt).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import signal
import ssl
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from tests.support.envtest import Pki
from tests.support.envtest._server import _die_with_parent, free_port
from tests.support.tools import tool_path

START_TIMEOUT_S = 30.0
AUTHZ_POLICY = """package system.authz

default allow := false

allow if input.identity == {token}
"""


class OpaServerError(RuntimeError):
    pass


class OpaServer:
    def __init__(self, *, bundle: Path | None = None, token: str | None = None, tls: Pki | None = None) -> None:
        self.bundle, self.token, self.tls = bundle, token, tls
        self.url = ""
        self._process: subprocess.Popen[bytes] | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="kai-gitops-opa-"))
        self._log = self._dir / "opa.log"

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def start(self) -> Self:
        port = free_port()
        scheme = "https" if self.tls else "http"
        self.url = f"{scheme}://127.0.0.1:{port}"
        command = [
            str(tool_path("opa")),
            "run",
            "--server",
            f"--addr=127.0.0.1:{port}",
            "--log-level=info",
            "--log-format=json",
        ]  # info: every answer is logged, see requests()
        if self.tls:
            command += [f"--tls-cert-file={self.tls.serving_cert}", f"--tls-private-key-file={self.tls.serving_key}"]
        if self.token:
            authz = self._dir / "authz.rego"
            authz.write_text(AUTHZ_POLICY.format(token=json.dumps(self.token)))
            command += ["--authentication=token", "--authorization=basic", str(authz)]
        if self.bundle:
            command += ["--bundle", str(self.bundle)]
        with open(self._log, "wb") as log:
            self._process = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
        self._wait_until_serving(port)
        return self

    def _wait_until_serving(self, port: int) -> None:
        """Any HTTP answer on /health counts (a locked-down server answers it 401): the port is served."""
        assert self._process is not None
        context = ssl.create_default_context(cafile=str(self.tls.ca_cert)) if self.tls else None
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._process.poll() is not None:
                raise OpaServerError(f"opa exited with {self._process.returncode}:\n{self.log()}")
            connection = (
                http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=2)
                if context
                else http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            )
            try:
                connection.request("GET", "/health")
                connection.getresponse().read()
                return
            except OSError:
                if time.monotonic() > deadline:
                    log = self.log()
                    self.stop()
                    raise OpaServerError(f"opa did not serve {self.url} within {START_TIMEOUT_S:g}s:\n{log}") from None
                time.sleep(0.05)
            finally:
                connection.close()

    def requests(self) -> list[tuple[str, str, int]]:
        """(method, path as sent, status) of every API request answered so far, from the server's own log."""
        answered = []
        for line in self._log.read_text(errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "Sent response." and entry["req_path"] != "/health":  # our readiness probe
                answered.append((entry["req_method"], entry["req_path"], int(entry["resp_status"])))
        return answered

    def log(self) -> str:
        try:
            return self._log.read_text(errors="replace")[-4000:]
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, sig)
                try:
                    process.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
        for path in sorted(self._dir.glob("*"), reverse=True):
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self._dir.rmdir()
