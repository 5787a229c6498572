"""The last gate before a text leaves for a Git host: redaction applied to every line and every long token.

`redact_text` judges a whole string (a PEM block or a base64 blob masks all of it); a Markdown body is
many values in one string, so it is judged line by line, and each long token on its own.
"""

from __future__ import annotations

import re

from reconciler.model.redact import REDACTED, redact_text

_TOKEN = re.compile(r"[^\s`|()\[\]<>\"',;]{40,}")
_PEM_BLOCK = re.compile(r"-----BEGIN [A-Z ]+-----.*?(-----END [A-Z ]+-----|\Z)", re.DOTALL)


def scrub_body(text: str) -> str:
    text = _PEM_BLOCK.sub(REDACTED, text)
    lines = [redact_text(line) if line.strip() else line for line in text.split("\n")]
    return "\n".join(_TOKEN.sub(lambda m: redact_text(m.group(0)), line) for line in lines)
