"""Versioned JSON (schemaVersion 1, documented in docs/outputs.md): stable keys for scripts and dashboards."""

from __future__ import annotations

import math
from collections.abc import Mapping

import orjson

from reconciler.core.jsonvalue import JSONLike
from reconciler.report.report import Report


def render(report: Report, *, color: bool | None = None) -> str:
    return dumps(report.to_dict())


def dumps(data: Mapping[str, JSONLike], *, compact: bool = False) -> str:
    """The house JSON: indented (or on one line, `compact`), NaN/Inf as Go prints them."""
    return orjson.dumps(_finite(data), option=0 if compact else orjson.OPT_INDENT_2).decode() + "\n"


def _finite(value: JSONLike) -> JSONLike:
    """JSON has no NaN/Inf; Go prints them as NaN/+Inf, so do we (as strings)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
