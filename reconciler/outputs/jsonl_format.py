"""The JSON report on one line: a container log's lines are records, so a CronJob's report must be one."""

from __future__ import annotations

from reconciler.outputs.json_format import dumps
from reconciler.report.report import Report


def render(report: Report, *, color: bool | None = None) -> str:
    return dumps(report.to_dict(), compact=True)
