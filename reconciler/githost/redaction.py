"""The last gate before a text leaves for a Git host: a Markdown body is many values in one string, so it
is judged as free text (token by token, then line by line; see `redact_free_text`)."""

from __future__ import annotations

from reconciler.core.redact import redact_free_text


def scrub_body(text: str) -> str:
    return redact_free_text(text)
