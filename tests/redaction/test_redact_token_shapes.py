"""Tokens known by their own shape (a JWT, GitLab's and GitHub's prefixed tokens, AWS access key ids) and a
secret name whose value is an Authorization header's: masked wherever they stand in free text and in one value."""

from __future__ import annotations

import pytest

from reconciler.core.redact import REDACTED, redact, redact_free_text, redact_text

JWT = (
    "eyJhbGciOiJSUzI1NiIsImtpZCI6IjEifQ.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0"
    ".Xq3Zl0y_9vG-kT2mN8pR4sW6uY1aC3eE5gI7"
)


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        (f"the session {JWT} expired", JWT),
        (f"token=Bearer {JWT}", JWT),
        (f"token=Bearer {JWT}", "Xq3Zl0y"),
        ("token=Bearer Zq9wErTy1234uIoP next", "Zq9wErTy1234uIoP"),
        ("X-Api-Key: Bearer Zq9wErTy1234uIoP", "Zq9wErTy1234uIoP"),
        ("clone failed: glpat-Zq9wErTy1234uIoPaSdF denied", "Zq9wErTy1234uIoPaSdF"),
        ("runner glrt-t1_Zq9wErTy1234uIoPaSdF registered", "Zq9wErTy1234uIoPaSdF"),
        ("deploy gldt-Zq9wErTy1234uIoPaSdF", "Zq9wErTy1234uIoPaSdF"),
        ("trigger glptt-0123456789abcdef0123456789abcdef01234567", "0123456789abcdef0123456789abcdef01234567"),
        ("key AKIAIOSFODNN7EXAMPLE used", "IOSFODNN7EXAMPLE"),
        ("session ASIAY34FZKBOKMUTVV7A, expired", "Y34FZKBOKMUTVV7A"),
        ("push by ghp_abcdefghijklmnopqrstuvwxyz0123456789 refused", "abcdefghijklmnopqrstuvwxyz0123456789"),
        ("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789ABCDEFGHIJ", "mnopqrstuvwxyz0123456789"),
    ],
)
def test_token_shapes_are_masked_in_free_text_and_in_a_value(text: str, secret: str) -> None:
    for redacted in (redact_free_text(text), redact_text(text), redact({"note": text})["note"]):
        assert isinstance(redacted, str) and secret not in redacted and REDACTED in redacted, redacted


@pytest.mark.parametrize(
    "text",
    [
        "queue global-default-queue-with-a-long-name",
        "the Bearer token is missing",
        "eyJ is how a JWT starts",
        "AKIA is an AWS key id prefix",
        "ghp_ starts a GitHub token",
        "gitlab-runner-0123456789abcdef registered",
        "image nginx:1.27.3",
    ],
)
def test_lookalikes_stay(text: str) -> None:
    assert redact_free_text(text) == text
