"""Errors that end a run with one clear line and exit code 1."""

from __future__ import annotations


class UserError(Exception):
    """Bad input or an unreachable dependency: printed as one line, exit 1, never a traceback.

    `where` is `file:line[:column]` or an object reference; `hint` says what to do about it.
    """

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def line(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text = f"{text} ({self.hint})"
        return " ".join(text.split())  # one line, whatever the message carried
