"""The value-shape nets of redact_text: same output as the plain patterns, without their quadratic scans."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.redact import REDACTED, redact_text

# The patterns as they were before the run-start lookbehinds: the reference for what is masked.
_PLAIN_URL = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s:]+:[^/@\s]+@", re.IGNORECASE)
# (with the value not itself a secret flag: `-TOKEN --db-password pw` masks pw)
_PLAIN_ARG = re.compile(r"(?P<flag>--?[\w.-]*(password|passwd|secret|token|key|credential)[\w.-]*[=\s]+)"
                        r"(?!--?[\w.-]*(?:password|passwd|secret|token|key|credential)[\w.-]*(?:[=\s]|$))\S+",
                        re.IGNORECASE)
_PIECES = ["-", "--", "://", "@", ":", "=", " ", ".", "+", "1", "x", "H", "token", "PassWord", "key", "_", "/",
           "https", "git+ssh", "\t", "é"]


def _plain(text: str) -> str:
    text = _PLAIN_URL.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
    return _PLAIN_ARG.sub(lambda m: f"{m.group('flag')}{REDACTED}", text)


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=30).map("".join))
def test_same_masking_as_the_plain_patterns(text: str) -> None:
    if "-----BEGIN" in text:
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
