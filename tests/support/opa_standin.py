"""A local stand-in for an OPA server, for tests. It is NOT OPA.

It implements only the REST subset kai-gitops' OPA adapter uses — PUT/GET/DELETE /v1/policies/{id},
GET /v1/policies, PUT /v1/data/{path}, POST /v1/data/{path} with {"input": ...}, GET /health — and
evaluates with regorus. Like OPA's router it answers a path with a trailing slash (301) or an empty segment
(307) with a redirect to the cleaned path, recorded in `redirected` (a redirect drops an --opa-url path
prefix, and a policy PUT would land under another id). It adds fault switches (down, slow, garbage, error
500) and bearer-token checks, binds 127.0.0.1 on a free port, and stops when the test ends.
tests/real/test_opa.py runs the same requests against OPA itself.
"""

from __future__ import annotations

import gzip
import io
import json
import re
import tarfile
import threading
import time
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlsplit

import regorus

from reconciler.checks.policy.regorus_engine import rego_error
from tests.support._local_http import LocalHttpServer


class OpaStandin(LocalHttpServer):
    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.fault: str | None = None  # None | "slow" | "garbage" | "500" | "bomb" | "deep"
        self.bomb_bytes = 4 * 1024 * 1024  # what the "bomb" answer inflates to (gzip: a few KB on the wire)
        self.deep_levels = 900  # how deep the "deep" answer's result nests
        # Appended to every violation's message and fix in an answer, as a server's own (preloaded) policies
        # might word them: what the server says, not what was uploaded. `carried` counts the violations.
        self.message_suffix = ""
        self.carried = 0
        # Policy ids containing one of these are refused (like OPA's "undefined function") until every
        # other uploaded policy is present: exercises the adapter's upload-order retry.
        self.needs_others: set[str] = set()
        self.slow_seconds = 3.0
        self.policies: dict[str, str] = {}
        self.data: dict[str, Any] = {}
        self.requests: list[tuple[str, str]] = []
        self.redirected: list[tuple[str, str]] = []
        self._lock = threading.Lock()
        super().__init__(_handler_for(self))

    def stop(self) -> None:
        """Also the "down" fault: afterwards the port refuses connections."""
        super().stop()

    def load_bundle(self, archive: bytes) -> None:
        """What `opa run --server --bundle FILE` does with a bundle, for the parts ours use: `.manifest`
        roots enforced (every package and data path under one), each `*.rego` a policy (id
        `bundle/<path>`), each `data.json` mounted at its directory's path. Not modelled: signatures,
        delta bundles, `data.yaml`, wasm, several bundles, and OPA's `data.system.bundles` status."""
        with tarfile.open(fileobj=io.BytesIO(archive), mode="r:gz") as tar:
            members = {m.name.lstrip("/"): tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]
        roots = [r.split("/") for r in json.loads(members.pop(".manifest", b"{}")).get("roots", [""])]

        def check_root(path: list[str], what: str) -> None:
            if not any(path[: len(r)] == r or r == [""] for r in roots):
                raise ValueError(f"manifest roots {roots} do not permit {what}")

        for name, body in sorted(members.items()):
            if name.endswith(".rego"):
                package = re.search(r"^package\s+([\w.]+)", body.decode(), re.MULTILINE)
                assert package, name
                check_root(package.group(1).split("."), f"package {package.group(1)} of {name}")
                self.policies[f"bundle/{name}"] = body.decode()
            elif name.rsplit("/", 1)[-1] == "data.json":
                path = name.split("/")[:-1]
                if path:
                    check_root(path, f"data {name}")
                node = self.data
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                value = json.loads(body)
                if path:
                    node[path[-1]] = value
                else:
                    for key in value:
                        check_root([key], f"data.{key} of {name}")
                    self.data.update(value)

    def engine(self) -> regorus.Engine:
        engine = regorus.Engine()
        for policy_id, text in self.policies.items():
            engine.add_policy(policy_id, text)
        engine.add_data_json(json.dumps(self.data))
        return engine

    def compile_error(self, policy_id: str, text: str) -> dict[str, Any] | None:
        engine = regorus.Engine()
        try:
            engine.add_policy(policy_id, text)
        except RuntimeError as exc:
            err = rego_error(exc)
            file, row, col = (err.where or f"{policy_id}:0:0").rsplit(":", 2)
            return {
                "code": "invalid_parameter",
                "message": "error(s) occurred while compiling module(s)",
                "errors": [
                    {
                        "code": "rego_parse_error",
                        "message": err.message,
                        "location": {"file": file, "row": int(row), "col": int(col)},
                    }
                ],
            }
        return None

    def order_error(self, policy_id: str) -> dict[str, Any] | None:
        if not any(part in policy_id for part in self.needs_others) or len(self.policies) >= self.expected:
            return None
        return {
            "code": "invalid_parameter",
            "message": "error(s) occurred while compiling module(s)",
            "errors": [
                {
                    "code": "rego_type_error",
                    "message": "undefined function (stand-in)",
                    "location": {"file": policy_id, "row": 1, "col": 1},
                }
            ],
        }

    expected = 0  # with needs_others: how many other policies must be there first

    def evaluate(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        engine = self.engine()
        engine.set_input_json(json.dumps(payload.get("input", {})))
        query = "data" + "".join(f".{p}" for p in path.split("/") if p)
        rows = json.loads(engine.eval_query_as_json(query)).get("result") or []
        if not rows:
            return {}
        value = rows[0]["expressions"][0]["value"]
        if self.message_suffix:
            self._append_suffix(value)
        return {"result": value}

    def _append_suffix(self, tree: Any) -> None:
        if not isinstance(tree, dict):
            return
        if "meta" in tree and isinstance(tree.get("violations"), list):
            for violation in tree["violations"]:
                for key in ("message", "fix"):
                    if isinstance(violation.get(key), str):
                        violation[key] += f" {self.message_suffix}"
                self.carried += 1
            return
        for child in tree.values():
            self._append_suffix(child)


def _handler_for(standin: OpaStandin) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

        def do_GET(self) -> None:
            self._route("GET")

        def do_PUT(self) -> None:
            self._route("PUT")

        def do_POST(self) -> None:
            self._route("POST")

        def do_DELETE(self) -> None:
            self._route("DELETE")

        def _route(self, method: str) -> None:
            path = unquote(urlsplit(self.path).path)
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            standin.requests.append((method, path))
            if path == "/health":
                return self._send(200, {})
            clean = "/" + "/".join(part for part in path.split("/") if part)
            if clean != path:
                standin.redirected.append((method, path))
                return self._redirect(301 if path.endswith("/") else 307, clean)
            if standin.token and self.headers.get("Authorization") != f"Bearer {standin.token}":
                return self._send(401, {"code": "unauthorized", "message": "missing or invalid bearer token"})
            if standin.fault == "slow":
                time.sleep(standin.slow_seconds)
            if standin.fault == "garbage":
                return self._send_raw(200, b"<html>proxy login</html>", "text/html")
            if standin.fault == "500":
                return self._send(500, {"code": "internal_error", "message": "storage failure"})
            if standin.fault == "bomb":
                return self._send_bomb(standin.bomb_bytes)
            if standin.fault == "deep":
                levels = standin.deep_levels
                return self._send_raw(
                    200, b'{"result": ' + b'{"a": ' * levels + b"1" + b"}" * (levels + 1), "application/json"
                )
            with standin._lock:
                self._dispatch(method, path, body)

        def _dispatch(self, method: str, path: str, body: bytes) -> None:
            if path.startswith("/v1/policies"):
                return self._policies(method, path.removeprefix("/v1/policies").strip("/"), body)
            if path.startswith("/v1/data"):
                return self._data(method, path.removeprefix("/v1/data").strip("/"), body)
            self._send(404, {"code": "resource_not_found", "message": f"{path} not found"})

        def _policies(self, method: str, policy_id: str, body: bytes) -> None:
            if method == "GET" and not policy_id:
                return self._send(200, {"result": [{"id": k, "raw": v} for k, v in standin.policies.items()]})
            if method == "PUT":
                text = body.decode()
                error = standin.compile_error(policy_id, text) or standin.order_error(policy_id)
                if error:
                    return self._send(400, error)
                standin.policies[policy_id] = text
                return self._send(200, {})
            if policy_id not in standin.policies:
                return self._send(404, {"code": "resource_not_found", "message": f"policy {policy_id} not found"})
            if method == "DELETE":
                del standin.policies[policy_id]
                return self._send(200, {})
            self._send(200, {"result": {"id": policy_id, "raw": standin.policies[policy_id]}})

        def _data(self, method: str, path: str, body: bytes) -> None:
            if method == "PUT":
                node = standin.data
                keys = [p for p in path.split("/") if p]
                for key in keys[:-1]:
                    node = node.setdefault(key, {})
                node[keys[-1]] = json.loads(body or b"{}")
                return self._send_raw(204, b"", "application/json")
            if method == "POST":
                try:
                    return self._send(200, standin.evaluate(path, json.loads(body or b"{}")))
                except RuntimeError as exc:
                    return self._send(500, {"code": "internal_error", "message": rego_error(exc).line()})
            self._send(405, {"code": "method_not_allowed", "message": method})

        def _redirect(self, status: int, location: str) -> None:
            self.send_response(status)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _send(self, status: int, payload: dict[str, Any]) -> None:
            self._send_raw(status, json.dumps(payload).encode(), "application/json")

        def _send_bomb(self, size: int) -> None:
            """A JSON answer of `size` bytes, sent gzip-compressed: a few KB that inflate to `size`."""
            self._send_raw(
                200, gzip.compress(b'{"result": "' + b" " * size + b'"}'), "application/json", encoding="gzip"
            )

        def _send_raw(self, status: int, body: bytes, content_type: str, encoding: str | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
