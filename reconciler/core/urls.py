"""URLs a user gives (options, kai-gitops.yaml, a Git remote, a kubeconfig) split once, safely.

`urllib.parse.urlsplit` raises ValueError on an unclosed IPv6 bracket, and `.port` on a port that is not a
number: left alone either is an internal error. Here it is one line naming where the URL came from, the
URL redacted (it may carry a token).
"""

from __future__ import annotations

from urllib.parse import SplitResult, urlsplit

from reconciler.core.errors import UserError
from reconciler.core.redact import redact_text


def split_url(url: str, what: str) -> SplitResult:
    """The URL's parts, its port already checked; UserError naming `what` (e.g. "--opa-url") otherwise."""
    try:
        parts = urlsplit(url)
        _ = parts.port
    except ValueError as exc:
        raise UserError(
            f"{what} {redact_text(url)!r} is not a valid URL ({exc})",
            hint="e.g. https://host:port/path; an IPv6 host is written in brackets, [::1]",
        ) from None
    return parts
