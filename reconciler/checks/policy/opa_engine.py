"""An OPA server as the policy engine, through opa_client: upload the pack, then one data query per evaluation."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path
from urllib.parse import quote

import requests
from opa_client import OpaClient
from opa_client.errors import RegoParseError

from reconciler.checks.policy.pack import (
    RULES_PACKAGE,
    PolicyFile,
    PolicyResult,
    PolicySet,
    collect_results,
    facts_scope,
    iter_rule_nodes,
)
from reconciler.core.capped import MAX_JSON_DEPTH, AnswerTooLarge, read_response, too_deep_at
from reconciler.core.errors import UserError
from reconciler.core.jsonvalue import JSONLike, JSONObject
from reconciler.core.redact import excerpt, redact_text
from reconciler.core.urls import split_url

POLICY_ID_PREFIX = "kai-gitops/"
# An OPA answer is the run's findings as data: megabytes at most. A larger one (a misbehaving server or proxy,
# a gzip bomb) is refused before it is held whole, as the cluster reader refuses one (read_capped).
ANSWER_MAX_BYTES = 64 * 1024 * 1024
_REBUILD = (
    "serve a bundle built for this repository and version: kai-gitops policy bundle --repo REPO "
    "-o bundle.tar.gz; opa run --server --bundle bundle.tar.gz (or drop --opa-preloaded to upload)"
)


class OpaEngine:
    def __init__(
        self,
        policy_set: PolicySet,
        url: str,
        *,
        token: str | None = None,
        ca: Path | None = None,
        timeout: float = 10.0,
        preloaded: bool = False,
    ) -> None:
        self._set = policy_set
        self._url = url.rstrip("/")
        self._shown = redact_text(self._url)  # for messages: a URL may carry user:password
        self._timeout = timeout
        self._client = make_client(self._url, token=token, ca=ca, timeout=timeout)
        self._ids = {policy_id(f.name): f.name for f in policy_set.files}
        self._verified = not preloaded  # what we upload ourselves needs no check
        if not preloaded:
            self.upload()

    def upload(self) -> None:
        """Replace our policies on the server; drop ones of ours that no longer exist locally."""
        self._upload_policies(list(self._set.files))
        for key, value in self._set.data.items():
            with self._calling(f"uploading data.{key}"):
                self._client.update_or_create_data(value, quote(key, safe=""))
        with self._calling("listing policies"):
            stale = [p for p in self._policy_ids() if p.startswith(POLICY_ID_PREFIX) and p not in self._ids]
        for policy_id in stale:
            with self._calling(f"deleting stale policy {policy_id}"):
                self._client.delete_policy(quote(policy_id, safe="/"))

    def _policy_ids(self) -> list[str]:
        """opa_client lists `/v1/policies/`, which OPA answers with a redirect to `/v1/policies`: a round trip
        more, and one that drops the path prefix of an --opa-url such as https://gateway/opa."""
        response = self._client._session.get(f"{self._client.root_url}/policies", timeout=self._timeout)
        response.raise_for_status()
        return [str(p["id"]) for p in response.json().get("result") or [] if isinstance(p, dict) and p.get("id")]

    def _upload_policies(self, pending: list[PolicyFile]) -> None:
        """OPA compiles each module on upload against what it already has, so a module calling a function
        of a file not yet uploaded is refused; upload again what was refused until nothing moves."""
        while pending:
            refused: list[tuple[PolicyFile, RegoParseError]] = []
            for f in pending:
                try:
                    with self._calling(f"uploading {f.name}", passthrough=RegoParseError):
                        self._client.update_policy_from_string(
                            f.text, quote(policy_id(f.name), safe="/"), rego_compat=False
                        )
                except RegoParseError as exc:
                    refused.append((f, exc))
            if len(refused) == len(pending):
                raise self._compile_error(refused[0][1])
            pending = [f for f, _ in refused]

    def evaluate(self, facts: Mapping[str, JSONLike]) -> list[PolicyResult]:
        scope = facts_scope(facts)
        if not self._verified:
            self._verify_preloaded_data()
        answer = self._query(dict(facts), RULES_PACKAGE, "evaluating policies")
        tree = answer.get("result", {})  # no "result" = the package is undefined: nothing loaded
        if not self._verified:
            self._verify_preloaded_rules(tree)
            self._verified = True
        return collect_results(tree, self._set, scope)

    def _query(self, facts: dict[str, JSONLike], path: str, what: str) -> JSONObject:
        with self._calling(what):
            answer = self._client.query_rule(facts, path)
        if not isinstance(answer, dict):
            raise UserError(
                f"OPA at {self._shown} answered the data query with {type(answer).__name__}, not a JSON object",
                hint="is --opa-url an OPA server?",
            )
        return answer

    def _verify_preloaded_data(self) -> None:
        """A preloaded server without the pack's data would not fail: every rule reading it would quietly
        misjudge (NVCA-G-004 calls every gate unknown). One clear error instead of a flood of findings."""
        for key, expected in sorted(self._set.data.items()):
            answer = self._query({}, key, f"reading data.{key}")
            if "result" not in answer:
                raise UserError(
                    f"OPA at {self._shown} holds no data.{key}, which the policies read "
                    f"(--opa-preloaded: nothing is uploaded)",
                    hint=_REBUILD,
                )
            if answer["result"] != expected:
                raise UserError(
                    f"OPA at {self._shown} holds a data.{key} that differs from this run's "
                    f"policy data (--opa-preloaded: nothing is uploaded)",
                    hint=_REBUILD,
                )

    def _verify_preloaded_rules(self, tree: object) -> None:
        served = {str(meta.get("id")) for meta, _ in iter_rule_nodes(tree) if isinstance(meta, dict)}
        missing = sorted(set(self._set.rules) - served)
        if missing:
            shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            raise UserError(
                f"OPA at {self._shown} does not serve {len(missing)} of this run's "
                f"{len(self._set.rules)} rules ({shown}) (--opa-preloaded: nothing is uploaded)",
                hint=_REBUILD,
            )

    @contextlib.contextmanager
    def _calling(self, what: str, passthrough: type[Exception] | None = None) -> Iterator[None]:
        """Every client failure becomes one line naming the server and what to do about it."""
        try:
            yield
        except AnswerTooLarge:
            raise UserError(
                f"OPA at {self._shown} sent an answer larger than {ANSWER_MAX_BYTES:,} bytes "
                f"(decompressed) while {what}",
                hint="is --opa-url an OPA server, and its policies the ones this run uploads?",
            ) from None
        except AnswerTooDeep:
            raise UserError(
                f"OPA at {self._shown} sent an answer nested deeper than {MAX_JSON_DEPTH} levels while {what}",
                hint="is --opa-url an OPA server, and its policies the ones this run uploads?",
            ) from None
        except RegoParseError as exc:
            if passthrough is not None and exc.errors and isinstance(exc, passthrough):
                raise
            raise self._compile_error(exc) from None
        except requests.exceptions.SSLError:
            raise UserError(
                f"TLS verification of OPA at {self._shown} failed while {what}",
                hint="pass the server's CA file with --opa-ca",
            ) from None
        except requests.exceptions.Timeout:
            raise UserError(
                f"OPA at {self._shown} did not answer within {self._timeout:g}s while {what}",
                hint="check the server's load or raise --opa-timeout",
            ) from None
        except requests.exceptions.ConnectionError:
            raise UserError(
                f"cannot connect to OPA at {self._shown} while {what}",
                hint="check --opa-url and that the server is running",
            ) from None
        except requests.exceptions.HTTPError as exc:
            raise self._http_error(exc.response, what) from None
        except ValueError:  # requests' JSONDecodeError, or a client type check
            raise UserError(
                f"OPA at {self._shown} sent an answer that is not OPA JSON while {what}",
                hint="is --opa-url an OPA server (and not a proxy or login page)?",
            ) from None
        except Exception as exc:  # opa_client raises its own exception types for each endpoint
            message = getattr(exc, "message", None) or str(exc) or type(exc).__name__
            raise UserError(
                f"OPA at {self._shown} failed while {what}: {message}", hint="check the server's logs"
            ) from None

    def _http_error(self, response: requests.Response | None, what: str) -> UserError:
        status = response.status_code if response is not None else "?"
        detail = opa_message(response)
        if status in (401, 403):
            return UserError(
                f"OPA at {self._shown} refused the request ({status}) while {what}: {detail}", hint="check --opa-token"
            )
        return UserError(
            f"OPA at {self._shown} answered HTTP {status} while {what}: {detail}", hint="check the server's logs"
        )

    def _compile_error(self, exc: RegoParseError) -> UserError:
        for err in exc.errors or []:
            if isinstance(err, dict):
                loc = err.get("location") or {}
                name = self._ids.get(str(loc.get("file", "")), loc.get("file", "?"))
                return UserError(
                    f"{err.get('message', exc.message)} (compiled by OPA at {self._shown})",
                    where=f"{name}:{loc.get('row', '?')}:{loc.get('col', '?')}",
                )
        if exc.expression in ("unauthorized", "forbidden"):
            return UserError(
                f"OPA at {self._shown} refused the request ({exc.expression}): {exc.message}", hint="check --opa-token"
            )
        return UserError(
            f"OPA at {self._shown} rejected the policy upload ({exc.expression}): {exc.message}",
            hint="check the server's logs",
        )


def policy_id(name: str) -> str:
    """The id a file is uploaded under, as OPA keeps it: OPA redirects a path with empty or `.` segments (an
    absolute file name gives `kai-gitops//tmp/...`) to its cleaned form, so the policy would land under another
    id and be deleted as stale by the next listing."""
    return POLICY_ID_PREFIX + "/".join(part for part in name.split("/") if part not in ("", "."))


def make_client(url: str, *, token: str | None, ca: Path | None, timeout: float) -> OpaClient:
    parts = split_url(url, "--opa-url")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise UserError(f"--opa-url {redact_text(url)!r} is not an http(s) URL", hint="e.g. https://opa.example:8181")
    https = parts.scheme == "https"
    port = parts.port or (443 if https else 80)
    # retries=0: a failing server should fail fast with one clear line, not after a backoff.
    client = OpaClient(host=parts.hostname, port=port, ssl=https, token=token, timeout=timeout, retries=0)
    # opa_client has no path prefix or CA option; both live on attributes it exposes.
    client.root_url = f"{parts.scheme}://{parts.netloc}{parts.path.rstrip('/')}/v1"
    if https:
        client._session.verify = str(ca) if ca else True
        if ca:  # a session's own `verify` loses to $REQUESTS_CA_BUNDLE (psf/requests#4726); a request's wins
            client._session.request = functools.partial(client._session.request, verify=str(ca))
    elif ca:
        raise UserError("--opa-ca is given but --opa-url is not https")
    client._session.headers["Accept-Encoding"] = "gzip"  # all read_capped inflates
    client._session.hooks["response"].append(_read_capped_answer)
    return client


class AnswerTooDeep(Exception):
    """An answer nested deeper than MAX_JSON_DEPTH: the rule tree's walk and the formats recurse per level."""


def _read_capped_answer(response: requests.Response, *_args: object, **_kwargs: object) -> requests.Response:
    """requests' response hook, run before the body is read: read it here, a bounded slice at a time (past
    ANSWER_MAX_BYTES, AnswerTooLarge; nested past MAX_JSON_DEPTH, AnswerTooDeep: `OpaEngine._calling` names the
    server and the call)."""
    try:
        body = read_response(response.raw, ANSWER_MAX_BYTES)
    except AnswerTooLarge:
        response.close()
        raise
    if too_deep_at(body) is not None:
        raise AnswerTooDeep(response.status_code)
    response._content = body
    response._content_consumed = True  # type: ignore[attr-defined]  # iter_content: from _content
    return response


def opa_message(response: requests.Response | None) -> str:
    if response is None:
        return "no response"
    try:
        body = response.json()
    except ValueError:  # a proxy's HTML page, say: its first line is the most useful part
        lines = (response.text or "").strip().splitlines()
        return excerpt(lines[0], 200) if lines else str(response.reason)
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return excerpt(str(body), 200)
