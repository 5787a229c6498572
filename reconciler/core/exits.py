"""The process's exit codes, one meaning each wherever a run ends (the CLI, a report, a reconcile outcome).

A CronJob, CI job or script tells "findings" from "broken" by them alone, so 2 never means an error: usage
mistakes exit 1 too, not click's own 2.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    CLEAN = 0
    ERROR = 1
    FINDINGS = 2  # findings at or above --fail-on, failed policy tests, or changes a reconcile left to make
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it
