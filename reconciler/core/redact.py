"""Redaction of credentials, applied where values enter the program, so nothing downstream sees them.

Two nets: key names (password, token, tls.key, basicAuth, …) and value shapes (URLs with a password,
`--token=…` arguments, PEM blocks, long base64 blobs), because Helm values hide secrets under any name.
The nets err on the side of masking: a masked value can still be compared, a leaked one cannot be unleaked.
"""

from __future__ import annotations

import re
from typing import overload

from reconciler.core.jsonvalue import JSONArray, JSONObject, JSONValue

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"(password|passwd|passphrase|secret|token|credential|apikey|api_key|accesskey|access_key|privatekey|"
    r"private_key|servicekey|service_key|clientkey|client_key|sshkey|ssh_key|signingkey|cert|cabundle|"
    r"auth(?!or(s)?$|ority)|dockerconfig|connectionstring|dsn|\.pem$|\.key$|\.crt$|\.p12$|\.jks$|^key$|^pass$|^pwd$)",
    re.IGNORECASE)
# Names that point at a secret rather than hold one (secretName, tokenSecretRef, certFile, passwordPath).
_REFERENCE = re.compile(r"(name|ref|file|path|enabled|namespace|mountpath|provider|type|mode)$", re.IGNORECASE)
# Both shape patterns start only where a run of their characters starts (the lookbehinds), and re-emit the
# run's `lead`: the leftmost match is the same as without them, but a long run of scheme or flag characters
# (a base64 blob, a hostname) is scanned once instead of once per position -- quadratic before.
# A flag's value ends at white space or a quote: `"--token=A","--secret B"` is two secrets, not one long one.
_URL_USERINFO = re.compile(r"(?<![a-z0-9+.-])(?P<lead>[0-9+.-]*)(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@",
                           re.IGNORECASE)
# The value is not itself a secret flag: in `-TOKEN --db-password pw` the second flag's value is the secret.
_SECRET_ARG = re.compile(r"(?<![\w.-])(?P<lead>[\w.]*)(?P<flag>--?[\w.-]*(password|passwd|secret|token|key|credential)"
                         r"[\w.-]*[=\s]+)(?!--?[\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*(?:[=\s]|$))"
                         r"(\"[^\"]*\"|'[^']*'|[^\s\"']+)", re.IGNORECASE)
_SECRET_FLAG = re.compile(r"^--?[\w.-]*(password|passwd|secret|token|key|credential)[\w.-]*$", re.IGNORECASE)
_PEM = re.compile(r"-----BEGIN [A-Z ]+-----")
# base64 tokens: long, mixed case and digits, not a path (image digests say sha256: and are lower-case hex)
_BLOB = re.compile(r"^(?!/)(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])[A-Za-z0-9+/_-]{40,}={0,2}$")


def is_secret_key(name: str) -> bool:
    return bool(_SECRET_KEY.search(name)) and not _REFERENCE.search(name)


@overload
def redact(value: JSONObject) -> JSONObject: ...
@overload
def redact(value: JSONArray) -> JSONArray: ...
@overload
def redact(value: JSONValue) -> JSONValue: ...


def redact(value: JSONValue) -> JSONValue:
    """A copy of `value` with every secret-looking entry masked."""
    if isinstance(value, dict):
        if _is_env_entry(value):
            return {k: (REDACTED if k == "value" and value.get("value") not in (None, "") else redact(v))
                    for k, v in value.items()}
        return {k: (_mask(v) if isinstance(k, str) and is_secret_key(k) else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return _redact_list(value)
    if isinstance(value, str):
        return redact_text(value)
    return value


def _redact_list(items: JSONArray) -> JSONArray:
    """Also `args: ["--password", "pw"]`: a bare secret flag masks the item after it."""
    out: JSONArray = []
    for i, item in enumerate(items):
        previous = items[i - 1] if i else None
        flagged = isinstance(previous, str) and bool(_SECRET_FLAG.match(previous))
        out.append(REDACTED if flagged and isinstance(item, str) else redact(item))
    return out


def redact_text(text: str) -> str:
    if _PEM.search(text) or _BLOB.match(text):
        return REDACTED
    text = _URL_USERINFO.sub(lambda m: f"{m.group('lead')}{m.group('scheme')}{REDACTED}@", text)
    return _SECRET_ARG.sub(lambda m: f"{m.group('lead')}{m.group('flag')}{REDACTED}", text)


_USERINFO = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*://)[^/?#@]*@", re.IGNORECASE)


def url_without_userinfo(url: str) -> str:
    """`https://user:password@host:6443/p` as `https://host:6443/p`: the endpoint without its credential.

    For a URL that is an identity (the API server a plan is bound to) rather than text to show: masking
    would keep a marker that changes when the credential does, stripping keeps the endpoint itself."""
    return _USERINFO.sub(lambda m: m.group("scheme"), url, count=1)


def _is_env_entry(value: JSONObject) -> bool:
    """`env: [{name: DB_PASSWORD, value: …}]`: the secret's name is in a sibling field."""
    name = value.get("name")
    return isinstance(name, str) and "value" in value and is_secret_key(name.replace("_", ""))


def _mask(value: JSONValue) -> JSONValue:
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value if value in (None, "", False, True) else REDACTED

