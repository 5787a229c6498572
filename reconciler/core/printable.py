"""Text from Git or the cluster made safe for a terminal or a CI log: control characters become visible escapes.

A name or message may carry any character. Printed as it is, a newline starts a line the tool did not write
(in a GitHub Actions log, a line beginning `::error` is a workflow command) and ESC or a C1 control starts
a terminal sequence (colours, an OSC title or hyperlink, a cursor move that hides what was printed). So the
text renderers and the error printer show them as escapes a person can read: `\\n`, `\\r`, `\\t`, `\\x1b`,
`\\x9b`, and `\\u2028`/`\\u2029` (line separators some viewers break lines at). Only the tool's own line
breaks, which never pass through here, end a line.

Bidirectional-text controls (U+202A-U+202E embeddings and overrides, U+2066-U+2069 isolates, the U+200E,
U+200F and U+061C marks) become escapes too (`\\u202e`): invisible themselves, they reorder what follows, so
a name carrying one reads as another name or hides part of a line ("Trojan Source", CVE-2021-42574).
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
# C0 controls (tab and newline included: a value's own), DEL, C1 controls, line/paragraph separators, bidi
_CONTROL = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
# the same but for the line breaks and tabs of a block of lines shown as one (a diff, a plan)
_CONTROL_IN_BLOCK = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_BIDI}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    """`text` with every control character replaced by its escape; anything else is left as it is."""
    return _CONTROL.sub(_escape, text)


def visible_block(text: str) -> str:
    """`text` as `visible` shows it, but with its own line breaks and tabs: for a code block of many lines."""
    return _CONTROL_IN_BLOCK.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
