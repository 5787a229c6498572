"""Shared helpers of tests/redaction/test_redact_linear.py, used by other tests too.

Tests import helpers only from tests/support/ (tests/project/test_test_layout.py).
"""

from __future__ import annotations

import re

from reconciler.core.redact import REDACTED, is_secret_key

# The patterns without the run-start lookbehinds: the reference for what is masked.
_PLAIN_URL = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/?#\\\s\"'<>`]*)@", re.IGNORECASE)

_PLAIN_PAIR = re.compile(r"(?P<name>[A-Za-z_][\w.-]*)=(?P<value>[^\s&#\"'<>`]+)")

_PLAIN_AUTH = re.compile(r"(?<![\w-])(?P<scheme>[Bb]earer|Basic)(?P<gap>\s+)(?P<credential>[A-Za-z0-9._~+/-]+=*)")

# (with the value not itself a secret flag: `-TOKEN --db-password pw` masks pw)
_PLAIN_ARG = re.compile(
    r"(?P<flag>--?[\w.-]*(password|passwd|secret|token|key|credential)[\w.-]*[=\s]+)"
    r"(?!--?[\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*(?:[=\s]|$))\S+",
    re.IGNORECASE,
)

_PLAIN_SCHEME_PAIR = re.compile(
    r"(?P<name>[A-Za-z_][\w.-]*)(?P<sep>[ \t]*[=:][ \t]*)"
    r"(?P<scheme>[Bb]earer|Basic)(?P<gap>[ \t]+)[A-Za-z0-9._~+/-]+=*"
)


def _plain_userinfo(m: re.Match[str]) -> str:
    login = m.group("scheme").lower().startswith(("ssh:", "git+ssh:")) and ":" not in m.group("userinfo")
    return m.group(0) if login or not m.group("userinfo") else f"{m.group('scheme')}{REDACTED}@"


def _plain_pairs(text: str) -> str:
    """The pair net with its lookbehind's rule spelled out: a name starts a run. A match refused by the rule
    consumes nothing, so the scan goes on from the next character (a suffix of the run may start a pair
    after a separator, as `token` does in `-_=token=x`)."""
    out, pos, at = [], 0, 0
    while match := _PLAIN_PAIR.search(text, at):
        start = match.start()
        if start and re.match(r"[\w.-]", text[start - 1]):
            at = start + 1
            continue
        secret = is_secret_key(match.group("name"))
        out.append(text[pos:start] + (f"{match.group('name')}={REDACTED}" if secret else match.group(0)))
        pos = at = match.end()
    return "".join(out) + text[pos:]


def _plain_scheme_pairs(text: str) -> str:
    """`token=Bearer abc`, with the same run-start rule spelled out as for the pairs."""
    out, pos, at = [], 0, 0
    while match := _PLAIN_SCHEME_PAIR.search(text, at):
        start = match.start()
        if start and re.match(r"[\w.-]", text[start - 1]):
            at = start + 1
            continue
        secret = is_secret_key(match.group("name").replace("-", "").replace("_", ""))
        masked = f"{match.group('name')}{match.group('sep')}{match.group('scheme')}{match.group('gap')}{REDACTED}"
        out.append(text[pos:start] + (masked if secret else match.group(0)))
        pos = at = match.end()
    return "".join(out) + text[pos:]


def _credential_shaped(word: str) -> bool:
    return len(word) >= 8 and (not word.isalpha() or any(c.isupper() for c in word[1:]))


def _plain(text: str) -> str:
    text = _plain_scheme_pairs(text)
    text = _PLAIN_URL.sub(_plain_userinfo, text)
    text = _plain_pairs(text)
    text = _PLAIN_AUTH.sub(
        lambda m: (
            f"{m.group('scheme')}{m.group('gap')}{REDACTED}"
            if _credential_shaped(m.group("credential"))
            else m.group(0)
        ),
        text,
    )
    return _PLAIN_ARG.sub(lambda m: f"{m.group('flag')}{REDACTED}", text)
