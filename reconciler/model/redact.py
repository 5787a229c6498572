"""Redaction of credentials by key name: applied where values enter the program, so nothing downstream sees them."""

from __future__ import annotations

import re
from typing import Any

REDACTED = "<redacted>"
_SECRET_KEY = re.compile(
    r"(password|passwd|passphrase|secret|token|credential|apikey|api_key|accesskey|access_key|privatekey|"
    r"private_key|servicekey|service_key|clientkey|client_key|cert|\.pem$|dockerconfigjson|^key$|^auth$)",
    re.IGNORECASE)


# Names that point at a secret rather than hold one (secretName, tokenSecretRef, certFile, passwordPath).
_REFERENCE = re.compile(r"(name|ref|file|path|enabled|namespace|mountpath)$", re.IGNORECASE)


def is_secret_key(name: str) -> bool:
    return bool(_SECRET_KEY.search(name)) and not _REFERENCE.search(name)


def redact(value: Any) -> Any:
    """A copy of `value` with every scalar under a secret-looking key replaced by a marker."""
    if isinstance(value, dict):
        return {k: (_mask(v) if isinstance(k, str) and is_secret_key(k) else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(item) for item in value]
    return value


def _mask(value: Any) -> Any:
    if isinstance(value, dict | list):
        return redact_all(value)
    return value if value in (None, "", False) else REDACTED


def redact_all(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: redact_all(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact_all(v) for v in value]
    return value if value in (None, "") else REDACTED
