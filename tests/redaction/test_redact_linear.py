"""The value-shape nets of redact_text: same output as the plain patterns, without their quadratic scans."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.redact import REDACTED, is_secret_key, redact_free_text, redact_text

# The patterns without the run-start lookbehinds: the reference for what is masked.
_PLAIN_URL = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)(?P<userinfo>[^/?#\\\s\"'<>`]*)@", re.IGNORECASE)
_PLAIN_PAIR = re.compile(r"(?P<name>[A-Za-z_][\w.-]*)=(?P<value>[^\s&#\"'<>`]+)")
_PLAIN_AUTH = re.compile(r"(?<![\w-])(?P<scheme>[Bb]earer|Basic)(?P<gap>\s+)(?P<credential>[A-Za-z0-9._~+/-]+=*)")
# (with the value not itself a secret flag: `-TOKEN --db-password pw` masks pw)
_PLAIN_ARG = re.compile(r"(?P<flag>--?[\w.-]*(password|passwd|secret|token|key|credential)[\w.-]*[=\s]+)"
                        r"(?!--?[\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*(?:[=\s]|$))\S+",
                        re.IGNORECASE)
_PLAIN_SCHEME_PAIR = re.compile(r"(?P<name>[A-Za-z_][\w.-]*)(?P<sep>[ \t]*[=:][ \t]*)"
                                r"(?P<scheme>[Bb]earer|Basic)(?P<gap>[ \t]+)[A-Za-z0-9._~+/-]+=*")
_PIECES = ["-", "--", "://", "@", ":", "=", " ", ".", "+", "1", "x", "H", "token", "PassWord", "key", "_", "/",
           "https", "git+ssh", "\t", "é", "?", "&", "apikey", "Bearer", "ssh"]


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
    text = _PLAIN_AUTH.sub(lambda m: f"{m.group('scheme')}{m.group('gap')}{REDACTED}"
                           if _credential_shaped(m.group("credential")) else m.group(0), text)
    return _PLAIN_ARG.sub(lambda m: f"{m.group('flag')}{REDACTED}", text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_same_masking_as_the_plain_patterns(text: str) -> None:
    if "BEGIN" in text:
        return
    expected = _plain(text)
    if re.fullmatch(r"(?!/)(?=.*[a-z])(?=.*[A-Z])(?=.*[0-9])[A-Za-z0-9+/_-]{40,}={0,2}", text):
        expected = REDACTED
    assert redact_text(text) == expected


def test_examples_still_masked() -> None:
    assert redact_text("clone 1x-https://bot:s3cret@git.example.com/repo") == (
        f"clone 1x-https://{REDACTED}@git.example.com/repo")
    assert redact_text("args run-a-b--api-token=abc123 next") == f"args run-a-b--api-token={REDACTED} next"
    assert "hunter2" not in redact_text("x" * 5000 + " https://u:hunter2@h " + "a-b" * 2000 + " --password hunter2")


@pytest.mark.parametrize("text", [
    "eyJ" + "a" * 200_000, ("eyJaaaa." * 40_000), "eyJaaaa.eyJ" + "b" * 200_000, "glpat-" * 40_000,
    "glpat" + "-a" * 100_000, "AKIA" * 50_000, "token=Bearer " * 20_000, "token" + " " * 200_000 + "x",
    "a=" * 100_000, ("Bearer " * 30_000) + "=",
])
def test_the_token_shapes_scan_long_runs_in_linear_time(text: str) -> None:
    """Each input is 200k characters; a quadratic scan of one would take minutes, a linear one milliseconds."""
    started = time.perf_counter()
    redact_free_text(text)
    assert time.perf_counter() - started < 5
