"""The value-shape nets of redact_text: same output as the plain patterns, without their quadratic scans."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconciler.core.redact import REDACTED, redact_free_text, redact_text
from tests.support.redaction_redact_linear import _plain

_PIECES = [
    "-",
    "--",
    "://",
    "@",
    ":",
    "=",
    " ",
    ".",
    "+",
    "1",
    "x",
    "H",
    "token",
    "PassWord",
    "key",
    "_",
    "/",
    "https",
    "git+ssh",
    "\t",
    "é",
    "?",
    "&",
    "apikey",
    "Bearer",
    "ssh",
]


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
        f"clone 1x-https://{REDACTED}@git.example.com/repo"
    )
    assert redact_text("args run-a-b--api-token=abc123 next") == f"args run-a-b--api-token={REDACTED} next"
    assert "hunter2" not in redact_text("x" * 5000 + " https://u:hunter2@h " + "a-b" * 2000 + " --password hunter2")


@pytest.mark.parametrize(
    "text",
    [
        "eyJ" + "a" * 200_000,
        ("eyJaaaa." * 40_000),
        "eyJaaaa.eyJ" + "b" * 200_000,
        "glpat-" * 40_000,
        "glpat" + "-a" * 100_000,
        "AKIA" * 50_000,
        "token=Bearer " * 20_000,
        "token" + " " * 200_000 + "x",
        "a=" * 100_000,
        ("Bearer " * 30_000) + "=",
    ],
)
def test_the_token_shapes_scan_long_runs_in_linear_time(text: str) -> None:
    """Each input is 200k characters; a quadratic scan of one would take minutes, a linear one milliseconds."""
    started = time.perf_counter()
    redact_free_text(text)
    assert time.perf_counter() - started < 5
