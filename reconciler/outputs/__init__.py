"""One module per output format, all behind `render(report, *, color=None) -> str`.

`FORMATS` is the registry: a new format is a name here and a module `<name>_format.py` beside this file with
a `render(report, *, color=None, **options) -> str`. The CLI's `-o` help and the destinations read it.
A format a CI step consumes also has a `render_error(error, **options) -> str`: what it holds when the run
stopped on an error before it had a report (`input_error.py`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # the CLI reads FORMATS at start-up: importing the report model here would slow every run
    from reconciler.outputs.input_error import InputError
    from reconciler.report.report import Report

FORMATS = ("text", "json", "jsonl", "sarif", "github", "gitlab", "junit", "markdown")
# Formats that are a whole document: each needs stdout (or its file) to itself.
MACHINE_FORMATS = frozenset({"json", "jsonl", "sarif", "gitlab", "junit"})


def render(report: Report, fmt: str, *, color: bool | None = None, **options: object) -> str:
    """`options` are format-specific (markdown: link, limit; github: token), passed through as keywords to
    the format's own `render`, whose signature types them."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}")
    module = importlib.import_module(f"reconciler.outputs.{fmt}_format")
    # The last net before any format: free text from the cluster is redacted as it is read, this catches
    # what a check or a policy put into a message from anywhere else.
    return str(module.render(report.redacted(), color=color, **options))


def render_error(error: InputError, fmt: str, **options: object) -> str | None:
    """The error-only form of `fmt`, or None for a format that has none (text, json, jsonl)."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown output format {fmt!r}")
    renderer = getattr(importlib.import_module(f"reconciler.outputs.{fmt}_format"), "render_error", None)
    return None if renderer is None else str(renderer(error, **options))
