"""A run that stopped on an error before it had a report, in the formats a CI step reads.

Without a report there is nothing to write, but a missing SARIF file fails the upload step after it, and a
reviewer who reads annotations, the job summary or the merge request widget would see nothing at all. So
each format a CI system consumes renders the error itself, with the `render_error` its registry entry names:
sarif (a run whose invocation failed, with a tool execution notification), github (an `::error` annotation
at the file and line; the job summary gets the markdown form), gitlab (one Code Quality issue), junit (one
test case in error) and markdown (a short section). text, json and jsonl have none: the error line on
stderr is theirs, and a JSON consumer must not mistake an error for a report. Nothing is written as a
normal report after an incomplete read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reconciler.core.errors import UserError
from reconciler.core.printable import visible
from reconciler.core.redact import redact_free_text
from reconciler.core.refs import Location

CHECK_NAME = "input-error"  # the rule-like id the machine formats file the error under
# `file:line[:column]`, as UserError.where names a place in a file; not a URL's `host:port`
_FILE_LINE = re.compile(r"^(?!\w+://)(?P<file>.+?):(?P<line>\d+)(?::(?P<column>\d+))?$")


@dataclass(frozen=True)
class InputError:
    command: str  # the command that stopped: check, diff, …
    message: str  # the one-line error without its place, redacted
    location: Location | None  # the file, line and column it names, when it names one

    @classmethod
    def of(cls, exc: UserError, command: str) -> InputError:
        where = _shown(exc.where) if exc.where else None
        found = _FILE_LINE.match(where) if where else None
        if found is None:  # an object, or a file without a line: part of the message, as on stderr
            return cls(command, _shown(exc.line()), None)
        column = found.group("column")
        location = Location(found.group("file"), int(found.group("line")), int(column) if column else None)
        return cls(command, _shown(UserError(exc.message, hint=exc.hint).line()), location)

    @property
    def title(self) -> str:
        return f"kai-gitops {self.command} stopped on an error"

    def line(self) -> str:
        """The error as it is printed on stderr: `file:line:column: message (hint)`."""
        return f"{self.location}: {self.message}" if self.location else self.message


def _shown(text: str) -> str:
    """As the stderr line shows it (telemetry.logs.one_line): an error quotes free text (a file's content, a
    server's answer), so it is judged token by token, and its control characters become escapes."""
    return visible(redact_free_text(" ".join(text.split())))
