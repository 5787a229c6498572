"""One module per output format, all behind `render(report, *, color=None) -> str`."""

from __future__ import annotations

import importlib
from typing import Any

from reconciler.report.report import Report


def render(report: Report, fmt: str, *, color: bool | None = None, **options: Any) -> str:
    """`options` are format-specific (markdown: link, limit) and passed through as keywords."""
    module = importlib.import_module(f"reconciler.outputs.{fmt}_format")
    return str(module.render(report, color=color, **options))
