"""The one transport to the Kubernetes API: every request of a run, read or write, with our own bounded,
jittered retries (both `Retry-After` forms), one set of headers, answers capped in bytes, and failures
sorted by status.

The official client is used for what it is good at -- reading kubeconfig / in-cluster config, client
certificates, exec and token-refresh plugins, proxies -- and its urllib3 pool manager is the transport.
We never build client model objects: bodies stay bytes until `orjson.loads`, page by page.

Reads (`get`) fail as ReadError, one line naming what was read; requests a writer makes (`request`) fail
as an ApiError of the status's class. A request that is not a GET passes the guard the transport was made
with first, and without a guard it is refused: the transport is the only place bytes leave for a cluster.
"""

from __future__ import annotations

import email.utils
import os
import random
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit

import orjson
import urllib3

from reconciler.core.capped import AnswerTooLarge, read_response
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONValue
from reconciler.core.redact import excerpt, url_without_userinfo
from reconciler.core.resources import NAMESPACE
from reconciler.sources.retry_tally import RETRIES as RETRIES  # reads count their retries here

if TYPE_CHECKING:
    from reconciler.sources.cluster.kube import KubeApiClient, KubeConfiguration

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
# One user agent for every request of a run, reads and writes alike (what the API server's audit log shows).
USER_AGENT = "kai-gitops/0.1 (reconciler)"
WRITE_WORKERS = 16  # concurrent writes a writer may make (node labels): connections the pool keeps for them
_ENV_PREFIX = "KAI_GITOPS_KUBE_"


@dataclass(frozen=True)
class ReadSettings:
    """Limits of one cluster read; every field can be set from $KAI_GITOPS_KUBE_<FIELD> (upper case)."""

    attempts: int = 5  # per request, the first try included
    retry_budget_s: float = 60.0  # per request: no retry is started past this much time
    backoff_base_s: float = 0.5  # full jitter: sleep uniform(0, min(cap, base * 2**n))
    backoff_cap_s: float = 8.0
    connect_timeout_s: float = 10.0
    read_timeout_s: float = 60.0  # per socket read, so a large page never trips it
    healthz_timeout_s: float = 10.0  # NVCA itself answers in milliseconds; a hung agent is a finding
    page_limit: int = 500
    secret_page_limit: int = 20  # release Secrets can be ~1 MB each
    # Bytes of one answer after decompression: a gzip answer of a few MB can inflate to gigabytes. A page of
    # 500 pods is ~10 MB of JSON, of 20 release Secrets up to ~20 MB; NVCA's /healthz answer is ~1 KB.
    answer_max_bytes: int = 256 * 1024 * 1024
    healthz_max_bytes: int = 1024 * 1024
    # One paged list ends within list_max_objects / page size pages (500 pages of 500; a 50,000-pod list is
    # 100) and list_budget_s: a server that never stops sending `continue` tokens cannot keep the run forever.
    # Kubernetes is tested up to 150,000 pods per cluster.
    list_max_objects: int = 250_000
    list_budget_s: float = 600.0
    workers: int = 4  # concurrent requests: API round trips dominate on real clusters

    @classmethod
    def from_env(cls) -> ReadSettings:
        values: dict[str, Any] = {}  # int or float, as each field says: a mix no static type describes
        for f in fields(cls):
            raw = os.environ.get(_ENV_PREFIX + f.name.upper())
            if raw is None:
                continue
            kind = int if f.type in ("int", int) else float
            try:
                values[f.name] = kind(raw)
            except ValueError:
                raise UserError(f"${_ENV_PREFIX}{f.name.upper()} must be a number, got {raw!r}") from None
        return cls(**values)


class ReadError(UserError):
    """A read that failed for good; `status` is the last HTTP status (None for transport failures)."""

    def __init__(self, message: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.status = status


class ReadCancelled(Exception):
    """Another read of the same run failed: stop quietly, its error is the one reported."""


class ListExpired(Exception):
    """410 Gone on a `continue` token: the caller restarts that list from the beginning."""


class PageBound:
    """How far one paged list may go: a page count, a time budget, and no continue token twice."""

    def __init__(self, settings: ReadSettings, limit: int, started: float) -> None:
        self.max_pages = max(1, -(-settings.list_max_objects // max(limit, 1)))
        self.budget_s, self.started = settings.list_budget_s, started
        self.pages = 1
        self.tokens: set[str] = set()

    def next(self, token: str) -> str | None:
        """Why the page after this one must not be read, or None."""
        if token in self.tokens:
            return f"the server repeated a continue token after {self.pages} pages: the list would never end"
        if self.pages >= self.max_pages:
            return f"the list did not end after {self.pages} pages (the limit at this page size)"
        elapsed = time.monotonic() - self.started
        if elapsed > self.budget_s:
            return f"the list did not end within {self.budget_s:g} s ({self.pages} pages in {elapsed:.1f} s)"
        self.tokens.add(token)
        self.pages += 1
        return None


class ApiError(Exception):
    """A request the API server refused (status >= 300) or that got no answer (status 0)."""

    def __init__(self, status: int, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.status, self.message, self.reason = status, message, reason

    def line(self) -> str:
        return f"HTTP {self.status} ({self.message})" if self.status else self.message


class Unauthorized(ApiError):
    """401: the credentials were rejected."""


class Forbidden(ApiError):
    """403: this identity may not make the request."""


class NotFound(ApiError):
    """404: no such object, or the resource is not served."""


class Conflict(ApiError):
    """409: the resourceVersion precondition failed, or the object exists already."""


class Invalid(ApiError):
    """422: validation or admission refused the body."""


_BY_STATUS: dict[int, type[ApiError]] = {401: Unauthorized, 403: Forbidden, 404: NotFound, 409: Conflict, 422: Invalid}


def api_error(status: int, body: bytes) -> ApiError:
    """The refusal a status and its body stand for: the Status `message` and `reason`, in the status's class."""
    reason = ""
    try:
        data: JSONValue = orjson.loads(body)
    except orjson.JSONDecodeError:
        data = None
    if isinstance(data, dict):
        reason = str(data.get("reason") or "")
    return _BY_STATUS.get(status, ApiError)(status, status_message(body) or "no message", reason)


class WriteRefused(Exception):
    """A write sent through a transport that has no guard: only a session's guarded writer writes."""


# The guard every request but a GET passes: (method, path, body, content type); it raises to refuse.
WriteGuard = Callable[[str, str, Any, str | None], None]


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    attempts: int


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    raw = headers.get("Retry-After") if headers is not None else None
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        try:
            stamp = email.utils.parsedate_to_datetime(raw)  # the HTTP-date form
        except (TypeError, ValueError):
            return None  # unreadable: fall back to our own backoff
        return max(0.0, stamp.timestamp() - time.time())


def status_message(body: bytes) -> str:
    """The `message` of a Kubernetes Status body, or a short printable prefix of whatever came back."""
    try:
        data: JSONValue = orjson.loads(body)
    except orjson.JSONDecodeError:
        return excerpt(body[:4096].decode("utf-8", "replace"), 200)  # what lies past 4 KiB is never shown
    if isinstance(data, dict) and data.get("kind") == "Status":
        return " ".join(str(data.get("message", "")).split())
    return ""


# Failures before any byte reached the server: most often the kubeconfig points elsewhere than meant.
_NOT_REACHED = ("connection refused", "cannot connect", "connect timed out")


def _transport_failure(exc: Exception) -> tuple[str, bool]:
    """(what happened, retry?) for an exception from urllib3 with retries disabled."""
    if isinstance(exc, urllib3.exceptions.SSLError):
        return f"TLS error: {exc}", False
    if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
        return "read timed out", True
    if isinstance(exc, urllib3.exceptions.NewConnectionError):  # before its base class ConnectTimeoutError
        return "connection refused" if "refused" in str(exc).lower() else "cannot connect", True
    if isinstance(exc, urllib3.exceptions.ConnectTimeoutError):
        return "connect timed out", True
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        reason = exc.args[1] if len(exc.args) > 1 else exc
        return (
            "connection reset"
            if isinstance(reason, ConnectionResetError)
            else f"connection broken ({type(reason).__name__})"
        ), True
    if isinstance(exc, urllib3.exceptions.LocationParseError):
        return f"bad server URL: {exc}", False
    return f"{type(exc).__name__}: {exc}", True


def display(path: str, query: dict[str, str] | None) -> str:
    """`GET path?k=v` for messages: readable selectors, and never a 200-character continue token."""
    if not query:
        return f"GET {path}"
    parts = [f"{k}={'…' if k == 'continue' else v}" for k, v in query.items()]
    return f"GET {path}?{'&'.join(parts)}"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class ClusterClient:
    """Every request to one API server, with retries, over the kubernetes client's authenticated pool manager;
    safe across threads."""

    def __init__(
        self,
        configuration: KubeConfiguration,
        settings: ReadSettings | None = None,
        *,
        label: str = "cluster",
        guard: WriteGuard | None = None,
    ) -> None:
        from kubernetes.client import ApiClient

        # Ours are the only retries: urllib3's own (and the client's client_go_retries) would multiply our
        # attempt count and hide 429/5xx answers from the backoff below. `False` also makes urllib3 raise the
        # underlying error (timeout, reset, refused) instead of a MaxRetryError wrapper.
        configuration.retries = False
        configuration.client_go_retries = False
        self.settings = settings or ReadSettings.from_env()
        configuration.connection_pool_maxsize = max(self.settings.workers, WRITE_WORKERS, 1)
        self.label = label
        self._guard = guard
        self._configuration = configuration
        self._api: KubeApiClient = ApiClient(configuration)
        self._pool = self._api.rest_client.pool_manager
        self._base = str(configuration.host).rstrip("/")
        self.server = shown_server(self._base)
        self._auth_lock = threading.Lock()
        self.cancelled = threading.Event()
        self._count_lock = threading.Lock()
        self.requests = 0  # every HTTP attempt, for tests and the benchmark

    @classmethod
    def connect(
        cls,
        kubeconfig: str | None,
        context: str | None,
        settings: ReadSettings | None = None,
        *,
        repo_context: str | None = None,
    ) -> ClusterClient:
        from reconciler.sources.cluster.kubeconfig import load_configuration

        configuration, label = load_configuration(kubeconfig, context, repo_context)
        return cls(configuration, settings, label=label)

    def close(self) -> None:
        self._api.close()

    # -- one GET ------------------------------------------------------------------------------------

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        headers = {"Accept": "application/json", "Accept-Encoding": "gzip", "User-Agent": USER_AGENT}
        if content_type:
            headers["Content-Type"] = content_type
        # auth_settings() runs the refresh hook of exec/OIDC/GCP plugins, so expiring tokens are renewed.
        with self._auth_lock:
            auth = self._configuration.auth_settings()
        for setting in auth.values():
            if setting.get("in") == "header" and setting.get("value"):
                headers[setting["key"]] = setting["value"]
        return headers

    def _once(
        self,
        path: str,
        query: dict[str, str] | None,
        read_timeout: float,
        max_bytes: int,
        *,
        method: str = "GET",
        data: bytes | None = None,
        content_type: str | None = None,
    ) -> tuple[int, bytes, Mapping[str, str]]:
        url = self._base + path + (f"?{urlencode(query)}" if query else "")
        timeout = urllib3.Timeout(connect=self.settings.connect_timeout_s, read=read_timeout)
        with self._count_lock:
            self.requests += 1
        response = self._pool.request(
            method,
            url,
            body=data,
            headers=self._headers(content_type),
            preload_content=False,
            decode_content=False,
            timeout=timeout,
            retries=False,
            redirect=False,
        )
        try:
            body = read_response(response, max_bytes)
        except BaseException:
            response.close()  # a half-read connection (or one past the cap) must not go back to the pool
            raise
        response.release_conn()
        return response.status, body, response.headers

    # -- a writer's request: guarded, retried only where the server cannot have acted ----------------

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str | None = None,
        query: dict[str, str] | None = None,
    ) -> Answer:
        """One request for a writer (its GETs included): a 2xx answer, or an ApiError of the status's class.

        Anything but a GET passes the guard first. A GET is retried like a read (429, 5xx, a lost connection);
        a write only on 429 and 503, which the server answers before processing it: a write whose connection
        broke may or may not have landed, and is never sent again blindly."""
        if method != "GET":
            content_type = content_type or "application/json"
            if self._guard is None:
                raise WriteRefused(f"{method} {path}: this cluster connection has no write guard")
            self._guard(method, path, body, content_type)
        data = orjson.dumps(body) if body is not None else None
        started, attempt = time.monotonic(), 0
        while True:
            attempt += 1
            try:
                status, raw, headers = self._once(
                    path,
                    query,
                    self.settings.read_timeout_s,
                    self.settings.answer_max_bytes,
                    method=method,
                    data=data,
                    content_type=content_type,
                )
            except AnswerTooLarge:
                raise ApiError(
                    0,
                    f"{method} {path}: the answer is larger than "
                    f"{self.settings.answer_max_bytes:,} bytes (decompressed)",
                ) from None
            except urllib3.exceptions.HTTPError as exc:
                if method != "GET" or attempt >= 3:
                    raise ApiError(0, f"{method} {path}: {_lost_request(exc)}") from None
                time.sleep(0.05 * attempt)
                continue
            if 200 <= status < 300:
                return Answer(status, raw, attempt)
            retryable = status in (429, 503) or (method == "GET" and status >= 500)
            delay = _retry_after(headers) if status in (429, 503) else None
            if delay is None:
                delay = random.uniform(
                    0, min(self.settings.backoff_cap_s, self.settings.backoff_base_s * 2 ** (attempt - 1))
                )
            spent = time.monotonic() - started
            if not retryable or attempt >= self.settings.attempts or spent + delay > self.settings.retry_budget_s:
                raise api_error(status, raw)
            time.sleep(delay)  # not in RETRIES: that metric counts the live read's retries

    def json(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str | None = None,
        query: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """`request`'s answer as a JSON object; HTML from a proxy or SSO gateway in front is an ApiError."""
        answer = self.request(method, path, body, content_type=content_type, query=query)
        try:
            data = orjson.loads(answer.body) if answer.body else {}
        except orjson.JSONDecodeError:
            raise ApiError(answer.status, "the answer is not JSON: a proxy in front of the API server?") from None
        return data if isinstance(data, dict) else {}

    def items(self, path: str, query: dict[str, str]) -> list[dict[str, Any]]:
        """Every item of a paged list, for a writer (ApiError on failure): each `continue` token followed, within the
        bounds every list of the run keeps (PageBound: a page count, a time budget, no token twice)."""
        items: list[dict[str, Any]] = []
        token: str | None = None
        pages = PageBound(self.settings, int(query.get("limit") or 500), time.monotonic())
        while True:
            page = self.json("GET", path, query={**query, **({"continue": token} if token else {})})
            items += [i for i in page.get("items") or [] if isinstance(i, dict)]
            token = (page.get("metadata") or {}).get("continue")
            if not token:
                return items
            if (why := pages.next(str(token))) is not None:
                raise ApiError(0, f"GET {path}: {why}")

    # -- retries ------------------------------------------------------------------------------------

    def get(
        self,
        what: str,
        path: str,
        query: dict[str, str] | None = None,
        *,
        accept: frozenset[int] = frozenset(),
        read_timeout: float | None = None,
        attempts: int | None = None,
        max_bytes_setting: str = "answer_max_bytes",
    ) -> Answer:
        """GET with retries on 429/5xx/timeouts/resets; 2xx and `accept` statuses are returned, others raise.

        An answer longer than the ReadSettings field `max_bytes_setting` (decompressed) raises at once."""
        max_bytes: int = getattr(self.settings, max_bytes_setting)
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            if self.cancelled.is_set():
                raise ReadCancelled
            retry_after: float | None = None
            status: int | None = None  # None: no answer (timeout, reset, refused)
            try:
                code, body, headers = self._once(path, query, read_timeout or self.settings.read_timeout_s, max_bytes)
            except AnswerTooLarge as exc:
                raise self.error(
                    what,
                    path,
                    query,
                    f"the answer is larger than {max_bytes:,} bytes (decompressed); reading stopped there",
                    status=exc.status,
                    hint=f"if the answer is genuine, raise ${_ENV_PREFIX}{max_bytes_setting.upper()}",
                ) from None
            except urllib3.exceptions.HTTPError as exc:
                failure, retryable = _transport_failure(exc)
                if not retryable:
                    raise self.error(what, path, query, failure) from None
            else:
                status = code
                if 200 <= code < 300 or code in accept:
                    return Answer(code, body, attempt)
                failure = _http_failure(code, body)
                if code == 410 and query and query.get("continue"):
                    raise ListExpired(failure)
                if code not in RETRY_STATUSES:
                    raise self.error(what, path, query, failure, status=code, hint=_hint(code, what, path))
                retry_after = _retry_after(headers) if code in (429, 503) else None
            self._pause(
                what, path, query, failure, status, (attempt, attempts or self.settings.attempts), started, retry_after
            )

    def _pause(
        self,
        what: str,
        path: str,
        query: dict[str, str] | None,
        failure: str,
        status: int | None,
        attempt_of: tuple[int, int],
        started: float,
        retry_after: float | None,
    ) -> None:
        """Sleep before the next attempt, or raise when the attempts or the time budget are spent."""
        s = self.settings
        attempt, most = attempt_of
        elapsed = time.monotonic() - started
        delay = (
            retry_after
            if retry_after is not None
            else random.uniform(0, min(s.backoff_cap_s, s.backoff_base_s * 2 ** (attempt - 1)))
        )
        if attempt >= most or elapsed + delay > s.retry_budget_s:
            tail = f"after {_plural(attempt, 'attempt')} in {elapsed:.1f} s"
            if retry_after is not None and elapsed + delay > s.retry_budget_s and attempt < most:
                tail += f" (the server asked to wait {delay:.0f} s more, past the {s.retry_budget_s:g} s budget)"
            raise self.error(what, path, query, f"{failure} {tail}", status=status)
        RETRIES.add()
        if self.cancelled.wait(delay):
            raise ReadCancelled

    def error(
        self,
        what: str,
        path: str,
        query: dict[str, str] | None,
        failure: str,
        *,
        status: int | None = None,
        hint: str | None = None,
    ) -> ReadError:
        if status is not None:
            return ReadError(
                f"reading {what} from {self.label} ({display(path, query)}): {failure}", status=status, hint=hint
            )
        # No answer (refused, reset, timed out, TLS): which server it was is the first question, so name it.
        unreached = failure.startswith(_NOT_REACHED)
        return ReadError(
            f"reading {what} from {self.label} at {self.server} ({display(path, query)}): {failure}",
            hint=hint or (self._unreachable_hint() if unreached else None),
        )

    def _unreachable_hint(self) -> str:
        if self.label == "in-cluster":
            return "the pod cannot reach the API server; check its network policies"
        return (
            f"check that {self.label} is the cluster you mean (kubectl config get-contexts; pass --context "
            "NAME) and that its API server is reachable from here"
        )


def _lost_request(exc: Exception) -> str:
    """What became of a writer's request that got no answer."""
    if isinstance(exc, urllib3.exceptions.ProtocolError):
        return "connection reset"
    if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
        return "read timed out (the write may or may not have been applied)"
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return "cannot connect"
    return f"{type(exc).__name__}: {exc}"


def shown_server(url: str) -> str:
    """The API server's URL for messages: scheme, host, port and path; never userinfo, query or fragment."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket: the message shows the URL, its credential cut off
        return re.split(r"[?#]", url_without_userinfo(url), maxsplit=1)[0]
    host = parts.netloc.rpartition("@")[2]
    return f"{parts.scheme}://{host}{parts.path}" if parts.scheme else host + parts.path


def _http_failure(status: int, body: bytes) -> str:
    message = status_message(body)
    return f"HTTP {status}" + (f" ({message})" if message else "")


def _hint(status: int, what: str, path: str) -> str | None:
    if status == 401:
        return "the credentials of this kube context were rejected; log in again or refresh the kubeconfig"
    if status == 403 and "/proxy/" in path:
        return "grant this identity `get` on services/proxy in namespace nvca-system"
    if status == 403:
        return f"grant this identity the read role's access to {what} (deploy/base/rbac-read.yaml)"
    if status == 404:
        return "the API server does not serve this resource"
    return None


IDENTITY_PATH = NAMESPACE.object_path("kube-system")


def kube_system_uid(client: ClusterClient, server: str) -> str:
    """The cluster's identity: the kube-system namespace's UID, which a rebuilt cluster at the same URL does not
    share. `server` names the API server in the error."""
    answer = client.get("the kube-system namespace (cluster identity)", IDENTITY_PATH)
    try:
        uid = orjson.loads(answer.body)["metadata"]["uid"]
    except (orjson.JSONDecodeError, KeyError, TypeError):
        uid = None
    if not isinstance(uid, str) or not uid:
        raise UserError(f"{IDENTITY_PATH} on {server} has no metadata.uid; cannot identify the cluster")
    return uid
