"""One module per output format, all behind `render(report) -> str`."""

from __future__ import annotations

import importlib

from reconciler.report import Report


def render(report: Report, fmt: str, *, color: bool | None = None) -> str:
    module = importlib.import_module(f"reconciler.outputs.{fmt}_format")
    return module.render(report, color=color)
