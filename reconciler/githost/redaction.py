"""The last gate before a text leaves for a Git host: redaction applied per line and per token.

`redact_text` judges a whole string (a PEM block or a base64 blob masks all of it); a Markdown body is
many values in one string, so it is judged line by line, and each token on its own. A token is judged as
the reader will see it: Markdown backslash escapes and HTML entities undone, because escaping splits or
wraps a value (`abc\\_DEF`, `&quot;TOKEN&quot;`) in ways the value-shape patterns would not recognise.
"""

from __future__ import annotations

import html
import re

from reconciler.core.redact import REDACTED, redact_text

_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z ]+-----.*?(-----END [A-Z ]+-----|\Z)", re.DOTALL)
# Runs of text between separators; a backslash escape stays inside the run it escapes.
_TOKEN = re.compile(r"(?:\\.|&#?\w+;|[^\s`|()\[\]<>\"',;\\])+")
_ENTITY = re.compile(r"&#?\w+;")
_MIN_TOKEN = 12


def scrub_body(text: str) -> str:
    text = _PEM_BLOCK.sub(REDACTED, text)
    # Tokens first: the line-level `--flag=value` pattern takes everything up to the next space, so in
    # `"--token=A","--secret B"` it would swallow `--secret` and leave B; token by token, A goes first.
    lines = [_TOKEN.sub(_mask_token, line) for line in text.split("\n")]
    return "\n".join(redact_text(line) if line.strip() else line for line in lines)


def _mask_token(match: re.Match[str]) -> str:
    raw = match.group(0)
    if len(raw) < _MIN_TOKEN or raw == REDACTED:
        return raw
    for piece in _ENTITY.split(re.sub(r"\\(.)", r"\1", raw)):   # an entity separates values (&quot;a&quot;)
        plain = html.unescape(piece)
        for candidate in (plain, plain.strip(".:!?*_~=")):   # a sentence's full stop is not part of a token
            if len(candidate) >= _MIN_TOKEN and redact_text(candidate) != candidate:
                return REDACTED
    return raw
