"""Text from Git or the cluster made safe for a terminal or a CI log: control characters become visible escapes.

A name or message may carry any character. Printed as it is, a newline starts a line the tool did not write
(in a GitHub Actions log, a line beginning `::error` is a workflow command) and ESC or a C1 control starts
a terminal sequence (colours, an OSC title or hyperlink, a cursor move that hides what was printed). So the
text renderers and the error printer show them as escapes a person can read: `\\n`, `\\r`, `\\t`, `\\x1b`,
`\\x9b`, and `\\u2028`/`\\u2029` (line separators some viewers break lines at). Only the tool's own line
breaks, which never pass through here, end a line.
"""

from __future__ import annotations

import re

# C0 controls (tab and newline included: a value's own), DEL, C1 controls, Unicode line/paragraph separators
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    """`text` with every control character replaced by its escape; anything else is left as it is."""
    return _CONTROL.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
