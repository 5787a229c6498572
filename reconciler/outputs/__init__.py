"""One module per output format, all behind `render(report, *, color=None) -> str`."""

from __future__ import annotations

import importlib

from reconciler.report.report import Report


def render(report: Report, fmt: str, *, color: bool | None = None, **options: object) -> str:
    """`options` are format-specific (markdown: link, limit; github: token), passed through as keywords to
    the format's own `render`, whose signature types them."""
    module = importlib.import_module(f"reconciler.outputs.{fmt}_format")
    return str(module.render(report, color=color, **options))
